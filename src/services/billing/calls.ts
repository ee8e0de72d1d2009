import { z } from 'zod';
import type { CreditHold, CreditTransaction, Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { parseInput, uuid } from '../validation.js';
import { effectiveCents, ledgerTransaction, lockAccount, MAX_CREDIT_CENTS, type Balances, type LedgerContext } from './ledger.js';

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

  return ledgerTransaction(ctx.db, async (tx) => {
    const account = await lockAccount(tx, input.userId);
    const existing = await tx.creditHold.findUnique({ where: { callAttemptId: input.callAttemptId } });
    if (existing) return existing;
    const available = effectiveCents(account);
    if (available < input.estimateCents) {
      throw new ConflictError(
        `Insufficient credits: the call needs ${input.estimateCents} cents and ${available} cents are available.`,
        'insufficient_credits',
      );
    }
    await tx.creditAccount.update({ where: { userId: input.userId }, data: { heldCents: { increment: input.estimateCents } } });
    return tx.creditHold.create({
      data: { userId: input.userId, callAttemptId: input.callAttemptId, amountCents: input.estimateCents, createdAt: ctx.clock.now() },
    });
  });
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
  await ledgerTransaction(ctx.db, async (tx) => {
    const account = await lockAccount(tx, hold.userId);
    await settleCallsWithin(tx, ctx, account, hold.userId, [{ ...input, campaignId: hold.callAttempt.campaignId }]);
  });
  return ctx.db.creditTransaction.findFirstOrThrow({ where: { callAttemptId: input.callAttemptId, kind: 'call_charge' } });
}

export interface Settlement {
  callAttemptId: string;
  campaignId: string;
  durationSeconds: number;
}

/**
 * The dialer's batch form of settleCall, inside a transaction that holds the user's account lock
 * (`account` as lockAccount returned it): one ledger row per call, written together. Calls already
 * settled are skipped. Returns the cost charged per call attempt.
 */
export async function settleCallsWithin(
  tx: Prisma.TransactionClient,
  ctx: LedgerContext,
  account: Balances,
  userId: string,
  settlements: Settlement[],
): Promise<Map<string, bigint>> {
  const holds = await tx.creditHold.findMany({
    where: { callAttemptId: { in: settlements.map((s) => s.callAttemptId) }, userId },
    select: { id: true, callAttemptId: true, status: true, amountCents: true },
  });
  const holdOf = new Map(holds.map((h) => [h.callAttemptId, h]));
  const now = ctx.clock.now();
  const rate = ctx.settings.callRateCentsPerMinute;
  let balance = account.balanceCents;
  let included = account.includedRemainingCents;
  let released = 0n;
  const charged = new Map<string, bigint>();
  const rows: Prisma.CreditTransactionCreateManyInput[] = [];
  for (const s of settlements) {
    const hold = holdOf.get(s.callAttemptId);
    if (!hold || hold.status === 'settled' || charged.has(s.callAttemptId)) continue;
    const cost = callCostCents(s.durationSeconds, rate);
    const fromIncluded = min(cost, included);
    const fromPurchased = min(cost - fromIncluded, balance);
    const unbilled = cost - fromIncluded - fromPurchased;
    if (unbilled > 0n) ctx.log.warn({ callAttemptId: s.callAttemptId, unbilledCents: String(unbilled) }, 'call cost more than the credits left');
    included -= fromIncluded;
    balance -= fromPurchased;
    if (hold.status === 'held') released += hold.amountCents;
    charged.set(s.callAttemptId, fromIncluded + fromPurchased);
    rows.push({
      userId,
      kind: 'call_charge',
      amountCents: -(fromIncluded + fromPurchased),
      balanceAfterCents: balance,
      includedAfterCents: included,
      description: describeCall(s.durationSeconds, rate, unbilled),
      campaignId: s.campaignId,
      callAttemptId: s.callAttemptId,
      createdAt: now,
    });
  }
  if (rows.length === 0) return charged;
  await tx.creditHold.updateMany({
    where: { callAttemptId: { in: [...charged.keys()] }, status: { not: 'settled' } },
    data: { status: 'settled', closedAt: now },
  });
  await tx.creditAccount.update({
    where: { userId },
    data: {
      balanceCents: { decrement: account.balanceCents - balance },
      includedRemainingCents: { decrement: account.includedRemainingCents - included },
      heldCents: { decrement: released },
    },
  });
  await tx.creditTransaction.createMany({ data: rows });
  account.balanceCents = balance;
  account.includedRemainingCents = included;
  account.heldCents -= released;
  return charged;
}

/**
 * The dialer's batch form of holdForCall, inside a transaction that holds the user's account lock:
 * reserves `estimateCents` for each call attempt. The caller has checked, under the same lock, that the
 * effective balance covers them all.
 */
export async function holdCallsWithin(
  tx: Prisma.TransactionClient,
  ctx: LedgerContext,
  account: Balances,
  userId: string,
  callAttemptIds: string[],
  estimateCents: bigint,
): Promise<void> {
  if (callAttemptIds.length === 0) return;
  const total = estimateCents * BigInt(callAttemptIds.length);
  if (effectiveCents(account) < total) throw new ConflictError('Insufficient credits for these calls.', 'insufficient_credits');
  const now = ctx.clock.now();
  await tx.creditHold.createMany({
    data: callAttemptIds.map((callAttemptId) => ({ userId, callAttemptId, amountCents: estimateCents, createdAt: now })),
  });
  await tx.creditAccount.update({ where: { userId }, data: { heldCents: { increment: total } } });
  account.heldCents += total;
}

/** The dialer's batch form of releaseHold, inside a transaction that holds the user's account lock. */
export async function releaseHoldsWithin(
  tx: Prisma.TransactionClient,
  ctx: LedgerContext,
  account: Balances,
  userId: string,
  callAttemptIds: string[],
): Promise<void> {
  const held = await tx.creditHold.findMany({
    where: { callAttemptId: { in: callAttemptIds }, userId, status: 'held' },
    select: { id: true, amountCents: true },
  });
  if (held.length === 0) return;
  const total = held.reduce((sum, h) => sum + h.amountCents, 0n);
  await tx.creditHold.updateMany({ where: { id: { in: held.map((h) => h.id) } }, data: { status: 'released', closedAt: ctx.clock.now() } });
  await tx.creditAccount.update({ where: { userId }, data: { heldCents: { decrement: total } } });
  account.heldCents -= total;
}

/** Gives a failed call's hold back. Releasing twice, or after a settle, or with no hold, changes nothing. */
export async function releaseHold(ctx: LedgerContext, callAttemptId: string): Promise<void> {
  const id = parseInput(uuid, callAttemptId);
  const hold = await ctx.db.creditHold.findUnique({ where: { callAttemptId: id }, select: { userId: true } });
  if (!hold) return;
  await ledgerTransaction(ctx.db, async (tx) => {
    const account = await lockAccount(tx, hold.userId);
    await releaseHoldsWithin(tx, ctx, account, hold.userId, [id]);
  });
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
