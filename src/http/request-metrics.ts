import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { httpRequestDuration, httpRequests } from '../ops/metrics.js';

// Labels must stay few: the route pattern (`/api/v1/agents/:id/`), never the raw path, and the method
// only when it is a standard one (a client may send any token as a method).
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Counts and times every request by method, route pattern and status. */
export function requestMetrics(): MiddlewareHandler {
  return async (c, next) => {
    const end = httpRequestDuration.startTimer();
    await next();
    const labels = {
      method: METHODS.has(c.req.method) ? c.req.method : 'OTHER',
      route: routeLabel(routePath(c)),
      status: String(c.res.status),
    };
    end(labels);
    httpRequests.inc(labels);
  };
}

/** After the chain ran, the route that answered; a request no route matched ends at this middleware's `*`. */
export function routeLabel(pattern: string): string {
  return pattern === '*' || pattern === '/*' ? '(unmatched)' : pattern;
}
