import { z } from 'zod';
import * as calls from '../../services/results/calls.js';
import { paginationQuery } from '../pagination.js';
import { defineRoute } from '../route.js';
import { toV1CallHistoryItem, v1CallHistoryItem, v1CallInclude } from '../serializers/calls.js';
import { id, mapBatches } from '../serializers/common.js';

export const callRoutes = [
  defineRoute({
    method: 'GET',
    path: '/campaigns/recordings/',
    operationId: 'listCallHistory',
    summary: 'Call history across all campaigns, newest first',
    tag: 'Appointments & Calls',
    query: paginationQuery,
    status: 200,
    response: z.array(v1CallHistoryItem),
    handler: async ({ query }, ctx) =>
      (await calls.listCallAttempts(ctx, {}, { include: v1CallInclude, take: query.limit, skip: query.offset })).map(toV1CallHistoryItem),
    csv: {
      filename: 'call-history.csv',
      columns: Object.keys(v1CallHistoryItem.shape),
      rows: (_input, ctx) => mapBatches(calls.callAttemptBatches(ctx, {}, { include: v1CallInclude }), toV1CallHistoryItem),
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/campaigns/contact-attempts/{id}/',
    operationId: 'getContactAttempt',
    summary: 'One call attempt, by its id',
    tag: 'Appointments & Calls',
    params: z.object({ id }),
    status: 200,
    response: v1CallHistoryItem,
    handler: async ({ params }, ctx) => toV1CallHistoryItem(await calls.getCallAttempt(ctx, params.id, { include: v1CallInclude })),
  }),
];
