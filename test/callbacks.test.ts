import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callResultOf, retellCall } from '../src/services/voice/providers/retell/calls.js';
import { SimulatedTelephony } from '../src/services/voice/providers/simulated/telephony.js';
import type { CallResult } from '../src/services/voice/providers/telephony.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

// Callbacks the callee asks for ("call me tomorrow after 3"): the contact's next call is planned then,
// whatever the retry policy says, inside the campaign's hours and every compliance rule (else at the
// next moment they allow); visible on the call, counted in the report, cancellable.

const ATTEMPT = '01939a3c-8b1e-7c3a-9d2f-1e2f3a4b5c6d';

describe('where callbacks come from', () => {
  it('reads a Retell call’s custom analysis callback_time (with an offset only)', () => {
    const call = (custom: Record<string, unknown>) =>
      retellCall.parse({
        call_id: 'call_1',
        call_status: 'ended',
        disconnection_reason: 'user_hangup',
        metadata: { attempt_id: ATTEMPT },
        call_analysis: { custom_analysis_data: custom },
      });
    expect(callResultOf(ATTEMPT, call({ callback_time: '2026-11-04T15:00:00-05:00' })).callbackAt).toEqual(
      new Date('2026-11-04T20:00:00Z'),
    );
    expect(callResultOf(ATTEMPT, call({ callback_time: '2026-11-04T15:00:00' })).callbackAt).toBeUndefined();
  });

  it('is something the simulator’s callees ask for, at SIM_CALLBACK_RATE, a day later in its time', async () => {
    const results: CallResult[] = [];
    const telephony = new SimulatedTelephony({ seed: 'callbacks', timeScale: 0.001, callbackRate: 0.2 }, (r) => results.push(r));
    for (let i = 0; i < 1_000; i += 1) {
      await telephony.placeCall({
        attemptId: `a${i}`,
        attemptNumber: 1,
        from: '+14155550100',
        to: `+1212555${String(i).padStart(4, '0')}`,
        providerAgentId: null,
        providerAgentVersion: null,
        variables: {},
        voicemailMessage: null,
      });
    }
    telephony.stop();
    const asked = results.filter((r) => r.callbackAt);
    expect(asked.length).toBeGreaterThan(20);
    const later = (r: CallResult) => r.callbackAt!.getTime() - Date.now();
    expect(asked.every((r) => r.outcome === 'human' && later(r) > 60_000 && later(r) <= 86_400)).toBe(true);
  });
});

describe('a campaign with callbacks', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('places each at the time asked, or the next moment the campaign and the law allow; counts and cancels them', async () => {
    // Tuesday 10:00 in New York.
    const clock = new ManualClock(new Date('2026-11-03T15:00:00Z'));
    const env = dialerEnv(app, clock);
    const people = { tomorrowAtThree: '+12125550501', tonight: '+12125550502', miamiEvening: '+13055550503', cancelled: '+12125550504' };
    const asked: Record<string, string> = {
      [people.tomorrowAtThree]: '2026-11-04T20:00:00Z', // Wednesday 15:00 in New York
      [people.tonight]: '2026-11-04T03:00:00Z', // Tuesday 22:00: after the campaign's hours
      [people.miamiEvening]: '2026-11-04T01:30:00Z', // Tuesday 20:30: the campaign's hours, not Florida's law
      [people.cancelled]: '2026-11-04T20:00:00Z',
    };
    const setup = await runningCampaign(app, env, {
      rows: Object.values(people).map((Phone) => ({ Phone })),
      campaign: {
        regionalRules: true,
        timezone: 'America/New_York',
        callingHours: { start: '08:00', end: '21:00' },
        // One attempt each: only a callback calls a contact again.
        scheduleConfig: { max_attempts: 1 },
      },
    });
    const run = recordingDialer(env, (call) =>
      call.attemptNumber === 1
        ? { outcome: 'human', durationSeconds: 40, callbackAt: new Date(asked[call.to]!) }
        : { outcome: 'human', durationSeconds: 40 },
    );
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(4);

    const due = async () =>
      Object.fromEntries(
        (await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId }, include: { contact: true } })).map((cc) => [
          cc.contact.phoneNumber,
          [cc.state, cc.nextAttemptAt?.toISOString() ?? null, cc.callbackAt?.toISOString() ?? null],
        ]),
      );
    expect(await due()).toEqual({
      [people.tomorrowAtThree]: ['pending', '2026-11-04T20:00:00.000Z', '2026-11-04T20:00:00.000Z'],
      [people.tonight]: ['pending', '2026-11-04T13:00:00.000Z', '2026-11-04T03:00:00.000Z'],
      [people.miamiEvening]: ['pending', '2026-11-04T01:30:00.000Z', '2026-11-04T01:30:00.000Z'],
      [people.cancelled]: ['pending', '2026-11-04T20:00:00.000Z', '2026-11-04T20:00:00.000Z'],
    });

    const contactId = (await app.prisma.contact.findFirstOrThrow({ where: { userId: setup.userId, phoneNumber: people.cancelled } })).id;
    const CANCEL = `mutation ($c: UUID!, $k: UUID!) { cancelCallback(campaignId: $c, contactId: $k) }`;
    expect((await app.gql(CANCEL, { c: setup.campaignId, k: contactId }, setup.token)).data.cancelCallback).toBe(true);
    expect((await app.gql(CANCEL, { c: setup.campaignId, k: contactId }, setup.token)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const stranger = await app.token();
    const otherContact = (await app.prisma.contact.findFirstOrThrow({ where: { userId: setup.userId, phoneNumber: people.tonight } })).id;
    expect((await app.gql(CANCEL, { c: setup.campaignId, k: otherContact }, stranger)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    const REPORT = `query ($id: UUID!) { campaign(id: $id) { report { metrics { callbacks { requested pending } } }
      attempts(first: 10) { edges { node { toNumber callbackAt } } } } }`;
    const report = await app.gql(REPORT, { id: setup.campaignId }, setup.token);
    expect(report.data.campaign.report.metrics.callbacks).toEqual({ requested: 4, pending: 3 });
    expect(report.data.campaign.attempts.edges.map((e: { node: { callbackAt: string } }) => e.node.callbackAt).sort()).toEqual(
      Object.values(asked)
        .map((at) => new Date(at).toISOString())
        .sort(),
    );

    // 20:30 in Miami: the campaign's hours, but not Florida's law; held until 08:00.
    clock.set('2026-11-04T01:30:00Z');
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(4);
    const block = await app.prisma.dialBlock.findFirstOrThrow({ where: { campaignId: setup.campaignId } });
    expect([block.reason, block.until?.toISOString()]).toEqual(['regional_hours', '2026-11-04T13:00:00.000Z']);

    clock.set('2026-11-04T13:00:00Z');
    await run.run(setup.campaignId);
    clock.set('2026-11-04T20:00:00Z');
    await run.run(setup.campaignId);
    const calls = run.telephony.placed.map((c) => [c.to, c.attemptNumber, c.at.toISOString()]);
    expect(calls.slice(4).sort()).toEqual(
      [
        [people.tonight, 2, '2026-11-04T13:00:00.000Z'],
        [people.miamiEvening, 2, '2026-11-04T13:00:00.000Z'],
        [people.tomorrowAtThree, 2, '2026-11-04T20:00:00.000Z'],
      ].sort(),
    );
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
    expect(campaign.status).toBe('completed');
    const final = await app.gql(REPORT, { id: setup.campaignId }, setup.token);
    expect(final.data.campaign.report.metrics.callbacks).toEqual({ requested: 4, pending: 0 });
  });
});
