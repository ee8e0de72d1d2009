import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDialer, type DialerRuntime } from '../src/jobs/dialer.js';
import { registry } from '../src/ops/metrics.js';
import type { DialerControl } from '../src/services/dialer/control.js';
import { DEFAULT_DIALER_OPTIONS } from '../src/services/dialer/options.js';
import { systemClock } from '../src/services/context.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ledgerMatchesAccount, runningCampaign } from './support/dialer.js';
import { FakeRetell, type Script } from './support/fake-retell.js';
import { sample } from './support/prometheus.js';
import { waitFor } from './support/wait.js';

// A campaign dialed through the Retell adapter, as in production: the dialer on its job engine places
// calls with create-phone-call on a local fake of Retell's API, which answers with signed webhooks sent
// to the app over HTTP. Every outcome below is fixed by the number dialed.

const API_KEY = 'key_test_retell_api_0123456789';
const WEBHOOK_KEY = 'key_test_retell_webhook_0123456789';
const number = (i: number) => `+1415${7_000_000 + i}`;

const SCRIPT: Record<string, Script> = {
  [number(1)]: {
    kind: 'connected',
    reason: 'user_hangup',
    durationMs: 95_400,
    analysis: {
      call_summary: 'Interested; asked for a brochure.',
      user_sentiment: 'Positive',
      call_successful: true,
      in_voicemail: false,
      custom_analysis_data: {},
    },
  },
  [number(2)]: {
    kind: 'connected',
    reason: 'agent_hangup',
    durationMs: 42_000,
    analysis: { call_summary: 'Not interested.', user_sentiment: 'Negative', call_successful: false, in_voicemail: false },
  },
  [number(3)]: { kind: 'not_connected', reason: 'dial_no_answer' },
  [number(4)]: { kind: 'not_connected', reason: 'dial_busy' },
  [number(5)]: {
    kind: 'connected',
    reason: 'voicemail_reached',
    durationMs: 20_200,
    analysis: { call_summary: 'Reached voicemail.', user_sentiment: 'Unknown', call_successful: false, in_voicemail: true },
  },
  [number(6)]: {
    kind: 'connected',
    reason: 'user_hangup',
    durationMs: 130_000,
    analysis: {
      call_summary: 'Booked a cleaning.',
      user_sentiment: 'Positive',
      call_successful: true,
      in_voicemail: false,
      custom_analysis_data: { appointment_time: '2026-12-03T15:30:00-05:00', appointment_notes: 'Cleaning, first visit' },
    },
  },
  [number(7)]: {
    kind: 'connected',
    reason: 'user_hangup',
    durationMs: 15_000,
    analysis: {
      call_summary: 'Asked not to be called again.',
      user_sentiment: 'Negative',
      call_successful: false,
      custom_analysis_data: { do_not_call: true },
    },
  },
  [number(8)]: {
    kind: 'rate_limited_once',
    then: {
      kind: 'connected',
      reason: 'user_hangup',
      durationMs: 60_000,
      analysis: { call_summary: 'Will think about it.', user_sentiment: 'Neutral', call_successful: true },
    },
  },
  [number(9)]: { kind: 'invalid_number' },
  [number(10)]: { kind: 'not_connected', reason: 'dial_failed' },
};

let app: TestApp;
let fake: FakeRetell;
let runtime: DialerRuntime;
let setup: Awaited<ReturnType<typeof runningCampaign>>;
/** This process's metrics before the campaign: other files in this worker may have counted before. */
let metricsBefore: string;

beforeAll(async () => {
  fake = await new FakeRetell({ apiKey: API_KEY, webhookKey: WEBHOOK_KEY, script: (to) => SCRIPT[to] ?? { kind: 'silent' } }).start();
  // The app hands webhook results to the dialer, which starts once the app (and its database) exists.
  const control: DialerControl = { wake: (id) => runtime.control.wake(id), report: (result) => runtime.control.report(result) };
  app = await startTestApp({
    dialer: control,
    settings: { callRateCentsPerMinute: 60 },
    retellWebhook: { key: WEBHOOK_KEY, toleranceSeconds: 300, analysisWaitSeconds: 300 },
  });
  fake.webhookUrl = `${app.url}/webhooks/retell`;
  const env = dialerEnv(app, systemClock);
  runtime = await startDialer(env, app.db, {
    telephony: { provider: 'retell', baseUrl: fake.url, apiKey: API_KEY, timeoutSeconds: 10 },
    dialer: DEFAULT_DIALER_OPTIONS,
    sweepSeconds: 1,
  });
  setup = await runningCampaign(app, env, {
    rows: Object.keys(SCRIPT).map((phone, i) => ({ 'First Name': `Person ${i + 1}`, Phone: phone, Plan: i % 2 ? 'gold' : 'basic' })),
    // One attempt each: every contact's outcome is final after its one call.
    campaign: { concurrentCalls: 4, scheduleConfig: { max_attempts: 1 } },
  });
  await app.prisma.agent.update({ where: { id: setup.agent.id }, data: { providerAgentId: 'agent_4f2b1c', providerVersion: 3 } });
  metricsBefore = await registry.metrics();
  await runtime.control.wake(setup.campaignId);
  await waitFor(
    async () =>
      (await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } })).status === 'completed' ? true : undefined,
    90_000,
    'the campaign to complete',
  );
  await fake.settled();
}, 150_000);

afterAll(async () => {
  await runtime?.stop();
  await fake?.close();
  await app?.close();
});

async function attemptsByNumber() {
  const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
  return new Map(attempts.map((a) => [a.toNumber, a]));
}

describe('a campaign dialed through the Retell adapter', () => {
  it("counted Retell's refusals by reason, and each call's outcome, in the metrics", async () => {
    const after = await registry.metrics();
    const added = (name: string, labels: Record<string, string>) =>
      (sample(after, name, labels) ?? 0) - (sample(metricsBefore, name, labels) ?? 0);
    const errors = (reason: string) => added('telephony_provider_errors_total', { provider: 'retell', reason });
    // The 429 put its call back for later; the 400 made the number invalid.
    expect([errors('retry_later'), errors('invalid_destination'), errors('error')]).toEqual([1, 1, 0]);
    const attempts = await app.prisma.callAttempt.groupBy({ by: ['outcome'], where: { campaignId: setup.campaignId }, _count: true });
    expect(attempts.reduce((sum, a) => sum + a._count, 0)).toBe(10);
    for (const { outcome, _count } of attempts) expect(added('dialer_calls_ended_total', { outcome: outcome! }), outcome!).toBe(_count);
  });

  it('placed each call with create-phone-call: bearer key, E.164 numbers, the agent, the contact as strings, our attempt id', async () => {
    const attempts = await attemptsByNumber();
    const agentNumber = setup.agent.phoneNumbers[0]!.number;
    expect(fake.calls).toHaveLength(9);
    for (const call of fake.calls) {
      expect(call.authorization).toBe(`Bearer ${API_KEY}`);
      const attempt = attempts.get(call.body.to_number)!;
      expect(call.body).toEqual({
        from_number: agentNumber,
        to_number: attempt.toNumber,
        override_agent_id: 'agent_4f2b1c',
        override_agent_version: 3,
        retell_llm_dynamic_variables: { first_name: expect.stringMatching(/^Person \d+$/), Plan: expect.stringMatching(/^(gold|basic)$/) },
        metadata: { attempt_id: attempt.id },
      });
      expect(attempt.providerCallId).toBe(call.callId);
    }
  });

  it('recorded each call with the status, duration, summary and sentiment Retell reported', async () => {
    const attempts = await attemptsByNumber();
    const seen = Object.fromEntries(
      [...attempts].map(([to, a]) => [
        to,
        {
          status: a.status,
          outcome: a.outcome,
          durationSeconds: a.durationSeconds,
          sentiment: a.sentiment,
          summary: a.summary,
          disconnectReason: a.disconnectReason,
        },
      ]),
    );
    expect(seen).toEqual({
      [number(1)]: {
        status: 'completed',
        outcome: 'human',
        durationSeconds: 96,
        sentiment: 'positive',
        summary: 'Interested; asked for a brochure.',
        disconnectReason: 'user_hangup',
      },
      [number(2)]: {
        status: 'completed',
        outcome: 'human',
        durationSeconds: 42,
        sentiment: 'negative',
        summary: 'Not interested.',
        disconnectReason: 'agent_hangup',
      },
      [number(3)]: {
        status: 'no_answer',
        outcome: 'no_answer',
        durationSeconds: 0,
        sentiment: 'unknown',
        summary: null,
        disconnectReason: 'dial_no_answer',
      },
      [number(4)]: {
        status: 'busy',
        outcome: 'busy',
        durationSeconds: 0,
        sentiment: 'unknown',
        summary: null,
        disconnectReason: 'dial_busy',
      },
      [number(5)]: {
        status: 'voicemail',
        outcome: 'voicemail',
        durationSeconds: 21,
        sentiment: 'unknown',
        summary: 'Reached voicemail.',
        disconnectReason: 'voicemail_reached',
      },
      [number(6)]: {
        status: 'completed',
        outcome: 'human',
        durationSeconds: 130,
        sentiment: 'positive',
        summary: 'Booked a cleaning.',
        disconnectReason: 'user_hangup',
      },
      [number(7)]: {
        status: 'completed',
        outcome: 'human',
        durationSeconds: 15,
        sentiment: 'negative',
        summary: 'Asked not to be called again.',
        disconnectReason: 'user_hangup',
      },
      [number(8)]: {
        status: 'completed',
        outcome: 'human',
        durationSeconds: 60,
        sentiment: 'neutral',
        summary: 'Will think about it.',
        disconnectReason: 'user_hangup',
      },
      [number(9)]: {
        status: 'failed',
        outcome: 'invalid_number',
        durationSeconds: 0,
        sentiment: 'unknown',
        summary: null,
        disconnectReason: 'invalid_destination',
      },
      [number(10)]: {
        status: 'failed',
        outcome: 'failed',
        durationSeconds: 0,
        sentiment: 'unknown',
        summary: null,
        disconnectReason: 'dial_failed',
      },
    });
    const first = attempts.get(number(1))!;
    expect(first.recordingUrl).toMatch(/recording\.wav$/);
    expect(first.transcript).toContain('Acme Dental');
    expect(first.analysis).toMatchObject({ call_successful: true, in_voicemail: false });
    expect([...attempts.values()].every((a) => a.pendingResult === null && a.leaseExpiresAt === null)).toBe(true);
  });

  it('gave every contact its final outcome, the rate-limited one after a retry that spent none of its attempts', async () => {
    const enrolled = await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId }, include: { contact: true } });
    const outcomes = Object.fromEntries(enrolled.map((cc) => [cc.contact.phoneNumber, [cc.outcome, cc.attempts]]));
    expect(outcomes).toEqual({
      [number(1)]: ['reached', 1],
      [number(2)]: ['reached', 1],
      [number(3)]: ['not_reached', 1],
      [number(4)]: ['not_reached', 1],
      [number(5)]: ['not_reached', 1],
      [number(6)]: ['reached', 1],
      [number(7)]: ['do_not_call', 1],
      [number(8)]: ['reached', 1],
      [number(9)]: ['invalid', 1],
      [number(10)]: ['not_reached', 1],
    });
    expect(fake.requests.filter((r) => r.to === number(8)).map((r) => r.status)).toEqual([429, 201]);
    expect(fake.requests.filter((r) => r.to === number(9)).map((r) => r.status)).toEqual([400]);
  });

  it('charged the talked seconds, with the ledger equal to the balance and nothing left held', async () => {
    const { ledger, account, account_ } = await ledgerMatchesAccount(app, setup.userId);
    expect(ledger).toBe(account);
    expect(account_.heldCents).toBe(0n);
    // 60 cents a minute: a cent a second, over 96 + 42 + 130 + 15 + 60 seconds; the voicemail hung up
    // on left no message, and costs nothing.
    expect(10_000_000n - account).toBe(343n);
    const charges = await app.prisma.creditTransaction.findMany({ where: { userId: setup.userId, kind: 'call_charge' } });
    expect(charges).toHaveLength(5);
    const holds = await app.prisma.creditHold.findMany({ where: { userId: setup.userId } });
    expect(holds.map((h) => h.status).sort()).toEqual([...Array(5).fill('released'), ...Array(5).fill('settled')]);
  });

  it('booked the appointment and listed the number that asked not to be called', async () => {
    const attempts = await attemptsByNumber();
    const appointments = await app.prisma.appointment.findMany({ where: { campaignId: setup.campaignId } });
    expect(appointments).toEqual([
      expect.objectContaining({
        callAttemptId: attempts.get(number(6))!.id,
        scheduledAt: new Date('2026-12-03T20:30:00Z'),
        appointmentData: { source_call_id: attempts.get(number(6))!.id, notes: 'Cleaning, first visit' },
        contactSnapshot: expect.objectContaining({ first_name: 'Person 6', phone_number: number(6) }),
      }),
    ]);
    const listed = await app.prisma.doNotCallEntry.findMany({ where: { userId: setup.userId } });
    expect(listed).toEqual([expect.objectContaining({ phoneNumber: number(7), source: 'call' })]);
    const contact = await app.prisma.contact.findFirstOrThrow({ where: { userId: setup.userId, phoneNumber: number(7) } });
    expect(contact.status).toBe('do_not_call');
  });

  it('answered every webhook at once and recorded each delivery once', async () => {
    expect(fake.deliveries.length).toBe(3 * 6 + 3);
    expect(fake.deliveries.every((d) => d.status === 200 && d.body.result === 'applied')).toBe(true);
    expect(await app.prisma.webhookDelivery.count({ where: { source: 'retell' } })).toBe(fake.deliveries.length);
  });
});
