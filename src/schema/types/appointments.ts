import * as appointments from '../../services/results/appointments.js';
import { builder } from '../builder.js';
import { snakeKeys } from '../../key-case.js';
import { withServiceInput } from '../service-input.js';

const STATUSES = appointments.APPOINTMENT_STATUSES.join(', ');

export const AppointmentOrder = builder.enumType('AppointmentOrder', {
  values: {
    newest: { description: 'Booked most recently first.' },
    soonest: { description: 'By appointment time, earliest first; those without a time last.' },
  } as const,
});

export const Appointment = builder.prismaObject('Appointment', {
  description: 'An appointment booked during a call.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    status: t.exposeString('status', { description: `One of ${STATUSES}.` }),
    scheduledAt: t.expose('scheduledAt', { type: 'DateTime', nullable: true }),
    timezone: t.exposeString('timezone', { nullable: true, description: 'IANA zone the appointment was agreed in.' }),
    contactSnapshot: t.expose('contactSnapshot', { type: 'JSON', description: 'The contact as it was when booked (v1 `contacts`).' }),
    appointmentData: t.expose('appointmentData', { type: 'JSON', description: 'Details of the booking: source call, notes.' }),
    contactId: t.expose('contactId', { type: 'UUID', nullable: true }),
    campaignId: t.expose('campaignId', { type: 'UUID', nullable: true }),
    callAttemptId: t.expose('callAttemptId', { type: 'UUID', nullable: true }),
    contact: t.relation('contact', { nullable: true, description: 'Null once the contact was deleted.' }),
    campaign: t.relation('campaign', { nullable: true }),
    callAttempt: t.relation('callAttempt', { nullable: true, description: 'The call it was booked in.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.queryFields((t) => ({
  appointments: t.prismaConnection({
    type: 'Appointment',
    cursor: 'id',
    authScopes: { authenticated: true },
    args: {
      statuses: t.arg.stringList({ description: `Only appointments with one of these statuses (${STATUSES}).` }),
      campaignId: t.arg({ type: 'UUID' }),
      from: t.arg({ type: 'DateTime', description: 'Only appointments at or after this time.' }),
      to: t.arg({ type: 'DateTime', description: 'Only appointments before this time.' }),
      orderBy: t.arg({ type: AppointmentOrder, defaultValue: 'newest' }),
    },
    totalCount: (_parent, { orderBy: _order, ...filter }, ctx) => appointments.countAppointments(ctx.service, snakeKeys(filter)),
    resolve: (query, _root, { orderBy, ...filter }, ctx) =>
      appointments.listAppointments(ctx.service, snakeKeys(filter), orderBy ?? 'newest', query),
  }),
  appointment: t.prismaField({
    type: 'Appointment',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => appointments.getAppointment(ctx.service, args.id, query),
  }),
}));

const UpdateAppointmentInput = builder.inputType('UpdateAppointmentInput', {
  fields: (t) => ({
    status: t.string({ description: `One of ${STATUSES}.` }),
    scheduledAt: t.field({
      type: 'DateTime',
      description: 'A new time, in the future; only for an appointment that is (or becomes) scheduled or confirmed.',
    }),
  }),
});

builder.mutationFields((t) => ({
  updateAppointment: t.prismaField({
    type: 'Appointment',
    description: 'Changes an appointment’s status, reschedules it, or both.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: UpdateAppointmentInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => appointments.updateAppointment(ctx.service, args.id, input, query)),
  }),
}));
