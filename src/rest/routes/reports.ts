import { z } from 'zod';
import * as reports from '../../services/results/reports.js';
import { paginationQuery } from '../pagination.js';
import { defineRoute } from '../route.js';
import { toV1CallHistoryItem, v1CallInclude } from '../serializers/calls.js';
import { id, mapBatches } from '../serializers/common.js';
import { toV1CampaignReport, toV1ContactOutcome, v1CampaignReport, v1ContactOutcome } from '../serializers/reports.js';

export const reportRoutes = [
  defineRoute({
    method: 'GET',
    path: '/campaigns/{id}/report/',
    operationId: 'getCampaignReport',
    summary: 'Campaign report: metrics, the latest completed calls, and a page of per-contact outcomes',
    tag: 'Campaigns',
    params: z.object({ id }),
    query: paginationQuery,
    status: 200,
    response: v1CampaignReport,
    handler: async ({ params, query }, ctx) => {
      const [report, recent] = await Promise.all([
        reports.getCampaignReport(ctx, params.id, query),
        reports.listRecentSuccessfulCalls(ctx, params.id, { include: v1CallInclude }),
      ]);
      return toV1CampaignReport(report, recent.map(toV1CallHistoryItem));
    },
    csv: {
      filename: 'contact-outcomes.csv',
      columns: Object.keys(v1ContactOutcome.shape),
      rows: ({ params }, ctx) => mapBatches(reports.contactOutcomeBatches(ctx, params.id), toV1ContactOutcome),
    },
  }),
];
