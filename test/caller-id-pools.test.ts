import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollContacts } from '../src/services/campaigns/store.js';
import { importContacts } from '../src/services/contacts/import.js';
import { availableAt, countCall, needsRest, pickCallerId, poolOpensAt, type PoolNumber } from '../src/services/dialer/caller-id.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

// Caller-ID pools: each call goes out from the agent's number that best matches the callee, else the least
// used; a number at its calls per hour or day, cooling down after a run of unanswered calls, or rested
// after its answer rate fell, places none; the pool's state is readable on GraphQL.

const now = new Date('2026-11-02T15:00:00Z');
const number = (id: string, e164: string, over: Partial<PoolNumber> = {}): PoolNumber => ({
  id,
  number: e164,
  maxCallsPerHour: null,
  maxCallsPerDay: null,
  cooldownAfterUnanswered: null,
  cooldownMinutes: 30,
  restBelowAnswerRate: null,
  restWindowCalls: 50,
  restHours: 24,
  restedUntil: null,
  hourCount: 0,
  dayCount: 0,
  hourCalls: [],
  dayCalls: [],
  latestOutcomes: [],
  lastEndedAt: null,
  inFlight: 0,
  windowOutcomes: [],
  ...over,
});
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);

describe('picking a caller ID', () => {
  it('prefers the callee’s area code, then its region, then the least used', () => {
    const pool = [
      number('a', '+14155550100', { dayCount: 3 }),
      number('b', '+12125550100', { dayCount: 9 }),
      number('c', '+13055550100', { dayCount: 1 }),
    ];
    expect(pickCallerId(pool, '+12125550199', now)?.id).toBe('b');
    expect(pickCallerId(pool, '+16465550199', now)?.id).toBe('b'); // New York, another area code
    expect(pickCallerId(pool, '+17135550199', now)?.id).toBe('c'); // Houston: none of Texas, the least used
  });

  it('skips a number at a limit, cooling down or resting, and says when one frees', () => {
    const capped = number('a', '+12125550100', { maxCallsPerHour: 2, hourCalls: [minutesAgo(10), minutesAgo(50)], hourCount: 2 });
    expect(availableAt(capped, now)).toEqual(new Date(minutesAgo(50).getTime() + 3_600_000));
    const cooling = number('b', '+12125550101', {
      cooldownAfterUnanswered: 3,
      latestOutcomes: ['no_answer', 'busy', 'call_screening'],
      lastEndedAt: minutesAgo(5),
    });
    expect(availableAt(cooling, now)).toEqual(new Date(minutesAgo(5).getTime() + 30 * 60_000));
    const answeredOnce = { ...cooling, latestOutcomes: ['no_answer', 'human', 'busy'] as PoolNumber['latestOutcomes'] };
    expect(availableAt(answeredOnce, now)).toEqual(now);
    const resting = number('c', '+12125550102', { restedUntil: new Date(now.getTime() + 3_600_000) });
    expect(pickCallerId([capped, cooling, resting], '+12125550199', now)).toBeNull();
    expect(pickCallerId([capped, cooling, resting, number('d', '+14155550100')], '+12125550199', now)?.id).toBe('d');
  });

  it('counts calls in flight toward a run of unanswered calls, so that a burst cannot run past the cool-down', () => {
    const rule = { cooldownAfterUnanswered: 3, cooldownMinutes: 5 };
    // s unanswered in a row, k in flight: it may call while s + k < 3.
    expect(availableAt(number('a', '+12125550100', { ...rule, inFlight: 2 }), now)).toEqual(now);
    expect(availableAt(number('a', '+12125550100', { ...rule, inFlight: 3 }), now)).toBeNull();
    const oneUnanswered = { ...rule, latestOutcomes: ['no_answer'] as PoolNumber['latestOutcomes'], lastEndedAt: minutesAgo(1) };
    expect(availableAt(number('a', '+12125550100', { ...oneUnanswered, inFlight: 1 }), now)).toEqual(now);
    expect(availableAt(number('a', '+12125550100', { ...oneUnanswered, inFlight: 2 }), now)).toBeNull();
    // An answer ends the run: only the calls after it count.
    const answered = {
      ...rule,
      latestOutcomes: ['busy', 'human', 'no_answer'] as PoolNumber['latestOutcomes'],
      lastEndedAt: minutesAgo(1),
    };
    expect(availableAt(number('a', '+12125550100', { ...answered, inFlight: 1 }), now)).toEqual(now);

    // A tick picking the same number again and again stops at the third call.
    const burst = number('b', '+12125550101', rule);
    const picked = Array.from({ length: 20 }, () => {
      const n = pickCallerId([burst], '+12125550199', now);
      if (n) countCall(n, now);
      return n?.id;
    });
    expect(picked.filter(Boolean)).toHaveLength(3);
    expect(poolOpensAt([burst], now)).toBeNull(); // its results, not the clock, free it

    // Three unanswered results: five minutes from the last; then the next call starts a new run.
    const cooled = number('c', '+12125550102', {
      ...rule,
      latestOutcomes: ['no_answer', 'failed', 'call_screening'],
      lastEndedAt: minutesAgo(2),
    });
    expect(availableAt(cooled, now)).toEqual(new Date(minutesAgo(2).getTime() + 5 * 60_000));
    const later = new Date(minutesAgo(2).getTime() + 5 * 60_000);
    expect(pickCallerId([cooled], '+12125550199', later)?.id).toBe('c');
    countCall(cooled, later);
    expect(cooled).toMatchObject({ latestOutcomes: [], inFlight: 1, cooldownEnded: true });
    expect(availableAt(cooled, later)).toEqual(later);
  });

  it('rests a number whose last window of calls reached too few people', () => {
    const outcomes = (humans: number, others: number) =>
      [...Array(humans).fill('human'), ...Array(others).fill('no_answer')] as PoolNumber['windowOutcomes'];
    const rule = { restBelowAnswerRate: 0.3, restWindowCalls: 10 };
    expect(needsRest(number('a', '+12125550100', { ...rule, windowOutcomes: outcomes(2, 8) }), now)).toBe(true);
    expect(needsRest(number('a', '+12125550100', { ...rule, windowOutcomes: outcomes(3, 7) }), now)).toBe(false);
    expect(needsRest(number('a', '+12125550100', { ...rule, windowOutcomes: outcomes(0, 9) }), now)).toBe(false); // window not full
    expect(needsRest(number('a', '+12125550100', { windowOutcomes: outcomes(0, 60) }), now)).toBe(false); // no threshold
  });
});

describe('a campaign dialing from a pool', () => {
  // Near the real time: GraphQL reads the pool's state on the service's own clock.
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  const later = (ms: number) => new Date(now.getTime() + ms);
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ settings: { webhooks: { allowPrivateUrls: true } } });
  });
  afterAll(() => app.close());

  const ADD = `mutation ($agentId: UUID!, $input: AddCallerIdInput!) { addCallerId(agentId: $agentId, input: $input) { id number isPrimary maxCallsPerHour } }`;
  const POOL = `query ($id: UUID!) { agent(id: $id) { phoneNumbers { number maxCallsPerHour restedUntil usage { state availableAt callsLastHour callsLastDay answerRate windowCalls } } } }`;

  it('matches callees, never goes over a number’s calls per hour, and waits for one to free', async () => {
    const clock = new ManualClock(now);
    const env = dialerEnv(app, clock);
    const callees = ['+12125550201', '+12125550202', '+12125550203', '+13055550204', '+16465550205', '+14155550206'];
    const setup = await runningCampaign(app, env, { rows: callees.map((Phone) => ({ Phone })), campaign: { concurrentCalls: 10 } });
    const primary = setup.agent.phoneNumbers[0]!.number;
    await app.prisma.phoneNumber.updateMany({ where: { number: primary, userId: setup.userId }, data: { maxCallsPerHour: 1 } });
    // Due one second apart, in the list's order, so the picks are known.
    for (const [i, phone] of callees.entries()) {
      await app.prisma.$executeRaw`UPDATE campaign_contacts cc SET next_attempt_at = ${new Date(now.getTime() - (10 - i) * 1000)}
        FROM contacts c WHERE c.id = cc.contact_id AND cc.campaign_id = ${setup.campaignId}::uuid AND c.phone_number = ${phone}`;
    }
    const added = await app.gql(
      ADD,
      { agentId: setup.agent.id, input: { phoneNumber: '+12125550100', label: 'NYC', maxCallsPerHour: 2 } },
      setup.token,
    );
    expect(added.errors).toBeUndefined();
    expect(added.data.addCallerId).toMatchObject({ number: '+12125550100', isPrimary: false, maxCallsPerHour: 2 });
    await app.gql(ADD, { agentId: setup.agent.id, input: { phoneNumber: '+13055550100', maxCallsPerHour: 2 } }, setup.token);
    const stranger = await app.token(crypto.randomUUID());
    expect(
      (await app.gql(ADD, { agentId: setup.agent.id, input: { phoneNumber: '+13125550100' } }, stranger)).errors?.[0]?.extensions?.code,
    ).toBe('NOT_FOUND');

    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    const from = () => Object.fromEntries(run.telephony.placed.map((c) => [c.to, c.from]));
    // New York's first two from the NYC number (its cap), the third from the least used (the primary, its
    // one call this hour), Miami from Miami, Brooklyn (New York, another area code) from the least used
    // left; San Francisco waits: every number is at its cap.
    expect(from()).toEqual({
      '+12125550201': '+12125550100',
      '+12125550202': '+12125550100',
      '+12125550203': primary,
      '+13055550204': '+13055550100',
      '+16465550205': '+13055550100',
    });

    const { data } = await app.gql(POOL, { id: setup.agent.id }, setup.token);
    const nyc = data.agent.phoneNumbers.find((n: { number: string }) => n.number === '+12125550100');
    expect(nyc.usage).toMatchObject({ state: 'at_limit', callsLastHour: 2, callsLastDay: 2, availableAt: later(3_600_000).toISOString() });

    clock.set(later(3_600_000));
    await run.run(setup.campaignId);
    expect(from()['+14155550206']).toBe(primary); // its own area code, free again
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    expect(attempts.map((a) => a.fromNumber).sort()).toEqual(run.telephony.placed.map((c) => c.from).sort());
  });

  it('cools a number down after each run of unanswered calls', async () => {
    const clock = new ManualClock(now);
    const env = dialerEnv(app, clock);
    const setup = await runningCampaign(app, env, {
      rows: ['+12125550301', '+12125550302', '+12125550303', '+12125550304'].map((Phone) => ({ Phone })),
      campaign: { concurrentCalls: 1, scheduleConfig: { max_attempts: 1 } },
    });
    const primary = setup.agent.phoneNumbers[0]!;
    await app.gql(
      `mutation ($id: UUID!, $input: CallerIdLimitsInput!) { setCallerIdLimits(id: $id, input: $input) { cooldownAfterUnanswered } }`,
      { id: primary.id, input: { cooldownAfterUnanswered: 2, cooldownMinutes: 30 } },
      setup.token,
    );
    const run = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(2);
    const { data } = await app.gql(POOL, { id: setup.agent.id }, setup.token);
    expect(data.agent.phoneNumbers[0].usage.state).toBe('cooling_down');
    clock.advance(30 * 60_000);
    await run.run(setup.campaignId);
    // Two more unanswered calls make the next run of two.
    expect(run.telephony.placed).toHaveLength(4);
    expect((await app.gql(POOL, { id: setup.agent.id }, setup.token)).data.agent.phoneNumbers[0].usage.state).toBe('cooling_down');
  });

  it('never lets calls in flight run past a cool-down, however many calls the campaign may have at once', async () => {
    const clock = new ManualClock(now);
    const env = dialerEnv(app, clock);
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 40 }, (_, i) => ({ Phone: `+1212555${String(1000 + i)}` })),
      campaign: { concurrentCalls: 25, scheduleConfig: { max_attempts: 1 } },
    });
    const primary = setup.agent.phoneNumbers[0]!;
    await app.gql(
      `mutation ($id: UUID!, $input: CallerIdLimitsInput!) { setCallerIdLimits(id: $id, input: $input) { id } }`,
      { id: primary.id, input: { cooldownAfterUnanswered: 3, cooldownMinutes: 5 } },
      setup.token,
    );
    // The fourth call is answered, every other one is not.
    const run = recordingDialer(env, (_call, index) => ({
      outcome: index === 3 ? 'human' : 'no_answer',
      durationSeconds: index === 3 ? 30 : 0,
    }));
    run.telephony.auto = false;
    await run.run(setup.campaignId);
    // Three in flight could make the run: the fourth waits for their results.
    expect(run.telephony.placed).toHaveLength(3);
    const usage = async () => (await app.gql(POOL, { id: setup.agent.id }, setup.token)).data.agent.phoneNumbers[0].usage;
    expect(await usage()).toMatchObject({ state: 'awaiting_results' });

    run.telephony.deliver();
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(3);
    expect(await usage()).toMatchObject({ state: 'cooling_down', availableAt: later(5 * 60_000).toISOString() });

    clock.advance(5 * 60_000 - 1);
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(3);
    clock.advance(1);
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(6);
    // The first of the new run was answered: the two after it leave room for one call more.
    run.telephony.deliver();
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(7);
    expect(await usage()).toMatchObject({ state: 'awaiting_results' });
    expect(run.telephony.placed.every((c) => c.from === primary.number)).toBe(true);
  });

  it('holds across workers: ticks of campaigns sharing a number place no more than its run allows between them', async () => {
    const clock = new ManualClock(now);
    const env = dialerEnv(app, clock);
    const rows = (prefix: string) => Array.from({ length: 20 }, (_, i) => ({ Phone: `+1${prefix}555${String(1000 + i)}` }));
    const setup = await runningCampaign(app, env, {
      rows: rows('646'),
      campaign: { concurrentCalls: 20, scheduleConfig: { max_attempts: 1 } },
    });
    const template = await app.prisma.campaign.findUniqueOrThrow({ where: { id: setup.campaignId } });
    const campaignIds = [setup.campaignId];
    for (const prefix of ['718', '917', '347']) {
      const group = await importContacts(setup.ctx, { group_name: prefix, csv_data: rows(prefix) });
      const { id: _id, createdAt: _c, updatedAt: _u, ...copy } = template;
      const campaign = await app.prisma.campaign.create({
        data: { ...copy, contactGroupId: group.groupId, name: prefix } as Parameters<typeof app.prisma.campaign.create>[0]['data'],
      });
      await enrollContacts(app.sql, campaign.id, now);
      campaignIds.push(campaign.id);
    }
    const primary = setup.agent.phoneNumbers[0]!;
    await app.prisma.phoneNumber.update({ where: { id: primary.id }, data: { cooldownAfterUnanswered: 4, cooldownMinutes: 5 } });
    // A worker per campaign, all ticking at once, their calls held in flight.
    const workers = campaignIds.map(() => recordingDialer(env, () => ({ outcome: 'busy', durationSeconds: 0 })));
    for (const w of workers) w.telephony.auto = false;
    const placed = () => workers.reduce((sum, w) => sum + w.telephony.placed.length, 0);
    for (let round = 0; round < 3; round += 1) await Promise.all(workers.map((w, i) => w.run(campaignIds[i]!)));
    expect(placed()).toBe(4);

    for (const w of workers) w.telephony.deliver();
    for (let round = 0; round < 3; round += 1) await Promise.all(workers.map((w, i) => w.run(campaignIds[i]!)));
    expect(placed()).toBe(4);
    clock.advance(5 * 60_000);
    for (let round = 0; round < 3; round += 1) await Promise.all(workers.map((w, i) => w.run(campaignIds[i]!)));
    expect(placed()).toBe(8);
    const attempts = await app.prisma.callAttempt.count({ where: { campaignId: { in: campaignIds } } });
    expect(attempts).toBe(8);
  });

  it('rests a number whose answer rate fell, tells the customer, and calls from it again once the rest is over', async () => {
    const clock = new ManualClock(now);
    const env = dialerEnv(app, clock);
    const setup = await runningCampaign(app, env, {
      rows: Array.from({ length: 8 }, (_, i) => ({ Phone: `+1212555040${i}` })),
      campaign: { concurrentCalls: 1, scheduleConfig: { max_attempts: 1 } },
    });
    const endpoint = await app.gql(
      `mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }`,
      { input: { url: 'http://127.0.0.1:9/hooks', eventTypes: ['phone_number.rested'] } },
      setup.token,
    );
    expect(endpoint.errors, JSON.stringify(endpoint.errors)).toBeUndefined();
    const primary = setup.agent.phoneNumbers[0]!;
    await app.prisma.phoneNumber.update({
      where: { id: primary.id },
      data: { restBelowAnswerRate: 0.5, restWindowCalls: 5, restHours: 2 },
    });
    const run = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toHaveLength(5);
    const rested = await app.prisma.phoneNumber.findUniqueOrThrow({ where: { id: primary.id } });
    expect(rested.restedUntil).toEqual(new Date(now.getTime() + 2 * 3_600_000));
    const events = await app.prisma.webhookEvent.findMany({ where: { userId: setup.userId, type: 'phone_number.rested' } });
    expect(events.map((e) => (e.payload as { data: unknown }).data)).toEqual([
      {
        phone_number_id: primary.id,
        number: primary.number,
        answer_rate: 0,
        threshold: 0.5,
        window_calls: 5,
        rested_until: later(2 * 3_600_000).toISOString(),
      },
    ]);
    const { data } = await app.gql(POOL, { id: setup.agent.id }, setup.token);
    // Its window starts over when the rest ends.
    expect(data.agent.phoneNumbers[0]).toMatchObject({
      restedUntil: later(2 * 3_600_000).toISOString(),
      usage: { state: 'rested', availableAt: later(2 * 3_600_000).toISOString(), answerRate: null, windowCalls: 0 },
    });

    clock.set(later(2 * 3_600_000));
    await run.run(setup.campaignId);
    // A fresh window: the calls before the rest no longer count.
    expect(run.telephony.placed).toHaveLength(8);
    expect(await app.prisma.webhookEvent.count({ where: { userId: setup.userId, type: 'phone_number.rested' } })).toBe(1);
  });
});
