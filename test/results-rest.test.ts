import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { openApiChecker, type OpenApiChecker } from './support/openapi.js';
import { at, seedResults, SPRING, SPRING_METRICS, type Results } from './support/results.js';

// The v1 results endpoints (contract 2.1, 2.6, 2.7; endpoints 1, 11, 12, 13) over a campaign whose
// every figure is known, field by field and against the OpenAPI document the server publishes.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const CALL_FIELDS = [
  'id',
  'contactId',
  'campaignId',
  'contactName',
  'phoneNumber',
  'campaignName',
  'callStatus',
  'durationSeconds',
  'summary',
  'sentiment',
  'createdAt',
];
const REPORT_FIELDS = [
  'campaign',
  'metrics',
  'recentSuccessfulCalls',
  'contactOutcomes',
  'totalContactOutcomes',
  'hasMoreContactOutcomes',
  'limit',
  'offset',
];
const APPOINTMENT_FIELDS = [
  'id',
  'status',
  'contact_id',
  'campaign_id',
  'scheduled_at',
  'timezone',
  'contacts',
  'appointment_data',
  'created_at',
];

let app: TestApp;
let openapi: any;
let checker: OpenApiChecker;
let token: string;
let mine: Results;
let theirs: Results;

beforeAll(async () => {
  app = await startTestApp();
  checker = await openApiChecker(app);
  openapi = checker.document;
  const owner = randomUUID();
  token = await app.token(owner);
  mine = await seedResults(app, owner);
  theirs = await seedResults(app, randomUUID());
});
afterAll(() => app.close());

const expectMatchesOpenApi = (path: string, status: number, body: unknown) => checker.expectMatches(path, 'get', status, body);

function expectCallShape(item: any) {
  expect(Object.keys(item).sort()).toEqual([...CALL_FIELDS].sort());
  for (const key of ['id', 'contactId', 'campaignId']) expect(item[key]).toMatch(UUID);
  for (const key of ['contactName', 'phoneNumber', 'campaignName', 'callStatus', 'summary', 'sentiment']) {
    expect(typeof item[key]).toBe('string');
  }
  expect(Number.isInteger(item.durationSeconds)).toBe(true);
  expect(item.createdAt).toMatch(ISO);
}

const get = (path: string, as = token) => app.request('GET', path, { token: as });

describe('GET /api/v1/campaigns/recordings/', () => {
  it('lists the caller’s calls across campaigns, newest first, in the 2.6 shape', async () => {
    const res = await get('/api/v1/campaigns/recordings/');
    expect(res.status).toBe(200);
    res.json.forEach(expectCallShape);
    const ownIds = [...mine.spring.attempts, ...mine.autumn.attempts]
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .map((a) => a.id);
    expect(res.json.map((c: any) => c.id)).toEqual(ownIds);
    expect(res.json[0]).toEqual({
      id: mine.radiaCall.id,
      contactId: mine.radiaCall.contactId,
      campaignId: mine.autumn.campaign.id,
      contactName: 'Radia Perlman',
      phoneNumber: '+14155550109',
      campaignName: 'Autumn check-up',
      callStatus: 'completed',
      durationSeconds: 45,
      summary: 'Confirmed',
      sentiment: 'positive',
      createdAt: at(200).toISOString(),
    });
    // A call that never connected: no duration and no summary, as 0 and "".
    const busy = res.json.find((c: any) => c.callStatus === 'busy');
    expect(busy).toMatchObject({ contactName: 'Alan Turing', durationSeconds: 0, summary: '', sentiment: 'unknown' });
    expectMatchesOpenApi('/api/v1/campaigns/recordings/', 200, res.json);
  });

  it('pages with limit and offset, and answers [] past the end', async () => {
    const all = (await get('/api/v1/campaigns/recordings/')).json.map((c: any) => c.id);
    expect((await get('/api/v1/campaigns/recordings/?limit=3&offset=2')).json.map((c: any) => c.id)).toEqual(all.slice(2, 5));
    expect((await get('/api/v1/campaigns/recordings/?limit=5&offset=7')).json.map((c: any) => c.id)).toEqual(all.slice(7));
    expect((await get('/api/v1/campaigns/recordings/?offset=9')).json).toEqual([]);
    expect((await get('/api/v1/campaigns/recordings/?offset=9007199254740991')).json).toEqual([]);
    expect((await get('/api/v1/campaigns/recordings/?offset=99999999999999999999')).json).toEqual({
      offset: ['Ensure this value is less than or equal to 9007199254740991.'],
    });
  });

  it('refuses bad limit and offset values with field errors', async () => {
    expect((await get('/api/v1/campaigns/recordings/?limit=abc')).json).toEqual({ limit: ['A valid integer is required.'] });
    expect((await get('/api/v1/campaigns/recordings/?limit=0')).json).toEqual({
      limit: ['Ensure this value is greater than or equal to 1.'],
    });
    const both = await get('/api/v1/campaigns/recordings/?limit=1.5&offset=-1');
    expect(both.status).toBe(400);
    expect(both.json).toEqual({
      limit: ['A valid integer is required.'],
      offset: ['Ensure this value is greater than or equal to 0.'],
    });
  });

  it('is empty for a user without calls', async () => {
    const res = await get('/api/v1/campaigns/recordings/', await app.token());
    expect(res.status).toBe(200);
    expect(res.json).toEqual([]);
  });
});

describe('GET /api/v1/campaigns/contact-attempts/{id}/', () => {
  it('returns one attempt in the 2.6 shape, the same item as in the history', async () => {
    const res = await get(`/api/v1/campaigns/contact-attempts/${mine.adaCall.id}/`);
    expect(res.status).toBe(200);
    expectCallShape(res.json);
    expect(res.json).toEqual({
      id: mine.adaCall.id,
      contactId: mine.spring.contacts[0]!.id,
      campaignId: mine.spring.campaign.id,
      contactName: 'Ada Lovelace',
      phoneNumber: '+14155550101',
      campaignName: 'Spring recall',
      callStatus: 'completed',
      durationSeconds: 120,
      summary: 'Booked a cleaning',
      sentiment: 'positive',
      createdAt: at(60).toISOString(),
    });
    const history = (await get('/api/v1/campaigns/recordings/')).json;
    expect(history.find((c: any) => c.id === mine.adaCall.id)).toEqual(res.json);
    expectMatchesOpenApi('/api/v1/campaigns/contact-attempts/{id}/', 200, res.json);
  });

  it('is 404 for another user’s attempt, an unknown id and a malformed one', async () => {
    for (const id of [theirs.adaCall.id, randomUUID(), 'not-a-uuid']) {
      const res = await get(`/api/v1/campaigns/contact-attempts/${id}/`);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: 'Not found.' });
    }
  });
});

describe('GET /api/v1/campaigns/{id}/report/', () => {
  const reportPath = (id: string, query = '') => `/api/v1/campaigns/${id}/report/${query}`;

  it('gives the exact metrics, campaign and latest completed calls of a known campaign', async () => {
    const res = await get(reportPath(mine.spring.campaign.id));
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual([...REPORT_FIELDS].sort());
    expect(res.json.metrics).toEqual(SPRING_METRICS);
    expect(res.json.campaign).toEqual({
      id: mine.spring.campaign.id,
      name: 'Spring recall',
      description: '',
      status: 'running',
      pausedReason: null,
      agentId: mine.spring.agent.id,
      contactGroupId: mine.spring.group.id,
      startedAt: at(0).toISOString(),
      completedAt: null,
      createdAt: mine.spring.campaign.createdAt.toISOString(),
      updatedAt: mine.spring.campaign.updatedAt.toISOString(),
    });
    // Ada's call (minute 60) is newer than Edsger's (minute 3); Autumn's call is another campaign's.
    expect(res.json.recentSuccessfulCalls.map((c: any) => c.id)).toEqual([mine.adaCall.id, mine.edsgerCall.id]);
    res.json.recentSuccessfulCalls.forEach(expectCallShape);
    expect(res.json.recentSuccessfulCalls[1]).toMatchObject({
      contactName: 'Edsger Dijkstra',
      campaignName: 'Spring recall',
      durationSeconds: 60,
    });
    expect(res.json).toMatchObject({ totalContactOutcomes: 8, hasMoreContactOutcomes: false, limit: 50, offset: 0 });
    expectMatchesOpenApi('/api/v1/campaigns/{id}/report/', 200, res.json);
  });

  it('has one outcome per contact of the group, in group order, pending until final', async () => {
    const res = await get(reportPath(mine.spring.campaign.id));
    const contacts = mine.spring.contacts;
    expect(res.json.contactOutcomes).toEqual([
      {
        contactId: contacts[0]!.id,
        contactName: 'Ada Lovelace',
        phoneNumber: '+14155550101',
        contactStatus: 'active',
        attempts: 2,
        lastStatus: 'completed',
        lastCallAt: at(60).toISOString(),
        outcome: 'reached',
      },
      {
        contactId: contacts[1]!.id,
        contactName: 'Alan Turing',
        phoneNumber: '+14155550102',
        contactStatus: 'active',
        attempts: 3,
        lastStatus: 'no_answer',
        lastCallAt: at(121).toISOString(),
        outcome: 'not_reached',
      },
      {
        contactId: contacts[2]!.id,
        contactName: 'Grace Hopper',
        phoneNumber: '+14155550103',
        contactStatus: 'active',
        attempts: 1,
        lastStatus: 'failed',
        lastCallAt: at(2).toISOString(),
        outcome: 'pending',
      },
      {
        contactId: contacts[3]!.id,
        contactName: 'Katherine Johnson',
        phoneNumber: '+14155550104',
        contactStatus: 'active',
        attempts: 1,
        lastStatus: 'in_progress',
        lastCallAt: at(130).toISOString(),
        outcome: 'pending',
      },
      {
        contactId: contacts[4]!.id,
        contactName: 'Edsger Dijkstra',
        phoneNumber: '+14155550105',
        contactStatus: 'active',
        attempts: 1,
        lastStatus: 'completed',
        lastCallAt: at(3).toISOString(),
        outcome: 'reached',
      },
      {
        contactId: contacts[5]!.id,
        contactName: 'Barbara Liskov',
        phoneNumber: '+14155550106',
        contactStatus: 'do_not_call',
        attempts: 0,
        lastStatus: null,
        lastCallAt: null,
        outcome: 'do_not_call',
      },
      {
        contactId: contacts[6]!.id,
        contactName: 'Donald Knuth',
        phoneNumber: '12',
        contactStatus: 'invalid',
        attempts: 0,
        lastStatus: null,
        lastCallAt: null,
        outcome: 'pending',
      },
      {
        contactId: contacts[7]!.id,
        contactName: 'Frances Allen',
        phoneNumber: '+14155550108',
        contactStatus: 'active',
        attempts: 0,
        lastStatus: null,
        lastCallAt: null,
        outcome: 'pending',
      },
    ]);
  });

  it('pages the outcomes: first page, last page, and offsets at and past the end', async () => {
    const ids = mine.spring.contacts.map((c) => c.id);
    const page = async (query: string) => (await get(reportPath(mine.spring.campaign.id, query))).json;
    const outcomeIds = (report: any) => report.contactOutcomes.map((o: any) => o.contactId);

    const first = await page('?limit=3');
    expect(outcomeIds(first)).toEqual(ids.slice(0, 3));
    expect(first).toMatchObject({ totalContactOutcomes: 8, hasMoreContactOutcomes: true, limit: 3, offset: 0 });

    const middle = await page('?limit=3&offset=3');
    expect(outcomeIds(middle)).toEqual(ids.slice(3, 6));
    expect(middle.hasMoreContactOutcomes).toBe(true);

    const last = await page('?limit=3&offset=6');
    expect(outcomeIds(last)).toEqual(ids.slice(6));
    expect(last).toMatchObject({ hasMoreContactOutcomes: false, limit: 3, offset: 6 });

    const exact = await page('?limit=4&offset=4');
    expect(outcomeIds(exact)).toEqual(ids.slice(4));
    expect(exact.hasMoreContactOutcomes).toBe(false);

    for (const offset of [8, 100, Number.MAX_SAFE_INTEGER]) {
      const beyond = await page(`?offset=${offset}`);
      expect(beyond).toMatchObject({ contactOutcomes: [], totalContactOutcomes: 8, hasMoreContactOutcomes: false, offset });
      // Metrics do not depend on the page.
      expect(beyond.metrics).toEqual(SPRING_METRICS);
    }
    expect((await page('?limit=100000')).limit).toBe(500);
  });

  it('refuses bad limit and offset values with field errors', async () => {
    const id = mine.spring.campaign.id;
    expect((await get(reportPath(id, '?limit=ten'))).json).toEqual({ limit: ['A valid integer is required.'] });
    expect((await get(reportPath(id, '?limit=-5'))).json).toEqual({ limit: ['Ensure this value is greater than or equal to 1.'] });
    const res = await get(reportPath(id, '?offset=1e3x'));
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ offset: ['A valid integer is required.'] });
    expect((await get(reportPath(id, '?offset=99999999999999999999'))).status).toBe(400);
  });

  it('is all zeros and pending for a campaign nobody was called in yet', async () => {
    const fresh = await app.prisma.campaign.create({
      data: {
        userId: mine.spring.campaign.userId,
        agentId: mine.spring.agent.id,
        contactGroupId: mine.spring.group.id,
        name: 'Not started',
      },
    });
    const res = await get(reportPath(fresh.id));
    expect(res.status).toBe(200);
    expect(res.json.metrics).toEqual({
      contacts: { total: 8, callable: 6, attempted: 0, reached: 0, pending: 8 },
      calls: { total: 0, queued: 0, ringing: 0, inProgress: 0, completed: 0, noAnswer: 0, busy: 0, failed: 0, voicemail: 0, canceled: 0 },
      successRate: 0,
      averageDurationSeconds: 0,
      totalDurationSeconds: 0,
      totalCostCents: 0,
      appointmentsBooked: 0,
      sentiment: { positive: 0, neutral: 0, negative: 0, unknown: 0 },
      variants: [],
      variantComparison: null,
      callbacks: SPRING_METRICS.callbacks,
      outcomes: SPRING_METRICS.outcomes,
      blocked: SPRING_METRICS.blocked,
    });
    expect(res.json.recentSuccessfulCalls).toEqual([]);
    expect(res.json.contactOutcomes.map((o: any) => o.outcome)).toEqual(SPRING.map(() => 'pending'));
    await app.prisma.campaign.delete({ where: { id: fresh.id } });
  });

  it('is 404 for another user’s campaign, an unknown one and a malformed id', async () => {
    for (const id of [theirs.spring.campaign.id, randomUUID(), 'nope']) {
      const res = await get(reportPath(id));
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: 'Not found.' });
    }
  });
});

describe('GET /api/v1/appointments/', () => {
  it('lists the caller’s appointments newest first, in the 2.1 shape', async () => {
    const res = await get('/api/v1/appointments/');
    expect(res.status).toBe(200);
    expect(res.json.map((a: any) => a.id)).toEqual([mine.appointments.radia.id, mine.appointments.ada.id, mine.appointments.edsger.id]);
    for (const item of res.json) expect(Object.keys(item).sort()).toEqual([...APPOINTMENT_FIELDS].sort());
    expect(res.json[1]).toEqual({
      id: mine.appointments.ada.id,
      status: 'scheduled',
      contact_id: mine.spring.contacts[0]!.id,
      campaign_id: mine.spring.campaign.id,
      scheduled_at: '2026-10-10T15:00:00.000Z',
      timezone: 'America/New_York',
      contacts: { name: 'snapshot', phone_number: '+1415555' },
      appointment_data: { source_call_id: mine.adaCall.id, notes: 'Booked at minute 62' },
      created_at: at(62).toISOString(),
    });
    expectMatchesOpenApi('/api/v1/appointments/', 200, res.json);
  });

  it('keeps an appointment of an erased contact, naming its contact and campaign, with the snapshot gone', async () => {
    const owner = randomUUID();
    const ownerToken = await app.token(owner);
    const other = await seedResults(app, owner);
    const ada = other.spring.contacts[0]!.id;
    expect((await app.request('DELETE', `/api/v1/contacts/contacts/${ada}/`, { token: ownerToken })).status).toBe(204);
    const res = await get('/api/v1/appointments/', ownerToken);
    const byId = Object.fromEntries(res.json.map((a: any) => [a.id, a]));
    expect(byId[other.appointments.ada.id]).toMatchObject({
      contact_id: ada,
      campaign_id: other.spring.campaign.id,
      contacts: {},
      appointment_data: { source_call_id: other.adaCall.id },
    });
    expectMatchesOpenApi('/api/v1/appointments/', 200, res.json);
  });

  it('shows null ids for an appointment that names no contact or campaign', async () => {
    const owner = randomUUID();
    const other = await seedResults(app, owner);
    await app.prisma.appointment.update({ where: { id: other.appointments.radia.id }, data: { contactId: null, campaignId: null } });
    const res = await get('/api/v1/appointments/', await app.token(owner));
    const byId = Object.fromEntries(res.json.map((a: any) => [a.id, a]));
    expect(byId[other.appointments.radia.id]).toMatchObject({ contact_id: null, campaign_id: null });
    expectMatchesOpenApi('/api/v1/appointments/', 200, res.json);
  });

  it('pages with limit and offset, and refuses bad values with field errors', async () => {
    const all = (await get('/api/v1/appointments/')).json.map((a: any) => a.id);
    expect((await get('/api/v1/appointments/?limit=1&offset=1')).json.map((a: any) => a.id)).toEqual([all[1]]);
    expect((await get('/api/v1/appointments/?offset=3')).json).toEqual([]);
    expect((await get('/api/v1/appointments/?limit=x')).json).toEqual({ limit: ['A valid integer is required.'] });
    expect((await get('/api/v1/appointments/?offset=-2')).json).toEqual({ offset: ['Ensure this value is greater than or equal to 0.'] });
  });

  it('documents its optional paging in the OpenAPI document', () => {
    const parameters = openapi.paths['/api/v1/appointments/'].get.parameters;
    expect(parameters.map((p: any) => [p.name, p.required])).toEqual([
      ['limit', false],
      ['offset', false],
    ]);
    expect(parameters[0].description).toContain('default and most 500');
  });
});
