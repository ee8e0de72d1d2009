import type { SqlSession } from '../../db/sql.js';
import { recountGroup } from './store.js';

/**
 * Recounts the contacts of the groups inside the caller's transaction, so totals never drift. Erased
 * contacts are not counted: for the user they are gone.
 */
export async function refreshTotals(tx: SqlSession, groupIds: string[]): Promise<void> {
  for (const id of new Set(groupIds)) await recountGroup(tx, id);
}
