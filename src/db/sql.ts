import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import pg from 'pg';

// Plain SQL beside Prisma, for the paths where Prisma's cost per statement shows: the dialer, which runs
// thousands of small statements a second, and bulk imports. Measured on this project's machines, a
// statement through Prisma costs three to four times the CPU of the same statement through node-postgres.
// The same interface runs on PostgreSQL (sharing Prisma's pool) and on the embedded PGlite, and both
// return the same JavaScript types: bigint for int8, Date for timestamps, parsed JSON for json/jsonb.

export interface SqlSession {
  /** The rows of one statement; `$1`, `$2`, ... take `values`. */
  query<R = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<R[]>;
}

export interface Sql extends SqlSession {
  /** Runs `work` on one connection inside BEGIN ... COMMIT; rolls back and rethrows when it throws. */
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T>;
}

const INT8_OID = 20;

const pgTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (text: string) => BigInt(text) : pg.types.getTypeParser(oid, format),
} as pg.CustomTypesConfig;

/** Statements are prepared once per connection and planned from then on from their prepared form. */
const MAX_PREPARED = 500;

/** On PostgreSQL: statements through node-postgres on the pool Prisma uses too. */
export function postgresSql(pool: pg.Pool, onStatement: () => void): Sql {
  // A statement's name stands for its text on every connection of the pool; texts are fixed in the
  // code, and a text built at run time beyond the bound simply goes unprepared.
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name && names.size < MAX_PREPARED) names.set(text, (name = `callflow_${names.size}`));
    return name;
  };
  const run = async <R>(client: pg.Pool | pg.PoolClient, text: string, values?: readonly unknown[]) => {
    onStatement();
    const result = await client.query({ name: nameOf(text), text, values: values as unknown[] | undefined, types: pgTypes });
    return result.rows as R[];
  };
  return {
    query: (text, values) => run(pool, text, values),
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await run(client, 'BEGIN');
        const result = await work({ query: (text, values) => run(client, text, values) });
        await run(client, 'COMMIT');
        return result;
      } catch (error) {
        try {
          await run(client, 'ROLLBACK');
        } catch (rollbackError) {
          // A connection that cannot roll back is not given back to the pool.
          broken = rollbackError as Error;
        }
        throw error;
      } finally {
        client.release(broken);
      }
    },
  };
}

/** On the embedded PGlite: its one connection, whose transactions exclude every other statement. */
export function pgliteSql(pglite: PGlite, onStatement: () => void): Sql {
  const parsers = { [INT8_OID]: (text: string) => BigInt(text) };
  const run = async <R>(target: PGlite | PGliteTransaction, text: string, values?: readonly unknown[]) => {
    onStatement();
    const result = await target.query<R>(text, values as unknown[] | undefined, { parsers });
    return result.rows;
  };
  return {
    query: (text, values) => run(pglite, text, values),
    // PGlite sends BEGIN and COMMIT (or ROLLBACK) itself; they are counted like node-postgres' ones.
    transaction: (work) => {
      onStatement();
      return pglite
        .transaction((tx) => work({ query: (text, values) => run(tx, text, values) }))
        .finally(onStatement);
    },
  };
}
