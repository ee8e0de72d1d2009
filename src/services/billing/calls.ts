import { z } from 'zod';
import type { CreditHold, CreditTransaction, PrismaClient } from '../../generated/prisma/client.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { parseInput, uuid } from '../validation.js';
import { appendEntry, effectiveCents, ledgerTransaction, lockAccount, MAX_CREDIT_CENTS, type LedgerContext } from './ledger.js';

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

  return ledgerTransaction(ctx.db, async (tx) => {
    const account = await lockAccount(tx, hold.userId);
    const current = await tx.creditHold.findUniqueOrThrow({ where: { id: hold.id } });
    if (current.status === 'settled') {
      return tx.creditTransaction.findFirstOrThrow({ where: { callAttemptId: input.callAttemptId, kind: 'call_charge' } });
    }
    const cost = callCostCents(input.durationSeconds, ctx.settings.callRateCentsPerMinute);
    const fromIncluded = min(cost, account.includedRemainingCents);
    const fromPurchased = min(cost - fromIncluded, account.balanceCents);
    const unbilled = cost - fromIncluded - fromPurchased;
    if (unbilled > 0n) ctx.log.warn({ callAttemptId: input.callAttemptId, unbilledCents: String(unbilled) }, 'call cost more than the credits left');

    const now = ctx.clock.now();
    await tx.creditHold.update({ where: { id: hold.id }, data: { status: 'settled', closedAt: now } });
    return appendEntry(tx, account, {
      userId: hold.userId,
      kind: 'call_charge',
      purchasedCents: -fromPurchased,
      includedCents: -fromIncluded,
      heldCents: current.status === 'held' ? -current.amountCents : 0n,
      description: describeCall(input.durationSeconds, ctx.settings.callRateCentsPerMinute, unbilled),
      campaignId: hold.callAttempt.campaignId,
      callAttemptId: input.callAttemptId,
      createdAt: now,
    });
  });
}

/** Gives a failed call's hold back. Releasing twice, or after a settle, or with no hold, changes nothing. */
export async function releaseHold(ctx: LedgerContext, callAttemptId: string): Promise<void> {
  const id = parseInput(uuid, callAttemptId);
  const hold = await ctx.db.creditHold.findUnique({ where: { callAttemptId: id }, select: { id: true, userId: true } });
  if (!hold) return;
  await ledgerTransaction(ctx.db, async (tx) => {
    await lockAccount(tx, hold.userId);
    const current = await tx.creditHold.findUniqueOrThrow({ where: { id: hold.id } });
    if (current.status !== 'held') return;
    await tx.creditHold.update({ where: { id: hold.id }, data: { status: 'released', closedAt: ctx.clock.now() } });
    await tx.creditAccount.update({ where: { userId: hold.userId }, data: { heldCents: { decrement: current.amountCents } } });
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
