import type { MiddlewareHandler } from 'hono';
import { scopeOf } from './request-scope.js';

// Probes and scrapes come every few seconds and would drown the log, so they are logged at debug.
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** One line per request once it is answered. The path is logged without its query, which may hold secrets. */
export function accessLog(): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const { log, userId } = scopeOf(c);
    const line = {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      userId,
    };
    if (QUIET_PATHS.has(c.req.path)) log.debug(line, 'request');
    else log.info(line, 'request');
  };
}
