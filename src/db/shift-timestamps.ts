import { dynamicStatement, statement, type SqlSession, type SqlTransaction } from './sql.js';

// Moving a database's data in time by one interval (the demo template's data, moved to the present by a
// first start: src/demo/redate.ts). Every timestamp column of the tables named moves, so every order, gap
// and running total stays as it was.

/** Tables outside the migrations' records; partitioned ones through their parent only, which moves their rows. */
const tables = statement<{ table: string }>(
  'db.tables',
  `SELECT c.relname AS table
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> '_prisma_migrations'
    ORDER BY 1`,
);

/** The timestamp columns of the tables named (a table renamed or dropped since is not there). */
const timestampColumns = statement<{ table: string; columns: string[] }>(
  'db.timestampColumns',
  `SELECT c.relname AS table, array_agg(a.attname::text ORDER BY a.attnum) AS columns
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = 'public' AND c.relname = ANY($1::text[])
      AND a.atttypid IN ('timestamptz'::regtype, 'timestamp'::regtype)
    GROUP BY c.relname
    ORDER BY c.relname`,
);

/**
 * A move changes no key and no state, so what triggers keep (running totals, checks of references) stays
 * true without them; as a restore does, it runs none, which saves it a third of its time.
 */
const withoutTriggers = statement('db.withoutTriggers', 'SET LOCAL session_replication_role = replica');

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The tables that hold rows. */
export async function tablesWithRows(sql: SqlSession): Promise<string[]> {
  const found: string[] = [];
  for (const { table } of await sql.run(tables)) {
    const [row] = await sql.run(
      dynamicStatement<{ any: boolean }>('db.tableHasRows', `SELECT EXISTS (SELECT FROM ${quoted(table)}) AS any`),
    );
    if (row?.any) found.push(table);
  }
  return found;
}

/** Moves every timestamp of the tables named by `ms`, inside the caller's transaction, without triggers. */
export async function shiftTimestamps(tx: SqlTransaction, tableNames: readonly string[], ms: number): Promise<void> {
  await tx.run(withoutTriggers);
  for (const { table, columns } of await tx.run(timestampColumns, [tableNames])) {
    const moves = columns.map((column) => `${quoted(column)} = ${quoted(column)} + $1::interval`).join(', ');
    await tx.run(dynamicStatement('db.shiftTimestamps', `UPDATE ${quoted(table)} SET ${moves}`), [`${ms} milliseconds`]);
  }
}
