import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, dispatch, forceStatus, grant, importGroup, type Customer } from './support/campaigns.js';
import { createAgent } from './support/fixtures.js';
import { openApiChecker, type OpenApiChecker } from './support/openapi.js';

// The v1 campaign endpoints field by field against interface-v1.md (2.2, 2.10, endpoints 2, 8, 9, 10)
// and against the OpenAPI document the server publishes.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** The response columns of 2.2, plus the nested objects. */
const CAMPAIGN_FIELDS = [
  'id',
  'name',
  'description',
  'status',
  'paused_reason',
  'agent_id',
  'contact_group_id',
  'concurrent_calls',
  'max_retry_days',
  'calling_hours',
  'schedule_config',
  'active_days',
  'field_mappings',
  'selected_contact_fields',
  'timezone',
  'call_insights',
  'post_call_analyzers',
  'started_at',
  'completed_at',
  'created_at',
  'updated_at',
  'user_agents',
  'contact_groups',
];
const DEFAULT_SCHEDULE = {
  max_attempts: 3,
  max_attempts_per_day: 2,
  retry_interval_minutes: 60,
  retry_on: ['no_answer', 'busy', 'failed', 'voicemail'],
};

const woken: string[] = [];
let wakeFails = false;
let app: TestApp;
let openapi: any;
let checker: OpenApiChecker;

beforeAll(async () => {
  app = await startTestApp({
    dialer: {
      wake: async (id) => {
        if (wakeFails) throw new Error('dialer unreachable');
        woken.push(id);
      },
      report: () => {},
    },
  });
  checker = await openApiChecker(app);
  openapi = checker.document;
});
afterAll(() => app.close());

const ALL_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

const expectMatchesOpenApi = (path: string, method: string, status: number, body: unknown) =>
  checker.expectMatches(path, method, status, body);

const post = (who: Customer, body: Record<string, unknown>) =>
  app.request('POST', '/api/v1/contacts/contacts/', {
    token: who.token,
    body: { name: 'Spring recall', agent_id: who.agent.id, contact_group_id: who.groupId, ...body },
  });

/** A JSON body written by hand, for integers JSON.stringify cannot write. */
const postRaw = (who: Customer, extra: string) =>
  app.request('POST', '/api/v1/contacts/contacts/', {
    token: who.token,
    headers: { 'content-type': 'application/json' },
    raw: `{"name":"Big","agent_id":"${who.agent.id}","contact_group_id":"${who.groupId}",${extra}}`,
  });

const future = (hours = 24) => new Date(Date.now() + hours * 3_600_000).toISOString();

describe('POST /api/v1/contacts/contacts/ (create a campaign)', () => {
  let who: Customer;
  beforeAll(async () => {
    who = await customer(app);
  });

  it('creates a draft with defaults filled in: 201 with the 2.2 response shape', async () => {
    const res = await post(who, { description: 'Book check-ups', concurrent_calls: 3, timezone: 'America/New_York' });
    expect(res.status).toBe(201);
    const c = res.json;
    expect(Object.keys(c).sort()).toEqual([...CAMPAIGN_FIELDS].sort());
    expect(c).toMatchObject({
      name: 'Spring recall',
      description: 'Book check-ups',
      status: 'draft',
      paused_reason: null,
      agent_id: who.agent.id,
      contact_group_id: who.groupId,
      concurrent_calls: 3,
      max_retry_days: 0,
      calling_hours: { start: '09:00', end: '17:00' },
      schedule_config: DEFAULT_SCHEDULE,
      active_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      field_mappings: {},
      selected_contact_fields: [],
      timezone: 'America/New_York',
      call_insights: {},
      post_call_analyzers: [],
      started_at: null,
      completed_at: null,
    });
    expect(c.id).toMatch(UUID);
    expect(c.created_at).toMatch(ISO);
    expect(c.updated_at).toMatch(ISO);
    expect(c.user_agents).toEqual({
      id: who.agent.id,
      name: 'Front desk',
      status: 'active',
      is_active: true,
      response_engine_type: 'retell-llm',
      phone_numbers: [{ id: who.agent.phoneNumbers[0]!.id, number: who.agent.phoneNumbers[0]!.number, label: '', is_primary: true }],
    });
    expect(c.contact_groups).toEqual({
      id: who.groupId,
      name: 'Leads',
      description: '',
      total: 2,
      csv_headers: ['Name', 'Phone'],
      created_at: expect.stringMatching(ISO),
    });
    expectMatchesOpenApi('/api/v1/contacts/contacts/', 'post', 201, c);
  });

  it('stores calling hours, active days and the retry policy canonically', async () => {
    const res = await post(who, {
      calling_hours: { start: '08:30', end: '24:00' },
      active_days: ['Sunday', 1, 'TUE', 'mon', '7', 'Saturday'],
      schedule_config: { max_attempts: 5, retry_on: ['busy', 'no_answer', 'busy'] },
      field_mappings: { 'Phone Number': 'phone_number' },
      selected_contact_fields: ['first_name', 'company'],
      call_insights: { sentiment: true },
      post_call_analyzers: [{ name: 'booked', type: 'boolean' }],
      max_retry_days: 365,
      concurrent_calls: 1000,
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      calling_hours: { start: '08:30', end: '24:00' },
      active_days: ['mon', 'tue', 'sat', 'sun'],
      schedule_config: { max_attempts: 5, max_attempts_per_day: 2, retry_interval_minutes: 60, retry_on: ['no_answer', 'busy'] },
      field_mappings: { 'Phone Number': 'phone_number' },
      selected_contact_fields: ['first_name', 'company'],
      call_insights: { sentiment: true },
      post_call_analyzers: [{ name: 'booked', type: 'boolean' }],
      max_retry_days: 365,
      concurrent_calls: 1000,
    });
    const stored = await app.prisma.campaign.findUniqueOrThrow({ where: { id: res.json.id } });
    expect(stored.activeDays).toEqual(['mon', 'tue', 'sat', 'sun']);
    expect(stored.scheduleConfig).toEqual(res.json.schedule_config);
  });

  it('caps the per-day default at max_attempts', async () => {
    const res = await post(who, { schedule_config: { max_attempts: 1 } });
    expect(res.json.schedule_config).toMatchObject({ max_attempts: 1, max_attempts_per_day: 1 });
  });

  it('creates a scheduled campaign with a future started_at', async () => {
    const startedAt = future();
    const res = await post(who, { status: 'scheduled', started_at: startedAt });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ status: 'scheduled', started_at: startedAt });
  });

  it('gives the same campaign over JSON, urlencoded and multipart (json fields as JSON text)', async () => {
    const fields: Record<string, string> = {
      name: 'Same everywhere',
      description: 'All three',
      agent_id: who.agent.id,
      contact_group_id: who.groupId,
      concurrent_calls: '4',
      max_retry_days: '2',
      timezone: 'Europe/Paris',
      calling_hours: '{"start":"10:00","end":"16:00"}',
      active_days: '["mon","wed"]',
      schedule_config: '{"max_attempts":4,"retry_on":["busy"]}',
      field_mappings: '{"Mobile":"phone_number"}',
      selected_contact_fields: '["company"]',
      call_insights: '{"summary":true}',
      post_call_analyzers: '[{"name":"interest"}]',
      agent_name: 'Front desk',
      contact_group_total: '2',
      started_at: '',
    };
    const json = await app.request('POST', '/api/v1/contacts/contacts/', {
      token: who.token,
      body: {
        ...fields,
        concurrent_calls: 4,
        max_retry_days: 2,
        contact_group_total: 2,
        started_at: null,
        ...Object.fromEntries(
          [
            'calling_hours',
            'active_days',
            'schedule_config',
            'field_mappings',
            'selected_contact_fields',
            'call_insights',
            'post_call_analyzers',
          ].map((key) => [key, JSON.parse(fields[key]!)]),
        ),
      },
    });
    const urlencoded = await app.request('POST', '/api/v1/contacts/contacts/', {
      token: who.token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      raw: new URLSearchParams(fields).toString(),
    });
    const form = new FormData();
    for (const [key, value] of Object.entries(fields)) form.set(key, value);
    const multipart = await app.request('POST', '/api/v1/contacts/contacts/', { token: who.token, raw: form });

    const comparable = ({ id: _id, created_at: _c, updated_at: _u, ...rest }: any) => rest;
    expect(json.status, json.text).toBe(201);
    expect(urlencoded.status, urlencoded.text).toBe(201);
    expect(multipart.status, multipart.text).toBe(201);
    expect(comparable(urlencoded.json)).toEqual(comparable(json.json));
    expect(comparable(multipart.json)).toEqual(comparable(json.json));
    expect(json.json).toMatchObject({
      concurrent_calls: 4,
      calling_hours: { start: '10:00', end: '16:00' },
      active_days: ['mon', 'wed'],
      schedule_config: { max_attempts: 4, max_attempts_per_day: 2, retry_interval_minutes: 60, retry_on: ['busy'] },
      started_at: null,
    });
  });

  it('accepts one plain form value for a list field', async () => {
    const res = await app.request('POST', '/api/v1/contacts/contacts/', {
      token: who.token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      raw: new URLSearchParams({
        name: 'One day',
        agent_id: who.agent.id,
        contact_group_id: who.groupId,
        active_days: 'Friday',
      }).toString(),
    });
    expect(res.status).toBe(201);
    expect(res.json.active_days).toEqual(['fri']);
  });

  it('accepts matching write-only fields (the number in any format) and never returns them', async () => {
    const local = who.agent.phoneNumbers[0]!.number.replace('+1415', '(415) ').replace(/(\d{3})(\d{4})$/, '$1-$2');
    const res = await post(who, {
      agent_name: 'Front desk',
      agent_phone_number: local,
      contact_group_name: 'Leads',
      contact_group_total: 2,
    });
    expect(res.status, res.text).toBe(201);
    for (const key of ['agent_name', 'agent_phone_number', 'contact_group_name', 'contact_group_total'])
      expect(res.json).not.toHaveProperty(key);
  });

  it('ignores completed_at and the other read-only fields', async () => {
    const res = await post(who, {
      completed_at: '2020-01-01T00:00:00Z',
      paused_reason: 'user_requested',
      id: randomUUID(),
      created_at: '2020-01-01T00:00:00Z',
      user_agents: { id: randomUUID() },
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ completed_at: null, paused_reason: null, user_agents: { id: who.agent.id } });
    expect(res.json.created_at).not.toBe('2020-01-01T00:00:00.000Z');
  });
});

describe('bad input to create: field errors, nothing written', () => {
  let who: Customer;
  let stranger: Customer;
  let archivedAgent: string;
  beforeAll(async () => {
    who = await customer(app);
    stranger = await customer(app, { credits: 0 });
    archivedAgent = (await createAgent(app, who.token, { name: 'Retired' })).id;
    await app.request('DELETE', `/api/v1/agents/${archivedAgent}/`, { token: who.token });
  });

  const MAX = 'Ensure this value is less than or equal to 9223372036854775807.';
  const MIN = 'Ensure this value is greater than or equal to -9223372036854775808.';
  const INT = 'A valid integer is required.';

  const cases: [string, () => Record<string, unknown>, Record<string, string[]>][] = [
    ['name missing', () => ({ name: undefined }), { name: ['This field is required.'] }],
    ['name blank', () => ({ name: '  ' }), { name: ['This field may not be blank.'] }],
    ['name over 255', () => ({ name: 'n'.repeat(256) }), { name: ['Ensure this field has no more than 255 characters.'] }],
    ['name not a string', () => ({ name: 5 }), { name: ['Not a valid string.'] }],
    ['status over 32', () => ({ status: 's'.repeat(33) }), { status: ['Ensure this field has no more than 32 characters.'] }],
    ['status not creatable', () => ({ status: 'running' }), { status: ['"running" is not a valid choice.'] }],
    ['timezone over 64', () => ({ timezone: 'Z'.repeat(65) }), { timezone: ['Ensure this field has no more than 64 characters.'] }],
    [
      'timezone unknown',
      () => ({ timezone: 'Mars/Olympus_Mons' }),
      { timezone: ['Unknown time zone: use an IANA name such as America/New_York.'] },
    ],
    [
      'agent_name over 255',
      () => ({ agent_name: 'a'.repeat(256) }),
      { agent_name: ['Ensure this field has no more than 255 characters.'] },
    ],
    [
      'agent_phone_number over 64',
      () => ({ agent_phone_number: '1'.repeat(65) }),
      { agent_phone_number: ['Ensure this field has no more than 64 characters.'] },
    ],
    [
      'contact_group_name over 255',
      () => ({ contact_group_name: 'g'.repeat(256) }),
      { contact_group_name: ['Ensure this field has no more than 255 characters.'] },
    ],
    ['concurrent_calls not an integer', () => ({ concurrent_calls: 1.5 }), { concurrent_calls: [INT] }],
    ['concurrent_calls text', () => ({ concurrent_calls: 'many' }), { concurrent_calls: [INT] }],
    ['concurrent_calls 0', () => ({ concurrent_calls: 0 }), { concurrent_calls: ['Ensure this value is greater than or equal to 1.'] }],
    [
      'concurrent_calls 1001',
      () => ({ concurrent_calls: 1001 }),
      { concurrent_calls: ['Ensure this value is less than or equal to 1000.'] },
    ],
    ['max_retry_days -1', () => ({ max_retry_days: -1 }), { max_retry_days: ['Ensure this value is greater than or equal to 0.'] }],
    ['max_retry_days 366', () => ({ max_retry_days: 366 }), { max_retry_days: ['Ensure this value is less than or equal to 365.'] }],
    ['max_retry_days a list', () => ({ max_retry_days: [1] }), { max_retry_days: [INT] }],
    ['contact_group_total text', () => ({ contact_group_total: 'two' }), { contact_group_total: [INT] }],
    [
      'calling_hours not an object',
      () => ({ calling_hours: 'nine to five' }),
      { calling_hours: ['Expected a dictionary of items but got type "str".'] },
    ],
    [
      'calling_hours bad clock',
      () => ({ calling_hours: { start: '9am', end: '24:01' } }),
      {
        'calling_hours.start': ['Use HH:MM (24-hour clock), from 00:00 to 23:59.'],
        'calling_hours.end': ['Use HH:MM (24-hour clock), from 00:00 to 24:00.'],
      },
    ],
    [
      'calling_hours start 24:00',
      () => ({ calling_hours: { start: '24:00', end: '24:00' } }),
      { 'calling_hours.start': ['Use HH:MM (24-hour clock), from 00:00 to 23:59.'] },
    ],
    ['calling_hours end missing', () => ({ calling_hours: { start: '09:00' } }), { 'calling_hours.end': ['This field is required.'] }],
    [
      'calling_hours backwards',
      () => ({ calling_hours: { start: '17:00', end: '09:00' } }),
      { 'calling_hours.end': ['Must be later than start.'] },
    ],
    ['active_days empty', () => ({ active_days: [] }), { active_days: ['This list may not be empty.'] }],
    ['active_days not a list', () => ({ active_days: { mon: true } }), { active_days: ['Expected a list of items but got type "dict".'] }],
    [
      'active_days unknown day',
      () => ({ active_days: ['mon', 'funday', 8, 0] }),
      {
        'active_days.1': ['Use a day name (mon or monday, any case) or an ISO day number from 1 (Monday) to 7 (Sunday).'],
        'active_days.2': ['Use a day name (mon or monday, any case) or an ISO day number from 1 (Monday) to 7 (Sunday).'],
        'active_days.3': ['Use a day name (mon or monday, any case) or an ISO day number from 1 (Monday) to 7 (Sunday).'],
      },
    ],
    [
      'schedule_config not an object',
      () => ({ schedule_config: [3] }),
      { schedule_config: ['Expected a dictionary of items but got type "list".'] },
    ],
    [
      'schedule_config out of range',
      () => ({ schedule_config: { max_attempts: 11, retry_interval_minutes: 0 } }),
      {
        'schedule_config.max_attempts': ['Ensure this value is less than or equal to 10.'],
        'schedule_config.retry_interval_minutes': ['Ensure this value is greater than or equal to 1.'],
      },
    ],
    [
      'schedule_config wrong types',
      () => ({ schedule_config: { max_attempts: 'three', retry_on: 'busy' } }),
      {
        'schedule_config.max_attempts': [INT],
        'schedule_config.retry_on': ['Expected a list of items but got type "str".'],
      },
    ],
    [
      'schedule_config per day above max',
      () => ({ schedule_config: { max_attempts: 2, max_attempts_per_day: 3 } }),
      {
        'schedule_config.max_attempts_per_day': ['Must not be more than max_attempts.'],
      },
    ],
    [
      'schedule_config unknown status',
      () => ({ schedule_config: { retry_on: ['busy', 'hung_up'] } }),
      { 'schedule_config.retry_on.1': ['"hung_up" is not a valid choice.'] },
    ],
    [
      'field_mappings a list',
      () => ({ field_mappings: ['x'] }),
      { field_mappings: ['Expected a dictionary of items but got type "list".'] },
    ],
    [
      'post_call_analyzers not objects',
      () => ({ post_call_analyzers: ['x'] }),
      { 'post_call_analyzers.0': ['Expected a dictionary of items but got type "str".'] },
    ],
    [
      'started_at malformed',
      () => ({ started_at: 'tomorrow' }),
      { started_at: ['Datetime has wrong format. Use ISO 8601, e.g. 2026-01-31T09:00:00Z.'] },
    ],
    ['started_at in the past', () => ({ started_at: '2020-01-01T00:00:00Z' }), { started_at: ['Must be in the future.'] }],
    ['scheduled without a start', () => ({ status: 'scheduled' }), { started_at: ['A scheduled campaign needs a start time.'] }],
    ['agent_id not a uuid', () => ({ agent_id: 'agent-1' }), { agent_id: ['Must be a valid UUID.'] }],
    ['another user’s agent', () => ({ agent_id: stranger.agent.id }), { agent_id: ['No agent with this id.'] }],
    ['an unknown agent', () => ({ agent_id: randomUUID() }), { agent_id: ['No agent with this id.'] }],
    ['an archived agent', () => ({ agent_id: archivedAgent }), { agent_id: ['The agent "Retired" is archived; choose an active agent.'] }],
    ['another user’s group', () => ({ contact_group_id: stranger.groupId }), { contact_group_id: ['No contact group with this id.'] }],
    [
      'agent_name that does not match',
      () => ({ agent_name: 'Back office' }),
      { agent_name: ['Does not match the agent\'s name ("Front desk").'] },
    ],
    [
      'agent_phone_number of another agent',
      () => ({ agent_phone_number: stranger.agent.phoneNumbers[0]!.number }),
      {
        agent_phone_number: ["Is not one of the agent's phone numbers."],
      },
    ],
    [
      'agent_phone_number unreadable',
      () => ({ agent_phone_number: 'call me' }),
      { agent_phone_number: ['Enter a valid phone number, e.g. +14155552671.'] },
    ],
    [
      'contact_group_name that does not match',
      () => ({ contact_group_name: 'Prospects' }),
      { contact_group_name: ['Does not match the contact group\'s name ("Leads").'] },
    ],
    [
      'contact_group_total that does not match',
      () => ({ contact_group_total: 3 }),
      { contact_group_total: ["Does not match the contact group's total (2)."] },
    ],
  ];

  it.each(cases)('%s', async (_label, body, errors) => {
    const before = await app.prisma.campaign.count();
    const res = await post(who, body());
    expect(res.status).toBe(400);
    expect(res.json).toEqual(errors);
    expect(await app.prisma.campaign.count()).toBe(before);
  });

  it('names every bad reference at once', async () => {
    const res = await post(who, { agent_id: stranger.agent.id, contact_group_id: stranger.groupId, started_at: '2020-01-01T00:00:00Z' });
    expect(res.json).toEqual({
      agent_id: ['No agent with this id.'],
      contact_group_id: ['No contact group with this id.'],
      started_at: ['Must be in the future.'],
    });
  });

  it('refuses integers outside the 64-bit range without rounding them', async () => {
    const before = await app.prisma.campaign.count();
    for (const [extra, errors] of [
      ['"concurrent_calls":9223372036854775808', { concurrent_calls: [MAX] }],
      ['"concurrent_calls":-9223372036854775809', { concurrent_calls: [MIN] }],
      ['"max_retry_days":9223372036854775808', { max_retry_days: [MAX] }],
      ['"max_retry_days":-9223372036854775809', { max_retry_days: [MIN] }],
      ['"contact_group_total":9223372036854775808', { contact_group_total: [MAX] }],
      ['"contact_group_total":-9223372036854775809', { contact_group_total: [MIN] }],
      // Inside the 64-bit range but outside the business range, or not the group's total.
      ['"concurrent_calls":9223372036854775807', { concurrent_calls: ['Ensure this value is less than or equal to 1000.'] }],
      ['"max_retry_days":-9223372036854775808', { max_retry_days: ['Ensure this value is greater than or equal to 0.'] }],
      ['"contact_group_total":9007199254740993', { contact_group_total: ["Does not match the contact group's total (2)."] }],
    ] as const) {
      const res = await postRaw(who, extra);
      expect(res.status, extra).toBe(400);
      expect(res.json, extra).toEqual(errors);
    }
    expect(await app.prisma.campaign.count()).toBe(before);
  });
});

describe('GET /api/v1/campaigns/ and /api/v1/campaigns/{id}/', () => {
  let who: Customer;
  const ids: string[] = [];
  beforeAll(async () => {
    who = await customer(app);
    for (const name of ['First', 'Second', 'Third']) ids.push((await createCampaign(app, who, { name })).id);
    await createCampaign(app, await customer(app, { credits: 0 }), { name: 'Not yours' });
  });

  it('lists the caller’s campaigns, newest first, in the 2.2 shape', async () => {
    const res = await app.request('GET', '/api/v1/campaigns/', { token: who.token });
    expect(res.status).toBe(200);
    expect(res.json.map((c: any) => c.name)).toEqual(['Third', 'Second', 'First']);
    for (const c of res.json) expect(Object.keys(c).sort()).toEqual([...CAMPAIGN_FIELDS].sort());
    expectMatchesOpenApi('/api/v1/campaigns/', 'get', 200, res.json);
  });

  it('pages with the optional limit and offset', async () => {
    const res = await app.request('GET', '/api/v1/campaigns/?limit=1&offset=1', { token: who.token });
    expect(res.json.map((c: any) => c.name)).toEqual(['Second']);
    const bad = await app.request('GET', '/api/v1/campaigns/?limit=x&offset=-1', { token: who.token });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ limit: ['A valid integer is required.'], offset: ['Ensure this value is greater than or equal to 0.'] });
  });

  it('reads one campaign with its agent and group', async () => {
    const res = await app.request('GET', `/api/v1/campaigns/${ids[0]}/`, { token: who.token });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: ids[0], name: 'First', user_agents: { id: who.agent.id }, contact_groups: { id: who.groupId } });
    expectMatchesOpenApi('/api/v1/campaigns/{id}/', 'get', 200, res.json);
  });

  it('is 404 for another user’s campaign, an unknown id and a malformed one', async () => {
    const stranger = await app.token();
    for (const path of [`/api/v1/campaigns/${ids[0]}/`, `/api/v1/campaigns/${randomUUID()}/`, '/api/v1/campaigns/nope/']) {
      const res = await app.request('GET', path, { token: stranger });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: 'Not found.' });
    }
    expect((await app.request('GET', '/api/v1/campaigns/', { token: stranger })).json).toEqual([]);
  });
});

describe('POST /api/v1/campaigns/{id}/dispatch/', () => {
  const status = async (id: string) => app.prisma.campaign.findUniqueOrThrow({ where: { id } });

  it('starts a draft: 202, running, contacts enrolled, the dialer woken', async () => {
    const who = await customer(app, { contacts: 3 });
    await app.request('PATCH', `/api/v1/contacts/groups/${who.groupId}/`, { token: who.token, body: { phone_number: 'not a number' } });
    // Callable at any hour, so that the first call is due now whenever the test runs.
    const campaign = await createCampaign(app, who, {
      calling_hours: { start: '00:00', end: '24:00' },
      active_days: ALL_DAYS,
      regional_rules: false,
    });
    const res = await dispatch(app, who.token, campaign.id);
    expect(res.status).toBe(202);
    expect(res.json).toEqual({
      success: true,
      campaign_id: campaign.id,
      triggered_by: 'tests',
      status: 'running',
      scheduled: false,
      calling_begins_at: res.json.calling_begins_at,
      detail: 'The campaign is running.',
    });
    expectMatchesOpenApi('/api/v1/campaigns/{id}/dispatch/', 'post', 202, res.json);
    expect(Math.abs(Date.parse(res.json.calling_begins_at) - Date.now())).toBeLessThan(60_000);
    const stored = await status(campaign.id);
    expect(stored).toMatchObject({ status: 'running', pausedReason: null });
    expect(stored.startedAt).toBeInstanceOf(Date);
    const enrolled = await app.prisma.campaignContact.findMany({ where: { campaignId: campaign.id } });
    expect(enrolled.map((e) => [e.state, e.outcome]).sort()).toEqual([
      ['done', 'invalid'],
      ['pending', null],
      ['pending', null],
      ['pending', null],
    ]);
    expect(woken).toContain(campaign.id);
  });

  it('defaults triggered_by to "api" and refuses a blank one', async () => {
    const who = await customer(app);
    const campaign = await createCampaign(app, who);
    const blank = await dispatch(app, who.token, campaign.id, { triggered_by: ' ' });
    expect(blank.status).toBe(400);
    expect(blank.json).toEqual({ triggered_by: ['This field may not be blank.'] });
    const res = await app.request('POST', `/api/v1/campaigns/${campaign.id}/dispatch/`, { token: who.token });
    expect(res.status).toBe(202);
    expect(res.json.triggered_by).toBe('api');
  });

  it('is a success that changes nothing on a running campaign', async () => {
    const who = await customer(app);
    const campaign = await createCampaign(app, who);
    await dispatch(app, who.token, campaign.id);
    const before = await status(campaign.id);
    const wakes = woken.length;
    const res = await dispatch(app, who.token, campaign.id);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ success: true, status: 'running', scheduled: false });
    expect(res.json.detail).toMatch(/^The campaign was already running; this dispatch changed nothing\./);
    expect(await status(campaign.id)).toEqual(before);
    expect(woken.length).toBe(wakes);
  });

  it('schedules a draft whose started_at is ahead, and starts it once the time has come', async () => {
    const who = await customer(app);
    const startedAt = future();
    const campaign = await createCampaign(app, who, { started_at: startedAt });
    const res = await dispatch(app, who.token, campaign.id);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ success: true, status: 'scheduled', scheduled: true });
    expect(await status(campaign.id)).toMatchObject({ status: 'scheduled', startedAt: new Date(startedAt) });
    expect(await app.prisma.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(0);

    // Dispatching again before the time keeps it scheduled.
    expect((await dispatch(app, who.token, campaign.id)).json).toMatchObject({ status: 'scheduled', scheduled: true });

    // Once started_at has passed (the dialer would have started it), dispatch starts it now.
    await forceStatus(app, campaign.id, 'scheduled', { startedAt: new Date(Date.now() - 60_000) });
    const started = await dispatch(app, who.token, campaign.id);
    expect(started.json).toMatchObject({ status: 'running', scheduled: false });
    expect((await status(campaign.id)).startedAt!.getTime()).toBeGreaterThan(Date.now() - 10_000);
  });

  it('resumes a paused campaign, keeping its start and enrolling contacts added since', async () => {
    const who = await customer(app);
    const campaign = await createCampaign(app, who);
    await dispatch(app, who.token, campaign.id);
    const { startedAt } = await status(campaign.id);
    await forceStatus(app, campaign.id, 'paused', { pausedReason: 'user_requested' });
    await app.request('PATCH', `/api/v1/contacts/groups/${who.groupId}/`, { token: who.token, body: { phone_number: '+14155559876' } });
    const res = await dispatch(app, who.token, campaign.id);
    expect(res.json).toMatchObject({ success: true, status: 'running' });
    expect(await status(campaign.id)).toMatchObject({ status: 'running', pausedReason: null, startedAt });
    expect(await app.prisma.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(3);
  });

  it('still succeeds when the dialer cannot be woken (its sweep finds the campaign)', async () => {
    const who = await customer(app);
    const campaign = await createCampaign(app, who);
    wakeFails = true;
    try {
      const res = await dispatch(app, who.token, campaign.id);
      expect(res.status).toBe(202);
    } finally {
      wakeFails = false;
    }
    expect((await status(campaign.id)).status).toBe('running');
  });

  async function expectRefusal(who: Customer, id: string, reason: string) {
    const before = await status(id);
    const enrolled = await app.prisma.campaignContact.count({ where: { campaignId: id } });
    const res = await dispatch(app, who.token, id);
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ success: false, campaign_id: id, triggered_by: 'tests', reason, detail: expect.any(String) });
    expectMatchesOpenApi('/api/v1/campaigns/{id}/dispatch/', 'post', 409, res.json);
    expect(await status(id)).toEqual(before);
    expect(await app.prisma.campaignContact.count({ where: { campaignId: id } })).toBe(enrolled);
    return res.json.detail as string;
  }

  it('refuses a completed or cancelled campaign', async () => {
    const who = await customer(app);
    const done = await createCampaign(app, who);
    await forceStatus(app, done.id, 'completed');
    expect(await expectRefusal(who, done.id, 'campaign_completed')).toBe('This campaign is completed. It cannot be dispatched again.');
    const cancelled = await createCampaign(app, who);
    await forceStatus(app, cancelled.id, 'cancelled');
    await expectRefusal(who, cancelled.id, 'campaign_cancelled');
  });

  it('refuses an archived agent', async () => {
    const who = await customer(app);
    const campaign = await createCampaign(app, who);
    await app.request('DELETE', `/api/v1/agents/${who.agent.id}/`, { token: who.token });
    expect(await expectRefusal(who, campaign.id, 'agent_inactive')).toContain('archived');
  });

  it('refuses an agent without a phone number', async () => {
    const who = await customer(app);
    const campaign = await createCampaign(app, who);
    await app.prisma.phoneNumber.updateMany({ where: { agentId: who.agent.id }, data: { agentId: null } });
    await expectRefusal(who, campaign.id, 'agent_has_no_phone_number');
  });

  it('refuses a group with nobody left to call', async () => {
    const who = await customer(app, { contacts: 1 });
    const campaign = await createCampaign(app, who);
    const [contact] = await app.prisma.contact.findMany({ where: { groupId: who.groupId } });
    await app.gql('mutation($id: UUID!) { updateContact(id: $id, input: { status: do_not_call }) { id } }', { id: contact!.id }, who.token);
    await expectRefusal(who, campaign.id, 'no_callable_contacts');

    const empty = await importGroup(app, who.token, [{ Phone: 'nobody' }], 'Only junk');
    const other = await createCampaign(app, who, { contact_group_id: empty });
    await expectRefusal(who, other.id, 'no_callable_contacts');
  });

  it('refuses a paused campaign whose contacts are all done', async () => {
    const who = await customer(app, { contacts: 1 });
    const campaign = await createCampaign(app, who);
    await dispatch(app, who.token, campaign.id);
    await app.prisma.campaignContact.updateMany({ where: { campaignId: campaign.id }, data: { state: 'done', outcome: 'reached' } });
    await forceStatus(app, campaign.id, 'paused', { pausedReason: 'user_requested' });
    await expectRefusal(who, campaign.id, 'no_callable_contacts');
  });

  it('refuses when the balance cannot hold one call, and resumes once credits are back', async () => {
    // A call holds five minutes at 10 cents a minute: 50 cents. One minute's worth is not enough.
    const who = await customer(app, { credits: 49 });
    const campaign = await createCampaign(app, who);
    expect(await expectRefusal(who, campaign.id, 'insufficient_credits')).toBe(
      'Insufficient credits: dispatch needs 50 cents, what one call holds while it is in flight (5 minutes at 10 cents/min), and 49 cents are available.',
    );

    const broke = await customer(app, { credits: 0 });
    const scheduled = await createCampaign(app, broke, { started_at: future() });
    await expectRefusal(broke, scheduled.id, 'insufficient_credits');

    // The dialer paused a running campaign when a hold was refused; dispatch resumes it once paid.
    await grant(app, who.id, 1);
    await dispatch(app, who.token, campaign.id);
    await forceStatus(app, campaign.id, 'paused', { pausedReason: 'insufficient_credits' });
    await app.prisma.creditAccount.update({ where: { userId: who.id }, data: { heldCents: 5n } });
    await expectRefusal(who, campaign.id, 'insufficient_credits');
    await grant(app, who.id, 100);
    const res = await dispatch(app, who.token, campaign.id);
    expect(res.json).toMatchObject({ success: true, status: 'running' });
    expect(await status(campaign.id)).toMatchObject({ status: 'running', pausedReason: null });
  });

  it('is 404 for another user’s campaign and changes nothing', async () => {
    const who = await customer(app);
    const campaign = await createCampaign(app, who);
    const res = await dispatch(app, await app.token(), campaign.id);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ detail: 'Not found.' });
    expect((await status(campaign.id)).status).toBe('draft');
  });
});

describe('dispatch racing other writes (real concurrency on PostgreSQL)', () => {
  it('never answers 500 when the group is deleted while the campaign is dispatched', async () => {
    for (let i = 0; i < 4; i += 1) {
      const who = await customer(app);
      const campaign = await createCampaign(app, who);
      const [dispatched, deleted] = await Promise.all([
        dispatch(app, who.token, campaign.id),
        app.request('DELETE', `/api/v1/contacts/groups/${who.groupId}/`, { token: who.token }),
      ]);
      // Either the dispatch went first (running, so the group stays) or the delete did (draft gone too).
      const outcome = [dispatched.status, deleted.status];
      expect(
        [
          [202, 409],
          [404, 204],
        ],
        JSON.stringify(outcome),
      ).toContainEqual(outcome);
      const stored = await app.prisma.campaign.findUnique({ where: { id: campaign.id } });
      expect(stored?.status ?? 'deleted').toBe(deleted.status === 204 ? 'deleted' : 'running');
    }
  });

  it('starts a campaign once when it is dispatched twice at the same moment', async () => {
    const who = await customer(app, { contacts: 3 });
    const campaign = await createCampaign(app, who);
    const results = await Promise.all([1, 2, 3].map(() => dispatch(app, who.token, campaign.id)));
    expect(results.map((r) => r.status)).toEqual([202, 202, 202]);
    expect(await app.prisma.campaignContact.count({ where: { campaignId: campaign.id } })).toBe(3);
  });
});

describe('the OpenAPI document', () => {
  it('describes the four campaign operations', () => {
    expect(openapi.paths['/api/v1/contacts/contacts/'].post.responses['201']).toBeDefined();
    expect(openapi.paths['/api/v1/campaigns/'].get.parameters.map((p: any) => [p.name, p.required])).toEqual([
      ['limit', false],
      ['offset', false],
    ]);
    expect(openapi.paths['/api/v1/campaigns/{id}/'].get.responses['200']).toBeDefined();
    expect(openapi.paths['/api/v1/campaigns/{id}/dispatch/'].post.responses['409']).toBeDefined();
    expect(openapi.components.schemas.Campaign.required).toEqual(expect.arrayContaining(CAMPAIGN_FIELDS));
    // Written out under its operation, not as a component: see src/rest/openapi.ts.
    const request = openapi.paths['/api/v1/contacts/contacts/'].post.requestBody.content['application/json'].schema;
    expect(request.required).toEqual(['name', 'agent_id', 'contact_group_id']);
    expect(request.properties.concurrent_calls).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000 });
    expect(request.properties.contact_group_total).toMatchObject({ type: 'integer', format: 'int64' });
    expect(request.properties.name.maxLength).toBe(255);
    expect(request.properties.timezone.maxLength).toBe(64);
    expect(request.properties.agent_phone_number.maxLength).toBe(64);
    expect(request.properties.completed_at.readOnly).toBe(true);
  });
});
