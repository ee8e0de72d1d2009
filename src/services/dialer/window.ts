import { DateTime } from 'luxon';

// When a person may be called: inside the campaign's calling hours, on its active days, in the person's
// own time zone. Luxon does the zone arithmetic, so daylight-saving changes move the window with the
// clock on the wall, as a person expects.

export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Day = (typeof DAYS)[number];

export interface CallingWindow {
  /** "HH:MM", local. */
  start: string;
  /** "HH:MM", local; "24:00" means midnight at the end of the day. */
  end: string;
  days: Day[];
}

const minutesOf = (hhmm: string) => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

/** Reads the stored calling_hours and active_days, falling back to 09:00-17:00 on weekdays. */
export function windowOf(callingHours: unknown, activeDays: unknown): CallingWindow {
  const hours = (callingHours ?? {}) as { start?: unknown; end?: unknown };
  const days = Array.isArray(activeDays) ? activeDays.filter((d): d is Day => DAYS.includes(d as Day)) : [];
  return {
    start: typeof hours.start === 'string' ? hours.start : '09:00',
    end: typeof hours.end === 'string' ? hours.end : '17:00',
    days: days.length ? days : ['mon', 'tue', 'wed', 'thu', 'fri'],
  };
}

export function isOpen(at: Date, zone: string, window: CallingWindow): boolean {
  const local = DateTime.fromJSDate(at, { zone });
  const day = DAYS[local.weekday - 1]!;
  const minute = local.hour * 60 + local.minute;
  return window.days.includes(day) && minute >= minutesOf(window.start) && minute < minutesOf(window.end);
}

/** The first moment at or after `at` when the window is open (at most a week ahead). */
export function nextOpening(at: Date, zone: string, window: CallingWindow): Date {
  if (isOpen(at, zone, window)) return at;
  const local = DateTime.fromJSDate(at, { zone });
  const startMinute = minutesOf(window.start);
  for (let offset = 0; offset <= 7; offset += 1) {
    const day = local.plus({ days: offset }).startOf('day');
    if (!window.days.includes(DAYS[day.weekday - 1]!)) continue;
    // A start that falls in a spring-forward gap is moved forward by Luxon, as wall clocks do.
    const opening = day.set({ hour: Math.floor(startMinute / 60), minute: startMinute % 60 });
    if (opening.toMillis() > at.getTime()) return opening.toJSDate();
  }
  return local.plus({ days: 7 }).toJSDate();
}

/** The calendar date (YYYY-MM-DD) of a moment in a zone: retries are counted per local day. */
export const localDate = (at: Date, zone: string) => DateTime.fromJSDate(at, { zone }).toISODate()!;

export const daysBetween = (from: string, to: string) =>
  DateTime.fromISO(to).diff(DateTime.fromISO(from), 'days').days;
