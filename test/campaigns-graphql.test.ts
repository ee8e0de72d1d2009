import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { contactRows, createCampaign, customer, forceStatus, importGroup, type Customer } from './support/campaigns.js';
import { createAgent } from './support/fixtures.js';

// Campaigns on GraphQL: reads with agent, group and progress, the create and update mutations, and the
// state machine through dispatchCampaign, pauseCampaign, resumeCampaign and cancelCampaign.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const FIELDS = /* GraphQL */ `
  id name description status pausedReason concurrentCalls maxRetryDays timezone
  callingHours { start end } activeDays
  scheduleConfig { maxAttempts maxAttemptsPerDay retryIntervalMinutes retryOn }
  fieldMappings selectedContactFields callInsights postCallAnalyzers startedAt completedAt
  agentId agent { id name } contactGroupId contactGroup { id name total }
  progress { total pending dialing done reached notReached doNotCall invalid cancelled }
`;
const CREATE = `mutation($input: CreateCampaignInput!) { createCampaign(input: $input) { ${FIELDS} } }`;
const UPDATE = `mutation($id: UUID!, $input: UpdateCampaignInput!) { updateCampaign(id: $id, input: $input) { ${FIELDS} } }`;
const DISPATCH = `mutation($id: UUID!, $by: String) {
  dispatchCampaign(id: $id, triggeredBy: $by) { success status scheduled triggeredBy campaign { id status startedAt } } }`;
const transition = (name: 'pauseCampaign' | 'resumeCampaign' | 'cancelCampaign') =>
  `mutation($id: UUID!) { ${name}(id: $id) { id status pausedReason } }`;
const CAMPAIGN = `query($id: UUID!) { campaign(id: $id) { ${FIELDS} } }`;

const future = (hours = 24) => new Date(Date.now() + hours * 3_600_000).toISOString();
const statusOf = async (id: string) => (await app.prisma.campaign.findUniqueOrThrow({ where: { id } })).status;

async function create(who: Customer, input: Record<string, unknown> = {}) {
  return app.gql(CREATE, { input: { name: 'Recall', agentId: who.agent.id, contactGroupId: who.groupId, ...input } }, who.token);
}

/** A campaign of `who` in the given state, reached the way a user (or, for completed, the dialer) would. */
async function campaignIn(who: Customer, status: 'draft' | 'scheduled' | 'running' | 'paused' | 'completed' | 'cancelled') {
  const { id } = await createCampaign(app, who, status === 'scheduled' ? { status, started_at: future() } : {});
  if (status === 'running' || status === 'paused' || status === 'completed') await app.gql(DISPATCH, { id }, who.token);
  if (status === 'paused') await app.gql(transition('pauseCampaign'), { id }, who.token);
  if (status === 'completed') await forceStatus(app, id, 'completed');
  if (status === 'cancelled') await app.gql(transition('cancelCampaign'), { id }, who.token);
  expect(await statusOf(id)).toBe(status);
  return id;
}

function expectConflict(result: any, reason: string) {
  expect(result.errors?.[0]?.extensions, JSON.stringify(result)).toMatchObject({ code: 'CONFLICT', reason });
}

describe('createCampaign', () => {
  it('creates a draft with typed schedule fields and defaults filled in', async () => {
    const who = await customer(app);
    const result = await create(who, {
      description: 'Q2',
      concurrentCalls: 5,
      maxRetryDays: 3,
      timezone: 'Europe/Berlin',
      callingHours: { start: '08:00', end: '20:00' },
      activeDays: ['sat', 'mon', 'mon'],
      scheduleConfig: { maxAttempts: 4, retryOn: ['busy'] },
      fieldMappings: { Mobile: 'phone_number' },
      selectedContactFields: ['company'],
      postCallAnalyzers: [{ name: 'interest' }],
    });
    expect(result.errors).toBeUndefined();
    expect(result.data.createCampaign).toMatchObject({
      name: 'Recall',
      description: 'Q2',
      status: 'draft',
      pausedReason: null,
      concurrentCalls: 5,
      maxRetryDays: 3,
      timezone: 'Europe/Berlin',
      callingHours: { start: '08:00', end: '20:00' },
      activeDays: ['mon', 'sat'],
      scheduleConfig: { maxAttempts: 4, maxAttemptsPerDay: 2, retryIntervalMinutes: 60, retryOn: ['busy'] },
      fieldMappings: { Mobile: 'phone_number' },
      selectedContactFields: ['company'],
      callInsights: {},
      postCallAnalyzers: [{ name: 'interest' }],
      startedAt: null,
      agent: { id: who.agent.id, name: 'Front desk' },
      contactGroup: { id: who.groupId, name: 'Leads', total: 2 },
      progress: { total: 0, pending: 0, dialing: 0, done: 0, reached: 0, notReached: 0, doNotCall: 0, invalid: 0, cancelled: 0 },
    });
  });

  it('creates a scheduled campaign with a future startedAt', async () => {
    const startedAt = future();
    const result = await create(await customer(app), { status: 'scheduled', startedAt });
    expect(result.data.createCampaign).toMatchObject({ status: 'scheduled', startedAt: startedAt });
  });

  it('refuses bad input with field errors (in the input’s own names) and writes nothing', async () => {
    const who = await customer(app);
    const stranger = await customer(app, { credits: 0 });
    const before = await app.prisma.campaign.count();
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ name: 'n'.repeat(256) }, { name: ['Ensure this field has no more than 255 characters.'] }],
      [{ timezone: 'T'.repeat(65) }, { timezone: ['Ensure this field has no more than 64 characters.'] }],
      [{ timezone: 'Atlantis/Capital' }, { timezone: ['Unknown time zone: use an IANA name such as America/New_York.'] }],
      [
        { concurrentCalls: 0, maxRetryDays: 366 },
        {
          concurrentCalls: ['Ensure this value is greater than or equal to 1.'],
          maxRetryDays: ['Ensure this value is less than or equal to 365.'],
        },
      ],
      [{ callingHours: { start: '18:00', end: '08:00' } }, { 'callingHours.end': ['Must be later than start.'] }],
      [{ activeDays: [] }, { activeDays: ['This list may not be empty.'] }],
      [
        { scheduleConfig: { maxAttempts: 11, maxAttemptsPerDay: 0, retryIntervalMinutes: 10_081 } },
        {
          'scheduleConfig.maxAttempts': ['Ensure this value is less than or equal to 10.'],
          'scheduleConfig.maxAttemptsPerDay': ['Ensure this value is greater than or equal to 1.'],
          'scheduleConfig.retryIntervalMinutes': ['Ensure this value is less than or equal to 10080.'],
        },
      ],
      [{ status: 'running' }, { status: ['"running" is not a valid choice.'] }],
      [{ status: 'scheduled', startedAt: '2020-01-01T00:00:00Z' }, { startedAt: ['Must be in the future.'] }],
      [
        { agentId: stranger.agent.id, contactGroupId: stranger.groupId },
        {
          agentId: ['No agent with this id.'],
          contactGroupId: ['No contact group with this id.'],
        },
      ],
    ];
    for (const [input, fieldErrors] of cases) {
      const result = await create(who, input);
      expect(result.errors?.[0]?.extensions, JSON.stringify(input)).toEqual({ code: 'BAD_USER_INPUT', fieldErrors });
    }
    expect(await app.prisma.campaign.count()).toBe(before);
  });
});

describe('updateCampaign', () => {
  it('edits a draft, changing only what it names; startedAt: null clears a planned start', async () => {
    const who = await customer(app);
    const id = (await createCampaign(app, who, { started_at: future(), concurrent_calls: 2 })).id;
    const otherGroup = await importGroup(app, who.token, contactRows(3), 'More leads');
    const otherAgent = await createAgent(app, who.token, { name: 'Evening shift' });
    const result = await app.gql(
      UPDATE,
      {
        id,
        input: { name: 'Renamed', contactGroupId: otherGroup, agentId: otherAgent.id, activeDays: ['sun'], startedAt: null },
      },
      who.token,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data.updateCampaign).toMatchObject({
      name: 'Renamed',
      concurrentCalls: 2,
      activeDays: ['sun'],
      startedAt: null,
      agent: { name: 'Evening shift' },
      contactGroup: { id: otherGroup, total: 3 },
      status: 'draft',
    });
  });

  it('edits a paused campaign, but not its group or start', async () => {
    const who = await customer(app);
    const id = await campaignIn(who, 'paused');
    const ok = await app.gql(UPDATE, { id, input: { concurrentCalls: 9, callingHours: { start: '10:00', end: '12:00' } } }, who.token);
    expect(ok.data.updateCampaign).toMatchObject({ concurrentCalls: 9, callingHours: { start: '10:00', end: '12:00' }, status: 'paused' });

    const group = await importGroup(app, who.token, contactRows(1), 'Elsewhere');
    const refused = await app.gql(UPDATE, { id, input: { contactGroupId: group, startedAt: future() } }, who.token);
    expect(refused.errors?.[0]?.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      fieldErrors: {
        contactGroupId: ['The contact group cannot change once the campaign has started.'],
        startedAt: ['The campaign has already started.'],
      },
    });
  });

  it('refuses bad input and an archived agent, and writes nothing', async () => {
    const who = await customer(app);
    const id = await campaignIn(who, 'draft');
    const retired = await createAgent(app, who.token, { name: 'Retired' });
    await app.request('DELETE', `/api/v1/agents/${retired.id}/`, { token: who.token });
    const before = await app.prisma.campaign.findUniqueOrThrow({ where: { id } });
    for (const [input, fieldErrors] of [
      [{ name: '' }, { name: ['This field may not be blank.'] }],
      [{ concurrentCalls: 1001 }, { concurrentCalls: ['Ensure this value is less than or equal to 1000.'] }],
      [
        { scheduleConfig: { maxAttempts: 2, maxAttemptsPerDay: 3 } },
        { 'scheduleConfig.maxAttemptsPerDay': ['Must not be more than max_attempts.'] },
      ],
      [{ agentId: retired.id }, { agentId: ['The agent "Retired" is archived; choose an active agent.'] }],
      [{ startedAt: '2020-01-01T00:00:00Z' }, { startedAt: ['Must be in the future.'] }],
    ] as const) {
      const result = await app.gql(UPDATE, { id, input }, who.token);
      expect(result.errors?.[0]?.extensions, JSON.stringify(input)).toEqual({ code: 'BAD_USER_INPUT', fieldErrors });
    }
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id } })).toEqual(before);
  });

  // A running campaign takes edits (test/campaign-history.test.ts).
  it.each(['scheduled', 'completed', 'cancelled'] as const)('is refused (409) for a %s campaign', async (status) => {
    const who = await customer(app);
    const id = await campaignIn(who, status);
    const result = await app.gql(UPDATE, { id, input: { name: 'Too late' } }, who.token);
    expectConflict(result, `campaign_${status}`);
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id } })).name).toBe('Spring recall');
  });
});

describe('the state machine', () => {
  it('pauses a running campaign; pausing again keeps the first reason', async () => {
    const who = await customer(app);
    const id = await campaignIn(who, 'running');
    const paused = await app.gql(transition('pauseCampaign'), { id }, who.token);
    expect(paused.data.pauseCampaign).toEqual({ id, status: 'paused', pausedReason: 'user_requested' });
    await forceStatus(app, id, 'paused', { pausedReason: 'insufficient_credits' });
    const again = await app.gql(transition('pauseCampaign'), { id }, who.token);
    expect(again.data.pauseCampaign).toEqual({ id, status: 'paused', pausedReason: 'insufficient_credits' });
  });

  it.each(['draft', 'scheduled', 'completed', 'cancelled'] as const)('refuses to pause a %s campaign', async (status) => {
    const who = await customer(app);
    const id = await campaignIn(who, status);
    expectConflict(await app.gql(transition('pauseCampaign'), { id }, who.token), `campaign_${status}`);
    expect(await statusOf(id)).toBe(status);
  });

  it('resumes a paused campaign; resuming a running one changes nothing', async () => {
    const who = await customer(app);
    const id = await campaignIn(who, 'paused');
    const resumed = await app.gql(transition('resumeCampaign'), { id }, who.token);
    expect(resumed.data.resumeCampaign).toEqual({ id, status: 'running', pausedReason: null });
    const again = await app.gql(transition('resumeCampaign'), { id }, who.token);
    expect(again.data.resumeCampaign).toEqual({ id, status: 'running', pausedReason: null });
  });

  it.each(['draft', 'scheduled', 'completed', 'cancelled'] as const)('refuses to resume a %s campaign', async (status) => {
    const who = await customer(app);
    const id = await campaignIn(who, status);
    expectConflict(await app.gql(transition('resumeCampaign'), { id }, who.token), `campaign_${status}`);
    expect(await statusOf(id)).toBe(status);
  });

  it('resumes with the checks of dispatch', async () => {
    const who = await customer(app);
    const id = await campaignIn(who, 'paused');
    await app.request('DELETE', `/api/v1/agents/${who.agent.id}/`, { token: who.token });
    expectConflict(await app.gql(transition('resumeCampaign'), { id }, who.token), 'agent_inactive');
    expect(await statusOf(id)).toBe('paused');
  });

  it.each(['draft', 'scheduled', 'running', 'paused'] as const)(
    'cancels a %s campaign; contacts still waiting are not called',
    async (status) => {
      const who = await customer(app);
      const id = await campaignIn(who, status);
      const result = await app.gql(transition('cancelCampaign'), { id }, who.token);
      expect(result.data.cancelCampaign).toEqual({ id, status: 'cancelled', pausedReason: null });
      const waiting = await app.prisma.campaignContact.count({ where: { campaignId: id, state: { not: 'done' } } });
      expect(waiting).toBe(0);
      const read = await app.gql(CAMPAIGN, { id }, who.token);
      const enrolled = status === 'running' || status === 'paused' ? 2 : 0;
      expect(read.data.campaign.progress).toMatchObject({ total: enrolled, done: enrolled, cancelled: enrolled });
    },
  );

  it('cancelling twice changes nothing; a completed campaign cannot be cancelled', async () => {
    const who = await customer(app);
    const cancelled = await campaignIn(who, 'cancelled');
    expect((await app.gql(transition('cancelCampaign'), { id: cancelled }, who.token)).data.cancelCampaign.status).toBe('cancelled');
    const completed = await campaignIn(who, 'completed');
    expectConflict(await app.gql(transition('cancelCampaign'), { id: completed }, who.token), 'campaign_completed');
    expect(await statusOf(completed)).toBe('completed');
  });
});

describe('dispatchCampaign', () => {
  it('starts a draft and returns the result with the campaign', async () => {
    const who = await customer(app);
    const id = await campaignIn(who, 'draft');
    const result = await app.gql(DISPATCH, { id, by: 'scheduler' }, who.token);
    expect(result.data.dispatchCampaign).toMatchObject({
      success: true,
      status: 'running',
      scheduled: false,
      triggeredBy: 'scheduler',
      campaign: { id, status: 'running', startedAt: expect.any(String) },
    });
    const again = await app.gql(DISPATCH, { id }, who.token);
    expect(again.data.dispatchCampaign).toMatchObject({ success: true, status: 'running', scheduled: false, triggeredBy: 'api' });
  });

  it('schedules a draft whose start is ahead', async () => {
    const who = await customer(app);
    const { id } = await createCampaign(app, who, { started_at: future() });
    const result = await app.gql(DISPATCH, { id }, who.token);
    expect(result.data.dispatchCampaign).toMatchObject({
      success: true,
      status: 'scheduled',
      scheduled: true,
      campaign: { status: 'scheduled' },
    });
  });

  it('gives every refusal reason as a CONFLICT error', async () => {
    const who = await customer(app, { contacts: 1 });
    for (const status of ['completed', 'cancelled'] as const) {
      expectConflict(await app.gql(DISPATCH, { id: await campaignIn(who, status) }, who.token), `campaign_${status}`);
    }

    const noNumber = await customer(app);
    const noNumberCampaign = await campaignIn(noNumber, 'draft');
    await app.prisma.phoneNumber.updateMany({ where: { agentId: noNumber.agent.id }, data: { agentId: null } });
    expectConflict(await app.gql(DISPATCH, { id: noNumberCampaign }, noNumber.token), 'agent_has_no_phone_number');

    const nobody = await customer(app);
    const junk = await importGroup(app, nobody.token, [{ Phone: 'n/a' }], 'Junk');
    const { id: nobodyCampaign } = await createCampaign(app, nobody, { contact_group_id: junk });
    expectConflict(await app.gql(DISPATCH, { id: nobodyCampaign }, nobody.token), 'no_callable_contacts');

    const broke = await customer(app, { credits: 0 });
    const brokeCampaign = await campaignIn(broke, 'draft');
    expectConflict(await app.gql(DISPATCH, { id: brokeCampaign }, broke.token), 'insufficient_credits');

    const archived = await customer(app);
    const archivedCampaign = await campaignIn(archived, 'draft');
    await app.request('DELETE', `/api/v1/agents/${archived.agent.id}/`, { token: archived.token });
    const refused = await app.gql(DISPATCH, { id: archivedCampaign }, archived.token);
    expectConflict(refused, 'agent_inactive');
    expect(refused.errors![0]!.message).toBe('The agent "Front desk" is archived; choose an active agent.');

    for (const id of [noNumberCampaign, nobodyCampaign, brokeCampaign, archivedCampaign]) expect(await statusOf(id)).toBe('draft');
  });
});

describe('reads', () => {
  it('lists the caller’s campaigns newest first, filtered by status, with totalCount', async () => {
    const who = await customer(app);
    const draft = await campaignIn(who, 'draft');
    const running = await campaignIn(who, 'running');
    const cancelled = await campaignIn(who, 'cancelled');
    await campaignIn(await customer(app), 'draft');
    const query = `query($statuses: [CampaignStatus!], $first: Int) {
      campaigns(statuses: $statuses, first: $first) { totalCount edges { node { id status } } } }`;
    const all = await app.gql(query, { first: 10 }, who.token);
    expect(all.data.campaigns.totalCount).toBe(3);
    expect(all.data.campaigns.edges.map((e: any) => e.node.id)).toEqual([cancelled, running, draft]);
    const live = await app.gql(query, { statuses: ['draft', 'running'], first: 10 }, who.token);
    expect(live.data.campaigns).toEqual({
      totalCount: 2,
      edges: [{ node: { id: running, status: 'running' } }, { node: { id: draft, status: 'draft' } }],
    });
  });

  it('counts progress from the enrolled contacts', async () => {
    const who = await customer(app, { contacts: 4 });
    await app.request('PATCH', `/api/v1/contacts/groups/${who.groupId}/`, { token: who.token, body: { phone_number: 'junk' } });
    const id = await campaignIn(who, 'running');
    const rows = await app.prisma.campaignContact.findMany({ where: { campaignId: id, state: 'pending' }, orderBy: { id: 'asc' } });
    await app.prisma.campaignContact.update({ where: { id: rows[0]!.id }, data: { state: 'dialing' } });
    await app.prisma.campaignContact.update({ where: { id: rows[1]!.id }, data: { state: 'done', outcome: 'reached' } });
    await app.prisma.campaignContact.update({ where: { id: rows[2]!.id }, data: { state: 'done', outcome: 'not_reached' } });
    const result = await app.gql(CAMPAIGN, { id }, who.token);
    expect(result.data.campaign.progress).toEqual({
      total: 5,
      pending: 1,
      dialing: 1,
      done: 3,
      reached: 1,
      notReached: 1,
      doNotCall: 0,
      invalid: 1,
      cancelled: 0,
    });
  });

  it('reads progress, agent and group of many campaigns in a constant number of statements', async () => {
    async function statementsFor(count: number) {
      const who = await customer(app);
      for (let i = 0; i < count; i += 1) await campaignIn(who, i % 2 ? 'running' : 'draft');
      const before = app.db.statementCount();
      const result = await app.gql(
        `{ campaigns(first: 50) { totalCount edges { node { id agent { name } contactGroup { name } progress { total pending } } } } }`,
        {},
        who.token,
      );
      const statements = app.db.statementCount() - before;
      expect(result.errors).toBeUndefined();
      expect(result.data.campaigns.edges).toHaveLength(count);
      expect(result.data.campaigns.edges[0].node.progress.total).toBe(count % 2 === 0 ? 2 : 0);
      return statements;
    }
    const two = await statementsFor(2);
    const twelve = await statementsFor(12);
    expect(twelve).toBe(two);
  });

  it('reads campaigns with agent, group and the group’s first 20 contacts in one or two statements', async () => {
    async function statementsFor(count: number) {
      const who = await customer(app, { contacts: 25 });
      for (let i = 0; i < count; i += 1) await createCampaign(app, who);
      const before = app.db.statementCount();
      const result = await app.gql(
        `query($first: Int!) { campaigns(first: $first) { edges { node { id name status agent { id name }
           contactGroup { id name total contacts(first: 20) { edges { node { id phoneNumber status } } } } } } } }`,
        { first: count },
        who.token,
      );
      const statements = app.db.statementCount() - before;
      expect(result.errors).toBeUndefined();
      expect(result.data.campaigns.edges).toHaveLength(count);
      for (const { node } of result.data.campaigns.edges) expect(node.contactGroup.contacts.edges).toHaveLength(20);
      return statements;
    }
    const three = await statementsFor(3);
    const thirty = await statementsFor(30);
    expect(thirty).toBe(three);
    expect(three).toBeLessThanOrEqual(2);
  });
});

describe('another user’s campaign does not exist for you', () => {
  it('answers NOT_FOUND for the read and every mutation, and changes nothing', async () => {
    const owner = await customer(app);
    const id = await campaignIn(owner, 'running');
    const stranger = await customer(app);
    for (const [query, variables] of [
      [CAMPAIGN, { id }],
      [UPDATE, { id, input: { name: 'Mine now' } }],
      [DISPATCH, { id }],
      [transition('pauseCampaign'), { id }],
      [transition('resumeCampaign'), { id }],
      [transition('cancelCampaign'), { id }],
    ] as const) {
      const result = await app.gql(query, variables, stranger.token);
      expect(result.errors?.[0]?.extensions?.code, query).toBe('NOT_FOUND');
    }
    expect((await app.gql('{ campaigns(first: 5) { totalCount } }', {}, stranger.token)).data.campaigns.totalCount).toBe(0);
    expect(await app.prisma.campaign.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'running', name: 'Spring recall' });
    expect((await app.gql(CAMPAIGN, { id: randomUUID() }, owner.token)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
