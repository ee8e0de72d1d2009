import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDialer, type DialerRuntime } from '../src/jobs/dialer.js';
import { createLogger } from '../src/logger.js';
import { systemClock } from '../src/services/context.js';
import { idleVoice } from '../src/services/voice/control.js';
import { idleDialer } from '../src/services/dialer/control.js';
import { DEFAULT_DIALER_OPTIONS } from '../src/services/dialer/options.js';
import { inProcessEventBus, type EventBus } from '../src/services/events.js';
import { LIVE_INTERVAL_MS } from '../src/services/live.js';
import { defaultSettings } from '../src/services/settings.js';
import { startTestApp, type GraphQLResult, type TestApp } from './support/app.js';
import { createCampaign, customer, dispatch, type Customer } from './support/campaigns.js';
import { openTestDatabase } from './support/database.js';
import { ALWAYS_OPEN, CALL_ATTEMPT_UPDATED, CAMPAIGN_UPDATED } from './support/live.js';
import { subscribe, type LiveSubscription } from './support/sse.js';

// GraphQL subscriptions over SSE, against the whole app and the dialer on its job engine in this
// process, with the simulated provider answering at once.

/** The bus, counting who listens to each campaign. */
function countingListeners(bus: EventBus) {
  const listening = new Map<string, number>();
  const count = (campaignId: string, by: number) => listening.set(campaignId, (listening.get(campaignId) ?? 0) + by);
  const events: EventBus = {
    ...bus,
    async listen(campaignId, listener) {
      const stop = await bus.listen(campaignId, listener);
      count(campaignId, 1);
      return () => {
        count(campaignId, -1);
        stop();
      };
    },
  };
  return { events, listeners: (campaignId: string) => listening.get(campaignId) ?? 0 };
}

let app: TestApp;
let dialer: DialerRuntime;
let listeners: (campaignId: string) => number;
beforeAll(async () => {
  const db = await openTestDatabase();
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const counting = countingListeners(inProcessEventBus(log));
  const events = counting.events;
  listeners = counting.listeners;
  const env = {
    db: db.prisma,
    sql: db.sql,
    clock: systemClock,
    log,
    settings: defaultSettings,
    dialer: idleDialer,
    events,
    voice: idleVoice,
  };
  dialer = await startDialer(env, db, {
    telephony: { provider: 'simulated', seed: 'live-updates', timeScale: 0 },
    dialer: DEFAULT_DIALER_OPTIONS,
    sweepSeconds: 1,
  });
  app = await startTestApp({ database: db, events, dialer: dialer.control, log });
});
afterAll(async () => {
  await dialer.stop();
  await app.close();
});

const open: LiveSubscription[] = [];
async function watch(query: string, variables: Record<string, unknown>, token: string) {
  const subscription = await subscribe(app.url, query, variables, token);
  open.push(subscription);
  return subscription;
}
afterAll(() => open.forEach((s) => s.close()));

const campaignsIn = (results: GraphQLResult[]) => results.map((r) => r.data?.campaignUpdated);
const campaignsOf = (s: LiveSubscription) => campaignsIn(s.results);
const attemptsOf = (s: LiveSubscription) => s.results.map((r) => r.data?.callAttemptUpdated);
const completed = (results: GraphQLResult[]) => campaignsIn(results).some((c) => c?.status === 'completed');

/** Each of the campaign's attempts has been sent in the state the database holds now. */
async function sentEveryAttempt(s: LiveSubscription, campaignId: string) {
  const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId } });
  await s.until((results) =>
    attempts.every((a) => results.some((r) => r.data?.callAttemptUpdated?.id === a.id && r.data.callAttemptUpdated.status === a.status)),
  );
  return attempts;
}

describe('campaignUpdated and callAttemptUpdated', () => {
  let alice: Customer;
  let bob: Customer;
  beforeAll(async () => {
    [alice, bob] = await Promise.all([customer(app, { contacts: 12 }), customer(app, { contacts: 12 })]);
  });

  it('stream a campaign and its calls to their owner until it completes, and nothing of another user’s', async () => {
    const mine = (await createCampaign(app, alice, ALWAYS_OPEN)).id as string;
    const theirs = (await createCampaign(app, bob, ALWAYS_OPEN)).id as string;
    const campaign = await watch(CAMPAIGN_UPDATED, { id: mine }, alice.token);
    const attempts = await watch(CALL_ATTEMPT_UPDATED, { campaignId: mine }, alice.token);
    const bobs = await watch(CAMPAIGN_UPDATED, { id: theirs }, bob.token);
    const bobsAttempts = await watch(CALL_ATTEMPT_UPDATED, { campaignId: theirs }, bob.token);

    // The current state comes first, before anything changed.
    await campaign.until((results) => results.length >= 1);
    expect(campaignsOf(campaign)[0]).toMatchObject({ id: mine, status: 'draft', pausedReason: null, progress: { total: 0 } });

    const started = performance.now();
    const [a, b] = await Promise.all([dispatch(app, alice.token, mine), dispatch(app, bob.token, theirs)]);
    expect([a.status, b.status]).toEqual([202, 202]);
    await Promise.all([campaign.until(completed), bobs.until(completed)]);
    const elapsed = performance.now() - started;

    // Status only moves forward, and the last event is the finished campaign with its final counts.
    const seen = campaignsOf(campaign);
    const order = ['draft', 'running', 'completed'];
    expect(seen.map((c) => order.indexOf(c.status))).toEqual([...seen.map((c) => order.indexOf(c.status))].sort());
    expect(seen.at(-1)).toMatchObject({ id: mine, status: 'completed', progress: { total: 12, done: 12, pending: 0, dialing: 0 } });
    // Coalesced: at most one event per interval, however many calls changed meanwhile.
    expect(seen.length).toBeLessThanOrEqual(2 + Math.floor(elapsed / LIVE_INTERVAL_MS));

    // Every attempt arrives in its final state, and each event is one of this campaign's attempts.
    const dialed = await sentEveryAttempt(attempts, mine);
    expect(dialed).toHaveLength(12);
    const ids = new Set(dialed.map((d) => d.id));
    for (const attempt of attemptsOf(attempts)) {
      expect(ids.has(attempt.id)).toBe(true);
      expect(attempt.campaign.id).toBe(mine);
    }

    // Bob's campaign ran at the same time; its events went to Bob only.
    const bobsDialed = await sentEveryAttempt(bobsAttempts, theirs);
    expect(campaignsOf(bobs).every((c) => c.id === theirs)).toBe(true);
    const bobsIds = new Set(bobsDialed.map((d) => d.id));
    expect(attemptsOf(attempts).some((attempt) => bobsIds.has(attempt.id))).toBe(false);
    expect(campaignsOf(campaign).every((c) => c.id === mine)).toBe(true);
    for (const s of [campaign, attempts, bobs, bobsAttempts]) expect(s.results.filter((r) => r.errors)).toEqual([]);
  }, 120_000);

  it('follow pause, resume, an archived agent and cancel', async () => {
    // Calling hours that open in an hour or more, so that nobody is called while the states change.
    const hour = new Date().getUTCHours();
    const window =
      hour < 20
        ? { start: `${String(hour + 2).padStart(2, '0')}:00`, end: `${String(hour + 3).padStart(2, '0')}:00` }
        : { start: '01:00', end: '02:00' };
    const carol = await customer(app, { contacts: 3 });
    const id = (await createCampaign(app, carol, { ...ALWAYS_OPEN, calling_hours: window })).id as string;
    const campaign = await watch(CAMPAIGN_UPDATED, { id }, carol.token);
    const last = () => campaignsOf(campaign).at(-1);
    const step = async (mutation: string, expected: Record<string, unknown>) => {
      if (mutation) {
        const result = await app.gql(`mutation($id: UUID!) { ${mutation}(id: $id) { id } }`, { id }, carol.token);
        expect(result.errors).toBeUndefined();
      }
      await campaign.until(() => last()?.status === expected.status && last()?.pausedReason === expected.pausedReason);
      expect(last()).toMatchObject(expected);
    };

    await step('', { status: 'draft', pausedReason: null });
    expect((await dispatch(app, carol.token, id)).status).toBe(202);
    await step('', { status: 'running', pausedReason: null, progress: { total: 3, pending: 3 } });
    await step('pauseCampaign', { status: 'paused', pausedReason: 'user_requested' });
    await step('resumeCampaign', { status: 'running', pausedReason: null });
    const archived = await app.request('DELETE', `/api/v1/agents/${carol.agent.id}/`, { token: carol.token });
    expect(archived.status).toBe(204);
    await step('', { status: 'paused', pausedReason: 'agent_archived' });
    await step('cancelCampaign', { status: 'cancelled', pausedReason: null, progress: { total: 3, pending: 0, cancelled: 3 } });
    expect(await app.prisma.callAttempt.count({ where: { campaignId: id } })).toBe(0);
  }, 60_000);

  it('answer NOT_FOUND for another user’s campaign or an unknown one, and send nothing of it', async () => {
    const alices = (await createCampaign(app, alice, ALWAYS_OPEN)).id as string;
    for (const [query, variables] of [
      [CAMPAIGN_UPDATED, { id: alices }],
      [CALL_ATTEMPT_UPDATED, { campaignId: alices }],
      [CAMPAIGN_UPDATED, { id: randomUUID() }],
      [CALL_ATTEMPT_UPDATED, { campaignId: randomUUID() }],
    ] as const) {
      const refused = await watch(query, variables, bob.token);
      await refused.ended;
      expect(refused.status).toBe(200);
      expect(refused.results).toHaveLength(1);
      expect(refused.results[0]!.data).toBeUndefined();
      expect(refused.results[0]!.errors).toMatchObject([{ message: 'Not found.', extensions: { code: 'NOT_FOUND' } }]);
      expect(refused.completed).toBe(true);
    }
  });

  it('need a token, as every operation does', async () => {
    const refused = await subscribe(app.url, CAMPAIGN_UPDATED, { id: randomUUID() }, null);
    await refused.ended;
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="api"');
    expect(refused.results[0]!.errors).toMatchObject([{ extensions: { code: 'UNAUTHENTICATED' } }]);
  });

  it('stop listening when the client leaves', async () => {
    const dave = await customer(app, { contacts: 1 });
    const id = (await createCampaign(app, dave, ALWAYS_OPEN)).id as string;
    const listening = await watch(CAMPAIGN_UPDATED, { id }, dave.token);
    await listening.until((results) => results.length === 1);
    expect(listeners(id)).toBe(1);
    listening.close();
    await expect.poll(() => listeners(id), { timeout: 10_000 }).toBe(0);
  });
});
