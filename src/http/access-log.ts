import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { scopeOf } from './request-scope.js';

// Probes and scrapes come every few seconds and would drown the log, so they are logged at debug.
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One line per request once it is answered, through the request's logger. The path is logged without its
 * query, which may hold secrets. `log` (the logger the request's is a child of) tells whether the line
 * would be written at all, before the request's logger is made for it.
 */
export function accessLog(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const level = QUIET_PATHS.has(c.req.path) ? 'debug' : 'info';
    if (!log.isLevelEnabled(level)) return;
    const scope = scopeOf(c);
    const line = {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      userId: scope.userId,
    };
    scope.log[level](line, 'request');
  };
}
