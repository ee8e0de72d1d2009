import { unappliedMigrations } from '../db/migration-status.js';
import { ping, type SqlSession } from '../db/sql.js';
import type { Readiness } from './readiness.js';

/** The database answers a trivial query, and every migration this code ships with has been applied. */
export function registerDatabaseChecks(readiness: Readiness, sql: SqlSession): void {
  readiness.register('database', async () => {
    try {
      await ping(sql);
    } catch (cause) {
      // Driver messages can name hosts and users; /readyz is public, the log keeps the cause.
      throw new Error('the database does not answer', { cause });
    }
  });

  readiness.register('migrations', async () => {
    let missing: string[];
    try {
      missing = await unappliedMigrations(sql);
    } catch (cause) {
      throw new Error('the applied migrations cannot be read', { cause });
    }
    // Migrations newer than this code (a rolling deploy) do not make it unready; missing ones do.
    if (missing.length) throw new Error(`not applied: ${missing.join(', ')}`);
  });
}
