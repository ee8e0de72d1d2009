import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import areaCodes from './data/nanp-area-codes.json' with { type: 'json' };
import { REGION } from '../contacts/fields.js';

// Where a number is, for the calling-hour rules: a NANP number's area code names its state or province
// and every zone the area may be in, from data/nanp-area-codes.json. Other countries' numbers only name
// their country; the caller then falls back to another zone. A contact's own zone and region, where
// known, replace these (the caller's choice, not made here).

export interface Place {
  /** ISO 3166-2 ('US-FL', 'CA-ON', 'US-PR'), a country where that is all we know ('GB', or 'CA' for an area code spanning provinces), or null. */
  region: string | null;
  /** Every IANA zone the number's area may be in; empty when unknown. */
  zones: string[];
}

const NANP = /^\+1(\d{3})\d{7}$/;
const AREA_CODES: Readonly<Record<string, { region: string; zones: readonly string[] } | undefined>> = areaCodes.codes;

/** Toll-free and other non-geographic NANP codes are not in the table, so they give no place. */
export function placeOfNumber(e164: string): Place {
  const areaCode = NANP.exec(e164)?.[1];
  if (areaCode !== undefined) {
    const place = AREA_CODES[areaCode];
    return place ? { region: place.region, zones: [...place.zones] } : { region: null, zones: [] };
  }
  return { region: parsePhoneNumberFromString(e164)?.country ?? null, zones: [] };
}

/**
 * The region whose calling rules apply to a person: their own (a contact's `region`, ISO 3166-2) when
 * recorded, else that of their number's place (null: no number); null when neither says.
 */
export function calleeRegion(own: string | null | undefined, place: Place | null): string | null {
  return own && REGION.test(own) ? own : (place?.region ?? null);
}
