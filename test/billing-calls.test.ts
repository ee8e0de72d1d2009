import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCostCents } from '../src/services/billing/calls.js';
import { grantCredits } from '../src/services/billing/grants.js';
import type { ServiceContext } from '../src/services/context.js';
import { ConflictError, NotFoundError, ValidationError } from '../src/services/errors.js';
import { startTestApp, type TestApp } from './support/app.js';
import { holdForCall, insertCallAttempts, ledgerAndAccount, ledgerContext, releaseHold, settleCall } from './support/billing.js';

// The billing API the dialer calls (no HTTP): hold when a call starts, settle when it ends, release when
// it fails. Runs on PGlite and, with TEST_DATABASE_URL, on PostgreSQL through a pool of 10 connections,
// where the concurrent cases really are concurrent transactions.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const RATE = 60; // one cent per second keeps the arithmetic readable
const billing = () => ledgerContext(app, { callRateCentsPerMinute: RATE });

async function grant(userId: string, kind: 'top_up' | 'included_grant', amountCents: number) {
  const admin: ServiceContext = { ...ledgerContext(app), user: { id: randomUUID(), isAdmin: true } };
  await grantCredits(admin, { user_id: userId, kind, amount_cents: amountCents });
}

async function account(userId: string) {
  return app.prisma.creditAccount.findUniqueOrThrow({ where: { userId } });
}

describe('callCostCents', () => {
  it('bills per second at the per-minute rate, rounded up to a whole cent', () => {
    expect(callCostCents(0, 10)).toBe(0n);
    expect(callCostCents(1, 10)).toBe(1n);
    expect(callCostCents(6, 10)).toBe(1n);
    expect(callCostCents(7, 10)).toBe(2n);
    expect(callCostCents(60, 10)).toBe(10n);
    expect(callCostCents(61, 10)).toBe(11n);
    expect(callCostCents(3600, 12)).toBe(720n);
  });
});

describe('holdForCall', () => {
  it('holds the estimate: effective balance drops, balances and ledger stay as they are', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 1);
    await grant(userId, 'top_up', 500);

    const hold = await holdForCall(billing(), { userId, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 200n });
    expect(hold).toMatchObject({ status: 'held', amountCents: 200n, userId });
    expect(await account(userId)).toMatchObject({ balanceCents: 500n, includedRemainingCents: 0n, heldCents: 200n });
    expect(await app.prisma.creditTransaction.count({ where: { userId } })).toBe(1);
  });

  it('refuses a hold larger than the effective balance with insufficient_credits, changing nothing', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 2);
    await grant(userId, 'top_up', 300);
    await grant(userId, 'included_grant', 100);
    await holdForCall(billing(), { userId, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 250n });

    const refused = await holdForCall(billing(), { userId, campaignId, callAttemptId: attemptIds[1]!, estimateCents: 151n }).catch(
      (e) => e,
    );
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({
      reason: 'insufficient_credits',
      message: 'Insufficient credits: the call needs 151 cents and 150 cents are available.',
    });
    expect(await account(userId)).toMatchObject({ balanceCents: 300n, includedRemainingCents: 100n, heldCents: 250n });
    expect(await app.prisma.creditHold.count({ where: { userId } })).toBe(1);
  });

  it('refuses any hold for a user who never had credits', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 1);
    const refused = await holdForCall(billing(), { userId, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 1n }).catch((e) => e);
    expect(refused).toMatchObject({ reason: 'insufficient_credits' });
    expect(await app.prisma.creditAccount.findUnique({ where: { userId } })).toBeNull();
  });

  it('is idempotent per call attempt: a second hold returns the first and holds nothing more', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 1);
    await grant(userId, 'top_up', 500);
    const input = { userId, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 100n };
    const [first, second] = await Promise.all([holdForCall(billing(), input), holdForCall(billing(), input)]);
    expect(second.id).toBe(first.id);
    expect((await account(userId)).heldCents).toBe(100n);
  });

  it('refuses a call attempt of another user or campaign, and bad input, with nothing held', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 1);
    const other = await insertCallAttempts(app, randomUUID(), 1);
    await grant(userId, 'top_up', 500);
    await expect(
      holdForCall(billing(), { userId, campaignId, callAttemptId: other.attemptIds[0]!, estimateCents: 10n }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      holdForCall(billing(), { userId, campaignId: other.campaignId, callAttemptId: attemptIds[0]!, estimateCents: 10n }),
    ).rejects.toBeInstanceOf(NotFoundError);
    const invalid = await holdForCall(billing(), { userId, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 0n }).catch((e) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid.fieldErrors).toEqual({ estimateCents: ['Ensure this value is greater than or equal to 1.'] });
    expect((await account(userId)).heldCents).toBe(0n);
  });
});

describe('settleCall', () => {
  it('releases the hold and writes one call_charge from included credits first', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 1);
    await grant(userId, 'top_up', 1000);
    await grant(userId, 'included_grant', 50);
    await holdForCall(billing(), { userId, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 300n });

    const charge = await settleCall(billing(), { callAttemptId: attemptIds[0]!, durationSeconds: 80 });
    expect(charge).toMatchObject({
      userId,
      kind: 'call_charge',
      amountCents: -80n,
      balanceAfterCents: 970n,
      includedAfterCents: 0n,
      campaignId,
      callAttemptId: attemptIds[0],
      description: 'Call of 80 s at 60 cents/min',
      receiptUrl: null,
      invoiceUrl: null,
    });
    expect(await account(userId)).toMatchObject({ balanceCents: 970n, includedRemainingCents: 0n, heldCents: 0n });
    expect(await app.prisma.creditHold.findUniqueOrThrow({ where: { callAttemptId: attemptIds[0]! } })).toMatchObject({
      status: 'settled',
      closedAt: expect.any(Date),
    });
  });

  it('charges once when the end of a call is reported twice, even at the same moment', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 1);
    await grant(userId, 'top_up', 1000);
    await holdForCall(billing(), { userId, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 300n });
    const input = { callAttemptId: attemptIds[0]!, durationSeconds: 42 };
    const [a, b] = await Promise.all([settleCall(billing(), input), settleCall(billing(), input)]);
    const c = await settleCall(billing(), input);
    expect(new Set([a.id, b.id, c.id]).size).toBe(1);
    expect(await account(userId)).toMatchObject({ balanceCents: 958n, heldCents: 0n });
    expect(await app.prisma.creditTransaction.count({ where: { userId, kind: 'call_charge' } })).toBe(1);
  });

  it('charges what is left and writes off the rest when a call outruns the credits: never below zero', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 1);
    await grant(userId, 'top_up', 100);
    await grant(userId, 'included_grant', 20);
    await holdForCall(billing(), { userId, campaignId, callAttemptId: attemptIds[0]!, estimateCents: 60n });

    const charge = await settleCall(billing(), { callAttemptId: attemptIds[0]!, durationSeconds: 150 });
    expect(charge).toMatchObject({
      amountCents: -120n,
      balanceAfterCents: 0n,
      includedAfterCents: 0n,
      description: 'Call of 150 s at 60 cents/min; 30 cents not charged (credits ran out)',
    });
    expect(await account(userId)).toMatchObject({ balanceCents: 0n, includedRemainingCents: 0n, heldCents: 0n });
  });

  it('is a NotFoundError for a call attempt that was never held, and a ValidationError for a bad duration', async () => {
    await expect(settleCall(billing(), { callAttemptId: randomUUID(), durationSeconds: 10 })).rejects.toBeInstanceOf(NotFoundError);
    const invalid = await settleCall(billing(), { callAttemptId: randomUUID(), durationSeconds: -1 }).catch((e) => e);
    expect(invalid.fieldErrors).toEqual({ durationSeconds: ['Ensure this value is greater than or equal to 0.'] });
  });
});

describe('releaseHold', () => {
  it('gives the hold back once; a late settle still charges the call, a release after it changes nothing', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 1);
    const callAttemptId = attemptIds[0]!;
    await grant(userId, 'top_up', 500);
    await holdForCall(billing(), { userId, campaignId, callAttemptId, estimateCents: 200n });

    await Promise.all([releaseHold(billing(), callAttemptId), releaseHold(billing(), callAttemptId)]);
    expect(await account(userId)).toMatchObject({ balanceCents: 500n, heldCents: 0n });
    expect(await app.prisma.creditHold.findUniqueOrThrow({ where: { callAttemptId } })).toMatchObject({ status: 'released' });

    await settleCall(billing(), { callAttemptId, durationSeconds: 30 });
    await releaseHold(billing(), callAttemptId);
    expect(await account(userId)).toMatchObject({ balanceCents: 470n, heldCents: 0n });
  });

  it('changes nothing for a call attempt with no hold', async () => {
    await expect(releaseHold(billing(), randomUUID())).resolves.toBeUndefined();
  });
});

describe('under concurrency', () => {
  it('50 concurrent settlements (each delivered twice) leave the balance equal to the ledger, included credits spent first', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 50);
    await grant(userId, 'top_up', 5000);
    await grant(userId, 'included_grant', 1500);

    await Promise.all(
      attemptIds.map((callAttemptId) => holdForCall(billing(), { userId, campaignId, callAttemptId, estimateCents: 120n })),
    );
    expect(await account(userId)).toMatchObject({ heldCents: 6000n });

    // Durations 60..109 s at a cent a second: 4225 cents in all.
    const settlements = attemptIds.flatMap((callAttemptId, i) => {
      const input = { callAttemptId, durationSeconds: 60 + i };
      return [settleCall(billing(), input), settleCall(billing(), input)];
    });
    await Promise.all(settlements);

    const { ledgerSum, account: after, rows } = await ledgerAndAccount(app, userId);
    expect(after).toMatchObject({ balanceCents: 5000n - (4225n - 1500n), includedRemainingCents: 0n, heldCents: 0n });
    expect(ledgerSum).toBe(after.balanceCents + after.includedRemainingCents);
    const charges = rows.filter((r) => r.kind === 'call_charge');
    expect(charges).toHaveLength(50);
    expect(charges.reduce((sum, r) => sum + r.amountCents, 0n)).toBe(-4225n);
    for (const row of rows) {
      expect(row.balanceAfterCents).toBeGreaterThanOrEqual(0n);
      expect(row.includedAfterCents).toBeGreaterThanOrEqual(0n);
    }
    // Purchased credits were touched only once the included ones were gone.
    for (const charge of charges.filter((r) => r.balanceAfterCents < 5000n)) expect(charge.includedAfterCents).toBe(0n);
    // No two entries were computed from the same balances: no update was lost.
    const totals = new Set(rows.map((r) => r.balanceAfterCents + r.includedAfterCents));
    expect(totals.size).toBe(rows.length);
  });

  it('50 concurrent holds against one balance: exactly as many succeed as it covers, the rest are refused', async () => {
    const userId = randomUUID();
    const { campaignId, attemptIds } = await insertCallAttempts(app, userId, 50);
    await grant(userId, 'top_up', 1000);

    const results = await Promise.allSettled(
      attemptIds.map((callAttemptId) => holdForCall(billing(), { userId, campaignId, callAttemptId, estimateCents: 30n })),
    );
    const held = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(held).toHaveLength(33);
    expect(refused).toHaveLength(17);
    for (const r of refused) expect(r.reason).toMatchObject({ reason: 'insufficient_credits' });
    expect(await account(userId)).toMatchObject({ balanceCents: 1000n, heldCents: 990n });
    expect(await app.prisma.creditHold.count({ where: { userId, status: 'held' } })).toBe(33);
  });
});
