import { z } from 'zod';
import * as appointments from '../../services/results/appointments.js';
import { MAX_LIMIT, paginationQuery } from '../pagination.js';
import { defineRoute } from '../route.js';
import { toV1Appointment, v1Appointment } from '../serializers/appointments.js';

// The contract gives this list no parameters, so a legacy client gets the 500 newest; a client that
// knows more pages with limit and offset, as on the other lists.
const appointmentsQuery = paginationQuery.extend({
  limit: paginationQuery.shape.limit
    .unwrap()
    .default(MAX_LIMIT)
    .describe(`Maximum number of appointments to return (default and most ${MAX_LIMIT}).`),
});

export const appointmentRoutes = [
  defineRoute({
    method: 'GET',
    path: '/appointments/',
    operationId: 'listAppointments',
    summary: 'Appointments booked during calls, newest first (the 500 newest unless paged)',
    tag: 'Appointments & Calls',
    query: appointmentsQuery,
    status: 200,
    response: z.array(v1Appointment),
    handler: async ({ query }, ctx) =>
      (await appointments.listAppointments(ctx, {}, 'newest', { take: query.limit, skip: query.offset })).map(toV1Appointment),
  }),
];
