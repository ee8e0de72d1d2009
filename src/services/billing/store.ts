import { offsetPageReads } from '../../db/offset-pages.js';
import { named } from '../../db/prisma-names.js';
import { statement, type SqlSession, type SqlTransaction } from '../../db/sql.js';
import type { CreditTransactionKind, Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { uuidv7 } from '../ids.js';
import type { Balances, TransactionQuery } from './ledger.js';
import { IN_FLIGHT_SQL } from '../call-outcomes.js';

// The billing store: every statement billing sends, each under its name. Money moves only in plain SQL
// transactions (`ctx.sql.transaction`), which both drivers provide; Prisma only reads.

const BALANCE_COLUMNS = `balance_cents AS "balanceCents", included_remaining_cents AS "includedRemainingCents", held_cents AS "heldCents"`;

// Accounts

const readBalancesStatement = statement<Balances>(
  'billing.readBalances',
  `SELECT ${BALANCE_COLUMNS} FROM credit_accounts WHERE user_id = $1::uuid`,
);

/** An account's balances without a lock; undefined when the user has no account yet. */
export async function readBalances(sql: SqlSession, userId: string): Promise<Balances | undefined> {
  const [account] = await sql.run(readBalancesStatement, [userId]);
  return account;
}

const createAccountStatement = statement(
  'billing.createAccount',
  'INSERT INTO credit_accounts (user_id, updated_at) VALUES ($1::uuid, $2) ON CONFLICT (user_id) DO NOTHING',
);

/** Creates the user's account (balances 0) unless it exists. */
export async function createAccount(tx: SqlTransaction, userId: string, now: Date): Promise<void> {
  await tx.run(createAccountStatement, [userId, now]);
}

const lockAccountsStatement = statement<{ user_id: string } & Balances>(
  'billing.lockAccounts',
  `SELECT user_id, ${BALANCE_COLUMNS} FROM credit_accounts WHERE user_id = ANY($1::uuid[]) ORDER BY user_id FOR UPDATE`,
);

/** Locks the accounts that exist among these users, in user id order, until the transaction ends. */
export function lockAccountRows(tx: SqlTransaction, userIds: string[]) {
  return tx.run(lockAccountsStatement, [userIds]);
}

// Holds

// Only attempts still unfinished are held, each row locked first: a worker cut off from the database
// for longer than the lease may send its hold after another worker's sweep failed the attempt and
// released whatever it held, and a hold written then would never be closed. The lock orders this
// statement with the sweep either way (attempts first, then the account, as every dialer write does).
const holdCallsStatement = statement<{ covered: boolean }>(
  'billing.holdCalls',
  `WITH live AS (
     SELECT id FROM call_attempts
     WHERE id = ANY($2::uuid[]) AND status IN ${IN_FLIGHT_SQL}
     ORDER BY id FOR SHARE
   ), total AS (
     SELECT $4::bigint * count(*) AS cents FROM live
   ), account AS (
     UPDATE credit_accounts SET held_cents = held_cents + (SELECT cents FROM total), updated_at = $3
     WHERE user_id = $1::uuid AND (SELECT cents FROM total) > 0
       AND balance_cents + included_remaining_cents - held_cents >= (SELECT cents FROM total)
     RETURNING user_id
   ), held AS (
     INSERT INTO credit_holds (id, user_id, call_attempt_id, amount_cents, status, created_at)
     SELECT h.id, $1::uuid, h.call_attempt_id, $4::bigint, 'held', $3
     FROM unnest($2::uuid[], $5::uuid[]) AS h(call_attempt_id, id)
     WHERE EXISTS (SELECT 1 FROM account) AND h.call_attempt_id IN (SELECT id FROM live)
   )
   SELECT EXISTS (SELECT 1 FROM account) OR (SELECT cents FROM total) = 0 AS covered`,
);

/**
 * Holds `estimateCents` for each call attempt still unfinished when the account's effective balance
 * covers them all, in one statement (it takes the account's row lock); false, changing nothing, when it
 * does not.
 */
export async function holdCalls(
  tx: SqlSession,
  now: Date,
  userId: string,
  callAttemptIds: string[],
  estimateCents: bigint,
): Promise<boolean> {
  const [row] = await tx.run(holdCallsStatement, [userId, callAttemptIds, now, estimateCents, callAttemptIds.map(() => uuidv7())]);
  return row!.covered;
}

export interface HoldRow {
  call_attempt_id: string;
  user_id: string;
  status: 'held' | 'settled' | 'released';
  amount_cents: bigint;
}

const holdsStatement = statement<HoldRow>(
  'billing.holds',
  'SELECT call_attempt_id, user_id, status::text, amount_cents FROM credit_holds WHERE call_attempt_id = ANY($1::uuid[])',
);

/** The holds of these call attempts (those that have one). */
export function holdsOf(tx: SqlSession, callAttemptIds: string[]): Promise<HoldRow[]> {
  return tx.run(holdsStatement, [callAttemptIds]);
}

// The ledger

/** Cents as the statement below reads them from JSON: decimal text, exact at any size. */
type CentsText = string;

/** One ledger row as it is written. */
export interface LedgerRow {
  id: string;
  user_id: string;
  kind: CreditTransactionKind;
  amount_cents: CentsText;
  balance_after_cents: CentsText;
  included_after_cents: CentsText;
  description: string;
  campaign_id?: string | null | undefined;
  call_attempt_id?: string | null | undefined;
  receipt_url?: string | null | undefined;
  invoice_url?: string | null | undefined;
  external_id?: string | null | undefined;
}

/** What a move changes on one account: signed changes to the balances, and what is no longer held. */
export interface AccountChange {
  user_id: string;
  purchased: CentsText;
  included: CentsText;
  released: CentsText;
}

const moveMoneyStatement = statement<{ user_id: string }>(
  'billing.moveMoney',
  `WITH settled AS (
     UPDATE credit_holds SET status = 'settled', closed_at = $4 WHERE call_attempt_id = ANY($1::uuid[]) AND status <> 'settled'
   ), released AS (
     UPDATE credit_holds SET status = 'released', closed_at = $4 WHERE call_attempt_id = ANY($2::uuid[]) AND status = 'held'
   ), ledger AS (
     INSERT INTO credit_transactions (id, user_id, kind, amount_cents, balance_after_cents, included_after_cents, description,
                                      campaign_id, call_attempt_id, receipt_url, invoice_url, external_id, created_at)
     SELECT r.id, r.user_id, r.kind, r.amount_cents, r.balance_after_cents, r.included_after_cents, r.description,
            r.campaign_id, r.call_attempt_id, r.receipt_url, r.invoice_url, r.external_id, $4
     FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, user_id uuid, kind "CreditTransactionKind", amount_cents bigint, balance_after_cents bigint,
                                             included_after_cents bigint, description text, campaign_id uuid, call_attempt_id uuid,
                                             receipt_url text, invoice_url text, external_id text)
   )
   UPDATE credit_accounts a SET balance_cents = a.balance_cents + d.purchased, included_remaining_cents = a.included_remaining_cents + d.included,
     held_cents = a.held_cents - d.released, updated_at = $4
   FROM jsonb_to_recordset($5::jsonb) AS d(user_id uuid, purchased bigint, included bigint, released bigint)
   WHERE a.user_id = d.user_id
   RETURNING a.user_id`,
);

/**
 * In one statement: appends the ledger rows, changes the accounts' balances by `changes`, closes the holds
 * of `settled` (paid for) and of `released` (given back) call attempts. Returns the ids of the accounts
 * changed.
 */
export async function writeMove(
  tx: SqlTransaction,
  now: Date,
  rows: LedgerRow[],
  changes: AccountChange[],
  settled: string[],
  released: string[],
): Promise<string[]> {
  const updated = await tx.run(moveMoneyStatement, [settled, released, JSON.stringify(rows), now, JSON.stringify(changes)]);
  return updated.map((u) => u.user_id);
}

const callHistoryStatement = statement<{ calls: number; billedSeconds: bigint }>(
  'billing.callHistory',
  `WITH recent AS (
     SELECT id, duration_seconds FROM call_attempts
     WHERE user_id = $1::uuid AND ended_at IS NOT NULL
     ORDER BY created_at DESC, id DESC
     LIMIT $2
   )
   SELECT count(*)::int AS calls,
          COALESCE(sum(r.duration_seconds) FILTER (
            WHERE EXISTS (SELECT 1 FROM credit_transactions t WHERE t.call_attempt_id = r.id AND t.kind = 'call_charge')
          ), 0)::bigint AS "billedSeconds"
   FROM recent r`,
);

/** The user's latest `limit` ended calls: how many, and the seconds of those that were charged. */
export async function callHistory(sql: SqlSession, userId: string, limit: number): Promise<{ calls: number; billedSeconds: bigint }> {
  const [row] = await sql.run(callHistoryStatement, [userId, limit]);
  return row!;
}

const paymentCreditedStatement = statement('billing.paymentCredited', 'SELECT 1 FROM credit_transactions WHERE external_id = $1');

/** Whether the payment with this provider id is in the ledger already. */
export async function paymentCredited(tx: SqlSession, externalId: string): Promise<boolean> {
  return (await tx.run(paymentCreditedStatement, [externalId])).length > 0;
}

const claimDeliveryStatement = statement(
  'billing.claimDelivery',
  // A repeat inserts no row: the table's trigger (webhook_deliveries_once) skips a key recorded already.
  `INSERT INTO webhook_deliveries (id, source, event_key) VALUES ($1::uuid, $2, $3) RETURNING id`,
);

/**
 * Records a webhook delivery; false when it was recorded already. A concurrent claim of the same event
 * waits for this transaction, and then finds it recorded (or claims it, if this one rolled back).
 */
export async function claimDelivery(tx: SqlTransaction, source: string, eventKey: string): Promise<boolean> {
  return (await tx.run(claimDeliveryStatement, [uuidv7(), source, eventKey])).length > 0;
}

// Reads through Prisma: the ledger as the GraphQL schema (its selections) and v1 read it.

export function findTransactions<Q extends TransactionQuery & Pick<Prisma.CreditTransactionFindManyArgs, 'take' | 'skip' | 'cursor'>>(
  db: PrismaClient,
  where: Prisma.CreditTransactionWhereInput,
  query: Q,
): Promise<Prisma.CreditTransactionGetPayload<Q>[]> {
  return named(
    'billing.transactions',
    () =>
      db.creditTransaction.findMany({ ...query, where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] }) as Promise<
        Prisma.CreditTransactionGetPayload<Q>[]
      >,
  );
}

/** The user's ledger rows of these ids, newest first. */
export function findTransactionsByIds<Q extends TransactionQuery>(
  db: PrismaClient,
  userId: string,
  ids: string[],
  query: Q,
): Promise<Prisma.CreditTransactionGetPayload<Q>[]> {
  return named(
    'billing.transactions',
    () =>
      db.creditTransaction.findMany({
        ...query,
        where: { id: { in: ids }, userId },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      }) as Promise<Prisma.CreditTransactionGetPayload<Q>[]>,
  );
}

/** The user's whole ledger at a deep offset, from `(user_id, created_at DESC, id)` (src/db/offset-pages.ts). */
export const ledgerPages = offsetPageReads({
  name: 'billing.ledger',
  table: 'credit_transactions',
  where: 'user_id = $1::uuid',
  params: 1,
  partitionedByIdTime: true,
});

export function countTransactions(db: PrismaClient, where: Prisma.CreditTransactionWhereInput): Promise<number> {
  return named('billing.countTransactions', () => db.creditTransaction.count({ where }));
}

/** One of the user's ledger rows, or null. */
export function findTransaction<Q extends TransactionQuery>(
  db: PrismaClient,
  userId: string,
  id: string,
  query: Q,
): Promise<Prisma.CreditTransactionGetPayload<Q> | null> {
  return named(
    'billing.transaction',
    () => db.creditTransaction.findFirst({ ...query, where: { id, userId } }) as Promise<Prisma.CreditTransactionGetPayload<Q> | null>,
  );
}

const thresholdStatement = statement<{ threshold: bigint | null }>(
  'billing.lowBalanceThreshold',
  'SELECT low_balance_threshold_cents AS threshold FROM credit_accounts WHERE user_id = $1::uuid',
);

export async function readLowBalanceThreshold(sql: SqlSession, userId: string): Promise<bigint | null> {
  return (await sql.run(thresholdStatement, [userId]))[0]?.threshold ?? null;
}

const setThresholdStatement = statement(
  'billing.setLowBalanceThreshold',
  'UPDATE credit_accounts SET low_balance_threshold_cents = $2, updated_at = $3 WHERE user_id = $1::uuid',
);

export async function setLowBalanceThreshold(tx: SqlTransaction, userId: string, cents: bigint | null, now: Date): Promise<void> {
  await tx.run(setThresholdStatement, [userId, cents === null ? null : String(cents), now]);
}

const capRoomsStatement = statement<{ campaignId: string; room: bigint }>(
  'billing.lockCapRooms',
  `SELECT s.campaign_id AS "campaignId", k.spend_cap_cents - s.spent_cents AS room
   FROM campaign_spend s JOIN campaigns k ON k.id = s.campaign_id
   WHERE s.campaign_id = ANY($1::uuid[]) AND k.spend_cap_cents IS NOT NULL
   ORDER BY s.campaign_id
   FOR UPDATE OF s`,
);

/** Locks the spend of those campaigns that have a cap (in campaign id order); what each may still be charged. */
export async function lockCapRooms(tx: SqlTransaction, campaignIds: string[]): Promise<Map<string, bigint>> {
  const rows = await tx.run(capRoomsStatement, [campaignIds]);
  return new Map(rows.map((r) => [r.campaignId, r.room < 0n ? 0n : r.room]));
}

const addSpendStatement = statement(
  'billing.addSpend',
  `UPDATE campaign_spend s SET spent_cents = s.spent_cents + r.cents
   FROM (SELECT * FROM unnest($1::uuid[], $2::bigint[]) AS r(campaign_id, cents) ORDER BY campaign_id) r
   WHERE s.campaign_id = r.campaign_id`,
);

/** Adds what calls were charged to their campaigns' spend. */
export async function addSpend(tx: SqlTransaction, spent: Map<string, bigint>): Promise<void> {
  if (spent.size === 0) return;
  await tx.run(addSpendStatement, [[...spent.keys()], [...spent.values()].map(String)]);
}

const forgetCallsStatement = statement(
  'billing.forgetCalls',
  `WITH holds AS (DELETE FROM credit_holds WHERE call_attempt_id >= $1::uuid AND call_attempt_id < $2::uuid)
   UPDATE credit_transactions SET call_attempt_id = NULL WHERE call_attempt_id >= $1::uuid AND call_attempt_id < $2::uuid`,
);

/**
 * Lets go of the call attempts with ids in [from, to) (a month's, dropped past its retention): their
 * charges stay in the ledger, unlinked, and a hold of theirs (none by then) goes.
 */
export async function forgetCalls(sql: SqlSession, from: string, to: string): Promise<void> {
  await sql.run(forgetCallsStatement, [from, to]);
}
