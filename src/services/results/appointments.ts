import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ValidationError } from '../errors.js';
import { distinct, parseInput, uuid, type RawInput } from '../validation.js';
import { ownedOrNotFound } from '../owned.js';
import { DEEP_OFFSET, deepPageKeys } from '../offset-pages.js';
import { emitEvents } from '../webhooks/emit.js';
import * as store from './store.js';
import type { AppointmentQuery } from './store.js';

// Appointments the dialer booked during calls, as their owner reads and manages them.

export const APPOINTMENT_STATUSES = ['scheduled', 'confirmed', 'cancelled', 'completed', 'no_show'] as const;
/** The statuses of an appointment that is still to happen, the only ones that may be rescheduled. */
const UPCOMING = new Set<string>(['scheduled', 'confirmed']);

export type { AppointmentQuery } from './store.js';

/** `newest`: booked most recently first (v1's order); `soonest`: by appointment time, earliest first. */
export type AppointmentOrder = 'newest' | 'soonest';

const filterInput = z.object({
  statuses: z.array(z.enum(APPOINTMENT_STATUSES)).transform(distinct).nullish(),
  campaign_id: uuid.nullish(),
  /** Appointment time at or after (inclusive). */
  from: z.date().nullish(),
  /** Appointment time before (exclusive). */
  to: z.date().nullish(),
});
export type AppointmentFilter = RawInput<typeof filterInput>;

/** The filter as a condition; the store scopes it to the caller. */
function filterWhere(raw: AppointmentFilter): Prisma.AppointmentWhereInput {
  const filter = parseInput(filterInput, raw);
  if (filter.from && filter.to && filter.from > filter.to) throw ValidationError.field('to', 'Must not be earlier than from.');
  return {
    ...(filter.statuses ? { status: { in: filter.statuses } } : {}),
    ...(filter.campaign_id ? { campaignId: filter.campaign_id } : {}),
    ...(filter.from || filter.to
      ? { scheduledAt: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lt: filter.to } : {}) } }
      : {}),
  };
}

const ORDERS: Record<AppointmentOrder, Prisma.AppointmentOrderByWithRelationInput[]> = {
  newest: [{ createdAt: 'desc' }, { id: 'desc' }],
  soonest: [{ scheduledAt: { sort: 'asc', nulls: 'last' } }, { id: 'asc' }],
};

export async function listAppointments<Q extends AppointmentQuery & Pick<Prisma.AppointmentFindManyArgs, 'take' | 'skip' | 'cursor'> = {}>(
  ctx: ServiceContext,
  filter: AppointmentFilter,
  order: AppointmentOrder = 'newest',
  query: Q = {} as Q,
): Promise<Prisma.AppointmentGetPayload<Q>[]> {
  const { skip = 0, take, cursor, ...relations } = query;
  // The whole list newest first only: its rows are only added (statuses and times change, which the
  // filters read), so a page continues from the previous page's end (src/services/offset-pages.ts).
  if (skip < DEEP_OFFSET || cursor || take === undefined || order !== 'newest' || Object.values(filter).some((v) => v != null)) {
    return store.findAppointments(ctx, filterWhere(filter), ORDERS[order], query);
  }
  const keys = await deepPageKeys(
    ctx,
    { name: `${ctx.user.id}:appointments`, reads: store.appointmentPages, values: [ctx.user.id] },
    skip,
    take,
  );
  return store.findAppointmentsByIds(
    ctx,
    keys.map((key) => key.id),
    relations,
  ) as Promise<Prisma.AppointmentGetPayload<Q>[]>;
}

export function countAppointments(ctx: ServiceContext, filter: AppointmentFilter): Promise<number> {
  return store.countAppointments(ctx, filterWhere(filter));
}

export function getAppointment<Q extends AppointmentQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.AppointmentGetPayload<Q>> {
  return ownedOrNotFound('Appointment', id, (id) => store.findAppointment(ctx, id, query));
}

export const updateAppointmentInput = z
  .object({
    status: z.enum(APPOINTMENT_STATUSES).optional(),
    scheduled_at: z.date({ error: 'Datetime has wrong format. Use ISO 8601, e.g. 2026-01-31T09:00:00Z.' }).optional(),
  })
  .refine((input) => input.status !== undefined || input.scheduled_at !== undefined, {
    error: 'Provide a status, a new time (scheduledAt), or both.',
  });
export type UpdateAppointmentInput = RawInput<typeof updateAppointmentInput>;

/**
 * Changes an appointment's status, its time, or both. A new time must lie in the future, and only an
 * appointment that is (or becomes) scheduled or confirmed can be given one. The row is locked while the
 * rules are checked, so a concurrent update cannot slip a cancellation in between. Another user's
 * appointment is not found, whatever the input.
 */
export async function updateAppointment<Q extends AppointmentQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: UpdateAppointmentInput,
  query: Q = {} as Q,
): Promise<Prisma.AppointmentGetPayload<Q>> {
  await ownedOrNotFound('Appointment', id, (id) =>
    ctx.sql.transaction(async (tx) => {
      const current = await store.lockAppointment(tx, ctx.user.id, id);
      if (current) {
        const changed = await store.updateAppointmentRow(tx, id, decideChange(ctx, current, raw));
        await emitEvents(tx, [{ type: 'appointment.changed', userId: ctx.user.id, data: appointmentEventData(changed) }]);
      }
      return current;
    }),
  );
  return ownedOrNotFound('Appointment', id, (id) => store.findAppointment(ctx, id, query));
}

/** The change an update asks for, checked against the appointment's current status. */
function decideChange(ctx: ServiceContext, current: { status: string }, raw: UpdateAppointmentInput): store.AppointmentChange {
  const input = parseInput(updateAppointmentInput, raw);
  if (input.scheduled_at) {
    if (input.scheduled_at <= ctx.clock.now()) throw ValidationError.field('scheduled_at', 'Must be in the future.');
    if (!UPCOMING.has(input.status ?? current.status)) {
      throw ValidationError.field('scheduled_at', 'Only a scheduled or confirmed appointment can be given a new time.');
    }
  }
  return input;
}

/** An appointment as its webhook events carry it. */
export function appointmentEventData(a: store.ChangedAppointment) {
  return {
    appointment_id: a.id,
    contact_id: a.contactId,
    campaign_id: a.campaignId,
    call_id: a.callAttemptId,
    status: a.status as (typeof APPOINTMENT_STATUSES)[number],
    scheduled_at: new Date(a.scheduledAt).toISOString(),
    timezone: a.timezone,
  };
}

/** A place in a calendar's slot to book for a call under way. */
export interface SlotBooking extends Omit<store.NewCallAppointment, 'appointmentData'> {
  /** The calendar's key (`campaign:<id>`, `agent:<id>`): slots of one calendar share their places. */
  calendar: string;
  capacity: number;
  notes: string;
}

/**
 * Books a place in a slot, or answers `slot_full`: the slot's places are counted and taken under the
 * slot's lock, so concurrent bookings of the last place cannot both succeed. The appointment names its
 * call and calendar (`source: in_call`), and the customer's webhooks hear of it in the same transaction.
 */
export async function bookSlot(tx: SqlSession, booking: SlotBooking, now: Date): Promise<store.ChangedAppointment | 'slot_full'> {
  const { calendar, capacity, notes, ...row } = booking;
  await store.lockSlot(tx, calendar, row.scheduledAt);
  const taken = (await store.slotPlaces(tx, row.userId, calendar, row.scheduledAt, row.scheduledAt)).get(row.scheduledAt.getTime()) ?? 0;
  if (taken >= capacity) return 'slot_full';
  const appointmentData = { source: 'in_call', source_call_id: row.callAttemptId, calendar, notes };
  const booked = await store.insertAppointment(tx, { ...row, appointmentData }, now);
  await emitEvents(tx, [{ type: 'appointment.booked', userId: row.userId, data: appointmentEventData(booked) }]);
  return booked;
}

/** Places taken in a calendar's slots starting in [from, to], by the slot's start (epoch ms). */
export function takenPlaces(sql: SqlSession, userId: string, calendar: string, from: Date, to: Date): Promise<Map<number, number>> {
  return store.slotPlaces(sql, userId, calendar, from, to);
}

/** The appointment a call booked during the call, still holding its place; undefined when none. */
export function bookingOfCall(sql: SqlSession, callAttemptId: string): Promise<store.ChangedAppointment | undefined> {
  return store.callBooking(sql, callAttemptId);
}
