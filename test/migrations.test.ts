import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/database.js';
import { embeddedOptions } from '../src/db/embedded-settings.js';
import { copyTemplate, isNewDatabase, writeEmbeddedTemplate } from '../src/db/embedded-template.js';
import { FailedMigrationError, migrationChecksum } from '../src/db/migrations.js';
import { shippedMigrations } from '../src/db/migration-status.js';
import { draftMigration, readMigrationList, withSchemaEngine } from '../src/db/schema-engine.js';
import { DIALER_QUEUES } from '../src/jobs/dialer.js';
import { prepareJobQueues } from '../src/jobs/process-jobs.js';
import { PROVISIONING_QUEUES } from '../src/jobs/provisioning.js';
import { RETENTION_QUEUES } from '../src/jobs/retention.js';
import { WEBHOOK_QUEUES } from '../src/jobs/webhooks.js';
import { createLogger } from '../src/logger.js';
import { databaseUrl, emptyCluster } from './support/database.js';

// Migrations apply offline on both kinds of database, with the same `_prisma_migrations` bookkeeping
// that `prisma migrate deploy` keeps: Prisma's own schema engine (its WebAssembly build) is the referee.

async function expectMigratesFromScratch(db: Database) {
  const folders = await shippedMigrations();
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

/** What `prisma migrate deploy` does to the database: Prisma's schema engine applying the same folders. */
async function deployWithPrisma(pglite: PGlite): Promise<string[]> {
  const migrationsList = await readMigrationList();
  const filters = { externalTables: [], externalEnums: [] };
  const result = await withSchemaEngine(new PrismaPGlite(pglite), (engine) => engine.applyMigrations({ migrationsList, filters }));
  return result.appliedMigrationNames;
}

const RECORDS =
  'SELECT migration_name, checksum, applied_steps_count, finished_at IS NOT NULL AS finished FROM _prisma_migrations ORDER BY migration_name';
const TABLE_SHAPE = `SELECT column_name, data_type, character_maximum_length, is_nullable, column_default
  FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY column_name`;

/** Runs `work` with the URL of a new, empty database on the test server, dropped afterwards. */
async function withEmptyPostgres(work: (url: string) => Promise<void>): Promise<void> {
  const serverUrl = process.env.TEST_DATABASE_URL!;
  const name = `callflow_mig_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  try {
    await work(databaseUrl(serverUrl, name));
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

// Each test migrates whole databases from scratch, some through Prisma's WebAssembly engine as well:
// seconds of work each on a quiet machine, many times that on a loaded one. The empty clusters they
// start from are copies of one kept initdb (support/database.ts), so that part is not repeated.
describe('migrations', { timeout: 180_000 }, () => {
  it('apply to an empty embedded database', async () => {
    const db = await openDatabase({ kind: 'pglite', instance: await emptyCluster() });
    try {
      await expectMigratesFromScratch(db);
    } finally {
      await db.close();
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)('apply to an empty PostgreSQL database', () =>
    withEmptyPostgres(async (url) => {
      const db = await openDatabase({ kind: 'postgres', url });
      try {
        await expectMigratesFromScratch(db);
      } finally {
        await db.close();
      }
    }),
  );

  it('keep the records prisma migrate deploy keeps: each tool takes the other’s database as up to date', async () => {
    const ours = await emptyCluster();
    const prismas = await emptyCluster();
    const db = await openDatabase({ kind: 'pglite', instance: ours });
    try {
      const applied = await db.migrate();
      expect(applied.length).toBeGreaterThan(0);
      expect(await deployWithPrisma(ours)).toEqual([]);
      expect(await deployWithPrisma(prismas)).toEqual(applied);
      const prismaDb = await openDatabase({ kind: 'pglite', instance: prismas });
      expect(await prismaDb.migrate()).toEqual([]);
      // Same table, same checksums, same step counts as Prisma's engine writes.
      expect((await ours.query(TABLE_SHAPE)).rows).toEqual((await prismas.query(TABLE_SHAPE)).rows);
      const records = (await ours.query<{ migration_name: string; checksum: string }>(RECORDS)).rows;
      expect(records).toEqual((await prismas.query(RECORDS)).rows);
      const first = (await readMigrationList()).migrationDirectories[0]!;
      const script = first.migrationFile.content;
      expect(script.tag).toBe('ok');
      expect(records[0]!.checksum).toBe(migrationChecksum(script.value));
    } finally {
      await db.close();
      await prismas.close();
    }
  });

  it('refuse to go on past a migration recorded as failed, and apply nothing', async () => {
    const pglite = await emptyCluster();
    const db = await openDatabase({ kind: 'pglite', instance: pglite });
    try {
      const [first] = await shippedMigrations();
      await deployWithPrisma(pglite);
      await pglite.query('UPDATE _prisma_migrations SET finished_at = NULL WHERE migration_name = $1', [first]);
      const error = await db.migrate().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FailedMigrationError);
      expect((error as FailedMigrationError).migrations).toEqual([first]);
    } finally {
      await db.close();
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)('apply once when several processes migrate one PostgreSQL database at once', () =>
    withEmptyPostgres(async (url) => {
      const dbs = await Promise.all([1, 2, 3].map(() => openDatabase({ kind: 'postgres', url })));
      try {
        const applied = await Promise.all(dbs.map((db) => db.migrate()));
        const folders = await shippedMigrations();
        expect(applied.flat().sort()).toEqual(folders);
        const [count] = await dbs[0]!.prisma.$queryRawUnsafe<{ n: number }[]>('SELECT count(*)::int AS n FROM _prisma_migrations');
        expect(count!.n).toBe(folders.length);
      } finally {
        await Promise.all(dbs.map((db) => db.close()));
      }
    }),
  );

  it('make the install-time template a new embedded data folder is copied from, migrated', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'callflow-template-'));
    try {
      const template = join(dir, 'template');
      // As postinstall makes it (src/cli/prepare-embedded.ts): with the job engine's schema and queues.
      await writeEmbeddedTemplate(template, async (pglite) =>
        prepareJobQueues(createLogger('silent'), await openDatabase({ kind: 'pglite', instance: pglite })),
      );
      const pgdata = join(dir, 'pgdata');
      expect(isNewDatabase(pgdata)).toBe(true);
      expect(await copyTemplate(pgdata, template)).toBe(true);
      expect(isNewDatabase(pgdata)).toBe(false);
      const db = await openDatabase({ kind: 'pglite', instance: new PGlite(embeddedOptions(PGlite, { dataDir: pgdata })) });
      try {
        expect(await db.migrate()).toEqual([]);
        const queues = await db.sql.run<{ name: string }>({
          name: 'test.queues',
          text: 'SELECT name FROM pgboss.queue ORDER BY name',
          dynamic: true,
        });
        expect(queues.map((q) => q.name)).toEqual(
          [...DIALER_QUEUES, ...WEBHOOK_QUEUES, ...PROVISIONING_QUEUES, ...RETENTION_QUEUES].sort(),
        );
      } finally {
        await db.close();
      }
      // A folder that holds a database keeps it; without a template the start makes one itself.
      expect(await copyTemplate(pgdata, template)).toBe(false);
      expect(await copyTemplate(join(dir, 'other'), join(dir, 'missing'))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('match prisma/schema.prisma exactly (run npm run db:migration after a schema change)', async () => {
    const scratch = await emptyCluster();
    try {
      expect(await draftMigration(new PrismaPGlite(scratch))).toBeNull();
    } finally {
      await scratch.close();
    }
  });
});
