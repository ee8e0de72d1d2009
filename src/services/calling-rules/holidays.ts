import type Holidays from 'date-holidays';
import { DateTime } from 'luxon';
import { holidayLibrary } from './holiday-library.js';
import { WEEKDAYS, type Weekday } from './schedule.js';

// Holiday calendars of data/calling-rules.json, computed for any year, never listed by hand: the US
// federal one by the rules of 5 U.S.C. § 6103 written in the data (the holiday library does not move
// Veterans Day off a weekend as § 6103(b) does), the others by the date-holidays library's public
// holidays of a country or a state, with rules of its own grammar added where a statute names a day the
// library lacks (Pennsylvania's Good Friday and Election Day).

export interface CalendarSpec {
  name: string;
  source: string;
  /** Other calendars whose days are holidays here too. */
  include?: readonly string[];
  /** A holiday falling on this weekday is also kept this many days away (-1: the Friday before a Saturday). */
  observed?: Partial<Record<Weekday, number>>;
  /** A fixed date (month, day), or the nth weekday of the month (nth -1: the last). */
  holidays?: readonly { name: string; month: number; day?: number; weekday?: Weekday; nth?: number }[];
  /**
   * The library's public holidays of a country, or of one of its states, or (`allStates`) of the country
   * and every state, where a number does not say which state; `add`: rules in its grammar ("easter -2").
   */
  library?: { country: string; state?: string; allStates?: boolean; add?: readonly { rule: string; name: string }[] };
}

function nthWeekday(year: number, month: number, weekday: Weekday, nth: number): DateTime {
  const target = WEEKDAYS.indexOf(weekday) + 1;
  if (nth > 0) {
    const first = DateTime.utc(year, month, 1);
    return first.plus({ days: ((target - first.weekday + 7) % 7) + (nth - 1) * 7 });
  }
  const last = DateTime.utc(year, month, 1).endOf('month').startOf('day');
  return last.minus({ days: ((last.weekday - target + 7) % 7) + (-nth - 1) * 7 });
}

/** The dates (ISO) on which the calendar's own rules put a holiday of `year`, and the days they are observed on. */
function ruleDates(spec: CalendarSpec, year: number): string[] {
  const found: string[] = [];
  for (const holiday of spec.holidays ?? []) {
    const date =
      holiday.day !== undefined
        ? DateTime.utc(year, holiday.month, holiday.day)
        : nthWeekday(year, holiday.month, holiday.weekday!, holiday.nth!);
    // Both the day itself and the day it is observed on: either may be what a statute calls the holiday.
    found.push(date.toISODate()!);
    const shift = spec.observed?.[WEEKDAYS[date.weekday - 1]!];
    if (shift) found.push(date.plus({ days: shift }).toISODate()!);
  }
  return found;
}

const libraries = new Map<CalendarSpec, Holidays[]>();

function librariesOf(spec: CalendarSpec): Holidays[] {
  let made = libraries.get(spec);
  if (!made) {
    const { country, state, allStates, add = [] } = spec.library!;
    const Holidays = holidayLibrary();
    const states = allStates ? Object.keys(new Holidays().getStates(country) ?? {}) : [];
    made = [state ? new Holidays(country, state) : new Holidays(country), ...states.map((s) => new Holidays(country, s))];
    for (const hd of made) {
      for (const extra of add) {
        if (!hd.setHoliday(extra.rule, { name: extra.name, type: 'public' }))
          throw new Error(`calling-rules.json: the holiday rule "${extra.rule}" is not one the holiday library reads`);
      }
    }
    libraries.set(spec, made);
  }
  return made;
}

const libraryDates = (spec: CalendarSpec, year: number) =>
  librariesOf(spec).flatMap((hd) => hd.getHolidays(year).flatMap((h) => (h.type === 'public' ? [h.date.slice(0, 10)] : [])));

const cache = new Map<CalendarSpec, Map<number, ReadonlySet<string>>>();

/**
 * Every ISO date of `year` that is a holiday of the calendar (its own rules, the library's, the calendars
 * it includes), and the last days of December that next year's holidays are observed on (New Year's Day
 * on a Saturday is observed on 31 December).
 */
export function holidayDates(spec: CalendarSpec, calendars: Readonly<Record<string, CalendarSpec>>, year: number): ReadonlySet<string> {
  let years = cache.get(spec);
  if (!years) cache.set(spec, (years = new Map()));
  let dates = years.get(year);
  if (!dates) {
    const found = new Set<string>();
    for (const y of [year, year + 1]) {
      for (const date of ruleDates(spec, y)) found.add(date);
      if (spec.library) for (const date of libraryDates(spec, y)) found.add(date);
    }
    for (const id of spec.include ?? []) {
      const included = calendars[id];
      if (!included) throw new Error(`calling-rules.json: no calendar "${id}"`);
      for (const date of holidayDates(included, calendars, year)) found.add(date);
    }
    dates = new Set([...found].filter((date) => date.startsWith(`${year}-`)));
    years.set(year, dates);
  }
  return dates;
}
