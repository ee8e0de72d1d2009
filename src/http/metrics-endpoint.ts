import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import type { JobBacklog } from '../jobs/queues.js';
import {
  dialerCallsInFlight,
  dialerCreditHeldCents,
  dialerLagSeconds,
  dialerQueueDepth,
  jobQueueBacklog,
  registry,
} from '../ops/metrics.js';
import { json } from './errors.js';
import type { ServiceEnv } from '../services/context.js';
import { dialerStatus } from '../services/dialer/status.js';

/**
 * GET /metrics in Prometheus' text format; with a token configured, only for `Authorization: Bearer <token>`.
 * `jobBacklog`: the queues of the job engine's roles this process runs, whose sizes are read at each scrape.
 */
export function metricsEndpoint(env: Pick<ServiceEnv, 'sql' | 'clock' | 'log'>, token: string | undefined, jobBacklog?: JobBacklog) {
  return async (c: Context): Promise<Response> => {
    if (token && !bearerMatches(c.req.header('authorization'), token)) {
      return json(401, { detail: 'Authentication credentials were not provided.' }, { 'www-authenticate': 'Bearer realm="metrics"' });
    }
    await Promise.all([refreshDialerGauges(env), jobBacklog && refreshBacklog(env, jobBacklog)]);
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

/** With the database down the scrape still answers, with the gauges' last values (and /readyz failing). */
async function refreshDialerGauges(env: Pick<ServiceEnv, 'sql' | 'clock' | 'log'>): Promise<void> {
  try {
    const status = await dialerStatus(env.sql, env.clock.now());
    dialerCallsInFlight.set(status.callsInFlight);
    dialerQueueDepth.set(status.contactsDue);
    dialerCreditHeldCents.set(Number(status.heldCents));
    dialerLagSeconds.set(status.lagSeconds);
  } catch (error) {
    env.log.warn({ err: error }, 'could not read the dialer gauges');
  }
}

async function refreshBacklog(env: Pick<ServiceEnv, 'log'>, jobBacklog: JobBacklog): Promise<void> {
  try {
    for (const [queue, size] of Object.entries(await jobBacklog())) jobQueueBacklog.set({ queue }, size);
  } catch (error) {
    env.log.warn({ err: error }, 'could not read the job queues');
  }
}
