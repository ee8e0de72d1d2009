import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { shiftTimestamps, tablesWithRows } from '../db/shift-timestamps.js';
import type { Sql } from '../db/sql.js';
import { shiftHistory } from '../services/campaigns/store.js';
import { setUserCreatedAt, userCreatedAt } from '../services/users/store.js';
import { DEMO_USER_ID } from './seed.js';

// The demo data a first start copies was seeded when `npm install` ran (src/demo/template.ts). A first
// start moves all of it by the time since then, so that yesterday's campaign was called yesterday: every
// timestamp of the tables the seeding wrote (the migrations' own records excepted) and the times the
// campaigns' histories of edits record. The demo user's creation, set when the seeding ended, dates the
// seeding: after a move it is now, so a second move (a start that failed before it removed the marker)
// moves the data by seconds only.

/** The file a demo template's data folder holds until its data has been moved to the present: the tables to move. */
export const REDATE_MARKER = 'callflow-demo-undated';

/**
 * Ends a template's seeding: dates it and leaves the marker in its folder `pgdata`, naming the tables
 * that hold rows (a first start moves only those).
 */
export async function markDemoSeeded(sql: Sql, pgdata: string, at: Date): Promise<void> {
  await setUserCreatedAt(sql, DEMO_USER_ID, at);
  await writeFile(join(pgdata, REDATE_MARKER), JSON.stringify(await tablesWithRows(sql)));
}

/** Moves the demo data in `tables` by the time from its seeding to `now`, in one transaction; false without a demo user. */
async function redateDemo(sql: Sql, tables: readonly string[], now: Date): Promise<boolean> {
  return sql.transaction(async (tx) => {
    const seeded = await userCreatedAt(tx, DEMO_USER_ID);
    if (!seeded) return false;
    const ms = now.getTime() - seeded.getTime();
    await shiftTimestamps(tx, tables, ms);
    await shiftHistory(tx, ms);
    return true;
  });
}

/** Whether the database in `pgdata` was copied from the demo template and its data not moved yet. */
export function holdsUndatedDemo(pgdata: string): boolean {
  return existsSync(join(pgdata, REDATE_MARKER));
}

/** On a start: moves the demo data of a data folder `pgdata` copied from the demo template, once. */
export async function redateCopiedDemo(sql: Sql, pgdata: string, now: Date): Promise<boolean> {
  const marker = join(pgdata, REDATE_MARKER);
  if (!holdsUndatedDemo(pgdata)) return false;
  const moved = await redateDemo(sql, JSON.parse(readFileSync(marker, 'utf8')) as string[], now);
  await rm(marker, { force: true });
  return moved;
}
