import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { registry } from '../ops/metrics.js';
import { json } from '../rest/errors.js';

/** GET /metrics in Prometheus' text format; with a token configured, only for `Authorization: Bearer <token>`. */
export function metricsEndpoint(token: string | undefined) {
  return async (c: Context): Promise<Response> => {
    if (token && !bearerMatches(c.req.header('authorization'), token)) {
      return json(401, { detail: 'Authentication credentials were not provided.' }, { 'www-authenticate': 'Bearer realm="metrics"' });
    }
    return new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType } });
  };
}

/** Compares digests in constant time, so the response time tells nothing about the token. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = header?.match(/^Bearer (\S+)$/)?.[1];
  if (!given) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(token));
}
