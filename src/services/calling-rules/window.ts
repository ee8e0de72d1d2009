import { DateTime } from 'luxon';
import { localTime } from '../time-zones.js';
import { readActiveDays, readCallingHours, WEEKDAYS, type Weekday } from './schedule.js';

// When a person may be called: inside the campaign's calling hours, on its active days, in the person's
// own time zone. Luxon does the zone arithmetic, so daylight-saving changes move the window with the
// clock on the wall, as a person expects.

export interface CallingWindow {
  /** "HH:MM", local. */
  start: string;
  /** "HH:MM", local; "24:00" means midnight at the end of the day. */
  end: string;
  days: readonly Weekday[];
}

const minutesOf = (hhmm: string) => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

/** The stored calling_hours and active_days, read with their defaults by calling-rules/schedule.ts. */
export function windowOf(callingHours: unknown, activeDays: unknown): CallingWindow {
  const hours = readCallingHours(callingHours);
  return { start: hours.start, end: hours.end, days: readActiveDays(activeDays) };
}

export function isOpen(at: Date, zone: string, window: CallingWindow): boolean {
  const local = localTime(at, zone);
  const day = WEEKDAYS[local.weekday - 1]!;
  const minute = local.hour * 60 + local.minute;
  return window.days.includes(day) && minute >= minutesOf(window.start) && minute < minutesOf(window.end);
}

/** The first moment at or after `at` when the window is open (at most a week ahead). */
export function nextOpening(at: Date, zone: string, window: CallingWindow): Date {
  if (isOpen(at, zone, window)) return at;
  const local = localTime(at, zone);
  const startMinute = minutesOf(window.start);
  for (let offset = 0; offset <= 7; offset += 1) {
    const day = local.plus({ days: offset }).startOf('day');
    if (!window.days.includes(WEEKDAYS[day.weekday - 1]!)) continue;
    // A start that falls in a spring-forward gap is moved forward by Luxon, as wall clocks do.
    const opening = day.set({ hour: Math.floor(startMinute / 60), minute: startMinute % 60 });
    if (opening.toMillis() > at.getTime()) return opening.toJSDate();
  }
  return local.plus({ days: 7 }).toJSDate();
}

/** The calendar date (YYYY-MM-DD) of a moment in a zone: retries are counted per local day. */
export const localDate = (at: Date, zone: string) => localTime(at, zone).toISODate()!;

export const daysBetween = (from: string, to: string) => DateTime.fromISO(to).diff(DateTime.fromISO(from), 'days').days;
