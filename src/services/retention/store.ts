import { dynamicStatement, statement, type Sql, type SqlTransaction } from '../../db/sql.js';

// The partitions of the tables kept by month (call_attempts, the webhook logs, the ledger: see their migrations). Partition DDL goes
// through the database's own functions (migration call_attempts_partitioned), which the migrations used
// to make the first months: one definition of a month's bounds and names.

const addMonthStatement = statement<{ made: boolean }>(
  'retention.add_month',
  `SELECT month_partition_add($1::regclass, $1::text, $2::date) AS made`,
);

// Attaching a month scans the default partition under an exclusive lock: taken so that readers and
// writers queue behind it for at most a moment at a time.
const lockDefaultStatement = statement('retention.lock_default', `SELECT lock_or_wait($1 || '_default', 'ACCESS EXCLUSIVE')`);

/** Makes `table`'s partition of each month (its first day, UTC) that has none; the months made. */
export async function addMonths(sql: Sql, table: string, months: string[]): Promise<string[]> {
  const made: string[] = [];
  for (const month of months) {
    const added = await sql.transaction(async (tx) => {
      await tx.run(lockDefaultStatement, [table]);
      return (await tx.run(addMonthStatement, [table, month]))[0]!.made;
    });
    if (added) made.push(month);
  }
  return made;
}

const monthsStatement = statement<{ name: string }>(
  'retention.months',
  `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
   WHERE i.inhparent = $1::regclass AND c.relname ~ '_p[0-9]{4}_[0-9]{2}$' ORDER BY c.relname`,
);

/** The months `table` has partitions for, as YYYY-MM-01. */
export async function monthsOf(sql: Sql, table: string): Promise<string[]> {
  const rows = await sql.run(monthsStatement, [table]);
  return rows.map((row) => `${row.name.slice(-7, -3)}-${row.name.slice(-2)}-01`);
}

const boundsStatement = statement<{ from: string; to: string }>(
  'retention.month_bounds',
  `SELECT substring(b.bound FROM 'FROM \\(''([^'']+)''\\)') AS "from", substring(b.bound FROM 'TO \\(''([^'']+)''\\)') AS "to"
   FROM (SELECT pg_get_expr(relpartbound, oid) AS bound FROM pg_class WHERE oid = $1::regclass) AS b`,
);

/** The ids a partition holds, as it was attached: from its month's first possible UUIDv7 to the next month's. */
export async function partitionBounds(sql: Sql, partition: string): Promise<{ from: string; to: string }> {
  return (await sql.run(boundsStatement, [partition]))[0]!;
}

/** The name of `table`'s partition of the month starting `month` (YYYY-MM-01), as month_partition_add names it. */
export const partitionOf = (table: string, month: string) => `${table}_p${month.slice(0, 4)}_${month.slice(5, 7)}`;

const lockStatement = statement('retention.lock', `SELECT lock_or_wait($1, 'ACCESS EXCLUSIVE')`);

/**
 * Detaches `table`'s partition of the month starting `month` and drops it, unless `keep` (asked under the
 * lock, so that no writer changes its answer) says the month must stay; whether it was dropped. Detaching
 * locks the parent for a moment (it cannot be done concurrently beside a default partition), taken
 * without queueing readers and writers behind a long wait.
 */
export async function dropMonth(sql: Sql, table: string, month: string, keep?: (tx: SqlTransaction) => Promise<boolean>): Promise<boolean> {
  const partition = partitionOf(table, month);
  return sql.transaction(async (tx) => {
    await tx.run(lockStatement, [`${table}, ${partition}`]);
    if (keep && (await keep(tx))) return false;
    await tx.run(dynamicStatement('retention.detach_month', `ALTER TABLE ${table} DETACH PARTITION ${partition}`));
    await tx.run(dynamicStatement('retention.drop_month', `DROP TABLE ${partition}`));
    return true;
  });
}
