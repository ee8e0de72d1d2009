import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantCredits } from '../src/services/billing/grants.js';
import { serviceContext } from '../src/services/context.js';
import { importContacts } from '../src/services/contacts/import.js';
import { importRegistry } from '../src/services/registries/registries.js';
import { SimulatedTelephony } from '../src/services/voice/providers/simulated/telephony.js';
import type { CallResult, PlaceCall, Telephony } from '../src/services/voice/providers/telephony.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, manualDialer } from './support/dialer.js';
import { createAgent } from './support/fixtures.js';

// A dry run of a dispatch (previewDispatch on GraphQL, GET /api/v1/campaigns/{id}/preview/): who would be
// called first and when, who is blocked by which rule until when, the credits it needs. Checked against
// what the dialer then does: the campaign is dispatched at the same moment and dialed by the simulator,
// and the calls placed and the calls blocked must be those the preview said.

// Tuesday 14:30 UTC: 09:30 in New York and 08:30 in Chicago (federal hours open), 07:30 in Denver and
// 06:30 in Los Angeles (closed until 08:00 local).
const NOW = new Date('2026-11-24T14:30:00Z');
const RATE = 60;

const PREVIEW = `query ($id: UUID!, $first: Int, $after: String) {
  previewDispatch(campaignId: $id) {
    campaignId from contactCount toCall callableNow firstCallAt creditsNeededCents creditsAvailableCents
    costEstimate { calls minutesPerCall basis historyCalls rateCentsPerMinute costCents availableCents covered }
    byRule { rule contacts }
    contacts(first: $first, after: $after) {
      pageInfo { hasNextPage endCursor }
      edges { node { contactId phoneNumber callAt blockedBy blockedUntil detail } }
    }
  }
}`;

interface Row {
  contactId: string;
  phoneNumber: string | null;
  callAt: string | null;
  blockedBy: string | null;
  blockedUntil: string | null;
  detail: string | null;
}

/** A v1 page's rows under the GraphQL names. */
const v1Rows = (results: Record<string, string | null>[]): Row[] =>
  results.map((r) => ({
    contactId: r.contact_id!,
    phoneNumber: r.phone_number ?? null,
    callAt: r.call_at ?? null,
    blockedBy: r.blocked_by ?? null,
    blockedUntil: r.blocked_until ?? null,
    detail: r.detail ?? null,
  }));

class Watched implements Telephony {
  readonly placed: (PlaceCall & { at: Date })[] = [];
  constructor(
    private readonly clock: ManualClock,
    private readonly inner: SimulatedTelephony,
  ) {}
  placeCall(call: PlaceCall) {
    this.placed.push({ ...call, at: this.clock.now() });
    return this.inner.placeCall(call);
  }
  stop() {}
}

let app: TestApp;
let clock: ManualClock;
let token: string;
let campaignId: string;
const listed = '+12125550199';

const rows = [
  ...Array.from({ length: 6 }, (_, i) => ({ Phone: `+1212555${String(1000 + i)}`, consent: 'yes' })),
  ...Array.from({ length: 4 }, (_, i) => ({ Phone: `+1312555${String(1000 + i)}`, consent: 'yes' })),
  ...Array.from({ length: 5 }, (_, i) => ({ Phone: `+1303555${String(1000 + i)}`, consent: 'yes' })),
  ...Array.from({ length: 3 }, (_, i) => ({ Phone: `+1415555${String(1000 + i)}`, consent: 'yes' })),
  { Phone: '+12125552000', consent: 'no' },
  { Phone: '+14155552000', consent: 'no' },
  { Phone: listed, consent: 'yes' },
  { Phone: 'not a number', consent: 'yes' },
];

beforeAll(async () => {
  clock = new ManualClock(NOW);
  app = await startTestApp({ clock, settings: { callRateCentsPerMinute: RATE } });
  const env = dialerEnv(app, clock);
  const userId = randomUUID();
  token = await app.token(userId);
  const agent = await createAgent(app, token);
  const ctx = serviceContext(env, { id: userId, isAdmin: false });
  await app.prisma.doNotCallEntry.create({ data: { userId, phoneNumber: listed } });
  const imported = await importContacts(ctx, {
    group_name: 'Preview list',
    csv_data: rows.map((r) => ({ Phone: r.Phone, 'Consent to call': r.consent === 'yes' ? '2026-10-01' : 'no' })),
  });
  await grantCredits(serviceContext(env, { id: randomUUID(), isAdmin: true }), { user_id: userId, kind: 'top_up', amount_cents: 100_000 });
  const campaign = await app.prisma.campaign.create({
    data: {
      userId,
      agentId: agent.id,
      contactGroupId: imported.groupId,
      name: 'Preview',
      status: 'draft',
      concurrentCalls: 50,
      timezone: 'UTC',
      callingHours: { start: '00:00', end: '24:00' },
      activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
      scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60 },
      requiredConsent: ['calls'],
      regionalRules: true,
    },
  });
  campaignId = campaign.id;
});
afterAll(() => app?.close());

async function graphqlPreview(first = 100, after?: string) {
  const res = await app.gql(PREVIEW, { id: campaignId, first, after }, token);
  expect(res.errors).toBeUndefined();
  return res.data.previewDispatch;
}

async function allGraphqlRows(): Promise<Row[]> {
  const out: Row[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await graphqlPreview(7, after);
    out.push(...page.contacts.edges.map((e: { node: Row }) => e.node));
    if (!page.contacts.pageInfo.hasNextPage) return out;
    after = page.contacts.pageInfo.endCursor;
  }
}

describe('a dispatch preview', () => {
  let preview: Awaited<ReturnType<typeof graphqlPreview>>;
  let previewRows: Row[];
  const byNumber = (n: string) => previewRows.find((r) => r.phoneNumber === n)!;

  beforeAll(async () => {
    preview = await graphqlPreview();
    previewRows = await allGraphqlRows();
  });

  it('says who is called first and when, who is blocked by which rule until when, and the totals', () => {
    expect(previewRows).toHaveLength(rows.length);
    expect(preview).toMatchObject({ campaignId, from: NOW.toISOString(), contactCount: rows.length, firstCallAt: NOW.toISOString() });
    expect(byNumber('+12125551000')).toMatchObject({ callAt: NOW.toISOString(), blockedBy: null, blockedUntil: null });
    expect(byNumber('+13125551000')).toMatchObject({ callAt: NOW.toISOString(), blockedBy: null });
    const denver = '2026-11-24T15:00:00.000Z';
    expect(byNumber('+13035551000')).toMatchObject({
      callAt: denver,
      blockedBy: 'regional_hours',
      blockedUntil: denver,
      detail: expect.stringMatching(/^US/),
    });
    const la = '2026-11-24T16:00:00.000Z';
    expect(byNumber('+14155551000')).toMatchObject({
      callAt: la,
      blockedBy: 'regional_hours',
      blockedUntil: la,
      detail: expect.stringMatching(/^US/),
    });
    expect(byNumber('+12125552000')).toMatchObject({ callAt: null, blockedBy: 'consent_missing', blockedUntil: null, detail: 'calls' });
    expect(byNumber(listed)).toMatchObject({ callAt: null, blockedBy: 'do_not_call', blockedUntil: null });
    expect(previewRows.find((r) => r.blockedBy === 'invalid')).toMatchObject({ callAt: null });
    // First called first; those never called last.
    const times = previewRows.map((r) => (r.callAt ? Date.parse(r.callAt) : Infinity));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const counts = Object.fromEntries(preview.byRule.map((r: { rule: string; contacts: number }) => [r.rule, r.contacts]));
    expect(counts).toMatchObject({ regional_hours: 8, consent_missing: 2, do_not_call: 1, invalid: 1, holiday: 0, calling_hours: 0 });
    expect(preview).toMatchObject({ toCall: 18, callableNow: 10 });
    // 18 calls of DIALER_HOLD_MINUTES (5) at the call rate.
    expect(Number(preview.creditsNeededCents)).toBe(18 * 5 * RATE);
    expect(Number(preview.creditsAvailableCents)).toBe(100_000);
    // No call has ended yet: the estimate assumes calls as long as the hold.
    expect(preview.costEstimate).toEqual({
      calls: 18,
      minutesPerCall: 5,
      basis: 'default',
      historyCalls: 0,
      rateCentsPerMinute: RATE,
      costCents: 18 * 5 * RATE,
      availableCents: 100_000,
      covered: true,
    });
  });

  it('answers the same on v1, a page at a time', async () => {
    const all = await app.request('GET', `/api/v1/campaigns/${campaignId}/preview/?limit=500`, { token });
    expect(all.status).toBe(200);
    expect(all.json).toMatchObject({
      campaign_id: campaignId,
      contacts: rows.length,
      to_call: 18,
      callable_now: 10,
      first_call_at: NOW.toISOString(),
      credits_needed_cents: String(18 * 5 * RATE),
      cost_estimate: {
        calls: 18,
        minutes_per_call: 5,
        basis: 'default',
        history_calls: 0,
        rate_cents_per_minute: RATE,
        cost_cents: String(18 * 5 * RATE),
        covered: true,
      },
      count: rows.length,
      by_rule: { regional_hours: 8, consent_missing: 2, do_not_call: 1, invalid: 1 },
    });
    expect(v1Rows(all.json.results)).toEqual(previewRows);
    const page = await app.request('GET', `/api/v1/campaigns/${campaignId}/preview/?limit=3&offset=5`, { token });
    expect(page.json.results.map((r: { contact_id: string }) => r.contact_id)).toEqual(previewRows.slice(5, 8).map((r) => r.contactId));
    const bad = await app.request('GET', `/api/v1/campaigns/${campaignId}/preview/?limit=-1`, { token });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ limit: [expect.any(String)] });
  });

  it('is a 404 for another customer’s campaign, on both surfaces', async () => {
    const stranger = await app.token(randomUUID());
    const res = await app.gql(PREVIEW, { id: campaignId }, stranger);
    expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await app.request('GET', `/api/v1/campaigns/${campaignId}/preview/`, { token: stranger })).status).toBe(404);
  });

  it('agrees with what the dialer does once the campaign is dispatched', async () => {
    await dialedAsForetold(campaignId, previewRows);
  });
});

/** Dispatches the campaign at the preview's moment and dials it through the simulator, moment by moment. */
async function dialedAsForetold(id: string, previewRows: Row[]) {
  const dispatched = await app.request('POST', `/api/v1/campaigns/${id}/dispatch/`, { token, body: {} });
  expect(dispatched.status).toBe(202);
  const env = dialerEnv(app, clock);
  let dialer: ReturnType<typeof manualDialer>;
  const simulator = new SimulatedTelephony({ seed: 'preview', timeScale: 0 }, (result: CallResult) => dialer.dialer.report(result));
  const telephony = new Watched(clock, simulator);
  dialer = manualDialer(env, telephony);

  // The dispatch's own moment (its wake-up ticks at once), then each moment the preview names, in order:
  // the dialer calls exactly the contacts the preview said, then.
  const moments = [...new Set([clock.now().toISOString(), ...previewRows.flatMap((r) => (r.callAt ? [r.callAt] : []))])].sort();
  expect(moments.length).toBeGreaterThan(1);
  for (const moment of moments) {
    clock.set(moment);
    const before = telephony.placed.length;
    await dialer.run(id);
    const called = telephony.placed.slice(before).map((c) => c.to);
    const expected = previewRows.filter((r) => r.callAt === moment).map((r) => r.phoneNumber);
    expect(called.sort()).toEqual(expected.sort());
    expect(telephony.placed.slice(before).every((c) => c.at.toISOString() === moment)).toBe(true);
  }

  // What it blocked, with the same rules and times as the preview said (the campaign's own window and an
  // invalid number are not compliance blocks: the dialer records none for them).
  const blocks = await app.prisma.dialBlock.findMany({ where: { campaignId: id } });
  const blocked = blocks.map((b) => ({ contactId: b.contactId, rule: b.reason, until: b.until?.toISOString() ?? null }));
  const foretold = previewRows
    .filter((r) => r.blockedBy && r.blockedBy !== 'invalid' && r.blockedBy !== 'calling_hours')
    .map((r) => ({ contactId: r.contactId, rule: r.blockedBy, until: r.blockedUntil }));
  const order = (a: { contactId: string }, b: { contactId: string }) => a.contactId.localeCompare(b.contactId);
  expect(blocked.sort(order)).toEqual(foretold.sort(order));
  for (const row of previewRows.filter((r) => r.blockedBy === 'invalid')) {
    const enrolment = await app.prisma.campaignContact.findFirstOrThrow({ where: { campaignId: id, contactId: row.contactId } });
    expect(enrolment).toMatchObject({ state: 'done', outcome: 'invalid' });
  }
}

describe('a dispatch preview while the campaign’s own calling hours are closed', () => {
  it('says the calling hours hold everyone until they open (in each contact’s zone), and the dialer agrees', async () => {
    clock.set(NOW);
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: campaignId } });
    const group = await importContacts(serviceContext(dialerEnv(app, clock), { id: campaign.userId, isAdmin: false }), {
      group_name: 'Window list',
      csv_data: [
        { Phone: '+12125557001', 'Consent to call': '2026-10-01' },
        { Phone: '+13035557001', 'Consent to call': '2026-10-01' },
        { Phone: '+14155557001', 'Consent to call': '2026-10-01' },
        { Phone: '+12125557002', 'Consent to call': '2026-10-01', 'Time Zone': 'America/Los_Angeles' },
      ],
    });
    // 09:00-17:00 Chicago time: at 14:30 UTC (08:30 there) nobody may be called yet.
    const windowed = await app.prisma.campaign.create({
      data: {
        userId: campaign.userId,
        agentId: campaign.agentId,
        contactGroupId: group.groupId,
        name: 'Windowed',
        status: 'draft',
        concurrentCalls: 50,
        timezone: 'America/Chicago',
        callingHours: { start: '09:00', end: '17:00' },
        activeDays: ['mon', 'tue', 'wed', 'thu', 'fri'],
        scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60 },
        requiredConsent: ['calls'],
        regionalRules: true,
      },
    });
    const res = await app.request('GET', `/api/v1/campaigns/${windowed.id}/preview/`, { token });
    expect(res.status).toBe(200);
    const rows = v1Rows(res.json.results);
    const of = (n: string) => rows.find((r) => r.phoneNumber === n);
    expect(res.json).toMatchObject({ callable_now: 0, to_call: 4, first_call_at: '2026-11-24T15:00:00.000Z' });
    expect(res.json.by_rule.calling_hours).toBe(4);
    expect(of('+12125557001')).toMatchObject({ callAt: '2026-11-24T15:00:00.000Z', blockedBy: 'calling_hours' });
    // Denver at 09:00 Chicago time is 08:00: the law allows it then.
    expect(of('+13035557001')).toMatchObject({ callAt: '2026-11-24T15:00:00.000Z', blockedBy: 'calling_hours' });
    // Los Angeles is 07:00 then: the first moment both allow is 08:00 there.
    expect(of('+14155557001')).toMatchObject({ callAt: '2026-11-24T16:00:00.000Z', blockedBy: 'calling_hours' });
    // A contact's own zone is where the campaign's hours are read: 09:00 in Los Angeles.
    expect(of('+12125557002')).toMatchObject({ callAt: '2026-11-24T17:00:00.000Z', blockedBy: 'calling_hours' });
    await dialedAsForetold(windowed.id, rows);
  });
});

describe('a dispatch preview of what the gate reads of the person', () => {
  it('names a registry listing, a revoked consent and a frequency cap, as the dialer then does', async () => {
    clock.set(NOW);
    const campaign = await app.prisma.campaign.findUniqueOrThrow({ where: { id: campaignId } });
    const env = dialerEnv(app, clock);
    await importRegistry(env, { registry: 'us_dnc', downloaded_on: '2026-11-20' }, ['2125558001\n'], 'test');
    const group = await importContacts(serviceContext(env, { id: campaign.userId, isAdmin: false }), {
      group_name: 'Person list',
      csv_data: [
        { Phone: '+12125558001' },
        { Phone: '+12125558002', 'Consent to call': '2026-10-01' },
        { Phone: '+13055558003' },
        { Phone: '+12125558004' },
      ],
    });
    const contact = (phone: string) => app.prisma.contact.findFirstOrThrow({ where: { groupId: group.groupId, phoneNumber: phone } });
    // The callee took back their consent an hour ago.
    await app.prisma.contactConsent.updateMany({
      where: { contactId: (await contact('+12125558002')).id },
      data: { revokedAt: new Date(NOW.getTime() - 3_600_000) },
    });
    // A Floridian the customer called three times in the last 24 hours, from another campaign.
    const floridian = await contact('+13055558003');
    for (const hoursAgo of [3, 2, 1]) {
      await app.prisma.callAttempt.create({
        data: {
          userId: campaign.userId,
          campaignId,
          contactId: floridian.id,
          attemptNumber: 4 - hoursAgo,
          status: 'completed',
          outcome: 'human',
          toNumber: floridian.phoneNumber,
          createdAt: new Date(NOW.getTime() - hoursAgo * 3_600_000),
        },
      });
    }
    // A solicitation campaign that requires no consent of its own.
    const solicitation = await app.prisma.campaign.create({
      data: {
        userId: campaign.userId,
        agentId: campaign.agentId,
        contactGroupId: group.groupId,
        name: 'Solicitation',
        status: 'draft',
        concurrentCalls: 50,
        timezone: 'UTC',
        callingHours: { start: '00:00', end: '24:00' },
        activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
        scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60 },
        requiredConsent: [],
        regionalRules: true,
      },
    });
    const res = await app.request('GET', `/api/v1/campaigns/${solicitation.id}/preview/`, { token });
    expect(res.status).toBe(200);
    const rows = v1Rows(res.json.results);
    const of = (n: string) => rows.find((r) => r.phoneNumber === n);
    expect(of('+12125558001')).toMatchObject({ callAt: null, blockedBy: 'registry', detail: 'us_dnc' });
    expect(of('+12125558002')).toMatchObject({ callAt: null, blockedBy: 'consent_revoked' });
    // Free 24 hours after the first of the three calls, at 08:00 in Miami at the earliest.
    expect(of('+13055558003')).toMatchObject({ blockedBy: 'frequency_cap', detail: 'US-FL' });
    expect(Date.parse(of('+13055558003')!.callAt!)).toBeGreaterThanOrEqual(NOW.getTime() + 21 * 3_600_000);
    expect(of('+12125558004')).toMatchObject({ callAt: NOW.toISOString(), blockedBy: null });
    await dialedAsForetold(solicitation.id, rows);
  });
});
