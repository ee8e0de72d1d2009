import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCostCents, estimateCallsCost, HISTORY_MIN_CALLS } from '../src/services/billing/calls.js';
import { grantCredits } from '../src/services/billing/grants.js';
import { serviceContext } from '../src/services/context.js';
import { startTestApp, type TestApp } from './support/app.js';
import { holdForCall, insertCallAttempts, ledgerContext, releaseHold, settleCall } from './support/billing.js';

// The cost estimate of a dispatch preview: calls x expected minutes x the rate, the expected minutes
// being the customer's own average over their ended calls once there are enough of them.

const RATE = 12;
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ settings: { callRateCentsPerMinute: RATE, callHoldMinutes: 5 } });
});
afterAll(() => app.close());

/** `count` ended calls of the user: the first `talked` charged for `seconds` each, the rest reached nobody. */
async function endedCalls(userId: string, count: number, talked: number, seconds: number) {
  const ctx = ledgerContext(app, { callRateCentsPerMinute: RATE });
  const { campaignId, attemptIds } = await insertCallAttempts(app, userId, count);
  const admin = serviceContext(ctx, { id: randomUUID(), isAdmin: true });
  await grantCredits(admin, { user_id: userId, kind: 'top_up', amount_cents: 1_000_000 });
  for (const [i, callAttemptId] of attemptIds.entries()) {
    await holdForCall(ctx, { userId, callAttemptId, campaignId, estimateCents: 60n });
    if (i < talked) await settleCall(ctx, { callAttemptId, durationSeconds: seconds });
    else await releaseHold(ctx, callAttemptId);
  }
  // As the dialer records them; a call that reached nobody still rang for a while, which is not billed.
  const ended = { status: 'completed' as const, endedAt: new Date() };
  await app.prisma.callAttempt.updateMany({
    where: { id: { in: attemptIds.slice(0, talked) } },
    data: { ...ended, durationSeconds: seconds },
  });
  await app.prisma.callAttempt.updateMany({ where: { id: { in: attemptIds.slice(talked) } }, data: { ...ended, durationSeconds: 25 } });
}

describe('estimateCallsCost', () => {
  const settings = { callRateCentsPerMinute: RATE, callHoldMinutes: 5 };

  it('assumes calls as long as the hold while the customer has too few ended calls', async () => {
    const userId = randomUUID();
    await endedCalls(userId, HISTORY_MIN_CALLS - 1, HISTORY_MIN_CALLS - 1, 30);
    const estimate = await estimateCallsCost(app.sql, settings, userId, 10);
    expect(estimate).toMatchObject({ basis: 'default', secondsPerCall: 300, historyCalls: 0, costCents: 10n * 60n });
  });

  it('takes the customer’s own average call once enough have ended, counting calls that reached nobody as 0', async () => {
    const userId = randomUUID();
    // Half the calls talked 90 s, half reached nobody: 45 s a call.
    await endedCalls(userId, 2 * HISTORY_MIN_CALLS, HISTORY_MIN_CALLS, 90);
    const balance = 1_000_000n - BigInt(HISTORY_MIN_CALLS) * callCostCents(90, RATE);
    const estimate = await estimateCallsCost(app.sql, settings, userId, 1_000);
    expect(estimate).toEqual({
      calls: 1_000,
      secondsPerCall: 45,
      basis: 'history',
      historyCalls: 2 * HISTORY_MIN_CALLS,
      rateCentsPerMinute: RATE,
      costCents: 1_000n * callCostCents(45, RATE),
      availableCents: balance,
      covered: true,
    });
    const tooMany = await estimateCallsCost(app.sql, settings, userId, 200_000);
    expect(tooMany.costCents).toBe(200_000n * 9n);
    expect(tooMany.covered).toBe(false);
  });
});
