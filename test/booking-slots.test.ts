import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { bookingCalendarInput, effectiveCalendar, type BookingCalendar } from '../src/services/voice/booking/calendar.js';
import { openSlots, slotAt, slotsOfDate } from '../src/services/voice/booking/slots.js';
import { IN_CALL_TOOLS } from '../src/services/voice/tools/definitions.js';
import { SERVED_TOOLS, toolArguments } from '../src/services/voice/tools/run.js';

// A booking calendar's slots on plain values: no database, no clock but the one given.

const calendar = (over: Partial<Record<string, unknown>> = {}): BookingCalendar =>
  bookingCalendarInput.parse({
    time_zone: 'America/New_York',
    weekly_hours: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, start: '09:00', end: '12:00' })),
    slot_minutes: 30,
    buffer_minutes: 15,
    capacity_per_slot: 2,
    horizon_days: 14,
    ...over,
  });

const starts = (slots: { start: Date }[]) => slots.map((s) => s.start.toISOString());
// Monday 30 November 2026, 08:00 in New York (EST, UTC-5).
const now = new Date('2026-11-30T13:00:00Z');

describe('a day of slots', () => {
  it('lays slots out from each range’s start, a slot and its buffer apart, each ending inside the range', () => {
    const slots = slotsOfDate(calendar(), '2026-11-30');
    expect(starts(slots)).toEqual([
      '2026-11-30T14:00:00.000Z',
      '2026-11-30T14:45:00.000Z',
      '2026-11-30T15:30:00.000Z',
      '2026-11-30T16:15:00.000Z',
    ]);
    expect(slots[0]!.end.toISOString()).toBe('2026-11-30T14:30:00.000Z');
    expect(slotsOfDate(calendar({ buffer_minutes: 0 }), '2026-11-30')).toHaveLength(6);
    expect(slotsOfDate(calendar(), '2026-11-28')).toEqual([]);
  });

  it('reads several ranges of a day in order', () => {
    const split = calendar({
      weekly_hours: [
        { day: 'tue', start: '14:00', end: '15:00' },
        { day: 'tue', start: '09:00', end: '10:00' },
      ],
      buffer_minutes: 0,
    });
    expect(starts(slotsOfDate(split, '2026-12-01'))).toEqual([
      '2026-12-01T14:00:00.000Z',
      '2026-12-01T14:30:00.000Z',
      '2026-12-01T19:00:00.000Z',
      '2026-12-01T19:30:00.000Z',
    ]);
  });

  it('keeps 09:00 at 09:00 on the wall clock on both sides of a daylight-saving change', () => {
    const weekdays = calendar({ buffer_minutes: 0, slot_minutes: 60 });
    expect(slotsOfDate(weekdays, '2026-10-30')[0]!.start.toISOString()).toBe('2026-10-30T13:00:00.000Z'); // EDT
    expect(slotsOfDate(weekdays, '2026-11-02')[0]!.start.toISOString()).toBe('2026-11-02T14:00:00.000Z'); // EST
  });

  it('offers no slot at a wall time the spring-forward gap skips, and one slot in the hour a fall-back repeats', () => {
    const nights = calendar({ weekly_hours: [{ day: 'sun', start: '00:00', end: '04:00' }], slot_minutes: 60, buffer_minutes: 0 });
    // 14 March 2027: 02:00 EST becomes 03:00 EDT.
    expect(starts(slotsOfDate(nights, '2027-03-14'))).toEqual([
      '2027-03-14T05:00:00.000Z',
      '2027-03-14T06:00:00.000Z',
      '2027-03-14T07:00:00.000Z',
    ]);
    // 1 November 2026: 02:00 EDT becomes 01:00 EST; 01:00 is offered once, at its first occurrence.
    expect(starts(slotsOfDate(nights, '2026-11-01'))).toEqual([
      '2026-11-01T04:00:00.000Z',
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T07:00:00.000Z',
      '2026-11-01T08:00:00.000Z',
    ]);
  });

  it('has no slots on a blackout date', () => {
    const closed = calendar({ blackout_dates: ['2026-12-01'] });
    expect(slotsOfDate(closed, '2026-12-01')).toEqual([]);
    expect(slotAt(closed, new Date('2026-12-01T14:00:00Z'), now)).toBe('blackout');
    const open = openSlots(closed, new Map(), now, { limit: 5 });
    expect(open.map((s) => s.start.toISOString().slice(0, 10))).toEqual([
      '2026-11-30',
      '2026-11-30',
      '2026-11-30',
      '2026-11-30',
      '2026-12-02',
    ]);
  });
});

describe('open slots', () => {
  it('leaves out slots whose places are taken, and counts the places left', () => {
    const taken = new Map([
      [Date.parse('2026-11-30T14:00:00Z'), 2],
      [Date.parse('2026-11-30T14:45:00Z'), 1],
    ]);
    const open = openSlots(calendar(), taken, now, { limit: 2 });
    expect(open.map((s) => [s.start.toISOString(), s.remaining])).toEqual([
      ['2026-11-30T14:45:00.000Z', 1],
      ['2026-11-30T15:30:00.000Z', 2],
    ]);
  });

  it('starts after now, and after `from`; `date` keeps one local day', () => {
    const later = new Date('2026-11-30T14:50:00Z');
    expect(starts(openSlots(calendar(), new Map(), later, { limit: 1 }))).toEqual(['2026-11-30T15:30:00.000Z']);
    expect(starts(openSlots(calendar(), new Map(), now, { limit: 1, from: later }))).toEqual(['2026-11-30T15:30:00.000Z']);
    expect(starts(openSlots(calendar(), new Map(), now, { limit: 10, date: '2026-12-02' }))).toHaveLength(4);
    expect(openSlots(calendar(), new Map(), now, { limit: 10, date: '2026-12-05' })).toEqual([]);
  });

  it('offers nothing beyond the horizon', () => {
    const open = openSlots(calendar({ horizon_days: 2 }), new Map(), now, { limit: 100 });
    expect(open.at(-1)!.start.getTime()).toBeLessThanOrEqual(now.getTime() + 2 * 86_400_000);
    expect(open).toHaveLength(8);
    // Fourteen days from now is Monday 14 December, 08:00 in New York: its 09:00 is one hour too far.
    expect(slotAt(calendar(), new Date('2026-12-14T14:00:00Z'), now)).toBe('beyond_horizon');
    expect(slotAt(calendar(), new Date('2026-12-11T16:15:00Z'), now)).toMatchObject({ start: new Date('2026-12-11T16:15:00Z') });
  });

  it('names why a time is not bookable: past, not a slot start', () => {
    expect(slotAt(calendar(), new Date('2026-11-27T14:00:00Z'), now)).toBe('past');
    expect(slotAt(calendar(), new Date('2026-11-30T14:10:00Z'), now)).toBe('not_a_slot');
    expect(slotAt(calendar(), new Date('2026-11-30T14:45:00Z'), now)).toEqual({
      start: new Date('2026-11-30T14:45:00Z'),
      end: new Date('2026-11-30T15:15:00Z'),
    });
  });
});

describe('a booking calendar as set', () => {
  it('fills in its defaults and sorts its blackout dates', () => {
    expect(
      bookingCalendarInput.parse({
        time_zone: 'Europe/Berlin',
        weekly_hours: [{ day: 'mon', start: '09:00', end: '17:00' }],
        slot_minutes: 60,
        blackout_dates: ['2026-12-26', '2026-12-25', '2026-12-26'],
      }),
    ).toEqual({
      time_zone: 'Europe/Berlin',
      weekly_hours: [{ day: 'mon', start: '09:00', end: '17:00' }],
      slot_minutes: 60,
      buffer_minutes: 0,
      capacity_per_slot: 1,
      blackout_dates: ['2026-12-25', '2026-12-26'],
      horizon_days: 30,
    });
  });

  it('refuses an unknown zone, bad hours, overlapping ranges and values out of range, each by its field', () => {
    const result = bookingCalendarInput.safeParse({
      time_zone: 'Mars/Olympus',
      weekly_hours: [
        { day: 'mon', start: '09:00', end: '12:00' },
        { day: 'mon', start: '11:00', end: '13:00' },
        { day: 'tue', start: '10:00', end: '09:00' },
      ],
      slot_minutes: 1,
      capacity_per_slot: 0,
      blackout_dates: ['2026-13-01'],
      horizon_days: 400,
    });
    expect(result.success).toBe(false);
    const paths = result.error!.issues.map((i) => i.path.join('.')).sort();
    expect(paths).toEqual([
      'blackout_dates.0',
      'capacity_per_slot',
      'horizon_days',
      'slot_minutes',
      'time_zone',
      'weekly_hours.1',
      'weekly_hours.2.end',
    ]);
  });

  it('is the campaign’s own when it has one, else its agent’s', () => {
    const own = { ...calendar(), slot_minutes: 45 };
    expect(effectiveCalendar(own, calendar())).toMatchObject({ owner: 'campaign', calendar: { slot_minutes: 45 } });
    expect(effectiveCalendar(null, calendar())).toMatchObject({ owner: 'agent', calendar: { slot_minutes: 30 } });
    expect(effectiveCalendar(null, null)).toBeNull();
  });
});

describe('the tools the LLM sees', () => {
  it('are the served tools and Retell’s end_call', () => {
    expect(IN_CALL_TOOLS.map((t) => t.name).sort()).toEqual([...SERVED_TOOLS, 'end_call'].sort());
  });

  it('take, in their JSON Schemas, the arguments the tools parse, and refuse those they refuse', () => {
    const ajv = new Ajv({ strict: false });
    const samples: Record<string, unknown[]> = {
      check_availability: [{}, { date: '2026-12-03' }, { limit: 3 }, { date: 'Thursday' }, { limit: 0 }, { limit: 11 }],
      book_appointment: [
        { start: '2026-12-03T09:00:00-05:00' },
        { start: '2026-12-03T09:00:00-05:00', notes: 'Cleaning' },
        {},
        { notes: 'x' },
      ],
      add_to_do_not_call: [{}, { reason: 'Asked twice' }, { reason: 'x'.repeat(501) }],
      schedule_callback: [
        { local_time: '2026-12-03T18:30' },
        { local_time: '2026-12-03 18:30' },
        {},
        { local_time: '2026-12-03T18:30', note: 'x'.repeat(501) },
      ],
      transfer_call: [{}],
    };
    for (const tool of SERVED_TOOLS) {
      const validate = ajv.compile(IN_CALL_TOOLS.find((t) => t.name === tool)!.parameters);
      for (const args of samples[tool]!) {
        expect([tool, args, validate(args)]).toEqual([tool, args, toolArguments[tool].safeParse(args).success]);
      }
    }
  });
});
