import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { scopeOf, type RequestScope } from './request-scope.js';

// Probes and scrapes come every few seconds and would drown the log, so they are logged at debug.
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One line per request once it is answered, through the request's logger. The path is logged without its
 * query, which may hold secrets. `log` (the logger the request's is a child of) tells whether the line
 * would be written at all, before the request's logger is made for it.
 */
export function logAccess(log: Logger, scope: RequestScope, method: string, path: string, status: number, started: number): void {
  const level = QUIET_PATHS.has(path) ? 'debug' : 'info';
  if (!log.isLevelEnabled(level)) return;
  const line = { method, path, status, durationMs: Math.round((performance.now() - started) * 10) / 10, userId: scope.userId };
  scope.log[level](line, 'request');
}

export function accessLog(log: Logger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    logAccess(log, scopeOf(c), c.req.method, c.req.path, c.res.status, started);
  };
}
