import { DateTime } from 'luxon';
import { z } from 'zod';
import type { SqlTransaction } from '../../../db/sql.js';
import { gate } from '../../calling-rules/gate.js';
import { putOnList } from '../../contacts/do-not-call.js';
import type { ServiceEnv } from '../../context.js';
import { contactSnapshot } from '../../dialer/decisions.js';
import { isUnfinished } from '../../call-outcomes.js';
import { windowOf } from '../../calling-rules/window.js';
import { ConflictError, NotFoundError, ValidationError, type FieldErrors } from '../../errors.js';
import { uuidv7 } from '../../ids.js';
import { bookingOfCall, bookSlot, takenPlaces, type SlotBooking } from '../../results/appointments.js';
import type { ChangedAppointment } from '../../results/store.js';
import { parseInput } from '../../validation.js';
import { emitEvents } from '../../webhooks/emit.js';
import { effectiveCalendar, type BookingCalendar } from '../booking/calendar.js';
import { openSlots, searchWindow, slotAt, type NotBookable, type Slot, type Taken } from '../booking/slots.js';
import { regionalRulesApply } from '../../campaigns/exemptions.js';
import { lockToolCall, markOptedOut, setCallback, type ToolCall } from './store.js';

// Runs one in-call tool for a call under way, whoever asks (Retell's custom functions now, our own LLM
// runtime later): the call is found and locked, its arguments parsed, and the tool's answer is the JSON
// the LLM reads. What the LLM can act on (a full slot, a time outside the calling hours, bad arguments)
// is an answer with an `error` word and a `message`; only a call that is not ours or not under way is
// refused (NotFoundError, ConflictError).

/** The call a tool is asked for: our attempt id, the provider's call id, or both; and the provider's agent on it, when known. */
export interface ToolCallRef {
  attemptId?: string | null | undefined;
  providerCallId?: string | null | undefined;
  providerAgentId?: string | null | undefined;
}

export interface ToolRequest extends ToolCallRef {
  name: string;
  args: unknown;
}

export type ToolAnswer = Record<string, unknown>;

/** How far ahead a callee may ask to be called back. */
export const CALLBACK_HORIZON_DAYS = 30;
/** Open slots a full or unknown slot's answer offers instead. */
const ALTERNATIVES = 3;

const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

const ARGS = {
  check_availability: z.object({
    date: z.string().regex(DATE, { error: 'Use YYYY-MM-DD.' }).optional(),
    limit: z.int().min(1).max(10).default(5),
  }),
  book_appointment: z.object({ start: z.string().max(64), notes: z.string().max(1000).default('') }),
  add_to_do_not_call: z.object({ reason: z.string().max(500).default('') }),
  schedule_callback: z.object({
    local_time: z.string().regex(LOCAL_TIME, { error: 'Use YYYY-MM-DDTHH:MM.' }),
    note: z.string().max(500).default(''),
  }),
  transfer_call: z.object({}),
} as const;

export type ServedTool = keyof typeof ARGS;
export const SERVED_TOOLS = Object.keys(ARGS) as ServedTool[];

/** The arguments' parser of each tool we serve (end_call is the provider's own). */
export const toolArguments: Readonly<Record<ServedTool, z.ZodType>> = ARGS;

const isServed = (name: string): name is ServedTool => Object.hasOwn(ARGS, name);

type Handler<T extends ServedTool> = (
  tx: SqlTransaction,
  env: ServiceEnv,
  call: ToolCall,
  args: z.output<(typeof ARGS)[T]>,
) => Promise<ToolAnswer>;

/**
 * Runs the tool `name` for the call. NotFoundError: no such tool, or no such call of ours (or one the
 * provider's agent does not match); ConflictError `call_not_in_flight`: the call is over.
 */
export async function runInCallTool(env: ServiceEnv, request: ToolRequest): Promise<ToolAnswer> {
  const { name } = request;
  if (!isServed(name)) throw new NotFoundError('Tool');
  let args: unknown;
  try {
    args = parseInput(ARGS[name], request.args ?? {});
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    // Refused only after the call is known: a stranger learns nothing from a tool's answer.
    await env.sql.transaction((tx) => liveCall(tx, request));
    return invalidArguments(error.fieldErrors);
  }
  const answer = await env.sql.transaction(async (tx) => {
    const call = await liveCall(tx, request);
    return (HANDLERS[name] as Handler<typeof name>)(tx, env, call, args as never);
  });
  env.log.info({ tool: name, attemptId: request.attemptId, providerCallId: request.providerCallId, error: answer.error }, 'in-call tool');
  return answer;
}

async function liveCall(tx: SqlTransaction, ref: ToolCallRef): Promise<ToolCall> {
  const call = await lockToolCall(tx, ref.attemptId ?? null, ref.providerCallId ?? null);
  if (!call) throw new NotFoundError('Call');
  if (ref.providerCallId && call.providerCallId !== null && call.providerCallId !== ref.providerCallId) throw new NotFoundError('Call');
  if (ref.providerAgentId && call.providerAgentId !== null && call.providerAgentId !== ref.providerAgentId) throw new NotFoundError('Call');
  if (!isUnfinished(call.status) || call.ended) {
    throw new ConflictError('The call is over; in-call tools act only while it is under way.', 'call_not_in_flight');
  }
  return call;
}

function invalidArguments(fields: FieldErrors): ToolAnswer {
  const detail = Object.entries(fields).map(([field, messages]) => `${field}: ${messages.join(' ')}`);
  return { error: 'invalid_arguments', message: `The arguments were not valid. ${detail.join('; ')}`, fields };
}

const HANDLERS: { [T in ServedTool]: Handler<T> } = {
  check_availability: async (tx, env, call, args) => {
    const booking = calendarOf(call);
    if (!booking) return noCalendar();
    const now = env.clock.now();
    const taken = await takenOf(tx, call, booking, now);
    const slots = openSlots(booking.calendar, taken, now, { limit: args.limit, ...(args.date ? { date: args.date } : {}) });
    const answer: ToolAnswer = { time_zone: booking.calendar.time_zone, slots: slots.map((s) => slotView(booking.calendar, s)) };
    if (slots.length === 0) {
      const next = openSlots(booking.calendar, taken, now, {
        limit: 1,
        ...(args.date ? { from: endOfDate(booking.calendar, args.date) } : {}),
      });
      answer.message = args.date ? 'No open slot on that day.' : 'No open slot within the booking horizon.';
      if (next[0]) answer.next_open = slotView(booking.calendar, next[0]);
    }
    return answer;
  },

  book_appointment: async (tx, env, call, args) => {
    const booking = calendarOf(call);
    if (!booking) return noCalendar();
    const { calendar } = booking;
    const at = DateTime.fromISO(args.start.trim(), { zone: calendar.time_zone, setZone: true });
    if (!at.isValid) return { error: 'invalid_arguments', message: 'start must be a slot start as check_availability gave it.' };
    const now = env.clock.now();
    const earlier = await bookingOfCall(tx, call.id);
    if (earlier) {
      if (earlier.scheduledAt.getTime() === at.toMillis()) return booked(calendar, earlier);
      return {
        error: 'already_booked',
        message: 'This call has booked an appointment already; the customer can change it after the call.',
        appointment: appointmentView(calendar, earlier),
      };
    }
    const slot = slotAt(calendar, at.toJSDate(), now);
    if (typeof slot === 'string') {
      return { error: slot, message: NOT_BOOKABLE[slot], alternatives: await alternatives(tx, call, booking, now, at.toJSDate()) };
    }
    const appointment = {
      ...newAppointment(call, calendar, slot),
      calendar: booking.key,
      capacity: calendar.capacity_per_slot,
      notes: args.notes,
    };
    const placed = await bookSlot(tx, appointment, now);
    if (placed === 'slot_full') {
      return {
        error: 'slot_full',
        message: 'That slot was just taken. Offer one of the alternatives.',
        alternatives: await alternatives(tx, call, booking, now, slot.start),
      };
    }
    return booked(calendar, placed);
  },

  add_to_do_not_call: async (tx, env, call, args) => {
    if (!call.toNumber) return { error: 'contact_erased', message: 'There is no number left to list.' };
    const now = env.clock.now();
    await putOnList(tx, call.userId, call.toNumber, args.reason || 'Asked during a call', 'call');
    if (!call.optedOutAt) {
      await markOptedOut(tx, call.id, now);
      await emitEvents(tx, [
        {
          type: 'contact.opted_out',
          userId: call.userId,
          data: { phone_number: call.toNumber, contact_id: call.contactId, campaign_id: call.campaignId, call_id: call.id },
        },
      ]);
    }
    return { listed: true, message: 'The number is on the do-not-call list: no campaign will call it again.' };
  },

  schedule_callback: async (tx, env, call, args) => {
    if (!call.toNumber) return { error: 'contact_erased', message: 'There is no number left to call back.' };
    const zone = call.contactTimezone ?? call.campaignTimezone;
    const asked = DateTime.fromISO(args.local_time, { zone });
    if (!asked.isValid) return { error: 'invalid_arguments', message: 'local_time is not a date and time: use YYYY-MM-DDTHH:MM.' };
    const now = env.clock.now();
    if (asked.toMillis() <= now.getTime())
      return { error: 'in_past', message: 'That time has passed; ask for a later one.', time_zone: zone };
    if (asked.toMillis() > now.getTime() + CALLBACK_HORIZON_DAYS * 86_400_000) {
      return { error: 'too_far', message: `A callback can be at most ${CALLBACK_HORIZON_DAYS} days ahead.`, time_zone: zone };
    }
    const verdict = gate(
      asked.toJSDate(),
      {
        timezone: call.campaignTimezone,
        window: windowOf(call.callingHours, call.activeDays),
        requiredConsent: call.requiredConsent,
        regionalRules: regionalRulesApply(call.regionalRules, call.exemptionEndsAt !== null && call.exemptionEndsAt > asked.toJSDate()),
      },
      { phoneNumber: call.toNumber, timezone: call.contactTimezone, region: call.contactRegion, consents: call.consents },
    );
    if (verdict.kind === 'blocked') return { error: 'not_allowed', message: 'This person cannot be called back by this campaign.' };
    if (verdict.kind === 'later') {
      const nearest = DateTime.fromJSDate(verdict.until, { zone });
      return {
        error: 'outside_calling_hours',
        message: 'Calls are not allowed at that time. Offer the nearest allowed time instead.',
        time_zone: zone,
        nearest_allowed: { local_time: localTime(nearest), spoken: spoken(nearest) },
      };
    }
    await setCallback(tx, call.id, asked.toJSDate(), now);
    return { scheduled: true, time_zone: zone, local_time: localTime(asked), spoken: spoken(asked) };
  },

  transfer_call: async (_tx, _env, call) =>
    call.transferNumber
      ? { transfer_number: call.transferNumber }
      : { error: 'transfer_unavailable', message: 'No one can take this call now; offer a callback instead.' },
};

const NOT_BOOKABLE: Record<NotBookable, string> = {
  not_a_slot: 'That time is not a slot of the calendar. Offer one of the alternatives.',
  past: 'That time has passed. Offer one of the alternatives.',
  beyond_horizon: 'That time is too far ahead to book. Offer one of the alternatives.',
  blackout: 'Nothing can be booked on that day. Offer one of the alternatives.',
};

interface CallCalendar {
  calendar: BookingCalendar;
  /** The calendar's key: slots of one calendar share their places, whichever campaign books them. */
  key: string;
}

function calendarOf(call: ToolCall): CallCalendar | null {
  const effective = effectiveCalendar(call.campaignCalendar, call.agentCalendar);
  if (!effective) return null;
  const key = effective.owner === 'campaign' ? `campaign:${call.campaignId}` : `agent:${call.agentId}`;
  return { calendar: effective.calendar, key };
}

const noCalendar = (): ToolAnswer => ({ error: 'no_calendar', message: 'Appointments cannot be booked on this call.' });

function takenOf(tx: SqlTransaction, call: ToolCall, booking: CallCalendar, now: Date): Promise<Taken> {
  const { from, to } = searchWindow(booking.calendar, now);
  return takenPlaces(tx, call.userId, booking.key, from, to);
}

async function alternatives(tx: SqlTransaction, call: ToolCall, booking: CallCalendar, now: Date, near: Date): Promise<ToolAnswer[]> {
  const taken = await takenOf(tx, call, booking, now);
  const after = openSlots(booking.calendar, taken, now, { limit: ALTERNATIVES, from: near });
  const slots = after.length ? after : openSlots(booking.calendar, taken, now, { limit: ALTERNATIVES });
  return slots.map((s) => slotView(booking.calendar, s));
}

function newAppointment(call: ToolCall, calendar: BookingCalendar, slot: Slot): Omit<SlotBooking, 'calendar' | 'capacity' | 'notes'> {
  return {
    id: uuidv7(),
    userId: call.userId,
    contactId: call.contactId,
    campaignId: call.campaignId,
    callAttemptId: call.id,
    scheduledAt: slot.start,
    timezone: calendar.time_zone,
    contactSnapshot: contactSnapshot(call.contactData, call.toNumber ?? ''),
  };
}

function booked(calendar: BookingCalendar, appointment: ChangedAppointment): ToolAnswer {
  return { booked: true, ...appointmentView(calendar, appointment) };
}

function appointmentView(calendar: BookingCalendar, a: ChangedAppointment): ToolAnswer {
  const start = DateTime.fromJSDate(new Date(a.scheduledAt), { zone: calendar.time_zone });
  return { appointment_id: a.id, start: iso(start), time_zone: calendar.time_zone, spoken: spoken(start) };
}

function slotView(calendar: BookingCalendar, slot: Slot): ToolAnswer {
  const start = DateTime.fromJSDate(slot.start, { zone: calendar.time_zone });
  return { start: iso(start), end: iso(DateTime.fromJSDate(slot.end, { zone: calendar.time_zone })), spoken: spoken(start) };
}

const endOfDate = (calendar: BookingCalendar, date: string) => DateTime.fromISO(date, { zone: calendar.time_zone }).endOf('day').toJSDate();
const iso = (at: DateTime) => at.toISO({ suppressMilliseconds: true })!;
const localTime = (at: DateTime) => at.toFormat("yyyy-MM-dd'T'HH:mm");
/** How the agent says it: "Thursday, December 3 at 9:00 AM". */
const spoken = (at: DateTime) => at.setLocale('en-US').toFormat("cccc, LLLL d 'at' h:mm a");
