import type { SqlSession } from '../../src/db/sql.js';
import { testSql } from './sql.js';

// What "a refused request changed nothing" is checked against: every table's row count and a sum of
// hashes of its rows' text, so that an insert, a delete or a change of any column shows. Tables are read
// from the catalogue, so a table added by a migration is covered without naming it here.

export type Fingerprint = Record<string, string>;

async function tables(sql: SqlSession): Promise<string[]> {
  const rows = await testSql(sql).query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'
     ORDER BY table_name`,
  );
  return rows.map((row) => row.name);
}

/** One statement over every table; a sum of hashes, unlike an ordered aggregate, needs no sort. */
export async function fingerprint(sql: SqlSession): Promise<Fingerprint> {
  const names = await tables(sql);
  const rows = await testSql(sql).query<{ name: string; print: string }>(
    names
      .map(
        (name) => `SELECT '${name}' AS name, count(*) || ':' || coalesce(sum(hashtextextended(t::text, 0)), 0) AS print FROM "${name}" t`,
      )
      .join(' UNION ALL '),
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.print]));
}

/** The tables whose content differs between two fingerprints. */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((name) => before[name] !== after[name]);
}
