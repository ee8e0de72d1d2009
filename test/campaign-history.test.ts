import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessEventBus } from '../src/services/events.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, dispatch, type Customer } from './support/campaigns.js';
import { dialerEnv, ManualClock, recordingDialer } from './support/dialer.js';
import { createAgent } from './support/fixtures.js';
import { ALWAYS_OPEN } from './support/live.js';
import { subscribe, type LiveSubscription } from './support/sse.js';

// A running campaign takes edits, which its next dial follows, and every change of a campaign is kept:
// when, who (the token's user, an API key, or the service itself), what, from what to what; newest first
// on GraphQL, and each entry live.

const UPDATE = `mutation ($id: UUID!, $input: UpdateCampaignInput!) { updateCampaign(id: $id, input: $input) { status concurrentCalls } }`;
const HISTORY = `query ($id: UUID!, $first: Int, $after: String) { campaign(id: $id) { history(first: $first, after: $after) {
  pageInfo { hasNextPage endCursor } edges { node { id action actor { kind id } changes { field from to } } } } } }`;
const CHANGED = `subscription ($id: UUID!) { campaignChanged(id: $id) { id action actor { kind } } }`;

type Entry = {
  id: string;
  action: string;
  actor: { kind: string; id: string | null };
  changes: { field: string; from: unknown; to: unknown }[];
};

// One event bus for the API and the test's dialer, as one `npm start` has: the dialer's own changes
// (its pauses, a completion) reach the subscribers too.
const events = inProcessEventBus(pino({ level: 'silent' }));
let app: TestApp;
let who: Customer;
beforeAll(async () => {
  app = await startTestApp({ events });
  who = await customer(app, { contacts: 8, credits: 1_000_000 });
});
afterAll(() => app.close());

async function history(id: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  let after: string | null = null;
  for (;;) {
    const { data, errors }: { data?: any; errors?: unknown } = await app.gql(HISTORY, { id, first: 3, after }, who.token);
    expect(errors).toBeUndefined();
    entries.push(...data.campaign.history.edges.map((e: { node: Entry }) => e.node));
    if (!data.campaign.history.pageInfo.hasNextPage) return entries;
    after = data.campaign.history.pageInfo.endCursor;
  }
}

describe('a campaign steered while it runs', () => {
  let live: LiveSubscription;
  afterAll(() => live?.close());

  it('follows each edit at its next dial, never over the concurrency in force, and keeps its whole history', async () => {
    const clock = new ManualClock(new Date());
    const env = { ...dialerEnv(app, clock), events };
    const created = await createCampaign(app, who, { ...ALWAYS_OPEN, concurrent_calls: 2 });
    const id = created.id as string;
    expect((await app.gql(UPDATE, { id, input: { name: 'Renamed' } }, who.token)).errors).toBeUndefined();
    live = await subscribe(app.url, CHANGED, { id }, who.token);
    expect((await dispatch(app, who.token, id)).status).toBe(202);
    clock.set(new Date());

    // Results are held: the calls stay in flight until the test delivers them.
    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    run.telephony.auto = false;
    const inFlightAtEachPlacement: number[] = [];
    const place = run.telephony.placeCall.bind(run.telephony);
    run.telephony.placeCall = async (call) => {
      const placed = await place(call);
      inFlightAtEachPlacement.push(run.telephony.inFlight.size);
      return placed;
    };
    await run.run(id);
    expect(run.telephony.inFlight.size).toBe(2);

    // An API key raises the pacing: the next tick fills the new slots, no more.
    const key = await app.gql(`mutation { createApiKey(input: { name: "Ops", scope: full }) { secret apiKey { id } } }`, {}, who.token);
    expect(key.errors, JSON.stringify(key.errors)).toBeUndefined();
    const { secret, apiKey } = key.data.createApiKey;
    expect((await app.gql(UPDATE, { id, input: { concurrentCalls: 4 } }, secret)).data.updateCampaign).toEqual({
      status: 'running',
      concurrentCalls: 4,
    });
    await run.run(id);
    expect(run.telephony.inFlight.size).toBe(4);

    // Lowered below what is in flight: calls end as they began, and none starts until one slot is free.
    await app.gql(UPDATE, { id, input: { concurrentCalls: 1 } }, who.token);
    const v1 = await app.request('GET', `/api/v1/campaigns/${id}/`, { token: who.token });
    expect(v1.json.concurrent_calls).toBe(1);
    const placedBefore = run.telephony.placed.length;
    run.telephony.deliver();
    await run.run(id);
    expect(run.telephony.placed.length).toBe(placedBefore + 1);
    run.telephony.deliver();
    await run.run(id);
    // In flight once each call went out (a tick places its calls together): 2 at 2, then 4 at 4, then 1 at 1.
    expect(inFlightAtEachPlacement).toEqual([2, 2, 4, 4, 1, 1]);

    // A spend cap it has already reached: the dialer pauses it; lifted, the user resumes it to its end.
    await app.gql(UPDATE, { id, input: { spendCapCents: 1 } }, who.token);
    run.telephony.deliver();
    await run.run(id);
    const paused = await app.prisma.campaign.findUniqueOrThrow({ where: { id } });
    expect([paused.status, paused.pausedReason]).toEqual(['paused', 'spend_cap_reached']);
    await app.gql(UPDATE, { id, input: { spendCapCents: null } }, who.token);
    expect((await app.gql(`mutation ($id: UUID!) { resumeCampaign(id: $id) { status } }`, { id }, who.token)).errors).toBeUndefined();
    run.telephony.auto = true;
    await run.run(id);
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id } })).status).toBe('completed');

    const entries = (await history(id)).reverse();
    const user = { kind: 'user', id: who.id };
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['created', user],
      ['edited', user],
      ['dispatched', user],
      ['edited', { kind: 'api_key', id: apiKey.id }],
      ['edited', user],
      ['edited', user],
      ['paused', { kind: 'system', id: null }],
      ['edited', user],
      ['resumed', user],
      ['completed', { kind: 'system', id: null }],
    ]);
    expect(entries[1]!.changes).toEqual([{ field: 'name', from: 'Spring recall', to: 'Renamed' }]);
    expect(entries[3]!.changes).toEqual([{ field: 'concurrentCalls', from: 2, to: 4 }]);
    expect(entries[6]!.changes).toEqual(
      expect.arrayContaining([
        { field: 'status', from: 'running', to: 'paused' },
        { field: 'pausedReason', from: null, to: 'spend_cap_reached' },
      ]),
    );

    // Live: every entry from the subscription on, in the history's order.
    await live.until((results) => results.length >= entries.length - 2);
    expect(live.results.map((r) => r.data?.campaignChanged?.id)).toEqual(entries.slice(2).map((e) => e.id));
  });

  it('keeps the group of a started campaign, and another user’s history to its owner', async () => {
    const created = await createCampaign(app, who, ALWAYS_OPEN);
    await dispatch(app, who.token, created.id);
    const other = await customer(app, { contacts: 1, credits: 0 });
    const refused = await app.gql(UPDATE, { id: created.id, input: { contactGroupId: other.groupId } }, who.token);
    expect(refused.errors?.[0]?.extensions?.fieldErrors).toEqual({
      contactGroupId: ['The contact group cannot change once the campaign has started.'],
    });
    const theirs = await app.gql(HISTORY, { id: created.id, first: 1 }, other.token);
    expect(theirs.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const watch = await subscribe(app.url, CHANGED, { id: created.id }, other.token);
    await watch.ended;
    expect(watch.results[0]?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await history(created.id)).map((e) => e.action)).toEqual(['dispatched', 'created']);
  });
});

describe('an A/B split', () => {
  const SET = `mutation ($id: UUID!, $input: SetCampaignVariantsInput!) { setCampaignVariants(id: $id, input: $input) { id } }`;

  it('is kept in the history like any other edit: who, and from which split to which', async () => {
    const id = (await createCampaign(app, who, ALWAYS_OPEN)).id as string;
    const second = await createAgent(app, who.token, { name: 'Challenger' });
    const split = [
      { agentId: who.agent.id, name: 'Control', weight: 70 },
      { agentId: second.id, name: 'Challenger', weight: 30 },
    ];
    const stored = [
      { agent_id: who.agent.id, name: 'Control', weight: 70 },
      { agent_id: second.id, name: 'Challenger', weight: 30 },
    ];
    expect((await app.gql(SET, { id, input: { variants: split } }, who.token)).errors).toBeUndefined();
    // The same split again changes nothing, and writes nothing.
    expect((await app.gql(SET, { id, input: { variants: split } }, who.token)).errors).toBeUndefined();
    expect((await app.gql(SET, { id, input: { variants: [] } }, who.token)).errors).toBeUndefined();

    const [removed, set, created] = await history(id);
    expect(created!.action).toBe('created');
    expect(set).toMatchObject({ action: 'edited', actor: { kind: 'user', id: who.id } });
    expect(set!.changes).toEqual([{ field: 'variants', from: [], to: stored }]);
    expect(removed!.changes).toEqual([{ field: 'variants', from: stored, to: [] }]);
    expect(await history(id)).toHaveLength(3);
  });
});

describe('a new campaign’s first entry', () => {
  const CREATE = `mutation ($input: CreateCampaignInput!) { createCampaign(input: $input) { id } }`;

  async function createdEntry(id: string) {
    const entries = await history(id);
    expect(entries.map((e) => e.action)).toEqual(['created']);
    return Object.fromEntries(entries[0]!.changes.map((c) => [c.field, c.to]));
  }

  it('names the fields its creator set, not every default, on both surfaces', async () => {
    const gql = await app.gql(
      CREATE,
      {
        input: {
          name: 'Autumn',
          agentId: who.agent.id,
          contactGroupId: who.groupId,
          concurrentCalls: 4,
          timezone: 'Europe/Paris',
          // Given, but what a campaign gets anyway: nothing to say about it.
          maxRetryDays: 0,
          requiredConsent: [],
        },
      },
      who.token,
    );
    expect(gql.errors).toBeUndefined();
    expect(await createdEntry(gql.data.createCampaign.id)).toEqual({
      name: 'Autumn',
      agentId: who.agent.id,
      contactGroupId: who.groupId,
      status: 'draft',
      concurrentCalls: 4,
      timezone: 'Europe/Paris',
    });

    const v1 = await app.request('POST', '/api/v1/contacts/contacts/', {
      token: who.token,
      body: {
        name: 'Winter',
        agent_id: who.agent.id,
        contact_group_id: who.groupId,
        calling_hours: { start: '10:00', end: '16:00' },
        description: 'Second round',
        schedule_config: { max_attempts: 5 },
        regional_rules: true,
      },
    });
    expect(v1.status).toBe(201);
    const winter = await createdEntry(v1.json.id);
    expect(Object.keys(winter).sort()).toEqual(
      ['name', 'agentId', 'contactGroupId', 'status', 'callingHours', 'description', 'scheduleConfig'].sort(),
    );
    expect(winter).toMatchObject({
      name: 'Winter',
      description: 'Second round',
      callingHours: { start: '10:00', end: '16:00' },
      scheduleConfig: { max_attempts: 5 },
    });
  });
});
