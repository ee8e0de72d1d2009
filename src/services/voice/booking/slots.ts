import { DateTime } from 'luxon';
import { WEEKDAYS } from '../../calling-rules/schedule.js';
import type { BookingCalendar } from './calendar.js';

// A booking calendar's slots, as functions of the calendar, the places already taken and the clock: no
// database. Slots are laid out on the wall clock of the calendar's zone (Luxon does the arithmetic), so
// a 09:00 slot is at 09:00 local on both sides of a daylight-saving change; a slot whose start does not
// exist on that day (a spring-forward gap) is not offered, and one in a repeated hour is offered once.

export interface Slot {
  start: Date;
  end: Date;
}

export interface OpenSlot extends Slot {
  /** Places left in the slot. */
  remaining: number;
}

/** Why a time is not a bookable slot of the calendar. */
export type NotBookable = 'not_a_slot' | 'past' | 'beyond_horizon' | 'blackout';

/** Places taken in each slot, by the slot's start (epoch milliseconds). */
export type Taken = ReadonlyMap<number, number>;

const DAY_MS = 86_400_000;

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Every slot of one local date (YYYY-MM-DD), in order; none on a blackout date. */
export function slotsOfDate(calendar: BookingCalendar, date: string): Slot[] {
  if (calendar.blackout_dates.includes(date)) return [];
  const day = DateTime.fromISO(date, { zone: calendar.time_zone });
  if (!day.isValid) return [];
  const weekday = WEEKDAYS[day.weekday - 1];
  const step = calendar.slot_minutes + calendar.buffer_minutes;
  const slots: Slot[] = [];
  const ranges = calendar.weekly_hours.filter((h) => h.day === weekday).sort((a, b) => minutesOf(a.start) - minutesOf(b.start));
  for (const range of ranges) {
    for (let minute = minutesOf(range.start); minute + calendar.slot_minutes <= minutesOf(range.end); minute += step) {
      const start = day.set({ hour: Math.floor(minute / 60), minute: minute % 60 });
      // Luxon moves a time in a spring-forward gap forward: that wall time does not exist that day.
      if (start.hour * 60 + start.minute !== minute) continue;
      slots.push({ start: start.toJSDate(), end: start.plus({ minutes: calendar.slot_minutes }).toJSDate() });
    }
  }
  return slots;
}

/** The local date (YYYY-MM-DD) of a moment in the calendar's zone. */
export const calendarDate = (calendar: BookingCalendar, at: Date) => DateTime.fromJSDate(at, { zone: calendar.time_zone }).toISODate()!;

/** The last moment a slot may start: the horizon counts from now. */
const horizonEnd = (calendar: BookingCalendar, now: Date) => now.getTime() + calendar.horizon_days * DAY_MS;

/**
 * Open slots in time order, at most `limit`: those starting after `now` and within the horizon, with a
 * place left. `date` keeps only that local date's; otherwise the search starts at `from` (default now).
 */
export function openSlots(
  calendar: BookingCalendar,
  taken: Taken,
  now: Date,
  options: { limit: number; date?: string; from?: Date },
): OpenSlot[] {
  const after = Math.max(now.getTime(), options.from?.getTime() ?? 0);
  const until = horizonEnd(calendar, now);
  const open: OpenSlot[] = [];
  let date = options.date ?? calendarDate(calendar, new Date(after));
  while (open.length < options.limit) {
    const first = DateTime.fromISO(date, { zone: calendar.time_zone });
    if (!first.isValid || first.toMillis() > until) break;
    for (const slot of slotsOfDate(calendar, date)) {
      const at = slot.start.getTime();
      if (at <= after || at > until) continue;
      const remaining = calendar.capacity_per_slot - (taken.get(at) ?? 0);
      if (remaining > 0) open.push({ ...slot, remaining });
      if (open.length >= options.limit) break;
    }
    if (options.date) break;
    date = first.plus({ days: 1 }).toISODate()!;
  }
  return open;
}

/** The slot starting exactly at `at`, or why there is none to book. */
export function slotAt(calendar: BookingCalendar, at: Date, now: Date): Slot | NotBookable {
  if (at.getTime() <= now.getTime()) return 'past';
  if (at.getTime() > horizonEnd(calendar, now)) return 'beyond_horizon';
  const date = calendarDate(calendar, at);
  if (calendar.blackout_dates.includes(date)) return 'blackout';
  return slotsOfDate(calendar, date).find((slot) => slot.start.getTime() === at.getTime()) ?? 'not_a_slot';
}

/** Where bookable slots can start from `now` on: the range of the places taken worth reading. */
export function searchWindow(calendar: BookingCalendar, now: Date): { from: Date; to: Date } {
  return { from: now, to: new Date(horizonEnd(calendar, now)) };
}
