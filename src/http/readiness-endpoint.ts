import type { Context } from 'hono';
import type { Readiness } from '../ops/readiness.js';
import { json } from './errors.js';
import { scopeOf } from './request-scope.js';

/** GET /readyz: 200 when every check passes, else 503; the body lists each check either way. */
export function readinessEndpoint(readiness: Readiness) {
  return async (c: Context): Promise<Response> => {
    const results = await readiness.run();
    const ready = results.every((result) => result.ok);
    const checks: Record<string, object> = {};
    for (const { name, ok, durationMs, error } of results) {
      checks[name] = ok ? { status: 'ok', durationMs } : { status: 'failing', durationMs, error: error?.message };
      if (!ok) scopeOf(c).log.warn({ check: name, err: error }, 'readiness check failing');
    }
    return json(ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', checks });
  };
}
