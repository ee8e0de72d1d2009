import { z } from 'zod';
import { intInRange, WEEKDAYS } from '../../calling-rules/schedule.js';
import { timeZone } from '../../validation.js';

// A booking calendar: when appointments can be booked during calls, kept as JSON on an agent and on a
// campaign (the campaign's own wins). This schema is the one home of its rules and defaults; slots.ts
// turns a calendar into open slots.

const START = /^(?:[01]\d|2[0-3]):[0-5]\d$/;
const END = /^(?:(?:[01]\d|2[0-3]):[0-5]\d|24:00)$/;
const DATE = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$/;

export const CALENDAR_LIMITS = {
  slotMinutes: [5, 480],
  bufferMinutes: [0, 240],
  capacityPerSlot: [1, 100],
  horizonDays: [1, 365],
  blackoutDates: 366,
  hoursPerWeek: 42,
} as const;

export const CALENDAR_DEFAULTS = { buffer_minutes: 0, capacity_per_slot: 1, horizon_days: 30 } as const;

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

const hours = z
  .object({
    day: z.enum(WEEKDAYS),
    start: z.string().regex(START, { error: 'Use HH:MM (24-hour clock), from 00:00 to 23:59.' }),
    end: z.string().regex(END, { error: 'Use HH:MM (24-hour clock), from 00:00 to 24:00.' }),
  })
  .refine((h) => !(START.test(h.start) && END.test(h.end)) || h.start < h.end, { path: ['end'], error: 'Must be later than start.' });

export const bookingCalendarInput = z
  .object({
    time_zone: timeZone.describe('IANA time zone the hours and blackout dates are read in.'),
    weekly_hours: z
      .array(hours)
      .min(1)
      .max(CALENDAR_LIMITS.hoursPerWeek)
      .describe('Local opening hours, one entry per day and range; several ranges a day may not overlap.'),
    slot_minutes: intInRange(...CALENDAR_LIMITS.slotMinutes).describe('Length of one appointment, 5 to 480 minutes.'),
    buffer_minutes: intInRange(...CALENDAR_LIMITS.bufferMinutes)
      .default(CALENDAR_DEFAULTS.buffer_minutes)
      .describe(`Free minutes after each slot before the next one starts, 0 to 240 (default ${CALENDAR_DEFAULTS.buffer_minutes}).`),
    capacity_per_slot: intInRange(...CALENDAR_LIMITS.capacityPerSlot)
      .default(CALENDAR_DEFAULTS.capacity_per_slot)
      .describe(`Appointments one slot takes, 1 to 100 (default ${CALENDAR_DEFAULTS.capacity_per_slot}).`),
    blackout_dates: z
      .array(z.string().regex(DATE, { error: 'Use YYYY-MM-DD.' }))
      .max(CALENDAR_LIMITS.blackoutDates)
      .default(() => [])
      .transform((dates) => [...new Set(dates)].sort())
      .describe('Local dates (YYYY-MM-DD) with no slots at all.'),
    horizon_days: intInRange(...CALENDAR_LIMITS.horizonDays)
      .default(CALENDAR_DEFAULTS.horizon_days)
      .describe(`How many days ahead slots can be booked, 1 to 365 (default ${CALENDAR_DEFAULTS.horizon_days}).`),
  })
  .superRefine((calendar, ctx) => {
    // Ranges of one day, in order, must not overlap: a slot would otherwise be offered twice.
    const byDay = new Map<string, { start: number; end: number; index: number }[]>();
    calendar.weekly_hours.forEach((h, index) => {
      if (!START.test(h.start) || !END.test(h.end)) return;
      byDay.set(h.day, [...(byDay.get(h.day) ?? []), { start: minutesOf(h.start), end: minutesOf(h.end), index }]);
    });
    for (const ranges of byDay.values()) {
      ranges.sort((a, b) => a.start - b.start);
      for (let i = 1; i < ranges.length; i += 1) {
        if (ranges[i]!.start < ranges[i - 1]!.end) {
          ctx.addIssue({ code: 'custom', path: ['weekly_hours', ranges[i]!.index], message: 'Overlaps another range of the same day.' });
        }
      }
    }
  });

export type BookingCalendar = z.output<typeof bookingCalendarInput>;

/** A stored calendar, or null when none is set (or a stored value no longer reads, which offers no slots). */
export function readBookingCalendar(stored: unknown): BookingCalendar | null {
  if (stored === null || stored === undefined) return null;
  const parsed = bookingCalendarInput.safeParse(stored);
  return parsed.success ? parsed.data : null;
}

/** The calendar a call books from: the campaign's own, else its agent's. */
export function effectiveCalendar(campaign: unknown, agent: unknown): { calendar: BookingCalendar; owner: 'campaign' | 'agent' } | null {
  const own = readBookingCalendar(campaign);
  if (own) return { calendar: own, owner: 'campaign' };
  const inherited = readBookingCalendar(agent);
  return inherited ? { calendar: inherited, owner: 'agent' } : null;
}
