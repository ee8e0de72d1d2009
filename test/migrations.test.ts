import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/database.js';
import { draftMigration, migrationsDir } from '../src/db/schema-engine.js';
import { databaseUrl } from './support/database.js';

// Migrations apply offline through the WebAssembly schema engine, on both kinds of database, with the
// same `_prisma_migrations` bookkeeping that `prisma migrate deploy` keeps.

async function expectMigratesFromScratch(db: Database) {
  const folders = (await readdir(migrationsDir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  expect(await db.migrate()).toEqual(folders);
  const rows = await db.prisma.$queryRawUnsafe<{ migration_name: string; finished_at: Date | null }[]>(
    'SELECT migration_name, finished_at FROM _prisma_migrations ORDER BY migration_name',
  );
  expect(rows.map((r) => r.migration_name)).toEqual(folders);
  expect(rows.every((r) => r.finished_at !== null)).toBe(true);
  expect(await db.migrate()).toEqual([]);
  // The hand-written constraint is there: balances cannot go negative whatever the code does.
  const user = await db.prisma.user.create({ data: { id: randomUUID() } });
  await expect(db.prisma.creditAccount.create({ data: { userId: user.id, balanceCents: -1n } })).rejects.toThrow();
}

describe('migrations', () => {
  it('apply to an empty embedded database', async () => {
    const db = await openDatabase({ kind: 'pglite', instance: new PGlite() });
    try {
      await expectMigratesFromScratch(db);
    } finally {
      await db.close();
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)('apply to an empty PostgreSQL database', async () => {
    const serverUrl = process.env.TEST_DATABASE_URL!;
    const name = `callflow_mig_${randomUUID().replace(/-/g, '')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const db = await openDatabase({ kind: 'postgres', url: databaseUrl(serverUrl, name) });
    try {
      await expectMigratesFromScratch(db);
    } finally {
      await db.close();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });

  it('match prisma/schema.prisma exactly (run npm run db:migration after a schema change)', async () => {
    const scratch = new PGlite();
    try {
      expect(await draftMigration(new PrismaPGlite(scratch))).toBeNull();
    } finally {
      await scratch.close();
    }
  });
});
