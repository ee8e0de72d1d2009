import { pino } from 'pino';
import type { LedgerContext } from '../../src/services/billing/ledger.js';
import { systemClock } from '../../src/services/context.js';
import { idleDialer } from '../../src/services/dialer/control.js';
import { inProcessEventBus } from '../../src/services/events.js';
import { defaultSettings, type Settings } from '../../src/services/settings.js';
import type { TestApp } from './app.js';
import { templateId } from './fixtures.js';

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
