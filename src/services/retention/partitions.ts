import * as billing from '../billing/store.js';
import type { SqlTransaction } from '../../db/sql.js';
import type { ServiceEnv } from '../context.js';
import { RECORD_RETENTION_YEARS } from '../results/records.js';
import * as results from '../results/store.js';
import * as webhooks from '../webhooks/store.js';
import { addMonths, dropMonth, monthsOf, partitionBounds, partitionOf } from './store.js';

/**
 * Records kept RECORD_RETENTION_YEARS as the calls are, partitioned by month on their UUIDv7 ids, that no
 * other table references: a month of them goes whole once all of it is older. The ledger, the calls
 * rules stopped (a block's `until` is a record of the rule's wait, read by nothing that decides a dial),
 * and campaigns' histories (read a page at a time from a `seq`, which a missing older entry does not move).
 */
export const RECORD_TABLES = ['credit_transactions', 'dial_blocks', 'campaign_changes'] as const;

/** The tables partitioned by month on their UUIDv7 ids. */
export const MONTHLY_TABLES = ['call_attempts', 'webhook_deliveries', 'webhook_events', 'webhook_messages', ...RECORD_TABLES] as const;

/**
 * Providers' webhook deliveries (Stripe, Retell, Twilio) are remembered to drop a repeat of an event:
 * providers retry for up to three days (Stripe), so a month is ample.
 */
export const DELIVERIES_KEPT_DAYS = 30;

const DAY_MS = 86_400_000;

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

/**
 * Drops the months of the records kept as long as the calls (the ledger, dial blocks, campaign history) past their five years, whole
 * partitions at once. No table references them, so nothing a row kept names goes with them. Answers the
 * months dropped, by table.
 */
export async function dropExpiredRecordMonths(env: ServiceEnv): Promise<Record<string, string[]>> {
  const oldest = monthStart(env.clock.now(), -RECORDS_KEPT_MONTHS);
  const dropped: Record<string, string[]> = {};
  for (const table of RECORD_TABLES) {
    dropped[table] = (await monthsOf(env.sql, table)).filter((month) => month < oldest);
    for (const month of dropped[table]) {
      await dropMonth(env.sql, table, month);
      env.log.info({ table, month }, 'retention: month dropped');
    }
  }
  return dropped;
}

/** `table`'s months wholly older than `days` before now: the next month starts at or before that instant. */
async function monthsOlderThan(env: ServiceEnv, table: string, days: number): Promise<string[]> {
  const cutoff = new Date(env.clock.now().getTime() - days * DAY_MS).toISOString();
  return (await monthsOf(env.sql, table)).filter((month) => monthStart(new Date(month), 1) <= cutoff);
}

/**
 * Drops the webhook logs' months past their retention, whole partitions at once: providers' deliveries
 * after DELIVERIES_KEPT_DAYS; customers' events and their deliveries after the webhook log's setting, a
 * month of deliveries only once none of it is pending (it waits for the last retry), and a month of
 * events only once no delivery kept sends one of them (a replay made later names an older event).
 * Answers the months dropped, by table.
 */
export async function dropExpiredWebhookMonths(env: ServiceEnv): Promise<Record<string, string[]>> {
  const dropped: Record<string, string[]> = { webhook_deliveries: [], webhook_messages: [], webhook_events: [] };
  const kept = env.settings.webhookLogRetentionDays;
  const expired: [string, number, (from: string, to: string) => (tx: SqlTransaction) => Promise<boolean>][] = [
    ['webhook_deliveries', DELIVERIES_KEPT_DAYS, () => async () => false],
    ['webhook_messages', kept, (from, to) => (tx) => webhooks.pendingMessagesBetween(tx, from, to)],
    ['webhook_events', kept, (from, to) => (tx) => webhooks.messagesOfEventsBetween(tx, from, to)],
  ];
  for (const [table, days, keep] of expired) {
    for (const month of await monthsOlderThan(env, table, days)) {
      const { from, to } = await partitionBounds(env.sql, partitionOf(table, month));
      if (await dropMonth(env.sql, table, month, keep(from, to))) {
        dropped[table]!.push(month);
        env.log.info({ table, month }, 'retention: month dropped');
      } else {
        env.log.info({ table, month }, 'retention: month past retention kept, still in use');
      }
    }
  }
  return dropped;
}
