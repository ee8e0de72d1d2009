import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { grantCredits } from '../../src/services/billing/grants.js';
import { importContacts } from '../../src/services/contacts/import.js';
import { serviceContext, type Clock, type ServiceEnv } from '../../src/services/context.js';
import { idleVoice } from '../../src/services/voice/control.js';
import { idleDialer } from '../../src/services/dialer/control.js';
import { Dialer } from '../../src/services/dialer/engine.js';
import { DEFAULT_DIALER_OPTIONS, type DialerOptions } from '../../src/services/dialer/options.js';
import { enrollContacts } from '../../src/services/campaigns/store.js';
import type { CallResult, PlaceCall, Telephony } from '../../src/services/voice/providers/telephony.js';
import { inProcessEventBus } from '../../src/services/events.js';
import { defaultSettings } from '../../src/services/settings.js';
import type { TestApp } from './app.js';
import { createAgent } from './fixtures.js';
import { waitFor } from './wait.js';

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(private time: Date) {}
  now = () => new Date(this.time);
  set(at: Date | string) {
    this.time = new Date(at);
  }
  advance(ms: number) {
    this.time = new Date(this.time.getTime() + ms);
  }
}

export interface Placed extends PlaceCall {
  at: Date;
}

/**
 * A telephony fake that records every call and watches, independently of the dialer's own state, how
 * many calls are in flight per campaign and whether a number is called twice at once.
 */
export class RecordingTelephony implements Telephony {
  readonly placed: Placed[] = [];
  readonly inFlight = new Map<string, PlaceCall>();
  maxInFlight = 0;
  overlaps = 0;
  /** Results are held back until deliver() unless `auto`. */
  auto = true;
  private queued: CallResult[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly outcome: (call: PlaceCall, index: number) => Omit<CallResult, 'attemptId'> | null,
    private readonly report: () => (result: CallResult) => void,
  ) {}

  async placeCall(call: PlaceCall) {
    if ([...this.inFlight.values()].some((c) => c.to === call.to)) this.overlaps += 1;
    this.inFlight.set(call.attemptId, call);
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight.size);
    this.placed.push({ ...call, at: this.clock.now() });
    const result = this.outcome(call, this.placed.length - 1);
    if (result) {
      this.queued.push({ ...result, attemptId: call.attemptId });
      if (this.auto) setImmediate(() => this.deliver());
    }
    return { providerCallId: `fake_${call.attemptId}` };
  }

  deliver() {
    const results = this.queued;
    this.queued = [];
    for (const result of results) {
      this.inFlight.delete(result.attemptId);
      this.report()(result);
    }
  }

  /** Results stay the test's to deliver. */
  stop() {}

  /** A call the dialer gave up on (lease expired) is no longer in flight. */
  forget(attemptId: string) {
    this.inFlight.delete(attemptId);
  }
}

export function dialerEnv(app: TestApp, clock: Clock): ServiceEnv {
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  return {
    db: app.prisma,
    sql: app.sql,
    clock,
    log,
    settings: { ...defaultSettings, callRateCentsPerMinute: 60 },
    dialer: idleDialer,
    voice: idleVoice,
    events: inProcessEventBus(log),
  };
}

/** A dialer driven by hand: wake-ups are collected, and run() ticks until nothing moves. */
export function manualDialer(env: ServiceEnv, telephony: Telephony, options: Partial<DialerOptions> = {}) {
  const woken = new Set<string>();
  // A wake-up for later is the test's to arrange (it moves the clock and ticks again).
  const wake = (campaignId: string, at?: Date) => {
    if (!at || at <= env.clock.now()) woken.add(campaignId);
  };
  const dialer = new TestDialer(env, () => telephony, wake, { ...DEFAULT_DIALER_OPTIONS, ...options });
  return {
    dialer,
    woken,
    /** Ticks woken campaigns and applies results until the dialer is idle at this moment. */
    async run(campaignId: string, maxRounds = 10_000) {
      woken.add(campaignId);
      for (let round = 0; round < maxRounds && woken.size; round += 1) {
        const ids = [...woken];
        woken.clear();
        for (const id of ids) await dialer.tick(id);
        await new Promise((resolve) => setImmediate(resolve));
        await dialer.settled();
      }
    },
  };
}

/** A manual dialer placing its calls on a RecordingTelephony that reports each result back to it. */
export function recordingDialer(
  env: ServiceEnv,
  outcome: ConstructorParameters<typeof RecordingTelephony>[1],
  options: Partial<DialerOptions> = {},
) {
  // The telephony reports to the dialer, which is made with the telephony: the first reads the second late.
  let handle: ReturnType<typeof manualDialer>;
  const telephony = new RecordingTelephony(env.clock, outcome, () => (result) => handle.dialer.report(result));
  handle = manualDialer(env, telephony, options);
  return { ...handle, telephony };
}

/** A dialer whose batches of results a test can hold back. */
export class TestDialer extends Dialer {
  private writable: Promise<void> = Promise.resolve();

  /** Keeps the dialer from writing results (it still hears them) until the returned function is called. */
  holdWrites(): () => void {
    let write!: () => void;
    this.writable = new Promise<void>((resolve) => (write = resolve));
    return write;
  }

  protected override async flush(): Promise<void> {
    await this.writable;
    await super.flush();
  }
}

/** Keeps the dialer from writing results (it still hears them) until the returned function is called. */
export function holdWrites(dialer: TestDialer): () => void {
  return dialer.holdWrites();
}

export interface CampaignSetup {
  rows: Record<string, string>[];
  creditsCents?: number;
  campaign?: Record<string, unknown>;
  doNotCall?: string[];
}

/** A user with credits, an agent with a number, a group imported from `rows`, and a running campaign. */
export async function runningCampaign(app: TestApp, env: ServiceEnv, setup: CampaignSetup) {
  const userId = randomUUID();
  const token = await app.token(userId);
  const agent = await createAgent(app, token);
  const ctx = serviceContext(env, { id: userId, isAdmin: false });
  for (const number of setup.doNotCall ?? []) {
    await app.prisma.doNotCallEntry.create({ data: { userId, phoneNumber: number } });
  }
  const imported = await importContacts(ctx, { group_name: 'Dial list', csv_data: setup.rows });
  const admin = serviceContext(env, { id: randomUUID(), isAdmin: true });
  await grantCredits(admin, { user_id: userId, kind: 'top_up', amount_cents: setup.creditsCents ?? 10_000_000 });
  // Its campaigns turn the regional rules off, which needs an admin's exemption: one that lasts.
  const exemption = await app.prisma.regionalRuleExemption.create({
    data: {
      userId,
      grantedBy: admin.user.id,
      reason: 'Tests: calls at any hour to numbers nobody answers.',
      expiresAt: new Date('2100-01-01T00:00:00Z'),
    },
  });
  const campaign = await app.prisma.campaign.create({
    data: {
      userId,
      agentId: agent.id,
      contactGroupId: imported.groupId,
      name: 'Dialer test',
      status: 'running',
      startedAt: env.clock.now(),
      concurrentCalls: 10,
      timezone: 'UTC',
      callingHours: { start: '00:00', end: '24:00' },
      activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
      scheduleConfig: {
        max_attempts: 3,
        max_attempts_per_day: 2,
        retry_interval_minutes: 60,
        retry_on: ['no_answer', 'busy', 'failed', 'voicemail'],
      },
      maxRetryDays: 3,
      // Its tests run at any hour on +1 415 numbers: the regional rules are tested on their own.
      regionalRules: false,
      ...setup.campaign,
    },
  });
  await enrollContacts(app.sql, campaign.id, env.clock.now());
  return { userId, token, agent, campaignId: campaign.id, groupId: imported.groupId, ctx, admin, exemptionId: exemption.id };
}

/** Sum of the ledger next to the account: they must agree. */
export async function ledgerMatchesAccount(app: TestApp, userId: string) {
  const [sum] = await app.prisma.$queryRaw<
    { total: bigint }[]
  >`SELECT coalesce(sum(amount_cents), 0)::bigint AS total FROM credit_transactions WHERE user_id = ${userId}::uuid`;
  const account = await app.prisma.creditAccount.findUniqueOrThrow({ where: { userId } });
  return { ledger: sum!.total, account: account.balanceCents + account.includedRemainingCents, account_: account };
}

/**
 * Waits for a campaign to complete. On timeout the error says where it stood (status, paused reason,
 * contacts by state, attempts by status), so a slow machine and a stuck campaign read differently.
 */
export async function campaignCompleted(app: TestApp, campaignId: string, timeoutMs: number): Promise<void> {
  try {
    await waitFor(async () => {
      const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: campaignId } });
      return campaign.status === 'completed' ? true : undefined;
    }, timeoutMs);
  } catch {
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: campaignId } });
    const contacts = await app.prisma.campaignContact.groupBy({ by: ['state'], where: { campaignId }, _count: true });
    const attempts = await app.prisma.callAttempt.groupBy({ by: ['status', 'disconnectReason'], where: { campaignId }, _count: true });
    throw new Error(
      `campaign not completed after ${timeoutMs} ms: status ${campaign.status}, paused reason ${campaign.pausedReason}, ` +
        `contacts ${JSON.stringify(contacts.map((c) => [c.state, c._count]))}, ` +
        `attempts ${JSON.stringify(attempts.map((a) => [a.status, a.disconnectReason, a._count]))}`,
    );
  }
}
