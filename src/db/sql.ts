import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

// Plain SQL beside Prisma, for the paths where Prisma's cost per statement shows: the dialer, which runs
// thousands of small statements a second, and bulk imports. Measured on this project's machines, a
// statement through Prisma costs three to four times the CPU of the same statement through node-postgres.
// The same interface runs on PostgreSQL (sharing Prisma's pool) and on the embedded PGlite, and both
// return the same JavaScript types: bigint for int8, Date for timestamps, parsed JSON for json/jsonb.

export interface SqlSession {
  /** The rows of one statement; `$1`, `$2`, ... take `values`. */
  query<R = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<R[]>;
}

/** A session inside a transaction, which can also load rows in bulk. */
export interface SqlTransaction extends SqlSession {
  /**
   * Loads rows into `table` with COPY, cheaper for the database than INSERT from a JSON document. `data` is
   * COPY's text format: one row a line, columns separated by tabs, \N for null (see copyText).
   */
  copyInto(table: string, columns: readonly string[], data: string): Promise<void>;
}

export interface Sql extends SqlSession {
  /** Runs `work` on one connection inside BEGIN ... COMMIT; rolls back and rethrows when it throws. */
  transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T>;
}

/** A value as COPY's text format reads it: backslash, tab and line ends escaped; null as \N. */
export function copyText(value: string | null): string {
  if (value === null) return '\\N';
  return COPY_SPECIAL.test(value) ? value.replace(COPY_SPECIAL_ALL, (c) => COPY_ESCAPES[c]!) : value;
}

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIAL_ALL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

const INT8_OID = 20;

const pgTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (text: string) => BigInt(text) : pg.types.getTypeParser(oid, format),
} as pg.CustomTypesConfig;

/** On PostgreSQL: statements through node-postgres on the pool Prisma uses too. */
export function postgresSql(pool: pg.Pool, onStatement: () => void): Sql {
  const run = async <R>(client: pg.Pool | pg.PoolClient, text: string, values?: readonly unknown[]) => {
    onStatement();
    const result = await client.query({ text, values: values as unknown[] | undefined, types: pgTypes });
    return result.rows as R[];
  };
  return {
    query: (text, values) => run(pool, text, values),
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await run(client, 'BEGIN');
        const result = await work({
          query: (text, values) => run(client, text, values),
          async copyInto(table, columns, data) {
            onStatement();
            const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
            stream.end(data);
            await finished(stream);
          },
        });
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
        .transaction((tx) =>
          work({
            query: (text, values) => run(tx, text, values),
            async copyInto(table, columns, data) {
              onStatement();
              await tx.query(`COPY ${table} (${columns.join(', ')}) FROM '/dev/blob'`, [], { blob: new Blob([data]) });
            },
          }),
        )
        .finally(onStatement);
    },
  };
}
