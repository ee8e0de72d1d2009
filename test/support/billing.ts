import { pino } from 'pino';
import { z } from 'zod';
import type { CreditHold, CreditTransaction } from '../../src/generated/prisma/client.js';
import { endCalls, holdCalls } from '../../src/services/billing/calls.js';
import { lockAccounts } from '../../src/services/billing/ledger.js';
import { effectiveCents, MAX_CREDIT_CENTS, type LedgerContext } from '../../src/services/billing/ledger.js';
import { systemClock } from '../../src/services/context.js';
import { idleVoice } from '../../src/services/voice/control.js';
import { idleDialer } from '../../src/services/dialer/control.js';
import { ConflictError, NotFoundError } from '../../src/services/errors.js';
import { inProcessEventBus } from '../../src/services/events.js';
import { defaultSettings, type Settings } from '../../src/services/settings.js';
import { parseInput, uuid } from '../../src/services/validation.js';
import type { TestApp } from './app.js';
import { templateId } from './fixtures.js';
import { testSql } from './sql.js';

/** What the dialer passes to the billing service: the database, a clock and a log, no user. */
export function ledgerContext(app: TestApp, settings: Partial<Settings> = {}): LedgerContext {
  const log = pino({ level: 'silent' });
  return {
    db: app.prisma,
    sql: app.sql,
    clock: systemClock,
    log,
    settings: { ...defaultSettings, ...settings },
    dialer: idleDialer,
    voice: idleVoice,
    events: inProcessEventBus(log),
  };
}

/**
 * A user with a campaign and `count` call attempts on it (rows only: the dialer arrives with its own
 * issue), ready to be held for and settled.
 */
export async function insertCallAttempts(app: TestApp, userId: string, count: number) {
  await app.prisma.user.upsert({ where: { id: userId }, create: { id: userId }, update: {} });
  const agent = await app.prisma.agent.create({
    data: { userId, templateId: await templateId(app), name: 'Dialer', responseEngineType: 'retell-llm', systemPrompt: 'Hi' },
  });
  const group = await app.prisma.contactGroup.create({ data: { userId, name: 'Callees' } });
  const contact = await app.prisma.contact.create({ data: { userId, groupId: group.id, phoneNumber: '+14155550199' } });
  const campaign = await app.prisma.campaign.create({
    data: { userId, agentId: agent.id, contactGroupId: group.id, name: 'Billing run', status: 'running' },
  });
  // Each on a number of its own: a customer never has two calls in flight to one number.
  await app.prisma.callAttempt.createMany({
    data: Array.from({ length: count }, (_, i) => ({
      userId,
      campaignId: campaign.id,
      contactId: contact.id,
      attemptNumber: i + 1,
      toNumber: `+1415556${String(i).padStart(4, '0')}`,
    })),
  });
  const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: campaign.id }, orderBy: { attemptNumber: 'asc' } });
  return { campaignId: campaign.id, attemptIds: attempts.map((a) => a.id) };
}

/** Sum of the user's ledger next to the account it must equal. */
export async function ledgerAndAccount(app: TestApp, userId: string) {
  const [sum, account, rows] = await Promise.all([
    app.prisma.creditTransaction.aggregate({ where: { userId }, _sum: { amountCents: true } }),
    app.prisma.creditAccount.findUniqueOrThrow({ where: { userId } }),
    app.prisma.creditTransaction.findMany({ where: { userId } }),
  ]);
  return { ledgerSum: sum._sum.amountCents ?? 0n, account, rows };
}

// One call at a time, as a provider's events would pay for it, over the batch forms the dialer uses
// (holdCalls, endCalls): each step is idempotent per call attempt, so a repeated event cannot charge twice.

const holdForCallInput = z.object({
  userId: uuid,
  callAttemptId: uuid,
  campaignId: uuid,
  estimateCents: z.bigint().min(1n).max(MAX_CREDIT_CENTS),
});

/**
 * Reserves `estimateCents` for a call about to start. Refused with a ConflictError (reason
 * `insufficient_credits`) when the effective balance cannot cover it. A second hold for the same call
 * attempt returns the first one unchanged.
 */
export async function holdForCall(ctx: LedgerContext, raw: z.input<typeof holdForCallInput>): Promise<CreditHold> {
  const input = parseInput(holdForCallInput, raw);
  const attempt = await ctx.db.callAttempt.findFirst({
    where: { id: input.callAttemptId, userId: input.userId, campaignId: input.campaignId },
    select: { id: true },
  });
  if (!attempt) throw new NotFoundError('CallAttempt');

  await ctx.sql.transaction(async (tx) => {
    const account = (await lockAccounts(tx, [input.userId])).get(input.userId)!;
    const existing = await testSql(tx).query('SELECT 1 FROM credit_holds WHERE call_attempt_id = $1::uuid', [input.callAttemptId]);
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

const settleCallInput = z.object({ callAttemptId: uuid, durationSeconds: z.int().min(0) });

/**
 * Ends a held call: releases its hold and writes its one `call_charge`, taken from included credits
 * first, then purchased ones. When the cost exceeds both (the call outran its estimate while other calls
 * spent the rest), what is left is charged and the shortfall is written off, named in the description:
 * balances never go below zero. A repeated settle returns the first charge; a settle after a release
 * (a late report of a call given up on) still charges, since the call did happen.
 */
export async function settleCall(ctx: LedgerContext, raw: z.input<typeof settleCallInput>): Promise<CreditTransaction> {
  const input = parseInput(settleCallInput, raw);
  const hold = await ctx.db.creditHold.findUnique({
    where: { callAttemptId: input.callAttemptId },
    select: { userId: true, callAttempt: { select: { campaignId: true } } },
  });
  if (!hold) throw new NotFoundError('CreditHold');
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
