import type { Handler } from 'hono';
import { serviceContext } from '../services/context.js';
import { readExportLink, type ExportKind } from '../services/exports/links.js';
import { NotFoundError } from '../services/errors.js';
import { CALL_RECORD_COLUMNS, callRecordBatches, type CallRecordsFilter } from '../services/results/records.js';
import { errorResponse } from '../http/errors.js';
import { scopeOf } from '../http/request-scope.js';
import { csvResponse } from './csv.js';
import type { RouteDefinition } from './route.js';
import type { RestDeps } from './router.js';

/** The call records over a range (five years' evidence, results/records.ts): an export of its own, not a v1 list's. */
const callRecordsCsv: NonNullable<RouteDefinition['csv']> = {
  filename: 'call-records.csv',
  columns: CALL_RECORD_COLUMNS,
  rows: ({ query }, ctx) => callRecordBatches(ctx, query as CallRecordsFilter),
};

/** The v1 endpoint whose `?format=csv` each export is. */
const EXPORT_ROUTES: Record<ExportKind, string> = { call_history: 'listCallHistory', contact_outcomes: 'getCampaignReport' };

/**
 * GET /exports/{token}/: the export a download link names, as its v1 endpoint answers `?format=csv`, for
 * the link's user, with that user's rate limits. The link is the credential: no token is asked for.
 */
export function exportDownload(deps: RestDeps, routes: RouteDefinition[]): Handler {
  return async (c) => {
    const scope = scopeOf(c);
    try {
      const linked = await readExportLink(deps.env, c.req.param('token')!);
      scope.userId = linked.userId;
      await deps.rateLimiter.consume(linked.userId, []);
      const ctx = serviceContext(deps.env, { id: linked.userId, isAdmin: false }, scope.requestId, scope);
      if (linked.kind === 'call_records') {
        if (!linked.records) throw new NotFoundError('ExportLink');
        return await csvResponse(callRecordsCsv, { params: {}, query: linked.records, body: {} }, ctx);
      }
      const route = routes.find((r) => r.operationId === EXPORT_ROUTES[linked.kind as ExportKind]);
      if (!route?.csv) throw new Error(`no CSV export for ${linked.kind}`);
      return await csvResponse(route.csv, { params: { id: linked.campaignId }, query: {}, body: {} }, ctx);
    } catch (error) {
      return errorResponse(error, scope.log);
    }
  };
}
