import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { CreditHold, CreditTransaction, PrismaClient } from '../../generated/prisma/client.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { uuidv7 } from '../ids.js';
import { parseInput, uuid } from '../validation.js';
import { effectiveCents, MAX_CREDIT_CENTS, type Balances, type LedgerContext } from './ledger.js';

// How the dialer pays for calls: hold an estimate when a call starts, settle the real cost when it ends,
// release the hold when it fails. Each step is idempotent per call attempt, so a repeated provider
// event cannot charge twice.

/** Billed per second, rounded up to a whole cent. */
export function callCostCents(durationSeconds: number, rateCentsPerMinute: number): bigint {
  return (BigInt(durationSeconds) * BigInt(rateCentsPerMinute) + 59n) / 60n;
}

export const holdForCallInput = z.object({
  userId: uuid,
  callAttemptId: uuid,
  campaignId: uuid,
  estimateCents: z.bigint().min(1n).max(MAX_CREDIT_CENTS),
});
export type HoldForCallInput = z.input<typeof holdForCallInput>;

/**
 * Reserves `estimateCents` for a call about to start. Refused with a ConflictError (reason
 * `insufficient_credits`) when the effective balance cannot cover it. A second hold for the same call
 * attempt returns the first one unchanged.
 */
export async function holdForCall(ctx: LedgerContext, raw: HoldForCallInput): Promise<CreditHold> {
  const input = parseInput(holdForCallInput, raw);
  const attempt = await ctx.db.callAttempt.findFirst({
    where: { id: input.callAttemptId, userId: input.userId, campaignId: input.campaignId },
    select: { id: true },
  });
  if (!attempt) throw new NotFoundError('CallAttempt');

  await ctx.sql.transaction(async (tx) => {
    const account = (await lockAccounts(tx, [input.userId])).get(input.userId)!;
    const existing = await tx.query('SELECT 1 FROM credit_holds WHERE call_attempt_id = $1::uuid', [input.callAttemptId]);
    if (existing.length) return;
    const available = effectiveCents(account);
    if (available < input.estimateCents) {
      throw new ConflictError(
        `Insufficient credits: the call needs ${input.estimateCents} cents and ${available} cents are available.`,
        'insufficient_credits',
      );
    }
    await holdCalls(tx, ctx.clock.now(), input.userId, [input.callAttemptId], input.estimateCents);
  });
  return ctx.db.creditHold.findUniqueOrThrow({ where: { callAttemptId: input.callAttemptId } });
}

export const settleCallInput = z.object({ callAttemptId: uuid, durationSeconds: z.int().min(0) });
export type SettleCallInput = z.input<typeof settleCallInput>;

/**
 * Ends a held call: releases its hold and writes its one `call_charge`, taken from included credits
 * first, then purchased ones. When the cost exceeds both (the call outran its estimate while other calls
 * spent the rest), what is left is charged and the shortfall is written off, named in the description:
 * balances never go below zero. A repeated settle returns the first charge; a settle after a release
 * (a late report of a call given up on) still charges, since the call did happen.
 */
export async function settleCall(ctx: LedgerContext, raw: SettleCallInput): Promise<CreditTransaction> {
  const input = parseInput(settleCallInput, raw);
  const hold = await findHold(ctx.db, input.callAttemptId);
  const call = { ...input, userId: hold.userId, campaignId: hold.callAttempt.campaignId };
  await ctx.sql.transaction(async (tx) => endCalls(tx, ctx, await lockAccounts(tx, [hold.userId]), [call], []));
  return ctx.db.creditTransaction.findFirstOrThrow({ where: { callAttemptId: input.callAttemptId, kind: 'call_charge' } });
}

/** Gives a failed call's hold back. Releasing twice, or after a settle, or with no hold, changes nothing. */
export async function releaseHold(ctx: LedgerContext, callAttemptId: string): Promise<void> {
  const id = parseInput(uuid, callAttemptId);
  const hold = await ctx.db.creditHold.findUnique({ where: { callAttemptId: id }, select: { userId: true } });
  if (!hold) return;
  await ctx.sql.transaction(async (tx) => endCalls(tx, ctx, await lockAccounts(tx, [hold.userId]), [], [id]));
}

// The batch forms below are what the dialer uses, inside its own transactions, in plain SQL. Every
// change to an account's balances or holds first locks its credit_accounts row (lockAccounts), so that
// concurrent changes queue on that row instead of overwriting each other.

/**
 * Locks the credit accounts of these users (SELECT ... FOR UPDATE, in user id order) until the
 * transaction ends, and reads their balances. A user without an account has nothing: zero balances,
 * and no row to lock, since nothing can be held or charged against it.
 */
export async function lockAccounts(tx: SqlSession, userIds: string[]): Promise<Map<string, Balances>> {
  const rows = await tx.query<{ user_id: string } & Balances>(
    `SELECT user_id, balance_cents AS "balanceCents", included_remaining_cents AS "includedRemainingCents", held_cents AS "heldCents"
     FROM credit_accounts WHERE user_id = ANY($1::uuid[]) ORDER BY user_id FOR UPDATE`,
    [[...new Set(userIds)]],
  );
  const accounts = new Map<string, Balances>(rows.map(({ user_id, ...balances }) => [user_id, balances]));
  for (const userId of userIds) if (!accounts.has(userId)) accounts.set(userId, { balanceCents: 0n, includedRemainingCents: 0n, heldCents: 0n });
  return accounts;
}

/**
 * Reserves `estimateCents` for each call attempt when the account's effective balance covers them all,
 * checked and changed in one statement: the account's row lock is taken here and held only until the
 * caller commits, so a caller may decide how many calls to try on an unlocked read of the balances.
 * Returns false, changing nothing, when the balance does not cover them.
 */
export async function holdCalls(tx: SqlSession, now: Date, userId: string, callAttemptIds: string[], estimateCents: bigint): Promise<boolean> {
  if (callAttemptIds.length === 0) return true;
  const total = estimateCents * BigInt(callAttemptIds.length);
  const held = await tx.query(
    `WITH account AS (
       UPDATE credit_accounts SET held_cents = held_cents + $6::bigint, updated_at = $3
       WHERE user_id = $1::uuid AND balance_cents + included_remaining_cents - held_cents >= $6::bigint
       RETURNING user_id
     )
     INSERT INTO credit_holds (id, user_id, call_attempt_id, amount_cents, status, created_at)
     SELECT h.id, $1::uuid, h.call_attempt_id, $4::bigint, 'held', $3
     FROM unnest($2::uuid[], $5::uuid[]) AS h(call_attempt_id, id) WHERE EXISTS (SELECT 1 FROM account)
     RETURNING id`,
    [userId, callAttemptIds, now, estimateCents, callAttemptIds.map(() => uuidv7()), total],
  );
  return held.length > 0;
}

/** What calls may still spend now, read without a lock: a guide for how many to try, which holdCalls confirms. */
export async function spendableCents(sql: SqlSession, userId: string): Promise<bigint> {
  const [account] = await sql.query<Balances>(
    `SELECT balance_cents AS "balanceCents", included_remaining_cents AS "includedRemainingCents", held_cents AS "heldCents"
     FROM credit_accounts WHERE user_id = $1::uuid`,
    [userId],
  );
  return account ? effectiveCents(account) : 0n;
}

export interface CallEnd {
  callAttemptId: string;
  campaignId: string;
  userId: string;
  durationSeconds: number;
}

/**
 * Ends calls against accounts locked by lockAccounts: each of `charged` writes its one `call_charge`
 * (included credits first, then purchased ones, a shortfall written off) and closes its hold as
 * settled; the holds of `released` (attempt ids) are given back. Calls already settled are skipped, so
 * repeating an end changes nothing; a charge after a release still charges, since the call happened.
 * Returns the cost charged per call attempt.
 */
export async function endCalls(
  tx: SqlSession,
  ctx: LedgerContext,
  accounts: Map<string, Balances>,
  charged: CallEnd[],
  released: string[],
): Promise<Map<string, bigint>> {
  const holds = await tx.query<{ call_attempt_id: string; user_id: string; status: string; amount_cents: bigint }>(
    'SELECT call_attempt_id, user_id, status::text, amount_cents FROM credit_holds WHERE call_attempt_id = ANY($1::uuid[])',
    [[...charged.map((c) => c.callAttemptId), ...released]],
  );
  const holdOf = new Map(holds.map((h) => [h.call_attempt_id, h]));
  const now = ctx.clock.now();
  const rate = ctx.settings.callRateCentsPerMinute;
  const costs = new Map<string, bigint>();
  const ledger: Record<string, unknown>[] = [];
  const changes = new Map<string, { purchased: bigint; included: bigint; released: bigint }>();
  const changeOf = (userId: string) => {
    let change = changes.get(userId);
    if (!change) changes.set(userId, (change = { purchased: 0n, included: 0n, released: 0n }));
    return change;
  };

  for (const call of charged) {
    const hold = holdOf.get(call.callAttemptId);
    if (!hold || hold.user_id !== call.userId || hold.status === 'settled' || costs.has(call.callAttemptId)) continue;
    const account = accounts.get(call.userId)!;
    const change = changeOf(call.userId);
    const cost = callCostCents(call.durationSeconds, rate);
    const fromIncluded = min(cost, account.includedRemainingCents);
    const fromPurchased = min(cost - fromIncluded, account.balanceCents);
    const unbilled = cost - fromIncluded - fromPurchased;
    if (unbilled > 0n) ctx.log.warn({ callAttemptId: call.callAttemptId, unbilledCents: String(unbilled) }, 'call cost more than the credits left');
    account.includedRemainingCents -= fromIncluded;
    account.balanceCents -= fromPurchased;
    change.included += fromIncluded;
    change.purchased += fromPurchased;
    if (hold.status === 'held') change.released += hold.amount_cents;
    costs.set(call.callAttemptId, fromIncluded + fromPurchased);
    ledger.push({
      id: uuidv7(),
      user_id: call.userId,
      amount_cents: String(-(fromIncluded + fromPurchased)),
      balance_after_cents: String(account.balanceCents),
      included_after_cents: String(account.includedRemainingCents),
      description: describeCall(call.durationSeconds, rate, unbilled),
      campaign_id: call.campaignId,
      call_attempt_id: call.callAttemptId,
    });
  }
  const releasing = released.flatMap((id) => {
    const hold = holdOf.get(id);
    if (hold?.status !== 'held' || costs.has(id)) return [];
    changeOf(hold.user_id).released += hold.amount_cents;
    return [id];
  });
  if (changes.size === 0) return costs;

  for (const [userId, change] of changes) accounts.get(userId)!.heldCents -= change.released;
  await tx.query(
    `WITH settled AS (
       UPDATE credit_holds SET status = 'settled', closed_at = $4 WHERE call_attempt_id = ANY($1::uuid[]) AND status <> 'settled'
     ), released AS (
       UPDATE credit_holds SET status = 'released', closed_at = $4 WHERE call_attempt_id = ANY($2::uuid[]) AND status = 'held'
     ), ledger AS (
       INSERT INTO credit_transactions (id, user_id, kind, amount_cents, balance_after_cents, included_after_cents, description, campaign_id, call_attempt_id, created_at)
       SELECT r.id, r.user_id, 'call_charge', r.amount_cents, r.balance_after_cents, r.included_after_cents, r.description, r.campaign_id, r.call_attempt_id, $4
       FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, user_id uuid, amount_cents bigint, balance_after_cents bigint, included_after_cents bigint,
                                               description text, campaign_id uuid, call_attempt_id uuid)
     )
     UPDATE credit_accounts a SET balance_cents = a.balance_cents - d.purchased, included_remaining_cents = a.included_remaining_cents - d.included,
       held_cents = a.held_cents - d.released, updated_at = $4
     FROM jsonb_to_recordset($5::jsonb) AS d(user_id uuid, purchased bigint, included bigint, released bigint)
     WHERE a.user_id = d.user_id`,
    [
      [...costs.keys()],
      releasing,
      JSON.stringify(ledger),
      now,
      JSON.stringify([...changes].map(([userId, c]) => ({ user_id: userId, purchased: String(c.purchased), included: String(c.included), released: String(c.released) }))),
    ],
  );
  return costs;
}

async function findHold(db: PrismaClient, callAttemptId: string) {
  const hold = await db.creditHold.findUnique({
    where: { callAttemptId },
    select: { id: true, userId: true, callAttempt: { select: { campaignId: true } } },
  });
  if (!hold) throw new NotFoundError('CreditHold');
  return hold;
}

function describeCall(durationSeconds: number, rate: number, unbilled: bigint): string {
  const text = `Call of ${durationSeconds} s at ${rate} cents/min`;
  return unbilled > 0n ? `${text}; ${unbilled} cents not charged (credits ran out)` : text;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
