import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';

// pg-boss for a process. A process's roles (dialer, webhook delivery, provisioning, retention) share one
// instance: one pool, one check of pg-boss's schema at start and one supervisor, where an instance each
// cost a start four checks, four pools and four supervisors. A role started alone, as tests start them,
// opens an engine of its own and stops it with itself.

/** Sessions the shared engine's pool opens at most: what the four roles' pools held together. */
const POOL_SIZE = 10;

export interface JobEngineOptions {
  /** How often the supervisor looks for expired jobs (a worker that died mid-job). */
  superviseSeconds?: number;
}

export async function openJobEngine(log: Logger, db: Database, options: JobEngineOptions = {}): Promise<PgBoss> {
  const boss = new PgBoss({
    ...db.jobEngineConnection,
    max: POOL_SIZE,
    schedule: false,
    supervise: true,
    ...(options.superviseSeconds ? { maintenanceIntervalSeconds: options.superviseSeconds } : {}),
  } as PgBoss.ConstructorOptions);
  boss.on('error', (error) => log.error({ err: error }, 'job engine error'));
  await boss.start();
  return boss;
}

/** A role's engine: the one it was given, which whoever opened it stops, or its own, stopped with the role. */
export interface RoleEngine {
  boss: PgBoss;
  /**
   * Stops the role's own engine, letting its jobs under way finish for up to `timeoutMs`; a shared
   * engine stays up (its opener stops it once every role has stopped).
   */
  release(timeoutMs: number): Promise<void>;
}

export async function roleEngine(log: Logger, db: Database, shared: PgBoss | undefined, options?: JobEngineOptions): Promise<RoleEngine> {
  if (shared) return { boss: shared, release: async () => {} };
  const boss = await openJobEngine(log, db, options);
  return { boss, release: (timeoutMs) => boss.stop({ graceful: true, wait: true, timeout: timeoutMs }) };
}
