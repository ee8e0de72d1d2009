import { DateTime } from 'luxon';
import { localTime } from '../time-zones.js';
import { WEEKDAYS, type Weekday } from './schedule.js';
import rulesFile from './data/calling-rules.json' with { type: 'json' };

// The regional calling-hour rules of data/calling-rules.json (docs/compliance-rules.md is the table for
// people). The statutes speak of the called person's local time, so each rule reads the wall clock of
// each zone the person may be in, and a call must suit every rule in every zone. Luxon does the zone
// arithmetic: an opening in a spring-forward gap moves forward as wall clocks do, and the repeated hour
// of a fall-back reads as the wall clock shows it.

export type RegionalReason = 'regional_hours' | 'regional_day' | 'holiday';

interface RulesFile {
  version: string;
  calendars: Record<string, Calendar>;
  rules: readonly {
    region: string;
    name: string;
    source: string;
    hours: Partial<Record<Weekday, readonly string[]>> & { default: readonly string[] };
    barredDays: readonly Weekday[];
    holidays: string | null;
  }[];
}

interface Calendar {
  name: string;
  source: string;
  /** A holiday falling on this weekday is also kept this many days away (-1: the Friday before a Saturday). */
  observed: Partial<Record<Weekday, number>>;
  /** A fixed date (month, day), or the nth weekday of the month (nth -1: the last). */
  holidays: readonly { name: string; month: number; day?: number; weekday?: Weekday; nth?: number }[];
}

interface Rule {
  region: string;
  /** Allowed [from, to) minutes of the local day, by weekday (Monday first); null on a barred day. */
  windows: readonly (readonly [number, number] | null)[];
  calendar: Calendar | null;
}

const data = rulesFile as RulesFile;

export const RULES_VERSION = data.version;

/** How far ahead a block looks for its end. */
const HORIZON_DAYS = 14;

// Worst first: the one a person is told when several rules block.
const SEVERITY: readonly RegionalReason[] = ['holiday', 'regional_day', 'regional_hours'];

const minutesOf = (hhmm: string | undefined) => {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(hhmm ?? '');
  return match ? Number(match[1]) * 60 + Number(match[2]) : NaN;
};

/** ["HH:MM", "HH:MM"] as minutes; the data is edited by hand, so a slip stops the module loading. */
function windowOf(hours: readonly string[]): readonly [number, number] {
  const [from, to] = hours.map(minutesOf);
  if (hours.length !== 2 || !(from! < to!))
    throw new Error(`calling-rules.json: ${JSON.stringify(hours)} is not ["HH:MM", "HH:MM"], earlier first`);
  return [from!, to!];
}

function compile(rule: RulesFile['rules'][number]): Rule {
  const calendar = rule.holidays === null ? null : data.calendars[rule.holidays];
  if (calendar === undefined) throw new Error(`calling-rules.json: no calendar "${rule.holidays}"`);
  const windows = WEEKDAYS.map((day) => (rule.barredDays.includes(day) ? null : windowOf(rule.hours[day] ?? rule.hours.default)));
  return { region: rule.region, windows, calendar };
}

const RULES = data.rules.map(compile);

/** A state's rules include its country's (US-TX: US and US-TX); a country's are its own. */
const rulesOf = (region: string) => {
  const code = region.toUpperCase();
  const country = code.split('-')[0];
  return RULES.filter((rule) => rule.region === code || rule.region === country);
};

function nthWeekday(year: number, month: number, weekday: Weekday, nth: number): DateTime {
  const target = WEEKDAYS.indexOf(weekday) + 1;
  if (nth > 0) {
    const first = DateTime.utc(year, month, 1);
    return first.plus({ days: ((target - first.weekday + 7) % 7) + (nth - 1) * 7 });
  }
  const last = DateTime.utc(year, month, 1).endOf('month').startOf('day');
  return last.minus({ days: ((last.weekday - target + 7) % 7) + (-nth - 1) * 7 });
}

const holidayDates = new Map<Calendar, Map<number, ReadonlySet<string>>>();

/** The ISO dates on which the calendar's holidays of `year` fall or are observed. */
function holidaysOf(calendar: Calendar, year: number): ReadonlySet<string> {
  let years = holidayDates.get(calendar);
  if (!years) holidayDates.set(calendar, (years = new Map()));
  let dates = years.get(year);
  if (!dates) {
    const found = new Set<string>();
    for (const holiday of calendar.holidays) {
      const date =
        holiday.day !== undefined
          ? DateTime.utc(year, holiday.month, holiday.day)
          : nthWeekday(year, holiday.month, holiday.weekday!, holiday.nth!);
      // Both the day itself and the day it is observed on: either may be what a statute calls the holiday.
      found.add(date.toISODate()!);
      const shift = calendar.observed[WEEKDAYS[date.weekday - 1]!];
      if (shift) found.add(date.plus({ days: shift }).toISODate()!);
    }
    dates = found;
    years.set(year, dates);
  }
  return dates;
}

// Next year's list too: New Year's Day on a Saturday is observed on 31 December.
const isHoliday = (calendar: Calendar, local: DateTime) =>
  holidaysOf(calendar, local.year).has(local.toISODate()!) || holidaysOf(calendar, local.year + 1).has(local.toISODate()!);

/** Why the rule bars a call at this local moment, or null when it allows one. */
function blockAt(rule: Rule, local: DateTime): RegionalReason | null {
  if (rule.calendar && isHoliday(rule.calendar, local)) return 'holiday';
  const window = rule.windows[local.weekday - 1];
  if (!window) return 'regional_day';
  const minute = local.hour * 60 + local.minute;
  return minute >= window[0] && minute < window[1] ? null : 'regional_hours';
}

/** The first moment at or after `at` that the rule allows in the zone, or null if none within the horizon. */
function nextAllowed(rule: Rule, zone: string, at: Date): Date | null {
  const local = localTime(at, zone);
  for (let offset = 0; offset <= HORIZON_DAYS; offset += 1) {
    const day = local.startOf('day').plus({ days: offset });
    const window = rule.windows[day.weekday - 1];
    if (!window || (rule.calendar && isHoliday(rule.calendar, day))) continue;
    // An opening in a spring-forward gap is moved forward by Luxon, as wall clocks do.
    const opening = day.set({ hour: Math.floor(window[0] / 60), minute: window[0] % 60 });
    const candidate = opening.toMillis() > at.getTime() ? opening : local;
    if (!blockAt(rule, candidate)) return candidate.toJSDate();
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
): { reason: RegionalReason; region: string; until: Date } | null {
  if (region === null || zones.length === 0) return null;
  const rules = rulesOf(region);
  const blocks = rules.flatMap((rule) => zones.map((zone) => ({ rule, reason: blockAt(rule, localTime(at, zone)) })));
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
    const blocking = pairs.find(({ rule, zone }) => blockAt(rule, localTime(now, zone)) !== null);
    if (!blocking) return now;
    moment = nextAllowed(blocking.rule, blocking.zone, now);
  }
  throw new Error(`calling-rules.json: no moment within ${HORIZON_DAYS} days suits every rule in ${zones.join(', ')}`);
}
