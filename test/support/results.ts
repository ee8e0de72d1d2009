import type { CallStatus, Sentiment } from '../../src/generated/prisma/client.js';
import type { TestApp } from './app.js';
import { templateId } from './fixtures.js';

// A campaign as the dialer leaves it (rows only: the dialer arrives with its own issue), with every
// figure of its report known in advance. Times are fixed so that orders and date filters are exact.

export const T0 = new Date('2026-10-01T10:00:00.000Z');
export const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

interface Call {
  status: CallStatus;
  minute: number;
  duration?: number;
  cost?: bigint;
  sentiment?: Sentiment;
  summary?: string;
}

type DialRow = { state: 'pending' | 'dialing' | 'done'; outcome?: string };
type Attempt = { id: string; contactId: string; status: CallStatus; createdAt: Date };

interface Person {
  first: string;
  last: string;
  phone: string;
  status?: 'active' | 'invalid' | 'do_not_call';
  dial?: DialRow;
  calls?: Call[];
}

/**
 * The "Spring recall" campaign over eight contacts, in group order:
 * 1 Ada reached on her 2nd call, 2 Alan out of retries, 3 Grace waiting for a retry, 4 Katherine on a call,
 * 5 Edsger reached at once, 6 Barbara do-not-call (never dialed), 7 Donald with an invalid number and
 * 8 Frances, both never dispatched. Ada's and Edsger's calls booked appointments (Edsger's since cancelled).
 */
export const SPRING: Person[] = [
  {
    first: 'Ada',
    last: 'Lovelace',
    phone: '+14155550101',
    dial: { state: 'done', outcome: 'reached' },
    calls: [
      { status: 'no_answer', minute: 0 },
      { status: 'completed', minute: 60, duration: 120, cost: 20n, sentiment: 'positive', summary: 'Booked a cleaning' },
    ],
  },
  {
    first: 'Alan',
    last: 'Turing',
    phone: '+14155550102',
    dial: { state: 'done', outcome: 'not_reached' },
    calls: [
      { status: 'busy', minute: 1 },
      { status: 'voicemail', minute: 61, duration: 30, cost: 5n, sentiment: 'neutral' },
      { status: 'no_answer', minute: 121 },
    ],
  },
  { first: 'Grace', last: 'Hopper', phone: '+14155550103', dial: { state: 'pending' }, calls: [{ status: 'failed', minute: 2 }] },
  {
    first: 'Katherine',
    last: 'Johnson',
    phone: '+14155550104',
    dial: { state: 'dialing' },
    calls: [{ status: 'in_progress', minute: 130 }],
  },
  {
    first: 'Edsger',
    last: 'Dijkstra',
    phone: '+14155550105',
    dial: { state: 'done', outcome: 'reached' },
    calls: [{ status: 'completed', minute: 3, duration: 60, cost: 10n, sentiment: 'negative', summary: 'Not interested now' }],
  },
  { first: 'Barbara', last: 'Liskov', phone: '+14155550106', status: 'do_not_call', dial: { state: 'done', outcome: 'do_not_call' } },
  { first: 'Donald', last: 'Knuth', phone: '12', status: 'invalid' },
  { first: 'Frances', last: 'Allen', phone: '+14155550108' },
];

/** What the report of SPRING must say. */
export const SPRING_METRICS = {
  contacts: { total: 8, callable: 6, attempted: 5, reached: 2, pending: 4 },
  calls: { total: 8, queued: 0, ringing: 0, inProgress: 1, completed: 2, noAnswer: 2, busy: 1, failed: 1, voicemail: 1, canceled: 0 },
  successRate: 0.4,
  averageDurationSeconds: 70,
  totalDurationSeconds: 210,
  totalCostCents: 35,
  appointmentsBooked: 2,
  sentiment: { positive: 1, neutral: 0, negative: 1, unknown: 0 },
  // Seeded outside the dialer, without outcomes; and no call was stopped by a rule.
  variants: [],
  variantComparison: null,
  callbacks: { requested: 0, pending: 0 },
  outcomes: { human: 0, voicemail: 0, ivr: 0, callScreening: 0, noAnswer: 0, busy: 0, failed: 0, invalidNumber: 0 },
  blocked: {
    total: 0,
    doNotCall: 0,
    consentMissing: 0,
    registry: 0,
    regionalHours: 0,
    regionalDay: 0,
    holiday: 0,
    frequencyCap: 0,
    consentRevoked: 0,
    abandonedRecall: 0,
  },
};

async function insertCampaignWithHistory(app: TestApp, userId: string, name: string, people: Person[]) {
  const agent = await app.prisma.agent.create({
    data: { userId, templateId: await templateId(app), name: `${name} agent`, responseEngineType: 'retell-llm', systemPrompt: 'Hi' },
  });
  const group = await app.prisma.contactGroup.create({ data: { userId, name: `${name} group`, total: people.length } });
  const campaign = await app.prisma.campaign.create({
    data: { userId, agentId: agent.id, contactGroupId: group.id, name, status: 'running', startedAt: T0 },
  });
  const contacts = [];
  const attempts: Attempt[] = [];
  for (const [index, person] of people.entries()) {
    const contact = await app.prisma.contact.create({
      data: {
        userId,
        groupId: group.id,
        phoneNumber: person.phone,
        status: person.status ?? 'active',
        name: `${person.first} ${person.last}`,
        data: { first_name: person.first, last_name: person.last, phone_number: person.phone },
        createdAt: new Date(T0.getTime() - (people.length - index) * 1000),
      },
    });
    contacts.push(contact);
    const calls = person.calls ?? [];
    for (const [n, call] of calls.entries()) {
      const created = await app.prisma.callAttempt.create({
        data: {
          userId,
          campaignId: campaign.id,
          contactId: contact.id,
          attemptNumber: n + 1,
          status: call.status,
          toNumber: person.phone,
          durationSeconds: call.duration ?? null,
          costCents: call.cost ?? 0n,
          sentiment: call.sentiment ?? 'unknown',
          summary: call.summary ?? null,
          createdAt: at(call.minute),
        },
      });
      attempts.push(created);
    }
    if (person.dial) {
      const last = calls.at(-1);
      await app.prisma.campaignContact.create({
        data: {
          campaignId: campaign.id,
          contactId: contact.id,
          state: person.dial.state,
          outcome: person.dial.outcome ?? null,
          attempts: calls.length,
          lastStatus: last?.status ?? null,
          lastAttemptAt: last ? at(last.minute) : null,
        },
      });
    }
  }
  return { agent, group, campaign, contacts, attempts };
}

/**
 * SPRING for `userId`, plus a second campaign of the same user (one completed call, one appointment)
 * whose figures must stay out of SPRING's report.
 */
export async function seedResults(app: TestApp, userId: string) {
  await app.prisma.user.upsert({ where: { id: userId }, create: { id: userId }, update: {} });
  const spring = await insertCampaignWithHistory(app, userId, 'Spring recall', SPRING);
  const autumn = await insertCampaignWithHistory(app, userId, 'Autumn check-up', [
    {
      first: 'Radia',
      last: 'Perlman',
      phone: '+14155550109',
      dial: { state: 'done', outcome: 'reached' },
      calls: [{ status: 'completed', minute: 200, duration: 45, cost: 8n, sentiment: 'positive', summary: 'Confirmed' }],
    },
  ]);
  // SPRING's completed calls: Ada's (contact 1) and Edsger's (contact 5).
  const [adaCall, edsgerCall] = [0, 4].map((index) =>
    spring.attempts.find((a) => a.contactId === spring.contacts[index]!.id && a.status === 'completed')!,
  ) as [Attempt, Attempt];
  const radiaCall = autumn.attempts[0]!;
  const appointment = (call: { id: string; contactId: string }, campaignId: string, status: string, scheduled: Date, minute: number) =>
    app.prisma.appointment.create({
      data: {
        userId,
        contactId: call.contactId,
        campaignId,
        callAttemptId: call.id,
        status,
        scheduledAt: scheduled,
        timezone: 'America/New_York',
        contactSnapshot: { name: 'snapshot', phone_number: '+1415555' },
        appointmentData: { source_call_id: call.id, notes: `Booked at minute ${minute}` },
        createdAt: at(minute),
      },
    });
  const appointments = {
    ada: await appointment(adaCall, spring.campaign.id, 'scheduled', new Date('2026-10-10T15:00:00Z'), 62),
    edsger: await appointment(edsgerCall, spring.campaign.id, 'cancelled', new Date('2026-10-05T09:00:00Z'), 5),
    radia: await appointment(radiaCall, autumn.campaign.id, 'confirmed', new Date('2026-10-07T11:30:00Z'), 202),
  };
  return { spring, autumn, appointments, adaCall, edsgerCall, radiaCall };
}

export type Results = Awaited<ReturnType<typeof seedResults>>;
