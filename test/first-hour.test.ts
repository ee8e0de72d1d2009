import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, dispatch } from './support/campaigns.js';
import { dialerEnv, ManualClock, recordingDialer } from './support/dialer.js';
import { defaultSettings } from '../src/services/settings.js';
import { openApiChecker, type OpenApiChecker } from './support/openapi.js';

// What a newcomer meets in the first hour: the API root the start banner links to, and a dispatch that
// says when calling begins instead of saying nothing for hours.

let app: TestApp;
let openapi: OpenApiChecker;
// Tuesday 10 March 2026, 05:00 UTC: 22:00 on Monday in California (PDT since 8 March), where the
// fixtures' +1 415 numbers are.
const clock = new ManualClock(new Date('2026-03-10T05:00:00Z'));
const ALL_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

beforeAll(async () => {
  app = await startTestApp({ clock });
  openapi = await openApiChecker(app);
});
afterAll(() => app.close());

describe('GET /api/v1/', () => {
  it('links every v1 endpoint, the docs, the OpenAPI document and GraphQL, without a token', async () => {
    const res = await app.request('GET', '/api/v1/');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      docs: `${app.url}/api/v1/docs/`,
      schema: `${app.url}/api/v1/schema/`,
      graphql: `${app.url}/graphql`,
    });
    const endpoints = res.json.endpoints as { method: string; path: string; summary: string; url?: string }[];
    const openapi = (await app.request('GET', '/api/v1/schema/')).json as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(openapi.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(endpoints.map((e) => `${e.method} ${e.path}`).sort()).toEqual(documented.sort());
    expect(endpoints).toContainEqual(
      expect.objectContaining({ method: 'GET', path: '/api/v1/campaigns/', url: `${app.url}/api/v1/campaigns/` }),
    );
    // A path with a parameter is a template, not a link.
    expect(endpoints.find((e) => e.path === '/api/v1/campaigns/{id}/')).not.toHaveProperty('url');
    // Every link it gives answers (with a token where the endpoint needs one), none is a 404.
    const token = await app.token();
    for (const e of endpoints.filter((e) => e.url && e.method === 'GET')) {
      const answer = await fetch(e.url!, { headers: { authorization: `Bearer ${token}` } });
      expect(answer.status, e.path).toBe(200);
    }
  });

  it('is a page of links for a browser', async () => {
    const res = await app.request('GET', '/api/v1/', { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<a href="${app.url}/api/v1/docs/">`);
    expect(res.text).toContain(`<a href="${app.url}/api/v1/campaigns/">/api/v1/campaigns/</a>`);
  });
});

describe('dispatch says when calling begins', () => {
  const DISPATCHED = `
    mutation($id: UUID!) { dispatchCampaign(id: $id) { status callingBeginsAt detail campaign { callingBeginsAt } } }`;

  it('outside the calling hours: at the next opening in the callee’s zone, on both surfaces', async () => {
    clock.set('2026-03-10T05:00:00Z');
    const who = await customer(app, { contacts: 3 });
    const campaign = await createCampaign(app, who, {
      timezone: 'America/Los_Angeles',
      calling_hours: { start: '09:00', end: '17:00' },
    });
    const res = await dispatch(app, who.token, campaign.id);
    expect(res.status).toBe(202);
    // 09:00 PDT on Tuesday.
    expect(res.json).toMatchObject({ status: 'running', calling_begins_at: '2026-03-10T16:00:00.000Z' });
    expect(res.json.detail).toBe(
      "The campaign is running. Calling begins at Tue 10 Mar 2026 09:00 America/Los_Angeles (2026-03-10T16:00:00.000Z): the campaign's calling hours (09:00-17:00, Monday to Friday, America/Los_Angeles time) allow no call before then.",
    );
    openapi.expectMatches('/api/v1/campaigns/{id}/dispatch/', 'post', 202, res.json);
    const read = await app.gql('query($id: UUID!) { campaign(id: $id) { callingBeginsAt } }', { id: campaign.id }, who.token);
    expect(read.data.campaign.callingBeginsAt).toBe('2026-03-10T16:00:00.000Z');
  });

  it('when the campaign’s hours are open but the law’s are not: at 08:00 in the callee’s zone', async () => {
    // 05:30 in California: the campaign would call from 05:00, the federal rule from 08:00.
    clock.set('2026-03-10T12:30:00Z');
    const who = await customer(app, { contacts: 2 });
    const campaign = await createCampaign(app, who, {
      timezone: 'America/Los_Angeles',
      calling_hours: { start: '05:00', end: '23:00' },
    });
    const result = await app.gql(DISPATCHED, { id: campaign.id }, who.token);
    expect(result.errors).toBeUndefined();
    expect(result.data.dispatchCampaign).toMatchObject({
      status: 'running',
      callingBeginsAt: '2026-03-10T15:00:00.000Z',
      campaign: { callingBeginsAt: '2026-03-10T15:00:00.000Z' },
    });
    expect(result.data.dispatchCampaign.detail).toContain(
      'Calling begins at Tue 10 Mar 2026 08:00 America/Los_Angeles (2026-03-10T15:00:00.000Z): the regional calling rules of US-CA (the legal calling hours) allow no call before then.',
    );
  });

  it('inside the hours: now, and the detail says no more than that it runs', async () => {
    clock.set('2026-03-10T18:00:00Z');
    const who = await customer(app, { contacts: 2 });
    const campaign = await createCampaign(app, who, { timezone: 'America/Los_Angeles' });
    const res = await dispatch(app, who.token, campaign.id);
    expect(res.json).toMatchObject({ detail: 'The campaign is running.', calling_begins_at: '2026-03-10T18:00:00.000Z' });
  });

  it('a scheduled start: calling begins at the start when the hours allow it, later when they do not', async () => {
    clock.set('2026-03-10T18:00:00Z');
    const who = await customer(app, { contacts: 2 });
    const atNoon = await createCampaign(app, who, {
      timezone: 'America/Los_Angeles',
      status: 'scheduled',
      started_at: '2026-03-11T19:00:00.000Z',
    });
    const res = await dispatch(app, who.token, atNoon.id);
    expect(res.json).toMatchObject({
      status: 'scheduled',
      calling_begins_at: '2026-03-11T19:00:00.000Z',
      detail: 'The campaign will start at its started_at.',
    });
    const atNight = await createCampaign(app, who, {
      timezone: 'America/Los_Angeles',
      calling_hours: { start: '09:00', end: '17:00' },
      status: 'scheduled',
      started_at: '2026-03-12T06:00:00.000Z',
    });
    const late = await dispatch(app, who.token, atNight.id);
    expect(late.json).toMatchObject({ status: 'scheduled', calling_begins_at: '2026-03-12T16:00:00.000Z' });
    expect(late.json.detail).toMatch(/^The campaign will start at its started_at\. Calling begins at Thu 12 Mar 2026 09:00/);
  });

  it('a retry: names the contact and its retry policy, on a campaign that calls at any hour', async () => {
    clock.set('2026-03-10T18:00:00Z');
    const who = await customer(app, { contacts: 2 });
    const campaign = await createCampaign(app, who, { calling_hours: { start: '00:00', end: '24:00' }, active_days: ALL_DAYS });
    expect((await dispatch(app, who.token, campaign.id)).json.detail).toBe('The campaign is running.');
    // The dialer calls both; nobody answers, so each is due again after the 60-minute retry interval.
    const env = { ...dialerEnv(app, clock), settings: defaultSettings };
    const dialer = recordingDialer(env, () => ({ outcome: 'no_answer', durationSeconds: 0 }));
    await dialer.run(campaign.id);
    expect(dialer.telephony.placed).toHaveLength(2);
    clock.set('2026-03-10T18:05:00Z');
    await app.gql('mutation($id: UUID!) { pauseCampaign(id: $id) { id } }', { id: campaign.id }, who.token);
    const [first] = await app.prisma.campaignContact.findMany({
      where: { campaignId: campaign.id },
      include: { contact: true },
      orderBy: { contactId: 'asc' },
    });

    const resumed = await dispatch(app, who.token, campaign.id);
    expect(resumed.json).toMatchObject({ status: 'running', calling_begins_at: '2026-03-10T19:00:00.000Z' });
    expect(resumed.json.detail).toBe(
      'The campaign is running. Calling begins at Tue 10 Mar 2026 19:00 UTC (2026-03-10T19:00:00.000Z): ' +
        `the campaign's retry policy holds contact ${first!.contactId} (${first!.contact.phoneNumber}) until Tue 10 Mar 2026 19:00 UTC, ` +
        'after its attempt 1 (at Tue 10 Mar 2026 18:00 UTC).',
    );

    // Dispatched again: a success that says it changed nothing, and still why the calls wait.
    const again = await dispatch(app, who.token, campaign.id);
    expect(again.json).toMatchObject({ success: true, status: 'running', calling_begins_at: '2026-03-10T19:00:00.000Z' });
    expect(again.json.detail).toMatch(
      /^The campaign was already running; this dispatch changed nothing\. Calling begins at Tue 10 Mar 2026 19:00 UTC \(2026-03-10T19:00:00\.000Z\): the campaign's retry policy holds contact /,
    );
    openapi.expectMatches('/api/v1/campaigns/{id}/dispatch/', 'post', 202, again.json);
    const graphql = await app.gql(
      'mutation($id: UUID!) { dispatchCampaign(id: $id) { success status alreadyRunning detail } }',
      { id: campaign.id },
      who.token,
    );
    expect(graphql.data.dispatchCampaign).toMatchObject({
      success: true,
      status: 'running',
      alreadyRunning: true,
      detail: again.json.detail,
    });
  });

  it('a callback the callee asked for: names the contact and the time asked', async () => {
    clock.set('2026-03-10T18:00:00Z');
    const who = await customer(app, { contacts: 1 });
    const campaign = await createCampaign(app, who, { calling_hours: { start: '00:00', end: '24:00' }, active_days: ALL_DAYS });
    const started = await app.gql(
      'mutation($id: UUID!) { dispatchCampaign(id: $id) { alreadyRunning detail } }',
      { id: campaign.id },
      who.token,
    );
    expect(started.data.dispatchCampaign).toEqual({ alreadyRunning: false, detail: 'The campaign is running.' });
    const callbackAt = new Date('2026-03-10T21:30:00Z');
    const env = { ...dialerEnv(app, clock), settings: defaultSettings };
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30, callbackAt }));
    await dialer.run(campaign.id);
    const [contact] = await app.prisma.contact.findMany({ where: { groupId: who.groupId } });

    const res = await dispatch(app, who.token, campaign.id);
    expect(res.json.detail).toBe(
      'The campaign was already running; this dispatch changed nothing. Calling begins at Tue 10 Mar 2026 21:30 UTC (2026-03-10T21:30:00.000Z): ' +
        `contact ${contact!.id} (${contact!.phoneNumber}) asked to be called back at Tue 10 Mar 2026 21:30 UTC.`,
    );
  });

  it('nothing at all for a campaign that is not under way', async () => {
    const who = await customer(app, { contacts: 1 });
    const campaign = await createCampaign(app, who);
    const read = await app.gql('query($id: UUID!) { campaign(id: $id) { status callingBeginsAt } }', { id: campaign.id }, who.token);
    expect(read.data.campaign).toEqual({ status: 'draft', callingBeginsAt: null });
  });
});
