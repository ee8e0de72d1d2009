import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gate, type GateCampaign } from '../src/services/calling-rules/gate.js';
import { windowOf } from '../src/services/calling-rules/window.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

// The compliance gate before every dial: consents a campaign requires, the campaign's calling window and
// the regional rules of the callee's place, in the callee's local time. Every call it stops is recorded
// with its reason, on the contact (GraphQL) and counted in the report (both surfaces).

const allWeek = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const campaign = (over: Partial<GateCampaign> = {}): GateCampaign => ({
  timezone: 'UTC',
  window: windowOf({ start: '00:00', end: '24:00' }, allWeek),
  requiredConsent: [],
  regionalRules: true,
  ...over,
});
const callee = (phoneNumber: string, over: Partial<Parameters<typeof gate>[2]> = {}) => ({
  phoneNumber,
  timezone: null,
  region: null,
  consents: [],
  ...over,
});

describe('the gate', () => {
  it('skips a contact without a consent the campaign requires, for good', () => {
    const needs = campaign({ requiredConsent: ['calls', 'ai_calls'] });
    const at = new Date('2026-11-03T15:00:00Z');
    expect(gate(at, needs, callee('+12125550101', { consents: ['calls'] }))).toEqual({
      kind: 'blocked',
      reason: 'consent_missing',
      detail: 'ai_calls',
    });
    expect(gate(at, needs, callee('+12125550101', { consents: ['ai_calls', 'calls'] }))).toEqual({ kind: 'call' });
  });

  it('holds a call to the regional hours of the number, in its own zone, and says until when', () => {
    // 20:30 in New York and Miami on a Tuesday: federal law allows it, Florida's does not (20:00).
    const at = new Date('2026-11-04T01:30:00Z');
    expect(gate(at, campaign(), callee('+12125550101'))).toEqual({ kind: 'call' });
    expect(gate(at, campaign(), callee('+13055550102'))).toEqual({
      kind: 'later',
      reason: 'regional_hours',
      until: new Date('2026-11-04T13:00:00Z'),
      detail: 'US-FL',
    });
    // The contact's own region wins over its number's; turned off for the campaign, no regional rule applies.
    expect(gate(at, campaign(), callee('+12125550101', { region: 'US-FL' }))).toMatchObject({ kind: 'later', reason: 'regional_hours' });
    expect(gate(at, campaign({ regionalRules: false }), callee('+13055550102'))).toEqual({ kind: 'call' });
  });

  it('names the region whose rule held the call: the country’s for a callee whose state has no rule of its own', () => {
    // 22:00 in New York and Miami on a Tuesday: only the federal rule speaks for New York.
    const at = new Date('2026-11-04T03:00:00Z');
    expect(gate(at, campaign(), callee('+12125550101'))).toMatchObject({ kind: 'later', reason: 'regional_hours', detail: 'US' });
    expect(gate(at, campaign(), callee('+13055550102'))).toMatchObject({ kind: 'later', reason: 'regional_hours', detail: 'US-FL' });
    expect(gate(at, campaign(), callee('+13055550102', { region: 'US-NY' }))).toMatchObject({ detail: 'US' });
  });

  it('bars the days and holidays a state bars, and finds the next moment both the campaign and the law allow', () => {
    // Thanksgiving, 10:00 in Salt Lake City: Utah bars legal holidays; Friday 08:00 is the next moment.
    const thanksgiving = new Date('2026-11-26T17:00:00Z');
    expect(gate(thanksgiving, campaign(), callee('+18015550104'))).toEqual({
      kind: 'later',
      reason: 'holiday',
      until: new Date('2026-11-27T15:00:00Z'),
      detail: 'US-UT',
    });
    // The campaign calls 09:00 to 17:00 in its own zone (New York): Friday 08:00 in Utah is 10:00 there,
    // inside it.
    const officeHours = campaign({ timezone: 'America/New_York', window: windowOf({ start: '09:00', end: '17:00' }, allWeek) });
    expect(gate(thanksgiving, officeHours, callee('+18015550104'))).toMatchObject({ until: new Date('2026-11-27T15:00:00Z') });
    // A Sunday in Utah: barred; Monday 08:00 in Denver's zone.
    expect(gate(new Date('2026-11-08T18:00:00Z'), campaign(), callee('+18015550104'))).toMatchObject({
      reason: 'regional_day',
      until: new Date('2026-11-09T15:00:00Z'),
    });
  });

  it('keeps to the law across daylight-saving changes', () => {
    // 2026-03-08, the spring change: 07:30 EDT is too early, 08:00 EDT (12:00Z) the first moment.
    expect(gate(new Date('2026-03-08T11:30:00Z'), campaign(), callee('+12125550101'))).toMatchObject({
      until: new Date('2026-03-08T12:00:00Z'),
    });
    // 2026-11-01, the autumn change: 07:30 EST is too early, 08:00 EST (13:00Z) the first moment.
    expect(gate(new Date('2026-11-01T12:30:00Z'), campaign(), callee('+12125550101'))).toMatchObject({
      until: new Date('2026-11-01T13:00:00Z'),
    });
    expect(gate(new Date('2026-11-01T13:30:00Z'), campaign(), callee('+12125550101'))).toEqual({ kind: 'call' });
  });
});

describe('the gate, for the rules of Europe, the UK and the US gaps', () => {
  it('skips a French, German or Spanish callee without the consent their law requires, whatever the campaign asks', () => {
    const july = new Date('2026-07-15T09:00:00Z'); // Wednesday 11:00 in Paris
    const august = new Date('2026-08-12T09:00:00Z');
    expect(gate(july, campaign(), callee('+33144556677'))).toEqual({ kind: 'call' });
    expect(gate(august, campaign(), callee('+33144556677'))).toEqual({ kind: 'blocked', reason: 'consent_missing', detail: 'calls (FR)' });
    expect(gate(august, campaign(), callee('+33144556677', { consents: ['calls'] }))).toEqual({ kind: 'call' });
    expect(gate(july, campaign(), callee('+4930123456'))).toMatchObject({ kind: 'blocked', detail: 'calls (DE)' });
    expect(gate(july, campaign(), callee('+34912345678'))).toMatchObject({ kind: 'blocked', detail: 'calls (ES)' });
    // Off for the campaign (an informational call the person asked for), no regional rule applies.
    expect(gate(august, campaign({ regionalRules: false }), callee('+33144556677'))).toEqual({ kind: 'call' });
  });

  it('reads the law in the callee’s country, not the campaign’s zone', () => {
    // Saturday 23:00 in Paris, 17:00 for a campaign in Chicago: France allows no Saturday calls.
    const saturday = new Date('2026-11-07T22:00:00Z');
    const chicago = campaign({ timezone: 'America/Chicago' });
    expect(gate(saturday, chicago, callee('+33144556677', { consents: ['calls'] }))).toEqual({
      kind: 'later',
      reason: 'regional_day',
      until: new Date('2026-11-09T09:00:00Z'), // Monday 10:00 in Paris
      detail: 'FR',
    });
    expect(gate(new Date('2026-11-07T22:00:00Z'), chicago, callee('+442079460958'))).toMatchObject({
      reason: 'regional_hours',
      detail: 'GB',
    });
  });

  it('holds a number of an unknown area code to the federal rule in every US zone, or in its own state’s zones', () => {
    // 10:00 in New York: 05:00 in Honolulu.
    const at = new Date('2026-06-10T14:00:00Z');
    expect(gate(at, campaign(), callee('+13575550143'))).toMatchObject({ kind: 'later', reason: 'regional_hours', detail: 'US' });
    // Texas (09:00-21:00) spans Central and Mountain time: 10:00 in Chicago is 09:00 in Denver.
    expect(gate(new Date('2026-06-10T15:00:00Z'), campaign(), callee('+13575550143', { region: 'US-TX' }))).toEqual({ kind: 'call' });
    expect(gate(new Date('2026-06-10T14:30:00Z'), campaign(), callee('+13575550143', { region: 'US-TX' }))).toMatchObject({
      kind: 'later',
      until: new Date('2026-06-10T15:00:00Z'),
      detail: 'US-TX',
    });
  });

  it('waits 24 hours after an abandoned call to a UK number, then for the UK’s hours', () => {
    const abandoned = new Date('2026-11-04T18:30:00Z'); // Wednesday 18:30 in London
    expect(gate(new Date('2026-11-05T12:00:00Z'), campaign(), callee('+442079460958', { lastAbandonedAt: abandoned }))).toEqual({
      kind: 'later',
      reason: 'abandoned_recall',
      until: new Date('2026-11-05T18:30:00Z'),
      detail: 'GB',
    });
    // Abandoned at 21:30 on a Friday: 24 hours later is Saturday 21:30, past the hours; Sunday 09:00.
    expect(
      gate(new Date('2026-11-07T10:00:00Z'), campaign(), callee('+442079460958', { lastAbandonedAt: new Date('2026-11-06T20:59:00Z') })),
    ).toMatchObject({ reason: 'abandoned_recall', until: new Date('2026-11-07T20:59:00Z') });
    expect(
      gate(new Date('2026-11-07T10:00:00Z'), campaign(), callee('+442079460958', { lastAbandonedAt: new Date('2026-11-06T21:30:00Z') })),
    ).toMatchObject({ reason: 'abandoned_recall', until: new Date('2026-11-08T09:00:00Z') });
    expect(gate(new Date('2026-11-05T15:00:00Z'), campaign(), callee('+12125550101', { lastAbandonedAt: abandoned }))).toEqual({
      kind: 'call',
    });
  });
});

describe('a campaign behind the gate', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('calls only whom it may, when it may; records and counts every call it stopped', async () => {
    // Monday 2026-11-02 01:30Z: Sunday evening in the US (20:30 in New York).
    const clock = new ManualClock(new Date('2026-11-02T01:30:00Z'));
    const env = dialerEnv(app, clock);
    const people = {
      newYork: '+12125550101',
      miami: '+13055550102',
      austin: '+15125550103',
      saltLake: '+18015550104',
      sanFrancisco: '+14155550105',
      noConsent: '+12135550106',
      listed: '+16465550107',
      movedToFlorida: '+12125550108',
    };
    const setup = await runningCampaign(app, env, {
      rows: Object.values(people).map((Phone) => ({ Phone })),
      doNotCall: [people.listed],
      campaign: { regionalRules: true, requiredConsent: ['calls'] },
    });
    await app.prisma.$executeRaw`UPDATE contacts SET data = data || '{"region": "US-FL"}' WHERE phone_number = ${people.movedToFlorida}`;
    const contacts = new Map(
      (await app.prisma.contact.findMany({ where: { userId: setup.userId } })).map((c) => [c.phoneNumber!, c.id] as const),
    );
    for (const [name, number] of Object.entries(people)) {
      if (name === 'noConsent') continue;
      const { data, errors } = await app.gql(
        `mutation ($input: RecordConsentInput!) { recordConsent(input: $input) { id kind source revokedAt } }`,
        {
          input: {
            contactId: contacts.get(number),
            kind: 'calls',
            source: 'Web form',
            obtainedAt: '2026-10-01T12:00:00Z',
            proof: 'https://example.com/f/1',
          },
        },
        setup.token,
      );
      expect(errors).toBeUndefined();
      expect(data.recordConsent).toMatchObject({ kind: 'calls', source: 'Web form', revokedAt: null });
    }

    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    const called = () => run.telephony.placed.map((c) => c.to).sort();
    // Sunday 20:30 New York, 19:30 Austin (Texas allows Sundays from noon), 17:30 San Francisco.
    expect(called()).toEqual([people.newYork, people.sanFrancisco, people.austin].sort());

    clock.set('2026-11-02T13:00:00Z'); // Monday 08:00 in New York and Miami
    await run.run(setup.campaignId);
    expect(called()).toEqual([people.newYork, people.sanFrancisco, people.austin, people.miami, people.movedToFlorida].sort());
    clock.set('2026-11-02T15:00:00Z'); // Monday 08:00 in Salt Lake City
    await run.run(setup.campaignId);
    expect(called()).toHaveLength(6);
    expect(called()).toContain(people.saltLake);
    expect(called()).not.toContain(people.noConsent);
    expect(called()).not.toContain(people.listed);

    const blocks = await app.prisma.dialBlock.findMany({ where: { campaignId: setup.campaignId }, include: { contact: true } });
    const byNumber = Object.fromEntries(blocks.map((b) => [b.contact.phoneNumber, [b.reason, b.detail, b.until?.toISOString() ?? null]]));
    expect(byNumber).toEqual({
      [people.miami]: ['regional_hours', 'US-FL', '2026-11-02T13:00:00.000Z'],
      [people.movedToFlorida]: ['regional_hours', 'US-FL', '2026-11-02T13:00:00.000Z'],
      [people.saltLake]: ['regional_day', 'US-UT', '2026-11-02T15:00:00.000Z'],
      [people.noConsent]: ['consent_missing', 'calls', null],
      [people.listed]: ['do_not_call', '', null],
    });
    // Every block's id a UUIDv7, enrolment's (the listed number's) too: dial_blocks is partitioned by month on it.
    expect(blocks.filter((b) => b.id[14] !== '7').map((b) => b.reason)).toEqual([]);
    const outcomes = await app.prisma.campaignContact.findMany({ where: { campaignId: setup.campaignId }, include: { contact: true } });
    expect(Object.fromEntries(outcomes.map((o) => [o.contact.phoneNumber, o.outcome]))).toMatchObject({
      [people.noConsent]: 'consent_missing',
      [people.listed]: 'do_not_call',
      [people.miami]: 'reached',
    });

    const { data } = await app.gql(
      `query ($id: UUID!, $contact: UUID!) {
         campaign(id: $id) {
           report { metrics { blocked { total doNotCall consentMissing registry regionalHours regionalDay holiday frequencyCap consentRevoked abandonedRecall } } }
           dialBlocks(first: 10, contactId: $contact) { edges { node { reason detail until } } }
         }
         contact(id: $contact) { region consents { kind source } dialBlocks(first: 5) { edges { node { reason } } } }
       }`,
      { id: setup.campaignId, contact: contacts.get(people.movedToFlorida) },
      setup.token,
    );
    expect(data.campaign.report.metrics.blocked).toEqual({
      total: 5,
      doNotCall: 1,
      consentMissing: 1,
      registry: 0,
      regionalHours: 2,
      regionalDay: 1,
      holiday: 0,
      frequencyCap: 0,
      consentRevoked: 0,
      abandonedRecall: 0,
    });
    expect(data.campaign.dialBlocks.edges).toEqual([
      { node: { reason: 'regional_hours', detail: 'US-FL', until: '2026-11-02T13:00:00.000Z' } },
    ]);
    expect(data.contact).toEqual({
      region: 'US-FL',
      consents: [{ kind: 'calls', source: 'Web form' }],
      dialBlocks: { edges: [{ node: { reason: 'regional_hours' } }] },
    });
    const v1 = await app.request('GET', `/api/v1/campaigns/${setup.campaignId}/report/`, { token: setup.token });
    expect(v1.status).toBe(200);
    expect(v1.json.metrics.blocked).toEqual(data.campaign.report.metrics.blocked);
  });

  it('gives each contact the region whose rules apply: its own, else its number’s; a block names the rule’s', async () => {
    // Tuesday 2026-11-03 02:30Z: Monday 21:30 in New York, 20:30 in Austin.
    const clock = new ManualClock(new Date('2026-11-03T02:30:00Z'));
    const env = dialerEnv(app, clock);
    const people = { newYork: '+12125550201', austin: '+15125550202', london: '+442079460958', bad: '12345', tollFree: '+18005550203' };
    const setup = await runningCampaign(app, env, {
      rows: [...Object.values(people).map((Phone) => ({ Phone })), { Phone: '+13055550204', Region: 'us-ny' }],
      campaign: { regionalRules: true },
    });
    const REGIONS = `query ($group: UUID!) { contactGroup(id: $group) { contacts(first: 10) { edges { node { phoneNumber region } } } } }`;
    const { data, errors } = await app.gql(REGIONS, { group: setup.groupId }, setup.token);
    expect(errors).toBeUndefined();
    const regions = Object.fromEntries(
      data.contactGroup.contacts.edges.map((e: { node: { phoneNumber: string; region: string } }) => [e.node.phoneNumber, e.node.region]),
    );
    expect(regions).toEqual({
      [people.newYork]: 'US-NY',
      [people.austin]: 'US-TX',
      [people.london]: 'GB',
      [people.bad]: null,
      [people.tollFree]: null,
      '+13055550204': 'US-NY',
    });
    const one = await app.prisma.contact.findFirstOrThrow({ where: { userId: setup.userId, phoneNumber: people.newYork } });
    const single = await app.gql(`query ($id: UUID!) { contact(id: $id) { region } }`, { id: one.id }, setup.token);
    expect(single.data).toEqual({ contact: { region: 'US-NY' } });

    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    const blocks = await app.prisma.dialBlock.findMany({ where: { campaignId: setup.campaignId }, include: { contact: true } });
    // 02:30 in London: the UK's hours (08:00 on weekdays) hold the call too.
    expect(Object.fromEntries(blocks.map((b) => [b.contact.phoneNumber, [b.reason, b.detail]]))).toEqual({
      [people.newYork]: ['regional_hours', 'US'],
      [people.london]: ['regional_hours', 'GB'],
      '+13055550204': ['regional_hours', 'US'],
    });
  });

  it('counts a revoked consent as none, and keeps consents to their owner', async () => {
    const clock = new ManualClock(new Date('2026-11-03T16:00:00Z'));
    const env = dialerEnv(app, clock);
    const setup = await runningCampaign(app, env, { rows: [{ Phone: '+12125550201' }], campaign: { requiredConsent: ['ai_calls'] } });
    const contact = await app.prisma.contact.findFirstOrThrow({ where: { userId: setup.userId } });
    const record = (token: string, input: Record<string, unknown>) =>
      app.gql(`mutation ($input: RecordConsentInput!) { recordConsent(input: $input) { id } }`, { input }, token);
    const given = { contactId: contact.id, kind: 'ai_calls', source: 'Signed agreement', obtainedAt: '2026-10-01T00:00:00Z' };
    const { data } = await record(setup.token, given);

    const stranger = await app.token(crypto.randomUUID());
    expect((await record(stranger, given)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const revokeBy = (token: string) =>
      app.gql(`mutation ($id: UUID!) { revokeConsent(id: $id) { revokedAt } }`, { id: data.recordConsent.id }, token);
    expect((await revokeBy(stranger)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const future = await record(setup.token, { ...given, obtainedAt: '2030-01-01T00:00:00Z' });
    expect(future.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      fieldErrors: { obtainedAt: [expect.any(String)] },
    });
    const blank = await record(setup.token, { ...given, source: '   ' });
    expect(blank.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await app.prisma.contactConsent.count({ where: { contactId: contact.id } })).toBe(1);

    const revoked = await revokeBy(setup.token);
    expect(revoked.data.revokeConsent.revokedAt).toEqual(expect.any(String));
    const run = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    await run.run(setup.campaignId);
    expect(run.telephony.placed).toEqual([]);
    const block = await app.prisma.dialBlock.findFirstOrThrow({ where: { campaignId: setup.campaignId } });
    // Revoked, not just missing: the block says so.
    expect([block.reason, block.detail]).toEqual(['consent_revoked', 'ai_calls']);
  });
});

describe('consents from an import', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('records the consents and region the mapped columns carry, and keeps what they do not say as custom fields', async () => {
    const clock = new ManualClock(new Date('2026-11-03T16:00:00Z'));
    const env = dialerEnv(app, clock);
    const setup = await runningCampaign(app, env, {
      rows: [
        {
          Phone: '+12125550301',
          'Consent to call': '2026-09-15',
          'AI Call Consent': 'yes',
          'Consent Source': 'Signup form',
          'Consent Proof': 'https://example.com/p/301',
          Region: 'us-tx',
        },
        {
          Phone: '+12125550302',
          'Consent to call': 'no',
          'AI Call Consent': '',
          'Consent Source': '',
          'Consent Proof': '',
          Region: 'Texas',
        },
      ],
    });
    const contacts = await app.prisma.contact.findMany({
      where: { userId: setup.userId },
      include: { consents: true },
      orderBy: { phoneNumber: 'asc' },
    });
    const [given, refused] = contacts;
    expect(given!.consents.map((c) => [c.kind, c.source, c.proof, c.obtainedAt.toISOString()]).sort()).toEqual([
      ['ai_calls', 'Signup form', 'https://example.com/p/301', expect.any(String)],
      ['calls', 'Signup form', 'https://example.com/p/301', '2026-09-15T00:00:00.000Z'],
    ]);
    expect(given!.data).toMatchObject({ region: 'US-TX', custom_fields: {} });
    expect(refused!.consents).toEqual([]);
    expect(refused!.data).toMatchObject({ custom_fields: { 'Consent to call': 'no', Region: 'Texas' } });
    const { data } = await app.gql(`query ($id: UUID!) { contact(id: $id) { region consents { kind } } }`, { id: given!.id }, setup.token);
    expect(data.contact.region).toBe('US-TX');
    expect(data.contact.consents.map((c: { kind: string }) => c.kind).sort()).toEqual(['ai_calls', 'calls']);
  });
});
