import { createRequire } from 'node:module';
import { DateTime } from 'luxon';

// Which time zone names every input accepts, and how a moment becomes local time in one. The names are
// those of the IANA tz database, zones and backward links alike, from the `tzdata` package (its JSON
// follows each tz release). Node's ICU is no list of them: `Intl.supportedValuesOf('timeZone')` gives
// only CLDR's canonical names (Asia/Calcutta, not Asia/Kolkata; no Etc/GMT+12), and its tz data may be
// older than the package's. So a name is accepted when ICU computes it, by itself or, for a link ICU does
// not know yet, through the zone the link names; the arithmetic then uses that zone.

interface TzData {
  version: string;
  /** A zone's rules, or for a link the name it stands for. */
  zones: Record<string, string | unknown[]>;
}

const tzdb = createRequire(import.meta.url)('tzdata') as TzData;

/** The tz database release the names come from. */
export const TZDB_VERSION = tzdb.version;

/** `Factory` is the tz database's placeholder for a local time nobody has set: no one lives there. */
const NOT_A_PLACE = new Set(['Factory']);

function computable(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The zone ICU computes `name` as: itself, else the zone its link names (links may chain). */
function clockOf(name: string): string | null {
  if (computable(name)) return name;
  let target = tzdb.zones[name];
  for (let hops = 0; typeof target === 'string' && hops < 8; hops += 1) {
    if (computable(target)) return target;
    target = tzdb.zones[target];
  }
  return null;
}

/** The tz database's names by their lower case (the names themselves are case-insensitive, as in ICU). */
const SPELLING = new Map(
  Object.keys(tzdb.zones)
    .filter((name) => !NOT_A_PLACE.has(name))
    .map((name) => [name.toLowerCase(), name]),
);

/** The zone the arithmetic uses for each name looked up so far; null for one ICU cannot compute. */
const clocks = new Map<string, string | null>();

function clockFor(name: string): string | null {
  let clock = clocks.get(name);
  if (clock === undefined) clocks.set(name, (clock = clockOf(name)));
  return clock;
}

/** The tz database's spelling of a zone or link, in any case ("asia/kolkata" is Asia/Kolkata); null when it names none. */
export function timeZoneName(zone: string): string | null {
  const name = SPELLING.get(zone.toLowerCase());
  return name !== undefined && clockFor(name) !== null ? name : null;
}

export const isTimeZone = (zone: string): boolean => timeZoneName(zone) !== null;

export const UNKNOWN_TIME_ZONE = 'Unknown time zone: use an IANA name such as America/New_York.';

/** A moment as local time in a zone. Throws on a name that is no zone, rather than reading it in another. */
export function localTime(at: Date, zone: string): DateTime {
  const name = SPELLING.get(zone.toLowerCase());
  const local = DateTime.fromJSDate(at, { zone: (name !== undefined && clockFor(name)) || zone });
  if (!local.isValid) throw new RangeError(`Unknown time zone: ${zone}`);
  return local;
}
