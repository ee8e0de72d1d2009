import { readdir } from 'node:fs/promises';
import type { PrismaClient } from '../generated/prisma/client.js';
import { migrationsDir } from '../db/schema-engine.js';
import type { Readiness } from './readiness.js';

/** The database answers a trivial query, and every migration this code ships with has been applied. */
export function registerDatabaseChecks(readiness: Readiness, prisma: PrismaClient): void {
  readiness.register('database', async () => {
    try {
      await prisma.$queryRaw`SELECT 1`;
    } catch (cause) {
      // Driver messages can name hosts and users; /readyz is public, the log keeps the cause.
      throw new Error('the database does not answer', { cause });
    }
  });

  // The folders cannot change under a running process: read them once.
  let shipped: Promise<string[]> | undefined;
  readiness.register('migrations', async () => {
    shipped ??= readdir(migrationsDir, { withFileTypes: true }).then((entries) =>
      entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name),
    );
    let rows: { migration_name: string }[];
    try {
      rows = await prisma.$queryRaw`
        SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
    } catch (cause) {
      throw new Error('the applied migrations cannot be read', { cause });
    }
    // Migrations newer than this code (a rolling deploy) do not make it unready; missing ones do.
    const applied = new Set(rows.map((row) => row.migration_name));
    const missing = (await shipped).filter((name) => !applied.has(name));
    if (missing.length) throw new Error(`not applied: ${missing.join(', ')}`);
  });
}
