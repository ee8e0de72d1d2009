import type PgBoss from 'pg-boss';
import type { Database } from '../db/database.js';
import type { ServiceEnv } from '../services/context.js';
import { runRetention } from '../services/retention/run.js';
import { roleEngine } from './engine.js';
import { ensureQueue, queueBacklog, type JobBacklog } from './queues.js';

// Retention on pg-boss: one run per period whichever process queues it (a singleton job), queued at
// start too, so that a deployment started after a pause makes the months it missed at once. That first
// run waits a few seconds: it makes partitions and purges, work the start itself need not wait behind
// (on the embedded database every statement waits its turn on one session).

const RUN = 'retention-run';
const FIRST_RUN_AFTER_SECONDS = 10;
/** Retention's queue, made at its start (or ahead, in the embedded template). */
export const RETENTION_QUEUES = [RUN];

export interface RetentionRuntimeOptions {
  /** How often the retention run is queued. */
  periodSeconds: number;
}

export interface RetentionRuntime {
  backlog: JobBacklog;
  stop(): Promise<void>;
}

/** Runs retention in this process, on the process's job engine (`shared`) or on one of its own. */
export async function startRetention(
  env: ServiceEnv,
  db: Database,
  options: RetentionRuntimeOptions,
  shared?: PgBoss,
): Promise<RetentionRuntime> {
  const engine = await roleEngine(env.log, db, shared);
  const { boss } = engine;
  for (const name of RETENTION_QUEUES) await ensureQueue(boss, name);
  await boss.work(RUN, { pollingIntervalSeconds: 2 }, async () => {
    await runRetention(env);
  });
  let stopped = false;
  const queue = (startAfter?: number) =>
    boss
      .send(RUN, {}, { singletonKey: 'retention', singletonSeconds: options.periodSeconds, ...(startAfter ? { startAfter } : {}) })
      .catch((error: unknown) => env.log.error({ err: error }, 'could not queue the retention run'));
  await queue(FIRST_RUN_AFTER_SECONDS);
  const timer = setInterval(() => {
    if (!stopped) void queue();
  }, options.periodSeconds * 1000);
  timer.unref();
  return {
    backlog: queueBacklog(boss, [RUN]),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await engine.release(30_000);
    },
  };
}
