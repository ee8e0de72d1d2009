import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import type { Config } from '../config.js';
import { PrismaClient } from '../generated/prisma/client.js';
import { keysetCursors } from './keyset-cursors.js';
import { dbStatements } from '../ops/metrics.js';
import { countingAdapterFactory } from './counting-adapter.js';
import { embeddedDataPath, openEmbedded, type EmbeddedOpening } from './embedded.js';
import { isNewDatabase } from './embedded-template.js';
import { unappliedMigrations } from './migration-status.js';
import { migrateInThread } from './migrate-thread.js';
import { applyMigrations, pgliteSession } from './migrations.js';
import { pgliteSql, postgresSql, type Sql } from './sql.js';

export type Prisma = PrismaClient;

export interface Database {
  kind: 'postgres' | 'pglite';
  prisma: PrismaClient;
  /** Plain SQL on the same database, for hot paths (see sql.ts). */
  sql: Sql;
  /** Where LISTEN sessions connect (PostgreSQL's direct URL); null on the embedded database. */
  listenUrl: string | null;
  /** Plain SQL beside Prisma, for the job engine: a connection string, or the embedded instance's own. */
  jobEngineConnection:
    { connectionString: string } | { db: { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } };
  /** Applies pending migrations; returns the names applied. */
  migrate(): Promise<string[]>;
  /** The SQL statements sent through this database, by Prisma and `sql` (tests compare it before and after a request). */
  statementCount(): number;
  close(): Promise<void>;
}

/**
 * Settings of every session the service opens on PostgreSQL (a DATABASE_URL's own `options` win). A
 * process cut off from the database mid-transaction (a partition, a host gone) keeps its row locks until
 * PostgreSQL gives up on the session, and every other process waiting for them stalls: in the cluster
 * run, one worker partitioned for 24 s stopped every worker's dialing for 23 s. Our transactions send
 * their statements back to back, so a session idle inside one for 15 s is ended, and so is one whose
 * sent data goes unacknowledged for 15 s: longer than a pause of the server itself that its sessions
 * should survive (the cluster's 10 s SIGSTOP). JIT off: our statements read a page or a few rows, but a
 * LIMIT over a month-partitioned table is estimated at the cost of reading every partition whole, past
 * jit_above_cost from 10^6 contacts on, and compiling it took 400 to 700 ms for a read of 1 ms
 * (docs/scale.md, "JIT").
 */
const SESSION_OPTIONS = '-c idle_in_transaction_session_timeout=15000 -c tcp_user_timeout=15000 -c jit=off';

export interface PostgresTarget {
  kind: 'postgres';
  url: string;
  /** Sessions the pool opens at most (10 unless given). */
  poolSize?: number | undefined;
  /**
   * Set when `url` goes through a pooler in transaction mode (PgBouncer): a direct connection to the
   * server for what needs a session of its own (migrations' advisory lock, LISTEN). Statements on `url`
   * are then not prepared under names, and carry no session settings (the pooler would refuse them).
   */
  directUrl?: string | undefined;
}

/** The embedded database in a data folder (its opening perhaps begun already), or an instance a test made. */
export type DatabaseTarget =
  | PostgresTarget
  | { kind: 'pglite'; dataDir: string; demo?: boolean; opening?: EmbeddedOpening | undefined }
  | { kind: 'pglite'; instance: PGlite };

/**
 * What a process's settings name: PostgreSQL with DATABASE_URL, else the embedded database in DATA_DIR
 * (a new one with the demo data when the demo is seeded), with its opening if the process began it ahead.
 */
export function databaseTarget(
  config: Pick<Config, 'databaseUrl' | 'databaseDirectUrl' | 'databasePoolSize' | 'dataDir' | 'seedDemo'>,
  opening?: EmbeddedOpening,
): DatabaseTarget {
  return config.databaseUrl
    ? { kind: 'postgres', url: config.databaseUrl, poolSize: config.databasePoolSize, directUrl: config.databaseDirectUrl }
    : { kind: 'pglite', dataDir: config.dataDir, demo: config.seedDemo, opening };
}

/** What opening the target does, for the line a slow start prints. */
export function describeOpening(target: DatabaseTarget): string {
  if (target.kind === 'postgres') return 'Connecting to PostgreSQL';
  if ('instance' in target) return 'Opening the embedded database';
  return (target.opening?.firstStart ?? isNewDatabase(embeddedDataPath(target.dataDir)))
    ? `Preparing the embedded database in ${target.dataDir} (first start)`
    : `Opening the embedded database in ${target.dataDir}`;
}

/** With a PostgreSQL URL, a real server through node-postgres; otherwise PGlite in a local folder. */
export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  let factory: SqlMigrationAwareDriverAdapterFactory;
  let migrate: () => Promise<string[]>;
  let closeDriver: () => Promise<void> = async () => {};
  let jobEngineConnection: Database['jobEngineConnection'];
  let listenUrl: string | null = null;
  let plainSql: (onStatement: () => void) => Sql;
  if (target.kind === 'postgres') {
    const pooled = target.directUrl !== undefined;
    const pool = new pg.Pool({ connectionString: target.url, max: target.poolSize ?? 10, ...(pooled ? {} : { options: SESSION_OPTIONS }) });
    // An idle connection the server dropped (a restart) is an 'error' event, fatal unless listened to;
    // the pool replaces it and the next statement says whether the database is back.
    pool.on('error', () => {});
    factory = new PrismaPg(pool);
    const direct = target.directUrl ?? target.url;
    migrate = () => migrateInThread(direct);
    plainSql = (onStatement) => postgresSql(pool, onStatement, !pooled);
    closeDriver = () => pool.end();
    jobEngineConnection = { connectionString: target.url };
    listenUrl = direct;
  } else if ('instance' in target) {
    const { PrismaPGlite } = await import('pglite-prisma-adapter');
    const pglite = target.instance;
    await pglite.waitReady;
    factory = new PrismaPGlite(pglite);
    migrate = () => applyMigrations(pgliteSession(pglite));
    plainSql = (onStatement) => pgliteSql(pglite, onStatement);
    closeDriver = () => pglite.close();
    jobEngineConnection = { db: { executeSql: pgliteExecutor(pglite) } };
  } else {
    const [embedded, { PrismaPGlite }] = await Promise.all([
      target.opening?.database ?? openEmbedded(target.dataDir, target.demo),
      import('pglite-prisma-adapter'),
    ]);
    const { pglite } = embedded;
    factory = new PrismaPGlite(pglite);
    migrate = () => applyMigrations(pgliteSession(pglite));
    plainSql = (onStatement) => pgliteSql(pglite, onStatement);
    jobEngineConnection = { db: { executeSql: pgliteExecutor(pglite) } };
    closeDriver = () => embedded.close();
  }

  let statements = 0;
  const onStatement = () => {
    statements += 1;
    dbStatements.inc();
  };
  const prisma = keysetCursors(new PrismaClient({ adapter: countingAdapterFactory(factory, onStatement) }));

  const sql = plainSql(onStatement);
  return {
    kind: target.kind,
    prisma,
    sql,
    listenUrl,
    jobEngineConnection,
    // One query when there is nothing to apply, so that processes starting together do not queue on the lock.
    migrate: async () => ((await unappliedMigrations(sql)).length ? migrate() : []),
    statementCount: () => statements,
    async close() {
      await prisma.$disconnect();
      await closeDriver();
    },
  };
}

/** pg-boss on PGlite: parameterless scripts (its schema) hold several statements and need `exec`. */
function pgliteExecutor(pglite: PGlite) {
  return async (text: string, values?: unknown[]) => {
    if (values && values.length) return { rows: (await pglite.query(text, values)).rows };
    const results = await pglite.exec(text);
    return { rows: results.at(-1)?.rows ?? [] };
  };
}
