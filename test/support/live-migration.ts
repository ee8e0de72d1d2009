import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { expect, inject } from 'vitest';
import { SEED, withValues } from '../../bench/scale-seed.js';
import { applyMigrations, migrateOnPool, pgliteSession } from '../../src/db/migrations.js';
import { databaseUrl, dropScratchDatabase, emptyCluster } from './database.js';

// A table converted by migrations that run while it is written (the partitioned tables, issue 37): the
// database migrated up to the conversion, seeded as an older release left it, then the rest of the
// migrations applied while a writer writes. On PostgreSQL the writer writes the whole time on its own
// connection; the embedded database has one connection, so there it writes before and after.

export type Query = <Row = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<Row[]>;

/**
 * The customers a seed's rows belong to, as the scale seed makes them: `customers` customers with their
 * agents, numbers, groups and campaigns, and `contacts` contacts among them unless `withContacts` is false.
 */
export async function seedCustomers(query: Query, contacts: number, customers: number, withContacts = true): Promise<void> {
  await query(
    `INSERT INTO agent_templates (id, template_key, name, system_prompt_template, placeholder_schema, updated_at)
     VALUES (gen_random_uuid(), 'plain', 'Plain', 'Hello', '{}', now())`,
  );
  // Agents and their numbers name each other: loaded as a restore would, their keys not checked row by row.
  await query('SET session_replication_role = replica');
  for (const table of ['users', 'agents', 'phone_numbers', 'contact_groups', 'campaigns', ...(withContacts ? ['contacts'] : [])]) {
    await query(withValues(SEED.find((s) => s.table === table)!.sql, [contacts, customers, 0, `now()`]));
  }
  await query('SET session_replication_role = DEFAULT');
}

/** What a test's writer does: one step of writes, each timed into `writes`. */
export interface LiveWriter {
  /** Each write's end (ms since 1970) and how long it took (ms). */
  writes: { at: number; ms: number }[];
  step(): Promise<void>;
}

export interface LiveConversion<W extends LiveWriter> {
  /** The conversion's first migration (the database is migrated up to it before the seed) and its copy. */
  first: string;
  copy: string;
  /** Seeds the tables as an older release left them. */
  seed(query: Query): Promise<void>;
  /** The tables the seed wrote, vacuumed and analyzed before the writer starts (on PostgreSQL). */
  seeded: string;
  writerFor(query: Query): Promise<W>;
  /** Every check of the converted tables against what the writer did. */
  expectConverted(query: Query, writer: W): Promise<void>;
  /** What was converted, for the printed figures: "2000 rows". */
  label: string;
}

/** Times a write for a writer's `writes`. */
export async function timed<Row>(writes: LiveWriter['writes'], run: () => Promise<Row>): Promise<Row> {
  const started = performance.now();
  const result = await run();
  writes.push({ at: Date.now(), ms: performance.now() - started });
  return result;
}

/**
 * Runs the conversion while its writer writes, then every check. On `postgres` (the test server), in a
 * database of its own: the conversion's migrations (and any after them) run while the writer writes, the
 * writer is seen writing during the copy, and the figures are printed (how long the conversion and the
 * writes took: measured, not asserted, they depend on the machine). On `embedded`, one connection: `steps`
 * writes before the migrations and as many after.
 */
export async function migrateWhileWriting<W extends LiveWriter>(
  database: 'postgres' | 'embedded',
  conversion: LiveConversion<W>,
  steps = 100,
): Promise<void> {
  if (database === 'embedded') return migrateBetweenWrites(conversion, steps);
  const serverUrl = (inject('testDatabase') as { serverUrl: string }).serverUrl;
  const name = `callflow_live_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = databaseUrl(serverUrl, name);
  const migrations = new pg.Pool({ connectionString: url, max: 1 });
  const writes = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await migrateOnPool(migrations, { before: conversion.first });
    const query: Query = async (text, values) => (await writes.query(text, values)).rows;
    await conversion.seed(query);
    await query(`VACUUM ANALYZE ${conversion.seeded}`);
    const writer = await conversion.writerFor(query);

    let migrating = true;
    const writing = (async () => {
      while (migrating) await writer.step();
    })();
    const started = Date.now();
    const applied = await migrateOnPool(migrations).finally(() => (migrating = false));
    await writing;
    const took = Date.now() - started;
    expect(applied).toContain(conversion.copy);

    const [copy] = await query<{ from: Date; to: Date }>(
      'SELECT started_at AS "from", finished_at AS "to" FROM _prisma_migrations WHERE migration_name = $1',
      [conversion.copy],
    );
    const duringCopy = writer.writes.filter((w) => w.at > copy!.from.getTime() && w.at < copy!.to.getTime());
    expect(duringCopy.length).toBeGreaterThan(0);
    await conversion.expectConverted(query, writer);

    const sorted = writer.writes.map((w) => w.ms).sort((a, b) => a - b);
    console.log(
      `live conversion of ${conversion.label}: ${(took / 1000).toFixed(1)} s (copy ${((copy!.to.getTime() - copy!.from.getTime()) / 1000).toFixed(1)} s); ` +
        `${writer.writes.length} writes (${duringCopy.length} during the copy), none lost; ` +
        `write p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)]!.toFixed(1)} ms, ` +
        `longest ${sorted.at(-1)!.toFixed(0)} ms`,
    );
  } finally {
    await dropScratchDatabase(admin, name, [migrations, writes]);
    await admin.end();
  }
}

async function migrateBetweenWrites<W extends LiveWriter>(conversion: LiveConversion<W>, steps: number): Promise<void> {
  const pglite = await emptyCluster();
  try {
    await applyMigrations(pgliteSession(pglite), { before: conversion.first });
    const query: Query = async (text, values) => (await pglite.query(text, values)).rows as never;
    await conversion.seed(query);
    const writer = await conversion.writerFor(query);
    for (let i = 0; i < steps; i += 1) await writer.step();
    expect(await applyMigrations(pgliteSession(pglite))).toContain(conversion.copy);
    for (let i = 0; i < steps; i += 1) await writer.step();
    await conversion.expectConverted(query, writer);
  } finally {
    await pglite.close();
  }
}
