import { readdir } from 'node:fs/promises';
import { migrationsDir } from './paths.js';
import { statement, type SqlSession } from './sql.js';

// Which of the migrations this code ships with the database has not applied yet, read from Prisma's
// `_prisma_migrations` table. Starting a process on an up-to-date database needs only this one query,
// not the schema engine, so that several workers starting together do not queue on its lock.

let shipped: Promise<string[]> | undefined;

/** The migration folders of this build; they cannot change under a running process. */
export function shippedMigrations(): Promise<string[]> {
  shipped ??= readdir(migrationsDir, { withFileTypes: true }).then((entries) =>
    entries
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort(),
  );
  return shipped;
}

const tablePresent = statement<{ present: boolean }>(
  'db.migrations_table_present',
  `SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`,
);
const appliedStatement = statement<{ migration_name: string }>(
  'db.applied_migrations',
  'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
);

/** Shipped migrations not finished in the database (all of them when it has none). Migrations newer than this code are not its business. */
export async function unappliedMigrations(sql: SqlSession): Promise<string[]> {
  const [table] = await sql.run(tablePresent);
  const rows = table?.present ? await sql.run(appliedStatement) : [];
  const applied = new Set(rows.map((row) => row.migration_name));
  return (await shippedMigrations()).filter((name) => !applied.has(name));
}
