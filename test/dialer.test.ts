import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Statement } from '../src/db/sql.js';
import type { CallResult, PlaceCall } from '../src/services/voice/providers/telephony.js';
import { statusOf } from '../src/services/call-outcomes.js';
import { startTestApp, type TestApp } from './support/app.js';
import {
  dialerEnv,
  holdWrites,
  ledgerMatchesAccount,
  ManualClock,
  manualDialer,
  recordingDialer,
  RecordingTelephony,
  runningCampaign,
} from './support/dialer.js';
import { testSql } from './support/sql.js';
import { createCampaign, customer, dispatch, grant } from './support/campaigns.js';
import { systemClock } from '../src/services/context.js';
import { defaultSettings } from '../src/services/settings.js';

// The dialer against a real database, driven by a clock the test moves, with a telephony fake that
// watches from the outside what the dialer may never do.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const number = (i: number) => `+1415${2_000_000 + i}`;
const roll = (key: string) => createHash('sha256').update(key).digest().readUInt32BE(0) / 0x1_0000_0000;

/** A realistic mix keyed by number and attempt, so the run is the same every time. */
function mixedOutcome(call: PlaceCall): Omit<CallResult, 'attemptId'> {
  const r = roll(`${call.to}:${call.attemptNumber}`);
  if (r < 0.4) {
    const booked = roll(`${call.to}:book`) < 0.2;
    const dnc = !booked && roll(`${call.to}:dnc`) < 0.05;
    return {
      outcome: 'human',
      durationSeconds: 30 + Math.floor(r * 300),
      sentiment: 'positive',
      summary: 'Talked.',
      doNotCall: dnc,
      appointment: booked ? { scheduledAt: new Date('2026-12-01T15:00:00Z'), notes: 'Check-up' } : undefined,
    };
  }
  if (r < 0.65) return { outcome: 'no_answer', durationSeconds: 0 };
  if (r < 0.75) return { outcome: 'busy', durationSeconds: 0 };
  if (r < 0.9) return { outcome: 'voicemail', durationSeconds: 25, messageLeft: true };
  return { outcome: 'failed', durationSeconds: 0 };
}

describe('a 2,000-contact campaign, checked afterwards over every attempt', () => {
  const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
  const CONCURRENCY = 50;
  let telephony: RecordingTelephony;
  let setup: Awaited<ReturnType<typeof runningCampaign>>;
  const invalid = ['12345', 'not a number', '555'];
  const blocked = [number(7), number(77), number(777)];
  const results = new Map<string, CallResult>();

  beforeAll(async () => {
    const env = dialerEnv(app, clock);
    const rows = Array.from({ length: 2_000 }, (_, i) => ({ Name: `Person ${i}`, Phone: number(i) }));
    rows.push(...invalid.map((p, i) => ({ Name: `Bad ${i}`, Phone: p })));
    let dialer: ReturnType<typeof manualDialer>;
    telephony = new RecordingTelephony(
      clock,
      (call) => mixedOutcome(call),
      () => (result) => {
        results.set(result.attemptId, result);
        dialer.dialer.report(result);
      },
    );
    dialer = manualDialer(env, telephony);
    setup = await runningCampaign(app, env, { rows, doNotCall: blocked, campaign: { concurrentCalls: CONCURRENCY } });
    for (let pass = 0; pass < 200; pass += 1) {
      await dialer.run(setup.campaignId);
      const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
      if (campaign.status !== 'running') break;
      clock.advance(61 * 60_000);
      await dialer.dialer.sweep();
    }
  }, 300_000);

  it('completes, with completed_at, once every callable contact has a final outcome', async () => {
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
    expect(campaign.status).toBe('completed');
    expect(campaign.completedAt).not.toBeNull();
    const open = await app.prisma.campaignContact.count({ where: { campaignId: setup.campaignId, state: { not: 'done' } } });
    expect(open).toBe(0);
  });

  it('never exceeded the concurrency and never called one number twice at once', () => {
    expect(telephony.maxInFlight).toBeGreaterThan(0);
    expect(telephony.maxInFlight).toBeLessThanOrEqual(CONCURRENCY);
    expect(telephony.overlaps).toBe(0);
  });

  it('never dialed an invalid or do-not-call number, nor a number after it asked not to be called', () => {
    const dialed = new Set(telephony.placed.map((c) => c.to));
    for (const n of blocked) expect(dialed.has(n)).toBe(false);
    for (const bad of invalid) expect(dialed.has(bad)).toBe(false);
    expect([...dialed].every((d) => /^\+1415\d{7}$/.test(d))).toBe(true);
    const askedAt = new Map<string, Date>();
    for (const call of telephony.placed) {
      const asked = askedAt.get(call.to);
      expect(asked, `${call.to} was called after asking not to be`).toBeUndefined();
      if (results.get(call.attemptId)?.doNotCall) askedAt.set(call.to, call.at);
    }
    expect(askedAt.size).toBeGreaterThan(0);
  });

  it('kept every retry within the policy', () => {
    const byNumber = new Map<string, typeof telephony.placed>();
    for (const call of telephony.placed) byNumber.set(call.to, [...(byNumber.get(call.to) ?? []), call]);
    for (const [to, calls] of byNumber) {
      expect(calls.length, to).toBeLessThanOrEqual(3);
      expect(calls.map((c) => c.attemptNumber)).toEqual(calls.map((_, i) => i + 1));
      const perDay = new Map<string, number>();
      for (const c of calls) perDay.set(c.at.toISOString().slice(0, 10), (perDay.get(c.at.toISOString().slice(0, 10)) ?? 0) + 1);
      expect(Math.max(...perDay.values()), to).toBeLessThanOrEqual(2);
      for (let i = 1; i < calls.length; i += 1) {
        expect(calls[i]!.at.getTime() - calls[i - 1]!.at.getTime(), to).toBeGreaterThanOrEqual(60 * 60_000);
        expect(results.get(calls[i - 1]!.attemptId)!.outcome, to).not.toBe('human');
      }
      const days = (calls.at(-1)!.at.getTime() - calls[0]!.at.getTime()) / 86_400_000;
      expect(days).toBeLessThanOrEqual(4);
    }
  });

  it('counted each attempt once and recorded every result', async () => {
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    expect(attempts).toHaveLength(telephony.placed.length);
    expect(attempts.filter((a) => ['queued', 'ringing', 'in_progress'].includes(a.status))).toEqual([]);
    for (const a of attempts) expect([a.status, a.outcome]).toEqual([statusOf(results.get(a.id)!.outcome), results.get(a.id)!.outcome]);
    const enrolled = await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId } });
    const perContact = new Map<string, number>();
    for (const a of attempts) perContact.set(a.contactId, (perContact.get(a.contactId) ?? 0) + 1);
    for (const cc of enrolled) expect(cc.attempts).toBe(perContact.get(cc.contactId) ?? 0);
    const outcomes = new Set(enrolled.map((cc) => cc.outcome));
    expect(outcomes).toEqual(new Set(['reached', 'not_reached', 'do_not_call', 'invalid']));
  });

  it('charged every talked minute, with the ledger equal to the balance and nothing left held', async () => {
    const { ledger, account, account_ } = await ledgerMatchesAccount(app, setup.userId);
    expect(ledger).toBe(account);
    expect(account_.heldCents).toBe(0n);
    const talked = [...results.values()].reduce((sum, r) => sum + BigInt(Math.ceil(r.durationSeconds)), 0n);
    expect(10_000_000n - account).toBe(talked); // one cent per second at 60 cents a minute
    const charges = await app.prisma.creditTransaction.count({ where: { userId: setup.userId, kind: 'call_charge' } });
    expect(charges).toBe([...results.values()].filter((r) => r.durationSeconds > 0).length);
  });

  it('booked the appointments and listed the numbers that asked not to be called', async () => {
    const booked = [...results.values()].filter((r) => r.appointment).length;
    expect(booked).toBeGreaterThan(0);
    const appointments = await app.prisma.appointment.findMany({ where: { campaignId: setup.campaignId } });
    expect(appointments).toHaveLength(booked);
    expect(appointments[0]!.contactSnapshot).toMatchObject({ phone_number: expect.stringMatching(/^\+1415/) });
    const asked = [...results.values()].filter((r) => r.doNotCall).length;
    const listed = await app.prisma.doNotCallEntry.count({ where: { userId: setup.userId, source: 'call' } });
    expect(listed).toBe(asked);
  });
});

describe('credits running out mid-campaign', () => {
  it('pauses with insufficient_credits, places no call the balance cannot hold, and resumes after a top-up', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    env.settings = { ...env.settings, callHoldMinutes: 5 };
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 120, sentiment: 'neutral' }));
    const { telephony } = dialer;
    // 60 cents a minute: a hold is 300 cents; 1,000 cents hold three calls at once, and pay for eight.
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 20 }, (_, i) => ({ Phone: number(5_000 + i) })),
      creditsCents: 1_000,
      campaign: { concurrentCalls: 5 },
    });
    await dialer.run(setup.campaignId);
    const paused = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
    expect(paused).toMatchObject({ status: 'paused', pausedReason: 'insufficient_credits' });
    expect(telephony.maxInFlight).toBeLessThanOrEqual(3);
    const spent = await ledgerMatchesAccount(app, setup.userId);
    expect(spent.ledger).toBe(spent.account);
    expect(spent.account).toBeGreaterThanOrEqual(0n);
    expect(spent.account).toBeLessThan(300n);
    const placedBefore = telephony.placed.length;
    expect(placedBefore).toBeLessThan(20);

    const { grantCredits } = await import('../src/services/billing/grants.js');
    await grantCredits(setup.admin, { user_id: setup.userId, kind: 'top_up', amount_cents: 100_000 });
    await app.prisma.campaign.update({ where: { id: setup.campaignId }, data: { status: 'running', pausedReason: null } });
    await dialer.run(setup.campaignId);
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } })).status).toBe('completed');
    expect(new Set(telephony.placed.map((c) => c.to)).size).toBe(20);
  });
});

describe('dispatch and the dialer on one credit rule', () => {
  it('refuses a balance that cannot hold one call, and places calls once it can', async () => {
    // The app's settings (10 cents a minute, five minutes held per call) for the dialer too: one call holds 50 cents.
    const env = { ...dialerEnv(app, systemClock), settings: defaultSettings };
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 0 }));
    const who = await customer(app, { credits: 32 });
    const campaign = await createCampaign(app, who, {
      calling_hours: { start: '00:00', end: '24:00' },
      active_days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
      regional_rules: false,
    });

    const refused = await dispatch(app, who.token, campaign.id);
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ reason: 'insufficient_credits', detail: expect.stringContaining('needs 50 cents') });
    expect(refused.json.detail).toContain('32 cents are available');
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).status).toBe('draft');

    await grant(app, who.id, 18);
    expect((await dispatch(app, who.token, campaign.id)).status).toBe(202);
    await dialer.run(campaign.id);
    expect(dialer.telephony.placed).toHaveLength(2);
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).toMatchObject({
      status: 'completed',
      pausedReason: null,
    });
  });
});

describe('an agent archived while its campaign starts', () => {
  it('pauses the campaign with agent_archived at the first tick, before any call', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const telephony = new RecordingTelephony(
      clock,
      () => ({ outcome: 'human', durationSeconds: 10 }),
      () => (r) => dialer.dialer.report(r),
    );
    const dialer = manualDialer(env, telephony);
    const setup = await runningCampaign(app, env, { rows: [{ Phone: number(8_001) }] });
    // What a dispatch that read the agent just before the archive committed leaves behind.
    await app.prisma.agent.update({ where: { id: setup.agent.id }, data: { isActive: false, status: 'archived' } });
    await dialer.run(setup.campaignId);
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } })).toMatchObject({
      status: 'paused',
      pausedReason: 'agent_archived',
    });
    expect(telephony.placed).toEqual([]);
  });
});

describe('a call that ended in one worker', () => {
  it('frees its slot to every worker before its result is written; the sweep clears the mark after', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    let first: ReturnType<typeof manualDialer>;
    let second: ReturnType<typeof manualDialer>;
    const outcome = () => ({ outcome: 'human' as const, durationSeconds: 30 });
    const firstPhone = new RecordingTelephony(clock, outcome, () => (r) => first.dialer.report(r));
    const secondPhone = new RecordingTelephony(clock, outcome, () => (r) => second.dialer.report(r));
    firstPhone.auto = false;
    secondPhone.auto = false;
    first = manualDialer(env, firstPhone);
    second = manualDialer(env, secondPhone);
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 6 }, (_, i) => ({ Phone: number(6_100 + i) })),
      campaign: { concurrentCalls: 2 },
    });
    // The first worker hears its calls end, but writes nothing until the test says so.
    const write = holdWrites(first.dialer);
    const marked = async () => {
      const [row] = await testSql(app.sql).query<{ n: number }>(
        'SELECT count(*)::int AS n FROM ended_calls e JOIN call_attempts a ON a.id = e.attempt_id WHERE a.campaign_id = $1::uuid',
        [setup.campaignId],
      );
      return row!.n;
    };

    expect(await first.dialer.tick(setup.campaignId)).toBe(2);
    expect(await second.dialer.tick(setup.campaignId)).toBe(0);
    firstPhone.deliver();
    await vi.waitFor(async () => expect(await marked()).toBe(2));
    // The second worker takes the slots of the two calls that ended, though their results are not written...
    expect(await second.dialer.tick(setup.campaignId)).toBe(2);
    expect(firstPhone.inFlight.size + secondPhone.inFlight.size).toBe(2);
    // ...and neither worker finds another free while those two are under way.
    expect(await second.dialer.tick(setup.campaignId)).toBe(0);
    expect(await first.dialer.tick(setup.campaignId)).toBe(0);

    write();
    secondPhone.deliver();
    await first.dialer.settled();
    await second.dialer.settled();
    firstPhone.auto = true;
    await first.run(setup.campaignId);
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } })).toMatchObject({ status: 'completed' });
    const dialed = [...firstPhone.placed, ...secondPhone.placed].map((c) => c.to);
    expect(new Set(dialed).size).toBe(6);
    expect(dialed).toHaveLength(6);
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    expect(attempts.map((a) => a.status)).toEqual(Array(6).fill('completed'));
    const spent = await ledgerMatchesAccount(app, setup.userId);
    expect(spent.ledger).toBe(spent.account);
    expect(spent.account_.heldCents).toBe(0n);

    // Every result is written: the marks have done their job, and the sweep clears them.
    expect(await marked()).toBeGreaterThan(0);
    await first.dialer.sweep();
    expect(await marked()).toBe(0);
  });

  it('ended, once its lease runs out, when it was heard to end, if that worker died before writing its result', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    let first: ReturnType<typeof manualDialer>;
    const phone = new RecordingTelephony(
      clock,
      () => ({ outcome: 'human' as const, durationSeconds: 30 }),
      () => (r) => first.dialer.report(r),
    );
    phone.auto = false;
    first = manualDialer(env, phone, { leaseSeconds: 60 });
    const second = manualDialer(
      env,
      new RecordingTelephony(
        clock,
        () => null,
        () => () => {},
      ),
      { leaseSeconds: 60 },
    );
    const setup = await runningCampaign(app, env, { rows: [{ Phone: number(6_200) }], campaign: { concurrentCalls: 1 } });
    // The first worker hears the call end 20 s in, marks it, and dies before writing the result.
    holdWrites(first.dialer);
    expect(await first.dialer.tick(setup.campaignId)).toBe(1);
    clock.advance(20_000);
    const heardAt = clock.now();
    phone.deliver();
    await vi.waitFor(async () => {
      const [row] = await testSql(app.sql).query<{ n: number }>('SELECT count(*)::int AS n FROM ended_calls WHERE ended_at = $1', [
        heardAt,
      ]);
      expect(row!.n).toBe(1);
    });

    clock.advance(45_000);
    await second.dialer.sweep();
    const [attempt] = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    expect(attempt).toMatchObject({ status: 'failed', disconnectReason: 'no_report', endedAt: heardAt });
  });
});

describe('a call whose result came in but is not written yet', () => {
  it("leaves its slot to this dialer at once, up to a campaign's worth of such calls", async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    const { telephony } = dialer;
    telephony.auto = false;
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 7 }, (_, i) => ({ Phone: number(6_000 + i) })),
      campaign: { concurrentCalls: 2 },
    });
    // Results reach the dialer, but nothing is written until the test says so.
    const write = holdWrites(dialer.dialer);
    const unfinished = () =>
      app.prisma.callAttempt.count({ where: { campaignId: setup.campaignId, status: { in: ['queued', 'ringing', 'in_progress'] } } });

    await dialer.dialer.tick(setup.campaignId);
    expect(telephony.placed).toHaveLength(2);
    telephony.deliver();
    await dialer.dialer.tick(setup.campaignId);
    expect(telephony.placed).toHaveLength(4);
    expect(telephony.maxInFlight).toBe(2);
    expect(await unfinished()).toBe(4);
    // Two more ended: with a campaign's worth of results waiting, no slot is free until they are written.
    telephony.deliver();
    await dialer.dialer.tick(setup.campaignId);
    expect(telephony.placed).toHaveLength(4);

    write();
    await dialer.dialer.settled();
    expect(await unfinished()).toBe(0);
    telephony.auto = true;
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(7);
    expect(telephony.maxInFlight).toBe(2);
    expect(telephony.overlaps).toBe(0);
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } })).toMatchObject({ status: 'completed' });
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    expect(attempts.map((a) => a.status)).toEqual(Array(7).fill('completed'));
    // Each attempt ended when its result came in, not when it was written.
    for (const a of attempts) expect(a.endedAt!.getTime()).toBeGreaterThanOrEqual(a.createdAt.getTime());
    const spent = await ledgerMatchesAccount(app, setup.userId);
    expect(spent.ledger).toBe(spent.account);
    expect(spent.account_.heldCents).toBe(0n);
  });
});

describe("a balance spent elsewhere between a tick's read and its holds", () => {
  it('puts the claimed calls back unplaced, holds nothing, and pauses the campaign at the next tick', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const base = dialerEnv(app, clock);
    // What another campaign's holds would do: take the whole balance just before this tick's holds.
    let spendElsewhere = true;
    const beforeHolds = async (text: string) => {
      if (spendElsewhere && text.includes('SET held_cents = held_cents +')) {
        spendElsewhere = false;
        await testSql(base.sql).query('UPDATE credit_accounts SET held_cents = balance_cents + included_remaining_cents');
      }
    };
    // Named statements (a store's) and unnamed text alike.
    const sql = {
      ...base.sql,
      run: async <R>(statement: Statement<R>, values?: readonly unknown[]) => {
        await beforeHolds(statement.text);
        return base.sql.run(statement, values);
      },
      transaction: base.sql.transaction.bind(base.sql),
    };
    const env = { ...base, sql };
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    const { telephony } = dialer;
    const setup = await runningCampaign(app, env, { rows: [{ Phone: number(7_001) }, { Phone: number(7_002) }], creditsCents: 10_000 });

    await dialer.dialer.tick(setup.campaignId);
    expect(telephony.placed).toEqual([]);
    expect(await app.prisma.callAttempt.count({ where: { campaignId: setup.campaignId } })).toBe(0);
    expect(await app.prisma.creditHold.count({ where: { userId: setup.userId } })).toBe(0);
    const contacts = await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId } });
    expect(contacts.map((c) => [c.state, c.attempts, c.firstAttemptAt])).toEqual([
      ['pending', 0, null],
      ['pending', 0, null],
    ]);

    await dialer.run(setup.campaignId);
    expect(telephony.placed).toEqual([]);
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } })).toMatchObject({
      status: 'paused',
      pausedReason: 'insufficient_credits',
    });
  });
});

describe('calls that never report back', () => {
  it('hold their slot only for the lease, then count as failed and are retried', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    let silent = true;
    const dialer = recordingDialer(env, () => (silent ? null : { outcome: 'human', durationSeconds: 10 }), { leaseSeconds: 60 });
    const { telephony } = dialer;
    const setup = await runningCampaign(app, env, {
      rows: [{ Phone: number(9_001) }, { Phone: number(9_002) }],
      campaign: { concurrentCalls: 1 },
    });
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(1);
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(1); // the slot is taken

    clock.advance(61_000);
    silent = false;
    await dialer.dialer.sweep();
    const first = await app.prisma.callAttempt.findUniqueOrThrow({ where: { id: telephony.placed[0]!.attemptId } });
    expect(first).toMatchObject({ status: 'failed', disconnectReason: 'no_report' });
    const account = await app.prisma.creditAccount.findUniqueOrThrow({ where: { userId: setup.userId } });
    expect(account.heldCents).toBe(0n);
    telephony.forget(first.id);
    await dialer.run(setup.campaignId);
    expect(telephony.placed.map((c) => c.to)).toContain(number(9_002));
  });

  it('are swept, and running campaigns woken, while results keep coming in', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => null, { leaseSeconds: 60 });
    const setup = await runningCampaign(app, env, { rows: [{ Phone: number(9_101) }], campaign: { concurrentCalls: 1 } });
    await dialer.run(setup.campaignId);
    clock.advance(61_000);
    dialer.woken.clear();
    // A busy worker: results (of calls it knows nothing of) come faster than a batch is written, so that
    // some batch is always being written. (On PGlite a batch's statements run in this thread, leaving no
    // gap for results to arrive in: there the test cannot tell the stall, on PostgreSQL it does.)
    let busy = true;
    const results = (async () => {
      while (busy) {
        for (let i = 0; i < 20; i += 1) dialer.dialer.report({ attemptId: randomUUID(), outcome: 'no_answer', durationSeconds: 0 });
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    try {
      const swept = await Promise.race([
        dialer.dialer.sweep(),
        new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 10_000)),
      ]);
      // Running campaigns of other tests in a shared database are woken too.
      expect(swept).toContain(setup.campaignId);
    } finally {
      busy = false;
      await results;
    }
    const [attempt] = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    expect(attempt).toMatchObject({ status: 'failed', disconnectReason: 'no_report' });
    expect(dialer.woken.has(setup.campaignId)).toBe(true);
  });
});

describe('a claim that reaches its placing late', () => {
  it('is not placed once half its lease has gone, and its contact is put back at once, no attempt spent', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const base = dialerEnv(app, clock);
    // The worker stalls once, for 40 s of a 60 s lease, between its claim and its hold (cut off, paused).
    let stalled = false;
    const stalling: typeof base.sql = {
      run: (statement, values) => {
        if (statement.name === 'billing.holdCalls' && !stalled) {
          stalled = true;
          clock.advance(40_000);
        }
        return base.sql.run(statement, values);
      },
      transaction: (work, options) => base.sql.transaction(work, options),
    };
    const env = { ...base, sql: stalling };
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 10 }), { leaseSeconds: 60 });
    const setup = await runningCampaign(app, env, { rows: [{ Phone: number(12_000) }], campaign: { concurrentCalls: 1 } });
    dialer.woken.clear();
    expect(await dialer.dialer.tick(setup.campaignId)).toBe(1);
    expect(dialer.telephony.placed).toEqual([]);
    expect(dialer.woken.has(setup.campaignId)).toBe(true);

    expect(await app.prisma.callAttempt.count({ where: { campaignId: setup.campaignId } })).toBe(0);
    expect(await app.prisma.campaignContact.findFirstOrThrow({ where: { campaignId: setup.campaignId } })).toMatchObject({
      state: 'pending',
      attempts: 0,
    });
    const account = await app.prisma.creditAccount.findUniqueOrThrow({ where: { userId: setup.userId } });
    expect(account.heldCents).toBe(0n);

    // The next tick calls the person.
    expect(await dialer.dialer.tick(setup.campaignId)).toBe(1);
    expect(dialer.telephony.placed).toHaveLength(1);
  });

  it('holds nothing for attempts another worker failed while it was cut off for longer than the lease', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const base = dialerEnv(app, clock);
    const other = recordingDialer(base, () => ({ outcome: 'human', durationSeconds: 10 }), { leaseSeconds: 60 });
    // Its hold reaches PostgreSQL 70 s after its claim, once another worker's sweep has failed the attempt.
    const cutOff: typeof base.sql = {
      run: async (statement, values) => {
        if (statement.name === 'billing.holdCalls') {
          clock.advance(70_000);
          await other.dialer.sweep();
        }
        return base.sql.run(statement, values);
      },
      transaction: (work, options) => base.sql.transaction(work, options),
    };
    const dialer = recordingDialer({ ...base, sql: cutOff }, () => ({ outcome: 'human', durationSeconds: 10 }), { leaseSeconds: 60 });
    const setup = await runningCampaign(app, base, { rows: [{ Phone: number(12_100) }], campaign: { concurrentCalls: 1 } });
    await dialer.dialer.tick(setup.campaignId);
    expect(dialer.telephony.placed).toEqual([]);

    const [attempt] = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    expect(attempt).toMatchObject({ status: 'failed', disconnectReason: 'no_report' });
    expect(await app.prisma.creditHold.count({ where: { callAttemptId: attempt!.id, status: 'held' } })).toBe(0);
    const account = await app.prisma.creditAccount.findUniqueOrThrow({ where: { userId: setup.userId } });
    expect(account.heldCents).toBe(0n);
  });
});

describe('the circuit breaker', () => {
  it('pauses the campaign with high_failure_rate when most recent dials fail', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => ({ outcome: 'failed', durationSeconds: 0 }));
    const { telephony } = dialer;
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 100 }, (_, i) => ({ Phone: number(10_000 + i) })),
      campaign: { concurrentCalls: 5 },
    });
    await dialer.run(setup.campaignId);
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
    expect(campaign).toMatchObject({ status: 'paused', pausedReason: 'high_failure_rate' });
    expect(telephony.placed.length).toBeLessThan(40);
  });

  it('does not count calls nobody reported on (a worker that died with them), which say nothing of the numbers', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    let silent = true;
    const dialer = recordingDialer(env, () => (silent ? null : { outcome: 'human', durationSeconds: 10 }), { leaseSeconds: 60 });
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 30 }, (_, i) => ({ Phone: number(11_000 + i) })),
      campaign: { concurrentCalls: 25 },
    });
    await dialer.run(setup.campaignId);
    expect(dialer.telephony.placed).toHaveLength(25);
    clock.advance(61_000);
    silent = false;
    await dialer.dialer.sweep();
    const failed = await app.prisma.callAttempt.count({ where: { campaignId: setup.campaignId, disconnectReason: 'no_report' } });
    expect(failed).toBe(25);
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
    expect(campaign).toMatchObject({ status: 'running', pausedReason: null });
  });
});
