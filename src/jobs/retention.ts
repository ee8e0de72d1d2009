import PgBoss from 'pg-boss';
import type { Database } from '../db/database.js';
import type { ServiceEnv } from '../services/context.js';
import { runRetention } from '../services/retention/run.js';
import { ensureQueue, queueBacklog, type JobBacklog } from './queues.js';

// Retention on pg-boss: one run per period whichever process queues it (a singleton job), queued at
// start too, so that a deployment started after a pause makes the months it missed at once.

const RUN = 'retention-run';

export interface RetentionRuntimeOptions {
  /** How often the retention run is queued. */
  periodSeconds: number;
}

export interface RetentionRuntime {
  backlog: JobBacklog;
  stop(): Promise<void>;
}

export async function startRetention(env: ServiceEnv, db: Database, options: RetentionRuntimeOptions): Promise<RetentionRuntime> {
  const boss = new PgBoss({ ...db.jobEngineConnection, max: 2, schedule: false, supervise: true } as PgBoss.ConstructorOptions);
  boss.on('error', (error) => env.log.error({ err: error }, 'retention job engine error'));
  await boss.start();
  await ensureQueue(boss, RUN);
  await boss.work(RUN, { pollingIntervalSeconds: 2 }, async () => {
    await runRetention(env);
  });
  let stopped = false;
  const queue = () =>
    boss
      .send(RUN, {}, { singletonKey: 'retention', singletonSeconds: options.periodSeconds })
      .catch((error: unknown) => env.log.error({ err: error }, 'could not queue the retention run'));
  await queue();
  const timer = setInterval(() => {
    if (!stopped) void queue();
  }, options.periodSeconds * 1000);
  timer.unref();
  return {
    backlog: queueBacklog(boss, [RUN]),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
    },
  };
}
