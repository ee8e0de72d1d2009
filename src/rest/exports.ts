import type { Handler } from 'hono';
import { serviceContext } from '../services/context.js';
import { readExportLink, type ExportKind } from '../services/exports/links.js';
import { errorResponse } from '../http/errors.js';
import { scopeOf } from '../http/request-scope.js';
import { csvResponse } from './csv.js';
import type { RouteDefinition } from './route.js';
import type { RestDeps } from './router.js';

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
      const route = routes.find((r) => r.operationId === EXPORT_ROUTES[linked.kind]);
      if (!route?.csv) throw new Error(`no CSV export for ${linked.kind}`);
      const ctx = serviceContext(deps.env, { id: linked.userId, isAdmin: false }, scope.requestId, scope);
      return await csvResponse(route.csv, { params: { id: linked.campaignId }, query: {}, body: {} }, ctx);
    } catch (error) {
      return errorResponse(error, scope.log);
    }
  };
}
