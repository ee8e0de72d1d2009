import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import * as pgCopy from 'pg-copy-streams';
import { dbNamedStatementDuration, dbNamedStatements } from '../ops/metrics.js';
import { tracingOn } from '../ops/tracing.js';
import { statementSpan } from './statement-spans.js';

// The one way the stores send SQL beside Prisma: named statements over node-postgres or the embedded
// PGlite. Measured on this project's machines, a statement through Prisma costs three to four times the
// CPU of the same statement through node-postgres, so the dialer, the ledger and bulk imports run here.
// Both drivers return the same JavaScript types: bigint for int8, Date for timestamps, parsed JSON for
// json/jsonb. A statement's name is its label in metrics, its prepared-statement name on PostgreSQL, and
// it is added to the error a failed statement throws, so logs say which statement failed.

/** One SQL text with its name (`domain.what`); `Row` is the type of the rows it returns. */
export interface Statement<Row> {
  readonly name: string;
  readonly text: string;
  /** Not prepared on PostgreSQL: a text built at run time (a bulk insert's VALUES list). */
  readonly dynamic: boolean;
  /** The name it is prepared under when that is not its name (one name, several generated texts). */
  readonly preparedAs?: string;
  /** Carries the row type only; never set. */
  readonly row?: Row;
}

const declared = new Map<string, string>();

/**
 * Declares a statement once, at a store's module level. Two different texts under one name are a
 * programming error, refused at load time so that a name always means one statement.
 */
export function statement<Row = Record<string, unknown>>(name: string, text: string): Statement<Row> {
  const known = declared.get(name);
  if (known !== undefined && known !== text) throw new Error(`Two SQL statements are named ${name}.`);
  declared.set(name, text);
  return { name, text, dynamic: false };
}

/** A statement whose text is built at run time (bounded shapes only); it runs unprepared. */
export function dynamicStatement<Row = Record<string, unknown>>(name: string, text: string): Statement<Row> {
  return { name, text, dynamic: true };
}

/** Generated texts prepared so far; past the cap, new ones run unprepared so a server's sessions stay bounded. */
const generated = new Map<string, Statement<unknown>>();
const MAX_GENERATED = 500;

/**
 * A statement whose text is generated from a bounded set of shapes (a compiled GraphQL read): each text is
 * prepared once per connection under its own name, while metrics and errors carry `name`.
 */
export function generatedStatement<Row = Record<string, unknown>>(name: string, text: string): Statement<Row> {
  const known = generated.get(text);
  if (known) return known as Statement<Row>;
  if (generated.size >= MAX_GENERATED) return dynamicStatement(name, text);
  const prepared = { name, text, dynamic: false, preparedAs: `${name}.${generated.size + 1}` };
  generated.set(text, prepared);
  return prepared;
}

export interface SqlSession {
  /** The rows of one statement; `$1`, `$2`, ... take `values`. */
  run<Row>(statement: Statement<Row>, values?: readonly unknown[]): Promise<Row[]>;
}

/** Counts and times a statement under its name (Prisma's too, see prisma-names.ts); the labelled series are looked up once per statement. */
export async function measured<T>(statement: Statement<unknown>, send: () => Promise<T>): Promise<T> {
  let series = SERIES.get(statement.name);
  if (!series) {
    series = { count: dbNamedStatements.labels(statement.name), duration: dbNamedStatementDuration.labels(statement.name) };
    SERIES.set(statement.name, series);
  }
  series.count.inc();
  const started = performance.now();
  try {
    return await (tracingOn() ? statementSpan(statement, send) : send());
  } catch (error) {
    if (error && typeof error === 'object') Object.assign(error, { statement: statement.name });
    throw error;
  } finally {
    series.duration.observe((performance.now() - started) / 1000);
  }
}

const SERIES = new Map<
  string,
  { count: ReturnType<typeof dbNamedStatements.labels>; duration: ReturnType<typeof dbNamedStatementDuration.labels> }
>();

const pingStatement = statement('db.ping', 'SELECT 1');

/** Resolves once the database answers a trivial statement. */
export async function ping(sql: SqlSession): Promise<void> {
  await sql.run(pingStatement);
}

/** A session inside a transaction, which can also load rows in bulk. */
export interface SqlTransaction extends SqlSession {
  /**
   * Starts loading rows into `table` with COPY, which costs the database less than INSERT from a JSON
   * document. Nothing else may run in the transaction until the COPY ends; if the transaction's work
   * throws first, the COPY is cancelled with it.
   */
  copyInto(table: string, columns: readonly string[]): CopyWriter;
}

/** Rows on their way into a COPY, in its text format: one row a line, tab-separated, values through copyText. */
export interface CopyWriter {
  /** Resolves once the database is ready for more: awaiting it keeps what is buffered small. */
  write(lines: string): Promise<void>;
  /** Resolves once the database has every row. */
  end(): Promise<void>;
}

export interface TransactionOptions {
  /**
   * A wait for a row lock longer than this fails the statement (55P03, lock_not_available): set with
   * BEGIN, in the same round trip, for this transaction only.
   */
  lockTimeoutMs?: number;
}

export interface Sql extends SqlSession {
  /** Runs `work` on one connection inside BEGIN ... COMMIT; rolls back and rethrows when it throws. */
  transaction<T>(work: (tx: SqlTransaction) => Promise<T>, options?: TransactionOptions): Promise<T>;
}

/** SET LOCAL takes no parameters: the value is written into the text, a whole number of milliseconds. */
function setLockTimeout(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0) throw new Error(`lockTimeoutMs must be a whole number of milliseconds, not ${ms}`);
  return `SET LOCAL lock_timeout = ${ms}`;
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

/**
 * On PostgreSQL: statements through node-postgres on the pool Prisma uses too. `prepare` false: none is
 * prepared under a name, for a pooler in transaction mode, whose server sessions change between
 * transactions (a name prepared on one is unknown on the next).
 */
export function postgresSql(pool: pg.Pool, onStatement: () => void, prepare = true): Sql {
  // A declared statement is prepared once per connection under its name, which stands for one text
  // (statement() refuses a second); a text built at run time goes unprepared, as do BEGIN and COMMIT.
  const run = async <R>(client: pg.Pool | pg.PoolClient, text: string, values?: readonly unknown[], name?: string) => {
    onStatement();
    const result = await client.query({ name, text, values: values as unknown[] | undefined, types: pgTypes });
    return result.rows as R[];
  };
  const runNamed = <R>(client: pg.Pool | pg.PoolClient, statement: Statement<R>, values?: readonly unknown[]) =>
    measured(statement, () =>
      run<R>(
        client,
        statement.text,
        values,
        statement.dynamic || !prepare ? undefined : `callflow.${statement.preparedAs ?? statement.name}`,
      ),
    );
  return {
    run: (statement, values) => runNamed(pool, statement, values),
    async transaction(work, options) {
      const client = await pool.connect();
      let copying: pgCopy.CopyStreamQuery | undefined;
      let broken: Error | undefined;
      // The server may end the session between statements (idle_in_transaction_session_timeout, a
      // restart): an 'error' event nobody listens to would end the process. The next statement fails.
      const onError = (error: Error) => (broken = error);
      client.on('error', onError);
      try {
        await run(client, options?.lockTimeoutMs === undefined ? 'BEGIN' : `BEGIN; ${setLockTimeout(options.lockTimeoutMs)}`);
        const result = await work({
          run: (statement, values) => runNamed(client, statement, values),
          copyInto(table, columns) {
            onStatement();
            const stream = client.query(pgCopy.from(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
            copying = stream;
            const done = finished(stream);
            // end() or the rollback below waits for it; a failure meanwhile must not count as unhandled.
            done.catch(() => {});
            return {
              async write(lines) {
                if (!stream.write(lines)) await Promise.race([once(stream, 'drain'), done]);
              },
              async end() {
                stream.end();
                await done;
                copying = undefined;
              },
            };
          },
        });
        await run(client, 'COMMIT');
        return result;
      } catch (error) {
        try {
          // A COPY still open holds the connection: cancelling it (CopyFail) lets the ROLLBACK through.
          if (copying) await finished(copying.destroy()).catch(() => {});
          await run(client, 'ROLLBACK');
        } catch (rollbackError) {
          // A connection that cannot roll back is not given back to the pool.
          broken = rollbackError as Error;
        }
        throw error;
      } finally {
        client.off('error', onError);
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
    run: (statement, values) => measured(statement, () => run(pglite, statement.text, values)),
    // PGlite sends BEGIN and COMMIT (or ROLLBACK) itself; they are counted like node-postgres' ones.
    transaction: (work, options) => {
      onStatement();
      return pglite
        .transaction(async (tx) => {
          // One connection: no lock is ever waited for, but the setting holds as on PostgreSQL.
          if (options?.lockTimeoutMs !== undefined) await tx.exec(setLockTimeout(options.lockTimeoutMs));
          return work({
            run: (statement, values) => measured(statement, () => run(tx, statement.text, values)),
            // PGlite reads a COPY's data from one blob: the rows are kept outside the JS heap until the end.
            copyInto(table, columns) {
              const parts: Blob[] = [];
              return {
                write: async (lines) => void parts.push(new Blob([lines])),
                async end() {
                  onStatement();
                  await tx.query(`COPY ${table} (${columns.join(', ')}) FROM '/dev/blob'`, [], { blob: new Blob(parts) });
                },
              };
            },
          });
        })
        .finally(onStatement);
    },
  };
}
