import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollContacts } from '../src/services/campaigns/store.js';
import type { PlaceCall } from '../src/services/voice/providers/telephony.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';

// Deleting a contact or a group never changes a campaign's history or money: every report figure,
// the call history and the ledger read the same before and after, on both surfaces. A deleted person's
// data is nowhere in the database afterwards.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

let serial = 0;
/** A person whose every detail is unique to one test, so that a search for it finds only them. */
function person() {
  serial += 1;
  const tag = String(serial * 1000 + Math.floor(Math.random() * 1000)).padStart(6, '0');
  return {
    first: `Zebulon${tag}`,
    last: `Quintavalle${tag}`,
    email: `zq${tag}@example.org`,
    loyalty: `ZQ-${tag}`,
    phone: `+14157${tag}`,
  };
}
type Person = ReturnType<typeof person>;

const others = (offset: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    'First Name': `Other${offset + i}`,
    'Last Name': 'Caller',
    Phone: `+1628${3_000_000 + offset + i}`,
  }));

/** What the telephony reports: the person talks, books and is recorded; the others get a mix. */
function outcomeFor(target: Person) {
  return (call: PlaceCall, index: number) => {
    if (call.to === target.phone) {
      return {
        outcome: 'human' as const,
        durationSeconds: 95,
        sentiment: 'positive' as const,
        summary: `${target.first} ${target.last} wants a cleaning`,
        transcript: `Agent: Hello ${target.first}. ${target.first}: my e-mail is ${target.email}.`,
        recordingUrl: `https://recordings.example.com/${target.loyalty}.wav`,
        analysis: { caller: `${target.first} ${target.last}`, loyalty: target.loyalty },
        appointment: { scheduledAt: new Date('2026-12-01T15:00:00Z'), notes: `${target.first} prefers mornings` },
      };
    }
    if (index % 3 === 0)
      return { outcome: 'human' as const, durationSeconds: 40 + index, sentiment: 'neutral' as const, summary: 'Talked.' };
    if (index % 3 === 1) return { outcome: 'voicemail' as const, durationSeconds: 20 };
    return { outcome: 'no_answer' as const, durationSeconds: 0 };
  };
}

/**
 * A user with a campaign that completed with 20 calls over a group of 20, the person among them, and a
 * second campaign on a group of its own, also finished, so that history counts span campaigns.
 */
async function finishedCampaigns(target: Person) {
  const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
  const env = dialerEnv(app, clock);
  const dialer = recordingDialer(env, outcomeFor(target));
  const rows = [
    { 'First Name': target.first, 'Last Name': target.last, Email: target.email, Phone: target.phone, Loyalty: target.loyalty },
    ...others(serial * 100, 19),
  ];
  const once = { scheduleConfig: { max_attempts: 1, retry_on: [] } };
  const main = await runningCampaign(app, env, { rows, campaign: once });
  await dialer.run(main.campaignId);
  const secondGroup = await importGroup(main.token, others(serial * 100 + 50, 8));
  const second = await app.prisma.campaign.create({
    data: {
      userId: main.userId,
      agentId: main.agent.id,
      contactGroupId: secondGroup,
      name: 'Second',
      status: 'running',
      startedAt: clock.now(),
      concurrentCalls: 10,
      callingHours: { start: '00:00', end: '24:00' },
      activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
      scheduleConfig: once.scheduleConfig,
      regionalRules: false,
    },
  });
  await enrollContacts(app.sql, second.id, clock.now());
  await dialer.run(second.id);
  const campaigns = await app.prisma.campaign.findMany({ where: { userId: main.userId }, select: { id: true, status: true } });
  expect(campaigns.map((c) => c.status)).toEqual(['completed', 'completed']);
  expect(await app.prisma.callAttempt.count({ where: { userId: main.userId } })).toBe(28);
  const contact = await app.prisma.contact.findFirstOrThrow({ where: { groupId: main.groupId, phoneNumber: target.phone } });
  return { ...main, secondId: second.id, contactId: contact.id, campaignIds: [main.campaignId, second.id] };
}

async function importGroup(token: string, rows: Record<string, string>[]): Promise<string> {
  const res = await app.request('POST', '/api/v1/contacts/import/', { token, body: { groupName: 'More', csvData: rows } });
  expect(res.status).toBe(201);
  return res.json.groupId;
}

const REPORT = /* GraphQL */ `
  query Report($id: UUID!) {
    campaign(id: $id) {
      status
      report(limit: 500) {
        totalContactOutcomes
        metrics {
          contacts {
            total
            callable
            attempted
            reached
            pending
          }
          calls {
            total
            completed
            noAnswer
            voicemail
            busy
            failed
            inProgress
            queued
            ringing
            canceled
          }
          successRate
          averageDurationSeconds
          totalDurationSeconds
          totalCostCents
          appointmentsBooked
          sentiment {
            positive
            neutral
            negative
            unknown
          }
        }
        contactOutcomes {
          contactId
          contactStatus
          attempts
          lastStatus
          lastCallAt
          outcome
        }
        recentSuccessfulCalls {
          id
          status
          durationSeconds
          costCents
          sentiment
        }
      }
    }
  }
`;

/** Every figure a user can read about their campaigns' history and money, on both surfaces. */
async function snapshot(token: string, campaignIds: string[]) {
  const get = async (path: string) => {
    const res = await app.request('GET', path, { token });
    expect(res.status, path).toBe(200);
    return res.json;
  };
  const reports = [];
  for (const id of campaignIds) {
    const v1 = await get(`/api/v1/campaigns/${id}/report/?limit=500`);
    const gql = await app.gql(REPORT, { id }, token);
    expect(gql.errors).toBeUndefined();
    reports.push({
      campaign: (await get(`/api/v1/campaigns/${id}/`)).status,
      v1: {
        metrics: v1.metrics,
        total: v1.totalContactOutcomes,
        outcomes: v1.contactOutcomes.map((o: any) => [o.contactId, o.contactStatus, o.attempts, o.lastStatus, o.lastCallAt, o.outcome]),
        recent: v1.recentSuccessfulCalls.map((c: any) => [c.id, c.callStatus, c.durationSeconds, c.sentiment, c.contactId, c.campaignId]),
      },
      graphql: gql.data.campaign,
    });
  }
  const history = await get('/api/v1/campaigns/recordings/?limit=500');
  const transactions = await get('/api/v1/billing/transactions/?limit=500');
  const appointments = await get('/api/v1/appointments/?limit=500');
  return {
    reports,
    history: history.map((c: any) => [
      c.id,
      c.contactId,
      c.campaignId,
      c.campaignName,
      c.callStatus,
      c.durationSeconds,
      c.sentiment,
      c.createdAt,
    ]),
    ledger: transactions.transactions.map((t: any) => [
      t.id,
      t.kind,
      t.amount_cents,
      t.campaign_id,
      t.call_attempt_id,
      t.balance_after_cents,
    ]),
    ledgerSum: transactions.transactions.reduce((sum: number, t: any) => sum + t.amount_cents, 0),
    credits: await get('/api/v1/billing/credits/'),
    appointments: appointments.map((a: any) => [a.id, a.status, a.contact_id, a.campaign_id, a.scheduled_at]),
  };
}

/**
 * Where each text occurs in the database: every text, varchar and JSON column of every table, read for
 * all the texts in one statement (a statement a column and text made hundreds of round trips).
 */
async function occurrences(needles: string[]): Promise<Map<string, string[]>> {
  const columns = await app.prisma.$queryRaw<{ table: string; column: string }[]>`
    SELECT table_name AS table, column_name AS column FROM information_schema.columns
    WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'json', 'jsonb')
    ORDER BY table_name, column_name`;
  const checks = columns.map(
    ({ table, column }) =>
      `SELECT '${table}.${column}' WHERE EXISTS (SELECT 1 FROM "${table}" WHERE "${column}"::text ILIKE '%' || n.needle || '%')`,
  );
  const rows = await app.prisma.$queryRawUnsafe<{ needle: string; place: string }[]>(
    `SELECT n.needle, c.place FROM unnest($1::text[]) AS n(needle), LATERAL (${checks.join(' UNION ALL ')}) AS c(place)`,
    needles,
  );
  return new Map(needles.map((needle) => [needle, rows.filter((r) => r.needle === needle).map((r) => r.place)]));
}

async function expectErased(target: Person) {
  const needles = [target.first, target.last, target.email, target.loyalty, target.phone, target.phone.slice(2)];
  const found = await occurrences(needles);
  for (const needle of needles) expect(found.get(needle), needle).toEqual([]);
}

describe('deleting a contact that campaigns called', () => {
  it('v1: 204, the person is gone from every table, and no figure of history or money changes', async () => {
    const target = person();
    const setup = await finishedCampaigns(target);
    // Before: the person is there to be found, in contacts, calls and the appointment.
    expect((await occurrences([target.first])).get(target.first)).toEqual(
      expect.arrayContaining(['contacts.name', 'contacts.data', 'call_attempts.summary', 'appointments.contact_snapshot']),
    );
    const before = await snapshot(setup.token, setup.campaignIds);
    expect(before.history).toHaveLength(28);
    expect(before.reports[0]!.v1.metrics.contacts.total).toBe(20);
    expect(before.appointments).toHaveLength(1);

    const res = await app.request('DELETE', `/api/v1/contacts/contacts/${setup.contactId}/`, { token: setup.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    expect(await snapshot(setup.token, setup.campaignIds)).toEqual(before);
    await expectErased(target);
    expect((await app.request('GET', `/api/v1/contacts/contacts/${setup.contactId}/`, { token: setup.token })).status).toBe(404);
    expect((await app.request('DELETE', `/api/v1/contacts/contacts/${setup.contactId}/`, { token: setup.token })).status).toBe(404);

    // Its calls stay, anonymous: v1 shows an empty name and number.
    const history = (await app.request('GET', '/api/v1/campaigns/recordings/?limit=500', { token: setup.token })).json;
    const theirs = history.filter((c: any) => c.contactId === setup.contactId);
    expect(theirs).toHaveLength(1);
    expect(theirs[0]).toMatchObject({ contactName: '', phoneNumber: '', summary: '', callStatus: 'completed', durationSeconds: 95 });
    const attempt = await app.request('GET', `/api/v1/campaigns/contact-attempts/${theirs[0].id}/`, { token: setup.token });
    expect(attempt.json).toMatchObject({ contactName: '', phoneNumber: '' });
    // The ledger still names the campaign its charge paid for.
    const charge = await app.prisma.creditTransaction.findFirstOrThrow({ where: { callAttemptId: theirs[0].id } });
    expect(charge.campaignId).toBe(setup.campaignId);
    // The group counts one contact less, and searches find nobody.
    const group = await app.gql(
      `query($id: UUID!, $q: String) { contactGroup(id: $id) { total contacts(search: $q) { totalCount } } }`,
      { id: setup.groupId, q: target.first },
      setup.token,
    );
    expect(group.data.contactGroup).toEqual({ total: 19, contacts: { totalCount: 0 } });
    const byDigits = await app.gql(
      `query($id: UUID!, $q: String) { contactGroup(id: $id) { contacts(search: $q) { totalCount } } }`,
      { id: setup.groupId, q: target.phone.slice(2) },
      setup.token,
    );
    expect(byDigits.data.contactGroup.contacts.totalCount).toBe(0);
  });

  it('GraphQL: says the contact was erased; its calls show a null number and an erased contact', async () => {
    const target = person();
    const setup = await finishedCampaigns(target);
    const before = await snapshot(setup.token, setup.campaignIds);

    const res = await app.gql('mutation($id: UUID!) { deleteContact(id: $id) { id outcome } }', { id: setup.contactId }, setup.token);
    expect(res.data.deleteContact).toEqual({ id: setup.contactId, outcome: 'erased' });

    expect(await snapshot(setup.token, setup.campaignIds)).toEqual(before);
    await expectErased(target);
    const calls = await app.gql(
      `query($id: UUID!) { campaign(id: $id) { attempts(first: 50) { edges { node { toNumber summary transcript recordingUrl analysis status
         contact { id name phoneNumber firstName email erasedAt } appointments { status } } } } } }`,
      { id: setup.campaignId },
      setup.token,
    );
    const theirs = calls.data.campaign.attempts.edges.map((e: any) => e.node).filter((a: any) => a.contact.id === setup.contactId);
    expect(theirs).toHaveLength(1);
    expect(theirs[0]).toMatchObject({
      toNumber: null,
      summary: null,
      transcript: null,
      recordingUrl: null,
      analysis: {},
      status: 'completed',
      contact: { name: '', phoneNumber: null, firstName: null, email: null },
      appointments: [{ status: 'scheduled' }],
    });
    expect(theirs[0].contact.erasedAt).toEqual(expect.any(String));
    const contact = await app.gql('query($id: UUID!) { contact(id: $id) { id } }', { id: setup.contactId }, setup.token);
    expect(contact.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('deletes outright a contact that nothing names', async () => {
    const target = person();
    const setup = await finishedCampaigns(target);
    // Added after the campaign finished: never enrolled, never called.
    const added = await app.request('PATCH', `/api/v1/contacts/groups/${setup.groupId}/`, {
      token: setup.token,
      body: { phone_number: '+16285559999', data: { first_name: 'Late' } },
    });
    expect(added.status).toBe(200);
    const res = await app.gql('mutation($id: UUID!) { deleteContact(id: $id) { outcome } }', { id: added.json.id }, setup.token);
    expect(res.data.deleteContact).toEqual({ outcome: 'deleted' });
    expect(await app.prisma.contact.count({ where: { id: added.json.id } })).toBe(0);
  });

  it('is refused while a call to the person is in flight, changing nothing', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    const { telephony } = dialer;
    telephony.auto = false;
    const setup = await runningCampaign(app, env, { rows: [{ Name: 'On the line', Phone: '+16285551234' }] });
    await dialer.run(setup.campaignId);
    expect(telephony.placed).toHaveLength(1);
    const contact = await app.prisma.contact.findFirstOrThrow({ where: { groupId: setup.groupId } });

    const v1 = await app.request('DELETE', `/api/v1/contacts/contacts/${contact.id}/`, { token: setup.token });
    expect(v1.status).toBe(409);
    expect(v1.json).toMatchObject({ reason: 'contact_on_call' });
    const gql = await app.gql('mutation($id: UUID!) { deleteContact(id: $id) { outcome } }', { id: contact.id }, setup.token);
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', reason: 'contact_on_call' });
    expect(await app.prisma.contact.findUniqueOrThrow({ where: { id: contact.id } })).toEqual(contact);

    telephony.deliver();
    await dialer.dialer.settled();
    expect((await app.request('DELETE', `/api/v1/contacts/contacts/${contact.id}/`, { token: setup.token })).status).toBe(204);
  });
});

describe('deleting a group that campaigns called', () => {
  it('v1: 204; the group is archived, its campaigns and every figure stay, and its people are erased', async () => {
    const target = person();
    const setup = await finishedCampaigns(target);
    const before = await snapshot(setup.token, setup.campaignIds);

    const res = await app.request('DELETE', `/api/v1/contacts/groups/${setup.groupId}/`, { token: setup.token });
    expect(res.status).toBe(204);

    expect(await snapshot(setup.token, setup.campaignIds)).toEqual(before);
    await expectErased(target);
    // Gone for the user: no list, lookup, edit or new campaign finds it.
    const groups = await app.gql('{ contactGroups(first: 50) { totalCount edges { node { id } } } }', {}, setup.token);
    expect(groups.data.contactGroups.edges.map((e: any) => e.node.id)).not.toContain(setup.groupId);
    expect(groups.data.contactGroups.totalCount).toBe(1);
    const lookup = await app.gql('query($id: UUID!) { contactGroup(id: $id) { id } }', { id: setup.groupId }, setup.token);
    expect(lookup.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const patch = await app.request('PATCH', `/api/v1/contacts/groups/${setup.groupId}/`, {
      token: setup.token,
      body: { phone_number: '+16285550001' },
    });
    expect(patch.status).toBe(404);
    const create = await app.request('POST', '/api/v1/contacts/contacts/', {
      token: setup.token,
      body: { name: 'Again', agent_id: setup.agent.id, contact_group_id: setup.groupId },
    });
    expect(create.status).toBe(400);
    expect(create.json).toEqual({ contact_group_id: ['No contact group with this id.'] });
    // The campaign still names it, and nothing in it can be called again.
    const campaign = await app.request('GET', `/api/v1/campaigns/${setup.campaignId}/`, { token: setup.token });
    expect(campaign.json.contact_groups).toMatchObject({ id: setup.groupId, total: 0 });
    expect((await app.request('DELETE', `/api/v1/contacts/groups/${setup.groupId}/`, { token: setup.token })).status).toBe(404);
    const members = await app.prisma.contact.findMany({ where: { groupId: setup.groupId } });
    expect(members).toHaveLength(20);
    expect(members.every((c) => c.erasedAt !== null && c.phoneNumber === null && c.name === '')).toBe(true);
  });

  it('GraphQL: says the group was archived and what became of its contacts and campaigns', async () => {
    const target = person();
    const setup = await finishedCampaigns(target);
    const draft = await app.prisma.campaign.create({
      data: { userId: setup.userId, agentId: setup.agent.id, contactGroupId: setup.groupId, name: 'Never started' },
    });
    const before = await snapshot(setup.token, setup.campaignIds);
    // Joined the group after the campaigns finished: in no campaign's history.
    const late = await app.request('PATCH', `/api/v1/contacts/groups/${setup.groupId}/`, {
      token: setup.token,
      body: { phone_number: '+16285559998' },
    });

    const res = await app.gql(
      'mutation($id: UUID!) { deleteContactGroup(id: $id) { id outcome erasedContacts deletedContacts deletedCampaigns } }',
      { id: setup.groupId },
      setup.token,
    );
    expect(res.data.deleteContactGroup).toEqual({
      id: setup.groupId,
      outcome: 'archived',
      erasedContacts: 20,
      deletedContacts: 1,
      deletedCampaigns: 1,
    });
    expect(await snapshot(setup.token, setup.campaignIds)).toEqual(before);
    expect(await app.prisma.campaign.count({ where: { id: draft.id } })).toBe(0);
    expect(await app.prisma.contact.count({ where: { id: late.json.id } })).toBe(0);
    const read = await app.gql(
      'query($id: UUID!) { campaign(id: $id) { contactGroup { id archivedAt total } } }',
      { id: setup.campaignId },
      setup.token,
    );
    expect(read.data.campaign.contactGroup).toMatchObject({ id: setup.groupId, total: 0, archivedAt: expect.any(String) });
  });

  it('deletes outright a group whose campaigns never started, with those drafts', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const setup = await runningCampaign(app, dialerEnv(app, clock), { rows: [{ Name: 'Draft only', Phone: '+16285554321' }] });
    const groupId = await importGroup(setup.token, [{ Name: 'Nobody called', Phone: '+16285554322' }]);
    const draft = await app.prisma.campaign.create({
      data: { userId: setup.userId, agentId: setup.agent.id, contactGroupId: groupId, name: 'Draft' },
    });
    const res = await app.gql(
      'mutation($id: UUID!) { deleteContactGroup(id: $id) { outcome erasedContacts deletedContacts deletedCampaigns } }',
      { id: groupId },
      setup.token,
    );
    expect(res.data.deleteContactGroup).toEqual({ outcome: 'deleted', erasedContacts: 0, deletedContacts: 1, deletedCampaigns: 1 });
    expect(await app.prisma.contactGroup.count({ where: { id: groupId } })).toBe(0);
    expect(await app.prisma.campaign.count({ where: { id: draft.id } })).toBe(0);
  });

  it('refuses while a campaign may still dial it, changing nothing', async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const setup = await runningCampaign(app, dialerEnv(app, clock), { rows: [{ Name: 'Still to call', Phone: '+16285554323' }] });
    const res = await app.request('DELETE', `/api/v1/contacts/groups/${setup.groupId}/`, { token: setup.token });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ reason: 'contact_group_in_use' });
    expect(await app.prisma.contact.count({ where: { groupId: setup.groupId, erasedAt: null } })).toBe(1);
  });
});

describe('moving a called contact onto a number the target group has', () => {
  it('merges the person into the target and keeps the moved row’s calls, anonymous', async () => {
    const target = person();
    const setup = await finishedCampaigns(target);
    const targetGroup = await importGroup(setup.token, [{ 'First Name': 'Same', Phone: target.phone }]);
    const before = await snapshot(setup.token, setup.campaignIds);
    const res = await app.request('PATCH', `/api/v1/contacts/groups/${setup.groupId}/`, {
      token: setup.token,
      body: { phone_number: target.phone, contact_group_id: targetGroup },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ contact_group_id: targetGroup, phone_number: target.phone });
    expect(await snapshot(setup.token, setup.campaignIds)).toEqual(before);
  });
});
