import type { DateTime } from 'luxon';
import { localTime } from '../time-zones.js';
import { WEEKDAYS, type Weekday } from './schedule.js';
import { holidayDates, type CalendarSpec } from './holidays.js';
import rulesFile from './data/calling-rules.json' with { type: 'json' };

// The regional calling-hour rules of data/calling-rules.json (docs/compliance-rules.md is the table for
// people). The statutes speak of the called person's local time, so each rule reads the wall clock of
// each zone the person may be in, and a call must suit every rule in every zone; a rule stated in a fixed
// clock (Mississippi's Central Standard Time) reads that clock instead. Luxon does the zone arithmetic:
// an opening in a spring-forward gap moves forward as wall clocks do, and the repeated hour of a
// fall-back reads as the wall clock shows it.

/** Why a regional rule holds a call: its hours, a barred day, a holiday, or a re-call too soon after an abandoned call. */
export type RegionalReason = 'regional_hours' | 'regional_day' | 'holiday' | 'abandoned_recall';

export interface RuleData {
  region: string;
  name: string;
  source: string;
  /** Several windows a day, each ["HH:MM", "HH:MM"] (from, before; "24:00" ends at midnight), by weekday; `default` for the others. */
  hours: Partial<Record<Weekday, readonly (readonly string[])[]>> & { default: readonly (readonly string[])[] };
  barredDays: readonly Weekday[];
  holidays: string | null;
  /** An IANA zone the rule's hours are stated in whatever the callee's zone ('Etc/GMT+6': CST all year). */
  clock?: string;
  /** The first local day the rule applies (ISO date); absent: in force. */
  from?: string;
  /** False for a bill not yet law: kept with its text, applied only once enacted and given its `from`. */
  enacted?: boolean;
  /** A consent the callee must hold for any call, from a local day on. */
  consent?: { kind: 'calls' | 'ai_calls' | 'recording'; since: string };
  /** No call to a number within this many hours after a call to it was abandoned. */
  recallAfterAbandoned?: { hours: number; source: string };
}

interface RulesFile {
  version: string;
  calendars: Record<string, CalendarSpec>;
  rules: readonly RuleData[];
}

interface Rule {
  region: string;
  /** Allowed [from, to) minutes of the local day, by weekday (Monday first); empty on a barred day. */
  windows: readonly (readonly (readonly [number, number])[])[];
  calendar: CalendarSpec | null;
  clock: string | null;
  from: string | null;
  enacted: boolean;
  consent: RuleData['consent'] | null;
  recallHours: number | null;
}

const data = rulesFile as unknown as RulesFile;

export const RULES_VERSION = data.version;

/** How far ahead a block looks for its end. */
const HORIZON_DAYS = 14;

// Worst first: the one a person is told when several rules block.
const SEVERITY = ['holiday', 'regional_day', 'regional_hours'] as const;

const minutesOf = (hhmm: string | undefined) => {
  if (hhmm === '24:00') return 24 * 60;
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(hhmm ?? '');
  return match ? Number(match[1]) * 60 + Number(match[2]) : NaN;
};

/** [["HH:MM", "HH:MM"], ...] as minutes; the data is edited by hand, so a slip stops the module loading. */
function windowsOf(hours: readonly (readonly string[])[]): readonly (readonly [number, number])[] {
  let previous = -1;
  return hours.map((pair) => {
    const [from, to] = pair.map(minutesOf);
    if (pair.length !== 2 || !(from! < to!) || !(from! > previous))
      throw new Error(`calling-rules.json: ${JSON.stringify(hours)} is not a list of ["HH:MM", "HH:MM"], earlier first, in order`);
    previous = to!;
    return [from!, to!] as const;
  });
}

function compile(rule: RuleData): Rule {
  const calendar = rule.holidays === null ? null : data.calendars[rule.holidays];
  if (calendar === undefined) throw new Error(`calling-rules.json: no calendar "${rule.holidays}"`);
  const windows = WEEKDAYS.map((day) => (rule.barredDays.includes(day) ? [] : windowsOf(rule.hours[day] ?? rule.hours.default)));
  return {
    region: rule.region,
    windows,
    calendar,
    clock: rule.clock ?? null,
    from: rule.from ?? null,
    enacted: rule.enacted ?? true,
    consent: rule.consent ?? null,
    recallHours: rule.recallAfterAbandoned?.hours ?? null,
  };
}

const RULES = data.rules.map(compile);

/** A state's rules include its country's (US-TX: US and US-TX); a country's are its own. */
const rulesOf = (region: string) => {
  const code = region.toUpperCase();
  const country = code.split('-')[0];
  return RULES.filter((rule) => rule.region === code || rule.region === country);
};

/** Whether the rule is law on this local day. */
const inForce = (rule: Rule, local: DateTime) => rule.enacted && (rule.from === null || local.toISODate()! >= rule.from);

const isHoliday = (calendar: CalendarSpec, local: DateTime) => holidayDates(calendar, data.calendars, local.year).has(local.toISODate()!);

/** The wall clock a rule reads at `at` for a callee in `zone`. */
const clockOf = (rule: Rule, at: Date, zone: string) => localTime(at, rule.clock ?? zone);

/** Why the rule bars a call at this local moment, or null when it allows one. */
function blockAt(rule: Rule, local: DateTime): (typeof SEVERITY)[number] | null {
  if (!inForce(rule, local)) return null;
  if (rule.calendar && isHoliday(rule.calendar, local)) return 'holiday';
  const windows = rule.windows[local.weekday - 1]!;
  if (!windows.length) return 'regional_day';
  const minute = local.hour * 60 + local.minute;
  return windows.some(([from, to]) => minute >= from && minute < to) ? null : 'regional_hours';
}

/** The first moment at or after `at` that the rule allows in the zone, or null if none within the horizon. */
function nextAllowed(rule: Rule, zone: string, at: Date): Date | null {
  const local = clockOf(rule, at, zone);
  for (let offset = 0; offset <= HORIZON_DAYS; offset += 1) {
    const day = local.startOf('day').plus({ days: offset });
    const earliest = day.toMillis() > at.getTime() ? day : local;
    if (!inForce(rule, day)) return earliest.toJSDate();
    if (rule.calendar && isHoliday(rule.calendar, day)) continue;
    for (const [from] of rule.windows[day.weekday - 1]!) {
      // An opening in a spring-forward gap is moved forward by Luxon, as wall clocks do.
      const opening = day.set({ hour: Math.floor(from / 60), minute: from % 60 });
      const candidate = opening.toMillis() > at.getTime() ? opening : local;
      if (!blockAt(rule, candidate)) return candidate.toJSDate();
    }
  }
  return null;
}

/**
 * Null when the regional rules of `region` allow a call at `at` in every one of `zones`; otherwise why not
 * (the worst reason of any rule in any zone), the region of the rule that gave it (the state's when both
 * its rule and the country's do: a New York callee is held by 'US', a Texan on a Sunday morning by
 * 'US-TX'), and the first moment at or after `at` when they all allow it, at most 14 days ahead. `region`
 * is a state or province ('US-TX', which also applies 'US'), a country ('US', 'CA', 'GB') or null (no
 * rule); with no zones no rule can be checked, so the answer is null. Throws on a zone that is none,
 * rather than letting a call through unchecked.
 */
export function regionalBlock(
  at: Date,
  region: string | null,
  zones: readonly string[],
): { reason: (typeof SEVERITY)[number]; region: string; until: Date } | null {
  if (region === null || zones.length === 0) return null;
  const rules = rulesOf(region);
  const blocks = rules.flatMap((rule) => zones.map((zone) => ({ rule, reason: blockAt(rule, clockOf(rule, at, zone)) })));
  const reason = SEVERITY.find((worst) => blocks.some((b) => b.reason === worst));
  if (!reason) return null;
  const applied = blocks.filter((b) => b.reason === reason).map((b) => b.rule.region);
  const code = region.toUpperCase();
  return { reason, region: applied.includes(code) ? code : applied[0]!, until: firstAllowed(at, rules, zones) };
}

/** Each rule's next opening in each zone, in turn, until one moment suits them all. */
function firstAllowed(at: Date, rules: readonly Rule[], zones: readonly string[]): Date {
  const pairs = rules.flatMap((rule) => zones.map((zone) => ({ rule, zone })));
  const limit = at.getTime() + HORIZON_DAYS * 86_400_000;
  let moment: Date | null = at;
  while (moment !== null && moment.getTime() <= limit) {
    const now: Date = moment;
    const blocking = pairs.find(({ rule, zone }) => blockAt(rule, clockOf(rule, now, zone)) !== null);
    if (!blocking) return now;
    moment = nextAllowed(blocking.rule, blocking.zone, now);
  }
  throw new Error(`calling-rules.json: no moment within ${HORIZON_DAYS} days suits every rule in ${zones.join(', ')}`);
}

/**
 * The consent the regional rules require of a call at `at` to someone in `region`, in any of `zones` (a
 * rule applies from its local day on): the kind and the region of the rule; null when none is required.
 */
export function regionalConsent(
  at: Date,
  region: string | null,
  zones: readonly string[],
): { kind: 'calls' | 'ai_calls' | 'recording'; region: string } | null {
  if (region === null) return null;
  for (const rule of rulesOf(region)) {
    if (!rule.consent) continue;
    const since = rule.consent.since;
    const days = zones.length ? zones.map((zone) => localTime(at, zone)) : [localTime(at, 'UTC')];
    if (days.some((local) => inForce(rule, local) && local.toISODate()! >= since)) return { kind: rule.consent.kind, region: rule.region };
  }
  return null;
}

/** The kinds of consent some regional rule may require: the dialer reads these of every contact. */
export const REGIONAL_CONSENT_KINDS = [...new Set(RULES.flatMap((rule) => (rule.consent ? [rule.consent.kind] : [])))];

/** The longest re-call bar after an abandoned call of any rule, in hours (0: none): how far back the dialer looks. */
export const RECALL_HOURS = Math.max(0, ...RULES.flatMap((rule) => (rule.recallHours !== null && rule.enacted ? [rule.recallHours] : [])));

/**
 * When a rule of `region` bars calling a number again so soon after its last abandoned call (at
 * `abandonedAt`): the region of the rule and when the number may be called again; null when none does.
 */
export function recallBlock(at: Date, region: string | null, abandonedAt: Date | null): { region: string; until: Date } | null {
  if (region === null || abandonedAt === null) return null;
  let found: { region: string; until: Date } | null = null;
  for (const rule of rulesOf(region)) {
    if (rule.recallHours === null || !rule.enacted) continue;
    const until = new Date(abandonedAt.getTime() + rule.recallHours * 3_600_000);
    if (until > at && (!found || until > found.until)) found = { region: rule.region, until };
  }
  return found;
}
