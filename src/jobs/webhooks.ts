import type PgBoss from 'pg-boss';
import type { Database } from '../db/database.js';
import { jobLogger } from '../logger.js';
import { webhookDeliveries } from '../ops/metrics.js';
import type { ServiceEnv } from '../services/context.js';
import { attemptDelivery, type DeliveryOptions, type QueueAttempt } from '../services/webhooks/delivery.js';
import { failDelivery, queueDeliveries, queueSession, type DeliveryJob } from '../services/webhooks/queueing.js';
import { roleEngine } from './engine.js';
import { ensureQueue, queueBacklog, type JobBacklog } from './queues.js';

// Webhook deliveries on pg-boss. Events are written with their deliveries in the transactions that made
// them (the outbox); a relay here moves new deliveries onto the queue, in a transaction that marks them
// queued, so each is queued once. Each attempt is a job; the next one is queued by the transaction that
// records the last (services/webhooks/delivery.ts). A worker killed mid-attempt leaves its job active:
// once the job's expiry passes, pg-boss's supervision gives it to another worker, which makes the
// attempt again (the receiver may see it twice, with one webhook-id). A job that keeps failing that
// way is dead-lettered, and its delivery given up.

const DELIVER = 'webhook-deliver';
const DEAD_LETTER = 'webhook-dead-letter';
/** Webhook delivery's queues, made at its start (or ahead, in the embedded template). */
export const WEBHOOK_QUEUES = [DEAD_LETTER, DELIVER];

export interface WebhookRuntimeOptions {
  delivery: DeliveryOptions;
  /** How often new deliveries are moved onto the queue. */
  relayMs: number;
  /** Beyond this, a running attempt's job counts as lost (its worker died) and is run again. */
  jobExpireSeconds: number;
  /** How often lost jobs are looked for. */
  superviseSeconds: number;
  /** Attempts one process makes at once. */
  concurrency: number;
}

export interface WebhookRuntime {
  backlog: JobBacklog;
  stop(): Promise<void>;
}

/** Runs webhook delivery in this process: the relay, and the workers of the queue (on `shared`, or an engine of its own). */
export async function startWebhookDelivery(
  env: ServiceEnv,
  db: Database,
  options: WebhookRuntimeOptions,
  shared?: PgBoss,
): Promise<WebhookRuntime> {
  const engine = await roleEngine(env.log, db, shared, { superviseSeconds: options.superviseSeconds });
  const { boss } = engine;
  for (const name of WEBHOOK_QUEUES) await ensureQueue(boss, name);
  for (const state of ['succeeded', 'pending', 'failed'] as const) webhookDeliveries.labels(state).inc(0);

  // A crashed attempt is run again a few times, a few seconds apart, then dead-lettered.
  const jobOptions = { expireInSeconds: options.jobExpireSeconds, retryLimit: 5, retryDelay: 2, deadLetter: DEAD_LETTER };
  const queueNext: QueueAttempt = async (tx, messageId, attempt, at) => {
    await boss.send(DELIVER, { messageId, attempt } satisfies DeliveryJob, {
      ...jobOptions,
      startAfter: at,
      db: queueSession(tx),
    } as PgBoss.SendOptions);
  };

  let stopped = false;
  let relaying: Promise<unknown> | undefined;
  const relay = () =>
    queueDeliveries(env, async (tx, jobs) => {
      await boss.insert(
        jobs.map((data) => ({ name: DELIVER, data, ...jobOptions })),
        { db: queueSession(tx) } as PgBoss.InsertOptions,
      );
    }).catch((error: unknown) => env.log.error({ err: error }, 'webhook relay failed'));
  const relayer = setInterval(() => {
    // One relay at a time in a process: a slow one is not joined by the next.
    if (stopped || relaying) return;
    relaying = relay().finally(() => (relaying = undefined));
  }, options.relayMs);
  relayer.unref();

  // Each job of a batch succeeds or fails alone: a failed one goes back to the queue, and the batch's
  // others complete when the handler returns (pg-boss completes only the jobs still active).
  await boss.work<DeliveryJob>(DELIVER, { batchSize: options.concurrency, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    await Promise.all(
      jobs.map(async (job) => {
        try {
          const state = await attemptDelivery(env, options.delivery, job.data.messageId, job.data.attempt, queueNext);
          if (state) webhookDeliveries.inc({ state });
        } catch (error) {
          jobLogger(env.log, { name: DELIVER, id: job.id }).error({ err: error }, 'webhook attempt failed');
          await boss.fail(DELIVER, job.id, { message: (error as Error).message });
        }
      }),
    );
  });
  await boss.work<DeliveryJob>(DEAD_LETTER, { pollingIntervalSeconds: 2 }, async ([job]) => {
    if (await failDelivery(env, job!.data.messageId)) webhookDeliveries.inc({ state: 'failed' });
  });

  return {
    backlog: queueBacklog(boss, [DELIVER, DEAD_LETTER]),
    async stop() {
      stopped = true;
      clearInterval(relayer);
      await relaying;
      await engine.release(options.delivery.timeoutMs + 5_000);
    },
  };
}
