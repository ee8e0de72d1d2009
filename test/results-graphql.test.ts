import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { at, seedResults, SPRING_METRICS, type Results } from './support/results.js';

// Results on GraphQL: call attempts (root connection, single attempt, a campaign's attempts), the typed
// campaign report, which must agree with v1's, and appointments with their one mutation.

let app: TestApp;
let owner: string;
let token: string;
let mine: Results;
let theirs: Results;

beforeAll(async () => {
  app = await startTestApp();
  owner = randomUUID();
  token = await app.token(owner);
  mine = await seedResults(app, owner);
  theirs = await seedResults(app, randomUUID());
});
afterAll(() => app.close());

async function ok(query: string, variables: Record<string, unknown> = {}, as = token) {
  const result = await app.gql(query, variables, as);
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data;
}

const CALLS = /* GraphQL */ `
  query Calls(
    $first: Int
    $campaignId: UUID
    $contactId: UUID
    $statuses: [CallStatus!]
    $sentiments: [Sentiment!]
    $from: DateTime
    $to: DateTime
  ) {
    callAttempts(
      first: $first
      campaignId: $campaignId
      contactId: $contactId
      statuses: $statuses
      sentiments: $sentiments
      from: $from
      to: $to
    ) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          status
          sentiment
          createdAt
        }
      }
    }
  }
`;

describe('callAttempts', () => {
  const ids = (data: any) => data.callAttempts.edges.map((e: any) => e.node.id);
  const newestFirst = (attempts: { id: string; createdAt: Date }[]) =>
    [...attempts].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).map((a) => a.id);

  it('lists the caller’s calls across campaigns, newest first, never another user’s', async () => {
    const data = await ok(CALLS, { first: 50 });
    expect(data.callAttempts.totalCount).toBe(9);
    expect(ids(data)).toEqual(newestFirst([...mine.spring.attempts, ...mine.autumn.attempts]));
  });

  it('filters by campaign, contact, status, sentiment and time, with totalCount to match', async () => {
    const spring = await ok(CALLS, { first: 50, campaignId: mine.spring.campaign.id });
    expect(spring.callAttempts.totalCount).toBe(8);

    const alan = mine.spring.contacts[1]!.id;
    const byContact = await ok(CALLS, { contactId: alan });
    expect(byContact.callAttempts.edges.map((e: any) => e.node.status)).toEqual(['no_answer', 'voicemail', 'busy']);

    const completed = await ok(CALLS, { statuses: ['completed'] });
    expect(ids(completed)).toEqual([mine.radiaCall.id, mine.adaCall.id, mine.edsgerCall.id]);

    const moods = await ok(CALLS, { sentiments: ['negative', 'neutral'] });
    expect(moods.callAttempts.edges.map((e: any) => e.node.sentiment).sort()).toEqual(['negative', 'neutral']);

    // from is inclusive, to exclusive: minutes 60 and 61, not 121.
    const window = await ok(CALLS, { from: at(60).toISOString(), to: at(121).toISOString() });
    expect(window.callAttempts.totalCount).toBe(2);
    expect(window.callAttempts.edges.map((e: any) => e.node.createdAt)).toEqual([at(61).toISOString(), at(60).toISOString()]);

    const theirCampaign = await ok(CALLS, { campaignId: theirs.spring.campaign.id });
    expect(theirCampaign.callAttempts).toMatchObject({ totalCount: 0, edges: [] });
  });

  it('pages with cursors', async () => {
    const first = await ok(CALLS, { first: 4 });
    expect(first.callAttempts.pageInfo.hasNextPage).toBe(true);
    const rest = await ok(
      `query($after: String) { callAttempts(first: 50, after: $after) { pageInfo { hasNextPage } edges { node { id } } } }`,
      { after: first.callAttempts.pageInfo.endCursor },
    );
    expect([...ids(first), ...ids(rest)]).toEqual(ids(await ok(CALLS, { first: 50 })));
    expect(rest.callAttempts.pageInfo.hasNextPage).toBe(false);
  });

  it('refuses a time range that ends before it starts, as a field error', async () => {
    const result = await app.gql(CALLS, { from: at(10).toISOString(), to: at(5).toISOString() }, token);
    expect(result.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors: { to: ['Must not be earlier than from.'] } });
  });

  it('joins contacts and campaigns in a constant number of statements', async () => {
    const before = app.db.statementCount();
    const data = await ok(`{ callAttempts(first: 50) { totalCount edges { node { id contact { name } campaign { name } } } } }`);
    expect(app.db.statementCount() - before).toBeLessThanOrEqual(2);
    expect(data.callAttempts.edges.map((e: any) => e.node.campaign.name)).toContain('Autumn check-up');
  });
});

describe('callAttempt', () => {
  const ONE = `query($id: UUID!) { callAttempt(id: $id) {
    id attemptNumber status toNumber durationSeconds summary sentiment costCents createdAt
    contact { id name } campaign { id name } appointments { id status } } }`;

  it('returns one of the caller’s attempts with its contact, campaign and appointments', async () => {
    const data = await ok(ONE, { id: mine.adaCall.id });
    expect(data.callAttempt).toEqual({
      id: mine.adaCall.id,
      attemptNumber: 2,
      status: 'completed',
      toNumber: '+14155550101',
      durationSeconds: 120,
      summary: 'Booked a cleaning',
      sentiment: 'positive',
      costCents: 20,
      createdAt: at(60).toISOString(),
      contact: { id: mine.spring.contacts[0]!.id, name: 'Ada Lovelace' },
      campaign: { id: mine.spring.campaign.id, name: 'Spring recall' },
      appointments: [{ id: mine.appointments.ada.id, status: 'scheduled' }],
    });
  });

  it('is NOT_FOUND for another user’s attempt', async () => {
    const result = await app.gql(ONE, { id: theirs.adaCall.id }, token);
    expect(result.data).toEqual({ callAttempt: null });
    expect(result.errors![0]!.extensions).toEqual({ code: 'NOT_FOUND' });
  });
});

const REPORT = /* GraphQL */ `
  query Report($agentId: UUID!, $limit: Int, $offset: Int) {
    agent(id: $agentId) {
      campaigns(first: 10) {
        edges {
          node {
            id
            report(limit: $limit, offset: $offset) {
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
                  queued
                  ringing
                  inProgress
                  completed
                  noAnswer
                  busy
                  failed
                  voicemail
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
                variants {
                  name
                }
                variantComparison {
                  statement
                }
                callbacks {
                  requested
                  pending
                }
                outcomes {
                  human
                  voicemail
                  ivr
                  callScreening
                  noAnswer
                  busy
                  failed
                  invalidNumber
                }
                blocked {
                  total
                  doNotCall
                  consentMissing
                  registry
                  regionalHours
                  regionalDay
                  holiday
                  frequencyCap
                  consentRevoked
                  abandonedRecall
                }
              }
              recentSuccessfulCalls {
                id
                contact {
                  name
                }
                campaign {
                  name
                }
              }
              contactOutcomes {
                contactId
                contactName
                phoneNumber
                contactStatus
                attempts
                lastStatus
                lastCallAt
                outcome
              }
              totalContactOutcomes
              hasMoreContactOutcomes
              limit
              offset
            }
          }
        }
      }
    }
  }
`;

describe('Campaign.report', () => {
  async function report(variables: Record<string, unknown> = {}) {
    const data = await ok(REPORT, { agentId: mine.spring.agent.id, ...variables });
    return data.agent.campaigns.edges.find((e: any) => e.node.id === mine.spring.campaign.id).node.report;
  }

  it('has the exact typed metrics of a known campaign', async () => {
    const r = await report();
    expect(r.metrics).toEqual(SPRING_METRICS);
    expect(r.recentSuccessfulCalls).toEqual([
      { id: mine.adaCall.id, contact: { name: 'Ada Lovelace' }, campaign: { name: 'Spring recall' } },
      { id: mine.edsgerCall.id, contact: { name: 'Edsger Dijkstra' }, campaign: { name: 'Spring recall' } },
    ]);
    expect(r).toMatchObject({ totalContactOutcomes: 8, hasMoreContactOutcomes: false, limit: 50, offset: 0 });
  });

  it('agrees with v1’s report of the same campaign, page for page', async () => {
    for (const [limit, offset] of [
      [50, 0],
      [3, 0],
      [3, 6],
      [2, 8],
    ] as const) {
      const graph = await report({ limit, offset });
      const rest = (
        await app.request('GET', `/api/v1/campaigns/${mine.spring.campaign.id}/report/?limit=${limit}&offset=${offset}`, { token })
      ).json;
      expect(graph.metrics).toEqual(rest.metrics);
      expect(graph.contactOutcomes).toEqual(rest.contactOutcomes);
      expect(graph.recentSuccessfulCalls.map((c: any) => c.id)).toEqual(rest.recentSuccessfulCalls.map((c: any) => c.id));
      for (const key of ['totalContactOutcomes', 'hasMoreContactOutcomes', 'limit', 'offset']) expect(graph[key]).toEqual(rest[key]);
    }
  });

  it('refuses bad limit and offset values as field errors', async () => {
    for (const [variables, fieldErrors] of [
      [{ limit: 0 }, { limit: ['Ensure this value is greater than or equal to 1.'] }],
      [{ offset: -1 }, { offset: ['Ensure this value is greater than or equal to 0.'] }],
    ] as const) {
      const result = await app.gql(REPORT, { agentId: mine.spring.agent.id, ...variables }, token);
      expect(result.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors });
    }
    expect((await report({ limit: 100000 })).limit).toBe(500);
  });

  it('cannot be reached through another user’s agent', async () => {
    const result = await app.gql(REPORT, { agentId: theirs.spring.agent.id }, token);
    expect(result.data).toEqual({ agent: null });
    expect(result.errors![0]!.extensions).toEqual({ code: 'NOT_FOUND' });
  });
});

describe('Campaign.attempts', () => {
  it('is the campaign’s calls, newest first, filtered like the root connection', async () => {
    const data = await ok(
      `query($agentId: UUID!) { agent(id: $agentId) { campaigns(first: 5) { edges { node { id
         all: attempts(first: 50) { totalCount edges { node { id } } }
         reached: attempts(statuses: [completed]) { totalCount edges { node { id contact { name } } } }
         missed: attempts(statuses: [no_answer, busy], from: "${at(1).toISOString()}") { totalCount }
      } } } } }`,
      { agentId: mine.spring.agent.id },
    );
    const node = data.agent.campaigns.edges.find((e: any) => e.node.id === mine.spring.campaign.id).node;
    expect(node.all.totalCount).toBe(8);
    expect(node.all.edges.map((e: any) => e.node.id)).toEqual(
      [...mine.spring.attempts].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).map((a) => a.id),
    );
    expect(node.reached).toEqual({
      totalCount: 2,
      edges: [
        { node: { id: mine.adaCall.id, contact: { name: 'Ada Lovelace' } } },
        { node: { id: mine.edsgerCall.id, contact: { name: 'Edsger Dijkstra' } } },
      ],
    });
    // Ada's no_answer at minute 0 is before `from`; Alan's busy (1) and no_answer (121) are not.
    expect(node.missed.totalCount).toBe(2);
  });
});

const APPOINTMENTS = /* GraphQL */ `
  query Appointments($statuses: [String!], $campaignId: UUID, $from: DateTime, $to: DateTime, $orderBy: AppointmentOrder) {
    appointments(first: 20, statuses: $statuses, campaignId: $campaignId, from: $from, to: $to, orderBy: $orderBy) {
      totalCount
      edges {
        node {
          id
          status
          scheduledAt
          timezone
          contactSnapshot
          appointmentData
          contact {
            name
          }
          campaign {
            name
          }
          callAttempt {
            id
          }
        }
      }
    }
  }
`;

describe('appointments', () => {
  const ids = (data: any) => data.appointments.edges.map((e: any) => e.node.id);

  it('lists the caller’s appointments newest first, with contact, campaign and the call they were booked in', async () => {
    const data = await ok(APPOINTMENTS);
    const { radia, ada, edsger } = mine.appointments;
    expect(data.appointments.totalCount).toBe(3);
    expect(ids(data)).toEqual([radia.id, ada.id, edsger.id]);
    expect(data.appointments.edges[1].node).toEqual({
      id: ada.id,
      status: 'scheduled',
      scheduledAt: '2026-10-10T15:00:00.000Z',
      timezone: 'America/New_York',
      contactSnapshot: { name: 'snapshot', phone_number: '+1415555' },
      appointmentData: { source_call_id: mine.adaCall.id, notes: 'Booked at minute 62' },
      contact: { name: 'Ada Lovelace' },
      campaign: { name: 'Spring recall' },
      callAttempt: { id: mine.adaCall.id },
    });
  });

  it('filters by status, campaign and appointment time, and orders by time on request', async () => {
    const { radia, ada, edsger } = mine.appointments;
    expect(ids(await ok(APPOINTMENTS, { statuses: ['scheduled', 'confirmed'] }))).toEqual([radia.id, ada.id]);
    expect(ids(await ok(APPOINTMENTS, { campaignId: mine.spring.campaign.id }))).toEqual([ada.id, edsger.id]);
    const window = await ok(APPOINTMENTS, { from: '2026-10-05T09:00:00Z', to: '2026-10-10T15:00:00Z' });
    expect(ids(window)).toEqual([radia.id, edsger.id]);
    expect(window.appointments.totalCount).toBe(2);
    expect(ids(await ok(APPOINTMENTS, { orderBy: 'soonest' }))).toEqual([edsger.id, radia.id, ada.id]);
  });

  it('refuses an unknown status filter as a field error', async () => {
    const result = await app.gql(APPOINTMENTS, { statuses: ['scheduled', 'maybe'] }, token);
    expect(result.errors![0]!.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      fieldErrors: { 'statuses.1': ['"maybe" is not a valid choice.'] },
    });
  });

  it('answers one appointment, and NOT_FOUND for another user’s', async () => {
    const ONE = `query($id: UUID!) { appointment(id: $id) { id status } }`;
    expect((await ok(ONE, { id: mine.appointments.ada.id })).appointment).toEqual({ id: mine.appointments.ada.id, status: 'scheduled' });
    const result = await app.gql(ONE, { id: theirs.appointments.ada.id }, token);
    expect(result.data).toEqual({ appointment: null });
    expect(result.errors![0]!.extensions).toEqual({ code: 'NOT_FOUND' });
  });
});

describe('updateAppointment', () => {
  const UPDATE = `mutation($id: UUID!, $input: UpdateAppointmentInput!) { updateAppointment(id: $id, input: $input) { id status scheduledAt } }`;
  const future = new Date(Date.now() + 7 * 24 * 3600_000);
  future.setUTCMilliseconds(0);

  async function expectFieldError(id: string, input: Record<string, unknown>, fieldErrors: Record<string, string[]>) {
    const before = await app.prisma.appointment.findUniqueOrThrow({ where: { id } });
    const result = await app.gql(UPDATE, { id, input }, token);
    expect(result.data).toBeNull();
    expect(result.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors });
    expect(await app.prisma.appointment.findUniqueOrThrow({ where: { id } })).toEqual(before);
  }

  it('confirms and reschedules an appointment', async () => {
    const id = mine.appointments.radia.id;
    const data = await ok(UPDATE, { id, input: { status: 'scheduled', scheduledAt: future.toISOString() } });
    expect(data.updateAppointment).toEqual({ id, status: 'scheduled', scheduledAt: future.toISOString() });
    const confirmed = await ok(UPDATE, { id, input: { status: 'confirmed' } });
    expect(confirmed.updateAppointment).toEqual({ id, status: 'confirmed', scheduledAt: future.toISOString() });
    const row = await app.prisma.appointment.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ status: 'confirmed', scheduledAt: future });
  });

  it('refuses bad input as field errors and changes nothing', async () => {
    const { ada, edsger } = mine.appointments;
    await expectFieldError(ada.id, { status: 'done' }, { status: ['"done" is not a valid choice.'] });
    await expectFieldError(ada.id, {}, { non_field_errors: ['Provide a status, a new time (scheduledAt), or both.'] });
    await expectFieldError(
      ada.id,
      { status: null, scheduledAt: null },
      {
        non_field_errors: ['Provide a status, a new time (scheduledAt), or both.'],
      },
    );
    await expectFieldError(
      ada.id,
      { status: 'confirmed', scheduledAt: '2020-01-01T00:00:00Z' },
      { scheduledAt: ['Must be in the future.'] },
    );
    // Edsger's appointment was cancelled: a new time needs it scheduled or confirmed again.
    await expectFieldError(
      edsger.id,
      { scheduledAt: future.toISOString() },
      {
        scheduledAt: ['Only a scheduled or confirmed appointment can be given a new time.'],
      },
    );
    await expectFieldError(
      ada.id,
      { status: 'no_show', scheduledAt: future.toISOString() },
      {
        scheduledAt: ['Only a scheduled or confirmed appointment can be given a new time.'],
      },
    );
  });

  it('reopens a cancelled appointment at a new time in one call', async () => {
    const id = mine.appointments.edsger.id;
    const data = await ok(UPDATE, { id, input: { status: 'scheduled', scheduledAt: future.toISOString() } });
    expect(data.updateAppointment).toEqual({ id, status: 'scheduled', scheduledAt: future.toISOString() });
  });

  it('is NOT_FOUND for another user’s appointment, which stays as it was', async () => {
    const id = theirs.appointments.ada.id;
    const before = await app.prisma.appointment.findUniqueOrThrow({ where: { id } });
    const result = await app.gql(UPDATE, { id, input: { status: 'cancelled' } }, token);
    expect(result.errors![0]!.extensions).toEqual({ code: 'NOT_FOUND' });
    expect(await app.prisma.appointment.findUniqueOrThrow({ where: { id } })).toEqual(before);
  });
});
