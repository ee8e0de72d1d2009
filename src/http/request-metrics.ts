import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { httpRequestDuration, httpRequests } from '../ops/metrics.js';

// Labels must stay few: the route pattern (`/api/v1/agents/:id/`), never the raw path, and the method
// only when it is a standard one (a client may send any token as a method).
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

interface Series {
  count: ReturnType<typeof httpRequests.labels>;
  duration: ReturnType<typeof httpRequestDuration.labels>;
}

// Each series looked up once: prom-client hashes a label object on every call, which cost about as much
// as the rest of this middleware. The keys are as few as the labels' values.
const known = new Map<string, Series>();

/** Counts and times one answered request, `started` being its performance.now() on arrival. */
export function countRequest(method: string, route: string, status: number, started: number): void {
  const label = METHODS.has(method) ? method : 'OTHER';
  const key = `${label} ${status} ${route}`;
  let series = known.get(key);
  if (!series) {
    const labels = { method: label, route, status: String(status) };
    series = { count: httpRequests.labels(labels), duration: httpRequestDuration.labels(labels) };
    known.set(key, series);
  }
  series.duration.observe((performance.now() - started) / 1000);
  series.count.inc();
}

/** Counts and times every request by method, route pattern and status. */
export function requestMetrics(): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    countRequest(c.req.method, routeLabel(routePath(c)), c.res.status, started);
  };
}

/** After the chain ran, the route that answered; a request no route matched ends at this middleware's `*`. */
export function routeLabel(pattern: string): string {
  return pattern === '*' || pattern === '/*' ? '(unmatched)' : pattern;
}
