import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialerControl } from '../src/services/dialer/control.js';
import { RetellTelephony } from '../src/services/voice/providers/retell/telephony.js';
import { inProcessEventBus, type CampaignEvent } from '../src/services/events.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, manualDialer, ManualClock, runningCampaign } from './support/dialer.js';
import { FakeRetell, type CreatedCall, type Script } from './support/fake-retell.js';

// POST /webhooks/retell over real HTTP, one event at a time, in the orders and repeats Retell may send:
// calls are placed through the Retell adapter on the local fake, which then sends nothing on its own;
// each test delivers the events itself (signed by the fake) and drives the dialer and its clock by hand.

const API_KEY = 'key_test_retell_api_0123456789';
const WEBHOOK_KEY = 'key_test_retell_webhook_0123456789';
const ANALYSIS_WAIT_SECONDS = 120;

const clock = new ManualClock(new Date());
const scripts = new Map<string, Script>();
let app: TestApp;
let fake: FakeRetell;
let dialer: ReturnType<typeof manualDialer>;
/** While set, results the webhook hands over are lost, as when the process dies right after answering. */
let dropReports = false;
const events = inProcessEventBus(pino({ level: 'silent' }));

beforeAll(async () => {
  const control: DialerControl = {
    wake: async () => {},
    report: (result) => {
      if (!dropReports) dialer.dialer.report(result);
    },
  };
  app = await startTestApp({
    clock,
    events,
    dialer: control,
    settings: { callRateCentsPerMinute: 60 },
    retellWebhook: { key: WEBHOOK_KEY, toleranceSeconds: 300, analysisWaitSeconds: ANALYSIS_WAIT_SECONDS },
  });
  fake = await new FakeRetell({
    apiKey: API_KEY,
    webhookKey: WEBHOOK_KEY,
    webhookUrl: `${app.url}/webhooks/retell`,
    script: (to) => scripts.get(to) ?? { kind: 'silent' },
    now: () => clock.now().getTime(),
  }).start();
  dialer = manualDialer(dialerEnv(app, clock), new RetellTelephony({ baseUrl: fake.url, apiKey: API_KEY, timeoutSeconds: 10 }));
});
afterAll(async () => {
  await fake?.close();
  await app?.close();
});

let seq = 0;
const nextNumber = () => `+1415${8_000_000 + (seq += 1)}`;

const TALK: Script = {
  kind: 'connected',
  reason: 'user_hangup',
  durationMs: 60_400,
  analysis: {
    call_summary: 'Booked a check-up.',
    user_sentiment: 'Positive',
    call_successful: true,
    in_voicemail: false,
    custom_analysis_data: { appointment_time: '2026-12-01T09:00:00Z' },
  },
};
const NO_ANSWER: Script = { kind: 'not_connected', reason: 'dial_no_answer' };

/** A running campaign of one contact, dialed once; `script` says what create-phone-call answers. */
async function dialOne(script: Script = { kind: 'silent' }) {
  const phone = nextNumber();
  scripts.set(phone, script);
  const env = dialerEnv(app, clock);
  const setup = await runningCampaign(app, env, { rows: [{ Phone: phone }] });
  await dialer.run(setup.campaignId);
  const call = fake.calls.find((c) => c.body.to_number === phone);
  return { ...setup, phone, call: call as CreatedCall };
}

/** Sends one event of the call as the fake would, then lets the dialer apply what it was handed. */
async function deliver(
  event: 'call_started' | 'call_ended' | 'call_analyzed',
  call: CreatedCall,
  script: Script,
  options: Parameters<FakeRetell['send']>[2] = {},
) {
  const delivery = await fake.send(event, fake.callObject(call, event, script), options);
  await dialer.dialer.settled();
  return delivery;
}

/** Everything a webhook could change, for "nothing changed" checks. */
async function state(campaignId: string, userId: string) {
  const [attempts, contacts, account, transactions, appointments, deliveries] = await Promise.all([
    app.prisma.callAttempt.findMany({ where: { campaignId } }),
    app.prisma.campaignContact.findMany({ where: { campaignId } }),
    app.prisma.creditAccount.findUnique({ where: { userId } }),
    app.prisma.creditTransaction.findMany({ where: { userId } }),
    app.prisma.appointment.findMany({ where: { campaignId } }),
    app.prisma.webhookDelivery.count({ where: { source: 'retell' } }),
  ]);
  return { attempts, contacts, account, transactions, appointments, deliveries };
}

const attemptOf = (campaignId: string) => app.prisma.callAttempt.findFirstOrThrow({ where: { campaignId } });

describe('signatures', () => {
  it('answers 400 to a wrong, tampered, malformed or missing signature, and changes nothing', async () => {
    const { call, campaignId, userId } = await dialOne();
    const before = await state(campaignId, userId);
    const tries = [
      deliver('call_ended', call, NO_ANSWER, { key: 'key_someone_else_0123456789' }),
      deliver('call_ended', call, NO_ANSWER, { tamper: (body) => body.replace('dial_no_answer', 'user_hangup') }),
      deliver('call_ended', call, NO_ANSWER, { signature: 't=1700000000,v1=deadbeef' }),
      deliver('call_ended', call, NO_ANSWER, { signature: `v=${clock.now().getTime()},d=${'0'.repeat(64)}` }),
      deliver('call_ended', call, NO_ANSWER, { signature: null }),
    ];
    for (const attempt of tries) {
      const res = await attempt;
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['x-retell-signature']);
    }
    expect(await state(campaignId, userId)).toEqual(before);
  });

  it('answers 400 to a timestamp more than the tolerance away from our clock, either way', async () => {
    const { call, campaignId, userId } = await dialOne();
    const before = await state(campaignId, userId);
    const now = clock.now().getTime();
    for (const timestampMs of [now - 301_000, now + 301_000]) {
      const res = await deliver('call_ended', call, NO_ANSWER, { timestampMs });
      expect(res.status).toBe(400);
      expect(res.body['x-retell-signature'][0]).toMatch(/tolerance of 300 seconds/);
    }
    expect(await state(campaignId, userId)).toEqual(before);
    // Within the tolerance, the same event is taken.
    expect((await deliver('call_ended', call, NO_ANSWER, { timestampMs: now - 290_000 })).body).toEqual({
      received: true,
      result: 'applied',
    });
  });

  it('answers 400 to a signed body that is not a Retell event', async () => {
    const res = await fake.send('call_ended', { call_status: 'ended' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ 'call.call_id': ['This field is required.'] });
  });

  it('answers 400 to a signed event carrying text no column can store or JSON nested too deep, and changes nothing', async () => {
    const { call, campaignId, userId } = await dialOne();
    await deliver('call_started', call, TALK);
    const before = await state(campaignId, userId);
    const deep = JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) as Record<string, unknown>;
    const cases: [Record<string, unknown>, string][] = [
      [{ ...TALK.analysis, call_summary: 'Booked\u0000 a check-up.' }, 'call.call_analysis.call_summary'],
      [{ ...TALK.analysis, call_summary: 'Booked \ud800 a check-up.' }, 'call.call_analysis.call_summary'],
      [{ ...TALK.analysis, custom_analysis_data: deep }, 'non_field_errors'],
    ];
    for (const [analysis, field] of cases) {
      const res = await deliver('call_analyzed', call, { ...TALK, analysis } as Script);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body as object)[0]).toMatch(new RegExp(`^${field.replaceAll('.', '\\.')}`));
    }
    expect(await state(campaignId, userId)).toEqual(before);
  });

  it('answers 503 while RETELL_WEBHOOK_KEY is not configured, so that Retell retries later', async () => {
    const unconfigured = await startTestApp();
    try {
      const res = await unconfigured.request('POST', '/webhooks/retell', { raw: '{}', headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ detail: 'Retell webhooks are not configured (RETELL_WEBHOOK_KEY).' });
    } finally {
      await unconfigured.close();
    }
  });
});

describe('calls that are not ours', () => {
  it('acknowledges and ignores an unknown call, another call id for one of our attempts, and events it does not use', async () => {
    const { call, campaignId, userId } = await dialOne();
    await deliver('call_started', call, TALK);
    const before = await state(campaignId, userId);
    const stranger = { ...call, callId: 'call_not_ours_0001', body: { ...call.body, metadata: { attempt_id: randomUUID() } } };
    const noMetadata = { ...call, callId: 'call_not_ours_0002', body: { ...call.body, metadata: undefined } };
    const impostor = { ...call, callId: 'call_not_ours_0003' };
    for (const other of [stranger, noMetadata, impostor]) {
      const res = await deliver('call_analyzed', other, TALK);
      expect(res).toMatchObject({ status: 200, body: { received: true, result: 'ignored' } });
    }
    const transcript = await fake.send('transcript_updated', fake.callObject(call, 'call_ended', TALK));
    expect(transcript).toMatchObject({ status: 200, body: { received: true, result: 'ignored' } });
    expect(await state(campaignId, userId)).toEqual(before);
  });
});

describe('each delivery applied once', () => {
  it('applies an event delivered three times once', async () => {
    const { call, campaignId, userId } = await dialOne();
    const results = [];
    for (let i = 0; i < 3; i += 1) results.push((await deliver('call_ended', call, NO_ANSWER)).body.result);
    expect(results).toEqual(['applied', 'duplicate', 'duplicate']);
    expect(await attemptOf(campaignId)).toMatchObject({
      status: 'no_answer',
      durationSeconds: 0,
      disconnectReason: 'dial_no_answer',
      providerCallId: call.callId,
    });
    // Retried later by the campaign's policy, counted as one attempt.
    const [contact] = (await state(campaignId, userId)).contacts;
    expect(contact).toMatchObject({ state: 'pending', attempts: 1, lastStatus: 'no_answer' });
    expect(await app.prisma.webhookDelivery.count({ where: { source: 'retell', eventKey: `${call.callId}:call_ended` } })).toBe(1);
  });

  it('applies an event delivered three times at the same moment once, charging once', async () => {
    const { call, campaignId, userId } = await dialOne();
    const object = fake.callObject(call, 'call_analyzed', TALK);
    const results = await Promise.all([1, 2, 3].map(() => fake.send('call_analyzed', object)));
    await dialer.dialer.settled();
    expect(results.map((r) => r.body.result).sort()).toEqual(['applied', 'duplicate', 'duplicate']);
    const after = await state(campaignId, userId);
    expect(after.attempts).toEqual([expect.objectContaining({ outcome: 'human', durationSeconds: 61, costCents: 61n })]);
    expect(after.transactions.filter((t) => t.kind === 'call_charge')).toHaveLength(1);
    expect(after.appointments).toHaveLength(1);
  });
});

describe('live updates', () => {
  it('announces a started call to its campaign’s subscribers', async () => {
    const { call, campaignId } = await dialOne();
    const heard: CampaignEvent[] = [];
    const stop = await events.listen(campaignId, (event) => heard.push(event));
    try {
      expect((await deliver('call_started', call, TALK)).body.result).toBe('applied');
      const attempt = await attemptOf(campaignId);
      expect(heard).toContainEqual({ kind: 'attempts', campaignId, attemptIds: [attempt.id] });
    } finally {
      stop();
    }
  });
});

describe('events in any order', () => {
  it('holds a connected call open until its analysis, then applies end and analysis as one result', async () => {
    const { call, campaignId, userId } = await dialOne();
    expect((await deliver('call_started', call, TALK)).body.result).toBe('applied');
    expect(await attemptOf(campaignId)).toMatchObject({ status: 'in_progress' });

    expect((await deliver('call_ended', call, TALK)).body.result).toBe('applied');
    const waiting = await attemptOf(campaignId);
    expect(waiting).toMatchObject({
      status: 'in_progress',
      costCents: 0n,
      pendingResult: expect.objectContaining({ outcome: 'human', durationSeconds: 61 }),
    });
    expect(waiting.leaseExpiresAt).toEqual(new Date(clock.now().getTime() + ANALYSIS_WAIT_SECONDS * 1000));

    expect((await deliver('call_analyzed', call, TALK)).body.result).toBe('applied');
    const after = await state(campaignId, userId);
    expect(after.attempts).toEqual([
      expect.objectContaining({
        status: 'completed',
        durationSeconds: 61,
        costCents: 61n,
        summary: 'Booked a check-up.',
        sentiment: 'positive',
        pendingResult: null,
        leaseExpiresAt: null,
      }),
    ]);
    expect(after.contacts).toEqual([expect.objectContaining({ state: 'done', outcome: 'reached' })]);
    expect(after.appointments).toEqual([expect.objectContaining({ scheduledAt: new Date('2026-12-01T09:00:00Z') })]);
  });

  it('applies a call from its analysis when that comes first, and ignores the end and start that follow', async () => {
    const { call, campaignId, userId } = await dialOne();
    expect((await deliver('call_analyzed', call, TALK)).body.result).toBe('applied');
    const applied = await state(campaignId, userId);
    expect(applied.attempts).toEqual([expect.objectContaining({ outcome: 'human', durationSeconds: 61, summary: 'Booked a check-up.' })]);
    expect(applied.appointments).toHaveLength(1);

    expect((await deliver('call_ended', call, TALK)).body.result).toBe('ignored');
    expect((await deliver('call_started', call, TALK)).body.result).toBe('ignored');
    const after = await state(campaignId, userId);
    expect({ ...after, deliveries: 0 }).toEqual({ ...applied, deliveries: 0 });
  });

  it('applies the end alone once the analysis wait is over, and ignores an analysis that comes later', async () => {
    const { call, campaignId, userId } = await dialOne();
    await deliver('call_ended', call, TALK);
    clock.advance(ANALYSIS_WAIT_SECONDS * 1000 + 1_000);
    await dialer.dialer.sweep();
    const applied = await state(campaignId, userId);
    expect(applied.attempts).toEqual([
      expect.objectContaining({ outcome: 'human', durationSeconds: 61, costCents: 61n, summary: null, sentiment: 'unknown' }),
    ]);
    expect(applied.contacts).toEqual([expect.objectContaining({ state: 'done', outcome: 'reached' })]);

    expect((await deliver('call_analyzed', call, TALK)).body.result).toBe('ignored');
    const after = await state(campaignId, userId);
    expect({ ...after, deliveries: 0 }).toEqual({ ...applied, deliveries: 0 });
  });

  it('keeps an accepted event when nothing applies it at once (the process died): a sweep applies it', async () => {
    const { call, campaignId, userId } = await dialOne();
    dropReports = true;
    try {
      expect((await deliver('call_analyzed', call, TALK)).body.result).toBe('applied');
    } finally {
      dropReports = false;
    }
    expect(await attemptOf(campaignId)).toMatchObject({
      status: 'ringing',
      pendingResult: expect.objectContaining({ outcome: 'human' }),
    });
    clock.advance(1_000);
    await dialer.dialer.sweep();
    const after = await state(campaignId, userId);
    expect(after.attempts).toEqual([expect.objectContaining({ status: 'completed', costCents: 61n, summary: 'Booked a check-up.' })]);
    expect(after.appointments).toHaveLength(1);
  });
});

describe('refusals when creating the call', () => {
  it('puts a rate-limited call back as if never tried: no attempt, no hold, due after Retry-After', async () => {
    const { phone, campaignId, userId } = await dialOne({ kind: 'rate_limited_once', then: { kind: 'silent' } });
    expect(fake.requests.filter((r) => r.to === phone).map((r) => r.status)).toEqual([429]);
    const refused = await state(campaignId, userId);
    expect(refused.attempts).toEqual([]);
    expect(refused.contacts).toEqual([
      expect.objectContaining({ state: 'pending', attempts: 0, firstAttemptAt: null, lastAttemptAt: null }),
    ]);
    expect(refused.contacts[0]!.nextAttemptAt).toEqual(new Date(clock.now().getTime() + 1_000));
    expect(refused.account!.heldCents).toBe(0n);

    await dialer.run(campaignId);
    expect(fake.requests.filter((r) => r.to === phone)).toHaveLength(1);
    clock.advance(1_000);
    await dialer.run(campaignId);
    expect(fake.requests.filter((r) => r.to === phone).map((r) => r.status)).toEqual([429, 201]);
    expect(await attemptOf(campaignId)).toMatchObject({ attemptNumber: 1, status: 'ringing' });
    expect((await state(campaignId, userId)).contacts).toEqual([expect.objectContaining({ state: 'dialing', attempts: 1 })]);
  });

  it('ends a contact whose number Retell refuses as invalid, never retried, its hold released', async () => {
    const { campaignId, userId } = await dialOne({ kind: 'invalid_number' });
    const after = await state(campaignId, userId);
    expect(after.attempts).toEqual([expect.objectContaining({ status: 'failed', disconnectReason: 'invalid_destination', costCents: 0n })]);
    expect(after.contacts).toEqual([expect.objectContaining({ state: 'done', outcome: 'invalid', attempts: 1 })]);
    expect(after.account!.heldCents).toBe(0n);
  });

  it('counts any other refusal (here a wrong API key) as a failed call, left to the retry policy', async () => {
    const phone = nextNumber();
    const env = dialerEnv(app, clock);
    const setup = await runningCampaign(app, env, { rows: [{ Phone: phone }] });
    const badKey = manualDialer(env, new RetellTelephony({ baseUrl: fake.url, apiKey: 'key_revoked_0123456789', timeoutSeconds: 10 }));
    await badKey.run(setup.campaignId);
    const after = await state(setup.campaignId, setup.userId);
    expect(after.attempts).toEqual([expect.objectContaining({ status: 'failed', disconnectReason: 'provider_error' })]);
    expect(after.contacts).toEqual([expect.objectContaining({ state: 'pending', attempts: 1 })]);
    expect(after.account!.heldCents).toBe(0n);
  });
});
