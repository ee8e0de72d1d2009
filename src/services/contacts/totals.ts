import type { SqlSession } from '../../db/sql.js';
import { addToGroupTotal } from './store.js';

/**
 * Changes the groups' totals (their contacts not erased) by the contacts that joined each (a group id per
 * contact) less those that left, inside the caller's transaction, which holds those contacts' rows: the
 * totals change with the rows, in group order. Recounting read the whole group instead, at each contact
 * added or erased (millions of index entries for the largest lists).
 */
export async function changeTotals(tx: SqlSession, joined: readonly string[], left: readonly string[]): Promise<void> {
  const change = new Map<string, number>();
  for (const id of joined) change.set(id, (change.get(id) ?? 0) + 1);
  for (const id of left) change.set(id, (change.get(id) ?? 0) - 1);
  const groups = [...change].filter(([, by]) => by !== 0).sort(([a], [b]) => (a < b ? -1 : 1));
  for (const [id, by] of groups) await addToGroupTotal(tx, id, by);
}
