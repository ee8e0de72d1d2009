import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { shippedMigrations } from './migration-status.js';
import { migrationsDir } from './paths.js';

// Applies the shipped migrations with the bookkeeping `prisma migrate deploy` keeps: the same
// `_prisma_migrations` table, the SHA-256 checksum of each script, the same advisory lock. So a database
// migrated here is one Prisma's own tools accept, and the reverse. The schema engine did this before,
// but its WebAssembly took seconds to load and run on every first start; a script and two inserts don't.

/** One connection, on which a whole migration script (several statements) can run. */
export interface MigrationSession {
  /** Runs a script of statements separated by `;`, without parameters (PostgreSQL's simple query). */
  script(text: string): Promise<void>;
  query<Row>(text: string, values?: unknown[]): Promise<Row[]>;
}

/** The key `prisma migrate deploy` locks, so that it and this never migrate one database at once. */
const PRISMA_MIGRATE_LOCK = 72707369;
/** How often a process waiting for another's migrations asks for the lock again. */
const LOCK_RETRY_MS = 100;

/**
 * Takes the migrations' lock, asking again until it is free rather than waiting inside one statement: a
 * statement waiting holds a snapshot, and an index built CONCURRENTLY by the process holding the lock
 * waits for every older snapshot to end, so the two would wait for each other (a deadlock).
 */
async function lockMigrations(session: MigrationSession): Promise<void> {
  for (;;) {
    const [row] = await session.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [PRISMA_MIGRATE_LOCK]);
    if (row?.locked) return;
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}

/**
 * A migration whose script starts with this line runs as it is, outside the transaction that holds every
 * other migration with its record: one statement (a procedure that commits as it goes, or an index built
 * CONCURRENTLY), recorded once it has finished.
 */
const OUTSIDE_A_TRANSACTION = /^-- no transaction\b/;

/** The table as Prisma's schema engine creates it on PostgreSQL. */
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export class FailedMigrationError extends Error {
  constructor(readonly migrations: string[]) {
    super(
      `The database records ${migrations.join(', ')} as started and not finished (a failed migration). ` +
        'Repair it by hand, then mark it with `prisma migrate resolve --applied` or `--rolled-back`.',
    );
  }
}

/** The checksum Prisma records for a migration script: SHA-256 of its text, in hex. */
export function migrationChecksum(script: string): string {
  return createHash('sha256').update(script).digest('hex');
}

/**
 * Applies every shipped migration the database has not finished, in name order, each in one transaction
 * with its record (a failure leaves neither). Returns the names applied. `before`: only those whose names
 * sort before it (a database as an older release left it, for the tests of a migration).
 */
export async function applyMigrations(session: MigrationSession, options: { before?: string } = {}): Promise<string[]> {
  await lockMigrations(session);
  try {
    await session.script(CREATE_TABLE);
    const rows = await session.query<{ migration_name: string; finished: boolean }>(
      'SELECT migration_name, finished_at IS NOT NULL AS finished FROM _prisma_migrations WHERE rolled_back_at IS NULL',
    );
    const failed = rows.filter((row) => !row.finished).map((row) => row.migration_name);
    if (failed.length) throw new FailedMigrationError(failed);
    const finished = new Set(rows.map((row) => row.migration_name));
    const pending = (await shippedMigrations()).filter((name) => !finished.has(name) && !(options.before && name >= options.before));
    for (const name of pending) {
      const script = await readFile(join(migrationsDir, name, 'migration.sql'), 'utf8');
      const record = (started: Date | null = null) =>
        session.query(
          `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, coalesce($4::timestamptz, now()), clock_timestamp(), 1)`,
          [randomUUID(), migrationChecksum(script), name, started],
        );
      if (OUTSIDE_A_TRANSACTION.test(script)) {
        const [{ at }] = (await session.query<{ at: Date }>('SELECT clock_timestamp() AS at')) as [{ at: Date }];
        // Its statements commit as they go (a copy in batches); it is written to be run again after a failure.
        await session.script(script).catch((error: unknown) => {
          throw Object.assign(error as Error, { migration: name });
        });
        await record(at);
        continue;
      }
      await session.script('BEGIN');
      try {
        await session.script(script);
        await record();
        await session.script('COMMIT');
      } catch (error) {
        await session.script('ROLLBACK');
        throw Object.assign(error as Error, { migration: name });
      }
    }
    return pending;
  } finally {
    await session.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]);
  }
}

/** Migrations hold one connection of the pool: its session owns the advisory lock and the transactions. */
export async function migrateOnPool(pool: pg.Pool, options: { before?: string } = {}): Promise<string[]> {
  const client = await pool.connect();
  try {
    return await applyMigrations(
      {
        script: async (text) => void (await client.query(text)),
        query: async <Row>(text: string, values?: unknown[]) => (await client.query(text, values)).rows as Row[],
      },
      options,
    );
  } finally {
    client.release();
  }
}

/** PGlite's one connection: `exec` takes a script of several statements. */
export function pgliteSession(pglite: PGlite): MigrationSession {
  return {
    script: async (text) => void (await pglite.exec(text)),
    query: async <Row>(text: string, values?: unknown[]) => (await pglite.query<Row>(text, values)).rows,
  };
}
