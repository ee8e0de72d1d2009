import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import areaCodes from './data/nanp-area-codes.json' with { type: 'json' };
import { REGION } from '../contacts/fields.js';
import { holidayLibrary } from './holiday-library.js';

// Where a number is, for the calling-hour rules: a NANP number's area code names its state or province
// and every zone the area may be in, from data/nanp-area-codes.json. A geographic area code the table
// does not hold yet (a new overlay) is somewhere in its country: the country's rule, in every zone of
// the country. Other countries' numbers name their country and its zones (the holiday library's list).
// A contact's own zone and region, where known, replace these (the caller's choice, not made here).

export interface Place {
  /** ISO 3166-2 ('US-FL', 'CA-ON', 'US-PR'), a country where that is all we know ('GB', or 'CA' for an area code spanning provinces), or null. */
  region: string | null;
  /** Every IANA zone the number's area may be in; empty when unknown. */
  zones: string[];
}

const NANP = /^\+1(\d{3})\d{7}$/;
const AREA_CODES: Readonly<Record<string, { region: string; zones: readonly string[] } | undefined>> = areaCodes.codes;

/**
 * NANP codes that name no place: toll-free (8xx of the toll-free series), personal and non-geographic
 * services (5xx, 600, 622, 700, 710, 900), N11 service codes, and the codes reserved for expansion
 * (37x, 96x, 880-887, 889).
 */
const NON_GEOGRAPHIC = /^(8(00|22|33|44|55|66|77|88|8[0-79])|5(00|2\d|33|44|66|77|88)|6(00|22)|7(00|10)|900|456|37\d|96\d|[2-9]11)$/;

/** Territories have their own country codes in libphonenumber, and a zone a day away from the states'. */
const TERRITORIES = new Set(['US-PR', 'US-GU', 'US-VI', 'US-MP', 'US-AS']);

const zonesByRegion = new Map<string, Set<string>>();
for (const place of Object.values(AREA_CODES)) {
  const keys = [place!.region];
  if (/^(US|CA)-/.test(place!.region) && !TERRITORIES.has(place!.region)) keys.push(place!.region.slice(0, 2));
  for (const key of keys) {
    const zones = zonesByRegion.get(key) ?? new Set();
    for (const zone of place!.zones) zones.add(zone);
    zonesByRegion.set(key, zones);
  }
}

const countryZones = new Map<string, readonly string[]>();

/**
 * Every zone a person in `region` may be in: a US state's or Canadian province's from the area-code
 * table (the country's: every state's or province's, territories aside), another country's from the
 * holiday library's list. Empty when unknown.
 */
export function zonesOfRegion(region: string): string[] {
  const code = region.toUpperCase();
  const known = zonesByRegion.get(code);
  if (known) return [...known].sort();
  const country = code.split('-')[0]!;
  let zones = countryZones.get(country);
  if (zones === undefined) {
    zones = new (holidayLibrary())(country).getTimezones() ?? [];
    countryZones.set(country, zones);
  }
  return [...zones];
}

/** Toll-free and other non-geographic NANP codes give no place. */
export function placeOfNumber(e164: string): Place {
  const areaCode = NANP.exec(e164)?.[1];
  if (areaCode !== undefined) {
    const place = AREA_CODES[areaCode];
    if (place) return { region: place.region, zones: [...place.zones] };
    if (NON_GEOGRAPHIC.test(areaCode)) return { region: null, zones: [] };
    // A geographic code newer than the table: its country, else the US (the federal rule), in every zone.
    const country = parsePhoneNumberFromString(e164)?.country ?? 'US';
    return { region: country, zones: zonesOfRegion(country) };
  }
  const country = parsePhoneNumberFromString(e164)?.country ?? null;
  return { region: country, zones: country ? zonesOfRegion(country) : [] };
}

/**
 * The region whose calling rules apply to a person: their own (a contact's `region`, ISO 3166-2) when
 * recorded, else that of their number's place (null: no number); null when neither says.
 */
export function calleeRegion(own: string | null | undefined, place: Place | null): string | null {
  return own && REGION.test(own) ? own : (place?.region ?? null);
}
