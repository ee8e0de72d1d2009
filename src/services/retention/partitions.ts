import * as billing from '../billing/store.js';
import type { ServiceEnv } from '../context.js';
import { RECORD_RETENTION_YEARS } from '../results/records.js';
import * as results from '../results/store.js';
import { addMonths, dropMonth, monthsOf, partitionBounds, partitionOf } from './store.js';

/** The tables partitioned by month on their UUIDv7 ids. */
export const MONTHLY_TABLES = ['call_attempts'] as const;

/**
 * Months made ahead of the current one: a row always finds its month's partition, and a run that fails
 * (a lock not had) has three more months of runs to succeed. A row of a month without its partition
 * would land in the default one and stop that month's partition from being attached.
 */
export const MONTHS_AHEAD = 3;

/** Call records are kept RECORD_RETENTION_YEARS (TSR): a month goes once all of it is older. */
const RECORDS_KEPT_MONTHS = RECORD_RETENTION_YEARS * 12;

/** The first day (UTC, YYYY-MM-01) of the month `offset` months from `at`'s. */
export function monthStart(at: Date, offset = 0): string {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1)).toISOString().slice(0, 10);
}

/** Makes the partitions of this month and the next MONTHS_AHEAD that are missing; the months made, by table. */
export async function makeMonthsAhead(env: ServiceEnv): Promise<Record<string, string[]>> {
  const now = env.clock.now();
  const months = Array.from({ length: MONTHS_AHEAD + 1 }, (_, i) => monthStart(now, i));
  const made: Record<string, string[]> = {};
  for (const table of MONTHLY_TABLES) {
    made[table] = await addMonths(env.sql, table, months);
    if (made[table].length) env.log.info({ table, months: made[table] }, 'retention: partitions made');
  }
  return made;
}

/**
 * Drops the months of call attempts past their five years, whole partitions at once (no row is deleted,
 * so no trigger runs: a report's running totals keep counting the calls). Charges and appointments that
 * name those calls stay, unlinked first. Answers the months dropped.
 */
export async function dropExpiredMonths(env: ServiceEnv): Promise<string[]> {
  const oldest = monthStart(env.clock.now(), -RECORDS_KEPT_MONTHS);
  const expired = (await monthsOf(env.sql, 'call_attempts')).filter((month) => month < oldest);
  for (const month of expired) {
    const { from, to } = await partitionBounds(env.sql, partitionOf('call_attempts', month));
    await billing.forgetCalls(env.sql, from, to);
    await results.forgetCalls(env.sql, from, to);
    await dropMonth(env.sql, 'call_attempts', month);
    env.log.info({ table: 'call_attempts', month }, 'retention: month dropped');
  }
  return expired;
}
