import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { scheduleConfig } from '../src/services/calling-rules/schedule.js';
import { ManualClock } from './support/dialer.js';
import { voicemailMessageOf, voicemailTemplateOf } from '../src/services/dialer/decisions.js';
import { CALL_OUTCOMES, statusOf, type CallOutcome } from '../src/services/call-outcomes.js';
import { decide, policyOf } from '../src/services/calling-rules/retry-policy.js';
import { SimulatedTelephony } from '../src/services/voice/providers/simulated/telephony.js';
import type { CallResult, PlaceCall } from '../src/services/voice/providers/telephony.js';
import { windowOf } from '../src/services/calling-rules/window.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, recordingDialer, runningCampaign } from './support/dialer.js';

// One outcome vocabulary across providers, the retry budget of each outcome, and the voicemail policy:
// the rules on plain objects, the simulator's outcomes, and a campaign run through the dialer.

const always = windowOf({ start: '00:00', end: '24:00' }, ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
const now = new Date('2026-11-02T10:00:00Z');
const first = new Date('2026-11-02T09:00:00Z');
const history = (attempts: number, sameOutcome: number) => ({ attempts, attemptsToday: 1, sameOutcome, firstAttemptAt: first });

describe('retry budgets per outcome', () => {
  const budgets = policyOf(
    {
      max_attempts: 6,
      max_attempts_per_day: 6,
      retry_interval_minutes: 60,
      retry_budgets: {
        busy: { max_retries: 3, retry_after_minutes: 10 },
        no_answer: { max_retries: 3, retry_after_minutes: 240 },
        voicemail: { max_retries: 2 },
      },
    },
    3,
  );

  it('retries busy soon, no answer later, voicemail at most twice, and the rest as retry_on says', () => {
    expect(decide('busy', history(1, 1), budgets, now, 'UTC', always)).toMatchObject({ retryAt: new Date('2026-11-02T10:10:00Z') });
    expect(decide('no_answer', history(1, 1), budgets, now, 'UTC', always)).toMatchObject({
      retryAt: new Date('2026-11-02T14:00:00Z'),
    });
    expect(decide('voicemail', history(2, 2), budgets, now, 'UTC', always)).toMatchObject({ retryAt: new Date('2026-11-02T11:00:00Z') });
    expect(decide('voicemail', history(3, 3), budgets, now, 'UTC', always)).toEqual({ outcome: 'not_reached' });
    // Not given a budget: retried, as retry_on (all four statuses by default) lists its status.
    expect(decide('ivr', history(1, 1), budgets, now, 'UTC', always)).toMatchObject({ retryAt: new Date('2026-11-02T11:00:00Z') });
    // The whole campaign's max_attempts still bounds every budget.
    expect(decide('busy', history(6, 2), budgets, now, 'UTC', always)).toEqual({ outcome: 'not_reached' });
  });

  it('never retries a person reached or a number not in service', () => {
    expect(decide('human', history(1, 1), budgets, now, 'UTC', always)).toEqual({ outcome: 'reached' });
    expect(decide('invalid_number', history(1, 1), budgets, now, 'UTC', always)).toEqual({ outcome: 'not_reached' });
  });

  it('reads a policy without budgets exactly as the single retry_on list did', () => {
    const legacy = policyOf({ max_attempts: 3, retry_interval_minutes: 30, retry_on: ['busy'] }, 0);
    expect(legacy.budgets.busy).toEqual({ maxRetries: 2, retryAfterMinutes: 30 });
    expect(legacy.budgets.no_answer.maxRetries).toBe(0);
    expect(legacy.budgets.call_screening.maxRetries).toBe(0); // shown as no_answer, which is not listed
  });

  it('hangs up on voicemail for good under hang_up, and needs a message to leave one', () => {
    const hangUp = policyOf({ voicemail: { action: 'hang_up' } }, 3);
    expect(decide('voicemail', history(1, 1), hangUp, now, 'UTC', always)).toEqual({ outcome: 'not_reached' });
    const missing = scheduleConfig.safeParse({ voicemail: { action: 'leave_message' } });
    expect(missing.success).toBe(false);
    expect(missing.error?.issues[0]?.path).toEqual(['voicemail', 'message']);
    expect(scheduleConfig.safeParse({ retry_budgets: { human: { max_retries: 1 } } }).success).toBe(false);
  });

  it("renders the message to leave with the contact's fields", () => {
    const config = { voicemail: { action: 'leave_message', message: 'Hi {{first_name}}, this is Acme about {{ plan }}.{{missing}}' } };
    expect(voicemailMessageOf(voicemailTemplateOf(config), { first_name: 'Ada', plan: 'gold' })).toBe('Hi Ada, this is Acme about gold.');
    expect(voicemailMessageOf(voicemailTemplateOf({ voicemail: { action: 'retry_later' } }), { first_name: 'Ada' })).toBeNull();
    expect(voicemailMessageOf(voicemailTemplateOf({}), {})).toBeNull();
  });
});

describe('the simulator', () => {
  it('keeps a call log, as a provider does: each call placed, and when it ended', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callflow-sim-'));
    const callLog = join(dir, 'calls.jsonl');
    const ended: string[] = [];
    const telephony = new SimulatedTelephony({ seed: 'log', timeScale: 0, callLog }, (r) => ended.push(r.attemptId));
    const call = (i: number): PlaceCall => ({
      attemptId: `a${i}`,
      attemptNumber: 1,
      from: '+14155550100',
      to: `+1415555${String(i).padStart(4, '0')}`,
      providerAgentId: null,
      providerAgentVersion: null,
      variables: {},
      voicemailMessage: null,
    });
    for (let i = 0; i < 3; i += 1) await telephony.placeCall(call(i));
    await vi.waitFor(() => expect(ended).toHaveLength(3));
    const lines = readFileSync(callLog, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    rmSync(dir, { recursive: true });
    expect(lines.filter((l) => l.placedAt).map((l) => [l.attemptId, l.to])).toEqual([0, 1, 2].map((i) => [`a${i}`, call(i).to]));
    for (const id of ['a0', 'a1', 'a2']) {
      const [placed, end] = [lines.find((l) => l.attemptId === id && l.placedAt), lines.find((l) => l.attemptId === id && l.endedAt)];
      expect(Date.parse(end.endedAt)).toBeGreaterThanOrEqual(Date.parse(placed.placedAt));
    }
  });

  it('produces every outcome, an invalid number on every attempt, and bills-relevant durations', async () => {
    const results: CallResult[] = [];
    const telephony = new SimulatedTelephony({ seed: 'outcomes', timeScale: 0 }, (r) => results.push(r));
    const call = (i: number, attemptNumber: number, voicemailMessage: string | null): PlaceCall => ({
      attemptId: `${i}:${attemptNumber}`,
      attemptNumber,
      from: '+14155550100',
      to: `+1415555${String(i).padStart(4, '0')}`,
      providerAgentId: null,
      providerAgentVersion: null,
      variables: {},
      voicemailMessage,
    });
    for (let i = 0; i < 2_000; i += 1) await telephony.placeCall(call(i, 1, i % 2 ? 'Call us back.' : null));
    for (let i = 0; i < 2_000; i += 1) await telephony.placeCall(call(i, 2, null));
    await new Promise((resolve) => setImmediate(resolve));
    const seen = new Set(results.map((r) => r.outcome));
    expect([...seen].sort()).toEqual([...CALL_OUTCOMES].sort());
    const invalidFirst = new Set(
      results.filter((r) => r.outcome === 'invalid_number' && r.attemptId.endsWith(':1')).map((r) => r.attemptId.split(':')[0]),
    );
    const invalidSecond = new Set(
      results.filter((r) => r.outcome === 'invalid_number' && r.attemptId.endsWith(':2')).map((r) => r.attemptId.split(':')[0]),
    );
    expect(invalidSecond).toEqual(invalidFirst);
    for (const r of results) {
      if (['no_answer', 'busy', 'failed', 'invalid_number'].includes(r.outcome)) expect(r.durationSeconds).toBe(0);
      if (r.outcome === 'voicemail') expect(r.messageLeft).toBe(Number(r.attemptId.split(':')[0]) % 2 === 1 && r.attemptId.endsWith(':1'));
    }
  });

  it('maps every outcome to a v1 status', () => {
    const statuses = Object.fromEntries(CALL_OUTCOMES.map((o: CallOutcome) => [o, statusOf(o)]));
    expect(statuses).toEqual({
      human: 'completed',
      voicemail: 'voicemail',
      ivr: 'voicemail',
      call_screening: 'no_answer',
      no_answer: 'no_answer',
      busy: 'busy',
      failed: 'failed',
      invalid_number: 'failed',
    });
  });
});

describe('a campaign with a voicemail policy and budgets', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('leaves the rendered message, retries by budget, and shows outcomes and budgets on both surfaces', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const setup = await runningCampaign(app, env, {
      rows: [
        { Phone: '+14155557001', 'First Name': 'Ada' },
        { Phone: '+14155557002', 'First Name': 'Grace' },
      ],
      campaign: {
        scheduleConfig: {
          max_attempts: 5,
          max_attempts_per_day: 5,
          retry_interval_minutes: 60,
          retry_budgets: { busy: { max_retries: 1, retry_after_minutes: 5 }, voicemail: { max_retries: 0 } },
          voicemail: { action: 'leave_message', message: 'Hello {{first_name}}, please call back.' },
        },
      },
    });
    const run = recordingDialer(env, (call) =>
      call.to.endsWith('7001')
        ? { outcome: 'voicemail', durationSeconds: 30, messageLeft: call.voicemailMessage !== null }
        : { outcome: 'busy', durationSeconds: 0 },
    );
    await run.run(setup.campaignId);
    expect(run.telephony.placed.map((c) => c.voicemailMessage).sort()).toEqual([
      'Hello Ada, please call back.',
      'Hello Grace, please call back.',
    ]);
    clock.advance(5 * 60_000);
    await run.run(setup.campaignId);
    clock.advance(5 * 60_000);
    await run.run(setup.campaignId);
    // Voicemail: no retry in its budget; busy: one retry, then done.
    const placedTo = run.telephony.placed.map((c) => c.to.slice(-4)).sort();
    expect(placedTo).toEqual(['7001', '7002', '7002']);
    const contacts = await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId } });
    expect(contacts.map((c) => [c.state, c.outcome])).toEqual([
      ['done', 'not_reached'],
      ['done', 'not_reached'],
    ]);

    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId }, orderBy: { createdAt: 'asc' } });
    expect(attempts.map((a) => [a.status, a.outcome, a.costCents])).toEqual(
      expect.arrayContaining([
        ['voicemail', 'voicemail', 30n],
        ['busy', 'busy', 0n],
      ]),
    );
    const { data } = await app.gql(
      `query ($id: UUID!) { campaign(id: $id) { scheduleConfig { voicemail { action message } retryBudgets { outcome maxRetries retryAfterMinutes } }
         attempts(first: 10) { edges { node { status outcome } } } } }`,
      { id: setup.campaignId },
      setup.token,
    );
    expect(data.campaign.scheduleConfig.voicemail).toEqual({ action: 'leave_message', message: 'Hello {{first_name}}, please call back.' });
    expect(data.campaign.scheduleConfig.retryBudgets).toContainEqual({ outcome: 'busy', maxRetries: 1, retryAfterMinutes: 5 });
    expect(data.campaign.scheduleConfig.retryBudgets).toContainEqual({ outcome: 'no_answer', maxRetries: 4, retryAfterMinutes: 60 });
    expect(data.campaign.attempts.edges.map((e: { node: unknown }) => e.node)).toContainEqual({
      status: 'voicemail',
      outcome: 'voicemail',
    });

    const v1 = await app.request('GET', `/api/v1/campaigns/${setup.campaignId}/`, { token: setup.token });
    expect(v1.json.schedule_config).toMatchObject({
      retry_budgets: { busy: { max_retries: 1, retry_after_minutes: 5 }, voicemail: { max_retries: 0 } },
      voicemail: { action: 'leave_message', message: 'Hello {{first_name}}, please call back.' },
    });
  });
});
