import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { ServiceEnv } from '../services/context.js';
import type { Logger } from 'pino';
import { DIALER_QUEUES, startDialer, type DialerRuntime } from './dialer.js';
import { openJobEngine } from './engine.js';
import { PROVISIONING_QUEUES, startProvisioning } from './provisioning.js';
import { combinedBacklog, ensureQueue, type JobBacklog } from './queues.js';
import { RETENTION_QUEUES, startRetention } from './retention.js';
import { startWebhookDelivery, WEBHOOK_QUEUES } from './webhooks.js';

// Every role of the job engine in one process (`npm start`, `npm run worker`), on one pg-boss.

export interface ProcessJobs {
  dialer: DialerRuntime;
  backlog: JobBacklog;
  /**
   * Each role stops (the dialer hands its campaigns back to the queue), then the engine, which lets the
   * jobs under way finish for as long as the longest role allows.
   */
  stop(): Promise<void>;
}

/** Starts the roles; `env.dialer` and `env.voice` become theirs. */
export async function startProcessJobs(
  env: ServiceEnv,
  db: Database,
  config: Pick<Config, 'dialer' | 'webhooks' | 'provisioning' | 'retention'>,
): Promise<ProcessJobs> {
  const boss = await openJobEngine(env.log, db, { superviseSeconds: config.webhooks.superviseSeconds });
  const dialer = await startDialer(env, db, config.dialer, boss);
  env.dialer = dialer.control;
  const webhooks = await startWebhookDelivery(env, db, config.webhooks, boss);
  const provisioning = await startProvisioning(env, db, config.provisioning, boss);
  env.voice = provisioning.control;
  const retention = await startRetention(env, db, config.retention, boss);
  // Stopped in the reverse of their start, the dialer last, as their hooks ran before they shared an engine.
  const roles = [retention, provisioning, webhooks, dialer];
  return {
    dialer,
    backlog: combinedBacklog([dialer.backlog, webhooks.backlog, provisioning.backlog, retention.backlog]),
    async stop() {
      for (const role of roles) await role.stop();
      await boss.stop({ graceful: true, wait: true, timeout: Math.max(30_000, config.webhooks.delivery.timeoutMs + 5_000) });
    },
  };
}

/**
 * Makes the job engine's schema and every role's queue, and nothing else: `npm install` does it in the
 * embedded template, so that a first start finds them (pg-boss's schema and a table per queue are some
 * fifty statements of DDL).
 */
export async function prepareJobQueues(log: Logger, db: Database): Promise<void> {
  const boss = await openJobEngine(log, db);
  try {
    for (const name of [...DIALER_QUEUES, ...WEBHOOK_QUEUES, ...PROVISIONING_QUEUES, ...RETENTION_QUEUES]) await ensureQueue(boss, name);
  } finally {
    await boss.stop({ graceful: false });
  }
}
