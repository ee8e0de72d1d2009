import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { databaseTarget, openDatabase } from '../src/db/database.js';
import { statement } from '../src/db/sql.js';

// DATABASE_POOL_SIZE bounds the sessions a process's main pool opens on PostgreSQL: more statements at
// once than that wait for a session, rather than open another.

const backendPid = statement<{ pid: number }>('test.backend_pid', 'SELECT pg_backend_pid() AS pid');

describe.runIf(inject('testDatabase').kind === 'postgres')('the pool size', () => {
  const url = (inject('testDatabase') as { serverUrl: string }).serverUrl;

  for (const size of [2, 10]) {
    it(`opens at most DATABASE_POOL_SIZE=${size} sessions, Prisma's and plain SQL's together`, async () => {
      const db = await openDatabase(databaseTarget(loadConfig({ DATABASE_URL: url, DATABASE_POOL_SIZE: String(size) })));
      try {
        // All asked for in one turn of the event loop: the pool opens a session for each until it is full.
        const rows = await Promise.all([
          ...Array.from({ length: 15 }, () => db.sql.run(backendPid)),
          ...Array.from({ length: 15 }, () => db.prisma.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`),
        ]);
        expect(new Set(rows.flat().map((row) => row.pid)).size).toBe(size);
      } finally {
        await db.close();
      }
    });
  }
});
