import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollContacts } from '../src/services/campaigns/store.js';
import { importContacts } from '../src/services/contacts/import.js';
import type { DialerControl } from '../src/services/dialer/control.js';
import { RetellTelephony } from '../src/services/voice/providers/retell/telephony.js';
import { inProcessEventBus } from '../src/services/events.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, manualDialer, ManualClock, runningCampaign } from './support/dialer.js';
import { FakeRetell, type CreatedCall, type Script } from './support/fake-retell.js';

// The agent's in-call tools as Retell calls them: custom function requests over real HTTP, signed by
// the local fake of Retell, for calls the dialer placed through the Retell adapter and that are under
// way (call_started delivered). Each test delivers the call's later events itself.

const API_KEY = 'key_test_retell_api_0123456789';
const WEBHOOK_KEY = 'key_test_retell_webhook_0123456789';

// Monday 30 November 2026, 08:00 in New York.
const clock = new ManualClock(new Date('2026-11-30T13:00:00Z'));
let app: TestApp;
let fake: FakeRetell;
let dialer: ReturnType<typeof manualDialer>;

beforeAll(async () => {
  const control: DialerControl = { wake: async () => {}, report: (result) => dialer.dialer.report(result) };
  app = await startTestApp({
    clock,
    events: inProcessEventBus(pino({ level: 'silent' })),
    dialer: control,
    settings: { callRateCentsPerMinute: 60, webhooks: { allowPrivateUrls: true } },
    retellWebhook: { key: WEBHOOK_KEY, toleranceSeconds: 300, analysisWaitSeconds: 120 },
  });
  fake = await new FakeRetell({
    apiKey: API_KEY,
    webhookKey: WEBHOOK_KEY,
    webhookUrl: `${app.url}/webhooks/retell`,
    toolsUrl: `${app.url}/voice/retell/tools`,
    script: () => ({ kind: 'silent' }),
    now: () => clock.now().getTime(),
  }).start();
  dialer = manualDialer(dialerEnv(app, clock), new RetellTelephony({ baseUrl: fake.url, apiKey: API_KEY, timeoutSeconds: 10 }));
});
afterAll(async () => {
  await fake?.close();
  await app?.close();
});

let seq = 0;
const nextNumber = () => `+1415${6_000_000 + (seq += 1)}`;

const CALENDAR = {
  timeZone: 'America/New_York',
  weeklyHours: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, start: '09:00', end: '12:00' })),
  slotMinutes: 30,
  capacityPerSlot: 1,
  horizonDays: 14,
};

const talk = (customAnalysis: Record<string, unknown> = {}): Script => ({
  kind: 'connected',
  reason: 'user_hangup',
  durationMs: 90_000,
  analysis: { call_summary: 'Talked.', user_sentiment: 'Positive', call_successful: true, custom_analysis_data: customAnalysis },
});

const SET_TOOLS = /* GraphQL */ `
  mutation ($id: UUID!, $input: CampaignCallToolsInput!) {
    setCampaignCallTools(id: $id, input: $input) {
      id
      transferNumber
      bookingCalendar {
        timeZone
        slotMinutes
        bufferMinutes
        capacityPerSlot
        horizonDays
        blackoutDates
        weeklyHours {
          day
          start
          end
        }
      }
    }
  }
`;

async function setTools(token: string, campaignId: string, input: Record<string, unknown>) {
  const result = await app.gql(SET_TOOLS, { id: campaignId, input }, token);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data.setCampaignCallTools;
}

/** A customer's campaign whose `count` calls are under way, its calendar set (unless null), with a webhook endpoint taking every event. */
async function liveCalls(options: { count?: number; calendar?: Record<string, unknown> | null; campaign?: Record<string, unknown> } = {}) {
  const phones = Array.from({ length: options.count ?? 1 }, nextNumber);
  const env = dialerEnv(app, clock);
  const setup = await runningCampaign(app, env, { rows: phones.map((Phone) => ({ Phone })), campaign: options.campaign });
  const endpoint = await app.gql(
    `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret } }`,
    { input: { url: 'http://127.0.0.1:9/hooks' } },
    setup.token,
  );
  if (endpoint.errors) throw new Error(JSON.stringify(endpoint.errors));
  if (options.calendar !== null) await setTools(setup.token, setup.campaignId, { bookingCalendar: options.calendar ?? CALENDAR });
  await dialer.run(setup.campaignId);
  const calls = phones.map((phone) => fake.calls.find((c) => c.body.to_number === phone)!);
  for (const call of calls) await deliver('call_started', call, talk());
  return { ...setup, phones, calls, call: calls[0]! };
}

async function deliver(event: 'call_started' | 'call_ended' | 'call_analyzed', call: CreatedCall, script: Script) {
  const delivery = await fake.send(event, fake.callObject(call, event, script));
  expect(delivery.status).toBe(200);
  await dialer.dialer.settled();
}

/** The call ends and its analysis comes in, as Retell sends them. */
async function hangUp(call: CreatedCall, script: Script = talk()) {
  await deliver('call_ended', call, script);
  await deliver('call_analyzed', call, script);
}

const events = async (userId: string, type: string) =>
  (await app.prisma.webhookEvent.findMany({ where: { userId, type }, orderBy: { createdAt: 'asc' } })).map(
    (e) => (e.payload as { data: Record<string, unknown> }).data,
  );

const attemptOf = (call: CreatedCall) => app.prisma.callAttempt.findUniqueOrThrow({ where: { id: call.body.metadata.attempt_id } });

/** Everything a tool could change, for "nothing changed" checks. */
async function state(userId: string) {
  const [attempts, appointments, doNotCall, contacts, emitted] = await Promise.all([
    app.prisma.callAttempt.findMany({ where: { userId }, orderBy: { id: 'asc' } }),
    app.prisma.appointment.findMany({ where: { userId } }),
    app.prisma.doNotCallEntry.findMany({ where: { userId } }),
    app.prisma.contact.findMany({ where: { userId }, orderBy: { id: 'asc' } }),
    app.prisma.webhookEvent.count({ where: { userId } }),
  ]);
  return { attempts, appointments, doNotCall, contacts, emitted };
}

describe('who may call a tool', () => {
  it('answers 401 to a missing, wrong, tampered or stale signature, and changes nothing', async () => {
    const { call, userId } = await liveCalls();
    const before = await state(userId);
    const now = clock.now().getTime();
    const tries = [
      fake.callTool(call, 'add_to_do_not_call', {}, { signature: null }),
      fake.callTool(call, 'add_to_do_not_call', {}, { key: 'key_someone_else_0123456789' }),
      fake.callTool(call, 'add_to_do_not_call', {}, { tamper: (body) => body.replace('add_to_do_not_call', 'check_availability') }),
      fake.callTool(call, 'add_to_do_not_call', {}, { timestampMs: now - 301_000 }),
      fake.callTool(call, 'add_to_do_not_call', {}, { signature: `v=${now},d=${'0'.repeat(64)}` }),
    ];
    for (const res of await Promise.all(tries)) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: expect.any(String) });
    }
    expect(await state(userId)).toEqual(before);
  });

  it('answers 404 for a call that is not ours, one whose call id or agent does not match, and a tool not served', async () => {
    const { call, userId, agent } = await liveCalls();
    await app.prisma.agent.update({ where: { id: agent.id }, data: { providerAgentId: 'agent_front_desk' } });
    const before = await state(userId);
    const stranger = { ...call, callId: 'call_not_ours_0001', body: { ...call.body, metadata: { attempt_id: randomUUID() } } };
    const impostor = { ...call, callId: 'call_not_ours_0002' };
    const otherAgent = { callObject: { ...fake.callObject(call, 'registered'), agent_id: 'agent_someone_else', call_status: 'ongoing' } };
    for (const res of [
      await fake.callTool(stranger, 'add_to_do_not_call', {}),
      await fake.callTool(impostor, 'add_to_do_not_call', {}),
      await fake.callTool(call, 'add_to_do_not_call', {}, otherAgent),
      await fake.callTool(call, 'end_call', {}),
      await fake.callTool(call, 'launch_rockets', {}),
    ]) {
      expect(res.status).toBe(404);
    }
    expect(await state(userId)).toEqual(before);
    // The agent the call was placed with is accepted.
    const own = { callObject: { ...fake.callObject(call, 'registered'), agent_id: 'agent_front_desk', call_status: 'ongoing' } };
    expect((await fake.callTool(call, 'check_availability', {}, own)).status).toBe(200);
  });

  it('answers 409 once the call has ended, before and after its result is written', async () => {
    const { call, userId } = await liveCalls();
    await deliver('call_ended', call, talk());
    const waiting = await fake.callTool(call, 'add_to_do_not_call', {});
    expect(waiting).toMatchObject({ status: 409, body: { reason: 'call_not_in_flight' } });
    await deliver('call_analyzed', call, talk());
    const before = await state(userId);
    expect(await fake.callTool(call, 'book_appointment', { start: '2026-11-30T09:00:00-05:00' })).toMatchObject({
      status: 409,
      body: { reason: 'call_not_in_flight' },
    });
    expect(await state(userId)).toEqual(before);
  });

  it('answers 400 to a signed body that is not a tool call, and 503 while Retell is not configured', async () => {
    const { call } = await liveCalls({ calendar: null });
    const res = await fake.callTool(call, 'check_availability', {}, { callObject: { call_status: 'ongoing' } });
    expect(res).toMatchObject({ status: 400, body: { 'call.call_id': ['This field is required.'] } });
    const unconfigured = await startTestApp();
    try {
      const answer = await unconfigured.request('POST', '/voice/retell/tools/check_availability', { body: {} });
      expect(answer.status).toBe(503);
    } finally {
      await unconfigured.close();
    }
  });

  it('answers bad arguments with an error the LLM can read, and changes nothing', async () => {
    const { call, userId } = await liveCalls();
    const before = await state(userId);
    const res = await fake.callTool(call, 'schedule_callback', { local_time: 'tomorrow at six' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ error: 'invalid_arguments', fields: { local_time: ['Use YYYY-MM-DDTHH:MM.'] } });
    expect((await fake.callTool(call, 'book_appointment', {})).body).toMatchObject({ error: 'invalid_arguments' });
    expect(await state(userId)).toEqual(before);
  });
});

describe('check_availability and book_appointment', () => {
  it('lists the open slots of the campaign’s calendar, in its zone, for a day or from now', async () => {
    const { call } = await liveCalls();
    const first = await fake.callTool(call, 'check_availability', { limit: 2 });
    expect(first).toMatchObject({
      status: 200,
      body: {
        time_zone: 'America/New_York',
        slots: [
          { start: '2026-11-30T09:00:00-05:00', end: '2026-11-30T09:30:00-05:00', spoken: 'Monday, November 30 at 9:00 AM' },
          { start: '2026-11-30T09:30:00-05:00' },
        ],
      },
    });
    const weekend = await fake.callTool(call, 'check_availability', { date: '2026-12-05' });
    expect(weekend.body).toMatchObject({
      slots: [],
      message: 'No open slot on that day.',
      next_open: { start: '2026-12-07T09:00:00-05:00' },
    });
  });

  it('books a slot at once: the appointment is in the API and its webhook event is written while the call is up', async () => {
    const { call, campaignId, userId, token } = await liveCalls();
    const res = await fake.callTool(call, 'book_appointment', { start: '2026-11-30T10:00:00-05:00', notes: 'Cleaning' });
    expect(res).toMatchObject({
      status: 200,
      body: { booked: true, start: '2026-11-30T10:00:00-05:00', spoken: 'Monday, November 30 at 10:00 AM' },
    });
    expect((await attemptOf(call)).status).toBe('in_progress');
    const read = await app.gql(
      `query($id: UUID!) { appointments(campaignId: $id) { edges { node { id status scheduledAt timezone callAttemptId appointmentData } } } }`,
      { id: campaignId },
      token,
    );
    const attempt = await attemptOf(call);
    expect(read.data.appointments.edges).toEqual([
      {
        node: {
          id: res.body.appointment_id,
          status: 'scheduled',
          scheduledAt: '2026-11-30T15:00:00.000Z',
          timezone: 'America/New_York',
          callAttemptId: attempt.id,
          appointmentData: { source: 'in_call', source_call_id: attempt.id, calendar: `campaign:${campaignId}`, notes: 'Cleaning' },
        },
      },
    ]);
    expect(await events(userId, 'appointment.booked')).toEqual([
      expect.objectContaining({ appointment_id: res.body.appointment_id, call_id: attempt.id, scheduled_at: '2026-11-30T15:00:00.000Z' }),
    ]);
    // Retell may send a function call again: the same slot answers the same appointment; another is refused.
    expect((await fake.callTool(call, 'book_appointment', { start: '2026-11-30T15:00:00Z' })).body).toMatchObject({
      booked: true,
      appointment_id: res.body.appointment_id,
    });
    expect((await fake.callTool(call, 'book_appointment', { start: '2026-11-30T11:00:00-05:00' })).body).toMatchObject({
      error: 'already_booked',
      appointment: { appointment_id: res.body.appointment_id },
    });
    expect(await app.prisma.appointment.count({ where: { userId } })).toBe(1);
  });

  it('refuses a time that is not a slot, with open slots to offer instead', async () => {
    const { call, userId } = await liveCalls();
    for (const [start, error] of [
      ['2026-11-30T10:10:00-05:00', 'not_a_slot'],
      ['2026-11-30T07:00:00-05:00', 'past'],
      ['2026-12-30T10:00:00-05:00', 'beyond_horizon'],
    ]) {
      const res = await fake.callTool(call, 'book_appointment', { start });
      expect(res.body).toMatchObject({ error, alternatives: [{ start: expect.any(String) }, {}, {}] });
    }
    expect(await app.prisma.appointment.count({ where: { userId } })).toBe(0);
  });

  it("books on the agent's calendar when the campaign has none, and says so when neither has one", async () => {
    const { call, agent, token, userId } = await liveCalls({ calendar: null });
    expect((await fake.callTool(call, 'check_availability', {})).body).toMatchObject({ error: 'no_calendar' });
    const set = await app.gql(
      `mutation($id: UUID!, $calendar: BookingCalendarInput) { setAgentBookingCalendar(id: $id, calendar: $calendar) { bookingCalendar { timeZone slotMinutes } } }`,
      { id: agent.id, calendar: { ...CALENDAR, timeZone: 'Europe/London', slotMinutes: 60 } },
      token,
    );
    expect(set.data.setAgentBookingCalendar.bookingCalendar).toEqual({ timeZone: 'Europe/London', slotMinutes: 60 });
    const res = await fake.callTool(call, 'book_appointment', { start: '2026-12-01T09:00:00Z' });
    expect(res.body).toMatchObject({ booked: true, time_zone: 'Europe/London' });
    expect((await app.prisma.appointment.findFirstOrThrow({ where: { userId } })).appointmentData).toMatchObject({
      calendar: `agent:${agent.id}`,
    });
  });

  it('never lets concurrent calls overfill a slot: of six calls racing for two places, two book and four are offered others', async () => {
    const { calls, userId, token, campaignId } = await liveCalls({ count: 6, campaign: { concurrentCalls: 6 } });
    await setTools(token, campaignId, { bookingCalendar: { ...CALENDAR, capacityPerSlot: 2 } });
    const answers = await Promise.all(calls.map((call) => fake.callTool(call, 'book_appointment', { start: '2026-11-30T11:30:00-05:00' })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers.filter((a) => a.body.booked)).toHaveLength(2);
    const full = answers.filter((a) => a.body.error === 'slot_full');
    expect(full).toHaveLength(4);
    for (const answer of full) expect(answer.body.alternatives[0].start).toBe('2026-12-01T09:00:00-05:00');
    const booked = await app.prisma.appointment.findMany({ where: { userId } });
    expect(booked.map((a) => a.scheduledAt!.toISOString())).toEqual(['2026-11-30T16:30:00.000Z', '2026-11-30T16:30:00.000Z']);
    expect(await events(userId, 'appointment.booked')).toHaveLength(2);
    // The slot is no longer offered.
    const open = await fake.callTool(calls[5]!, 'check_availability', { date: '2026-11-30' });
    expect(open.body.slots.map((s: { start: string }) => s.start)).not.toContain('2026-11-30T11:30:00-05:00');
  });
});

describe('the analysis after a call that booked', () => {
  it('confirms the appointment when it names the same time, and books no second one', async () => {
    const { call, userId } = await liveCalls();
    const booked = await fake.callTool(call, 'book_appointment', { start: '2026-11-30T09:30:00-05:00' });
    await hangUp(call, talk({ appointment_time: '2026-11-30T09:30:00-05:00', appointment_notes: 'First visit' }));
    const appointments = await app.prisma.appointment.findMany({ where: { userId } });
    expect(appointments).toHaveLength(1);
    expect(appointments[0]).toMatchObject({
      id: booked.body.appointment_id,
      status: 'confirmed',
      appointmentData: { source: 'in_call', analysis: { notes: 'First visit', agrees: true } },
    });
    expect(await events(userId, 'appointment.booked')).toHaveLength(1);
    expect(await events(userId, 'appointment.changed')).toEqual([
      expect.objectContaining({ appointment_id: booked.body.appointment_id, status: 'confirmed' }),
    ]);
  });

  it('keeps a different time the analysis read beside the booking, without moving it', async () => {
    const { call, userId } = await liveCalls();
    await fake.callTool(call, 'book_appointment', { start: '2026-11-30T09:30:00-05:00' });
    await hangUp(call, talk({ appointment_time: '2026-12-03T15:30:00-05:00' }));
    const appointments = await app.prisma.appointment.findMany({ where: { userId } });
    expect(appointments).toHaveLength(1);
    expect(appointments[0]).toMatchObject({
      status: 'scheduled',
      scheduledAt: new Date('2026-11-30T14:30:00Z'),
      appointmentData: { analysis: { scheduled_at: '2026-12-03T20:30:00.000Z', agrees: false } },
    });
    expect(await events(userId, 'appointment.changed')).toEqual([]);
  });
});

describe('add_to_do_not_call', () => {
  it('lists the number while the call is up, so that no campaign of the customer dials it; the call’s end says so once', async () => {
    const { call, phones, userId, ctx, agent, campaignId } = await liveCalls({ calendar: null });
    const res = await fake.callTool(call, 'add_to_do_not_call', { reason: 'Said stop calling' });
    expect(res).toMatchObject({ status: 200, body: { listed: true } });
    expect((await attemptOf(call)).status).toBe('in_progress');
    expect(await app.prisma.doNotCallEntry.findMany({ where: { userId } })).toEqual([
      expect.objectContaining({ phoneNumber: phones[0], source: 'call', reason: 'Said stop calling' }),
    ]);
    // Another campaign of the customer, whose group has the same number, does not dial it.
    const second = await importContacts(ctx, { group_name: 'Another list', csv_data: [{ Phone: phones[0]! }] });
    const other = await app.prisma.campaign.create({
      data: {
        userId,
        agentId: agent.id,
        contactGroupId: second.groupId,
        name: 'Second campaign',
        status: 'running',
        startedAt: clock.now(),
        callingHours: { start: '00:00', end: '24:00' },
        activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
        regionalRules: false,
      },
    });
    await enrollContacts(app.sql, other.id, clock.now());
    const placed = fake.calls.length;
    await dialer.run(other.id);
    expect(fake.calls.length).toBe(placed);
    expect(await app.prisma.campaignContact.findMany({ where: { campaignId: other.id } })).toEqual([
      expect.objectContaining({ state: 'done', outcome: 'do_not_call' }),
    ]);
    expect(await events(userId, 'contact.opted_out')).toEqual([
      expect.objectContaining({ phone_number: phones[0], campaign_id: campaignId }),
    ]);

    // The analysis does not mention it: the call's contact is done all the same, and opted out once.
    await hangUp(call);
    expect(await app.prisma.campaignContact.findFirstOrThrow({ where: { campaignId } })).toMatchObject({
      state: 'done',
      outcome: 'do_not_call',
    });
    expect(await events(userId, 'contact.opted_out')).toHaveLength(1);
    expect(await events(userId, 'call.finished')).toEqual([expect.objectContaining({ outcome: 'do_not_call', last_attempt: true })]);
  });
});

describe('schedule_callback', () => {
  it("takes the callee's local time in their zone, and their contact is due then once the call ends", async () => {
    const { call, campaignId } = await liveCalls({
      calendar: null,
      campaign: { timezone: 'America/Chicago', callingHours: { start: '06:00', end: '18:00' } },
    });
    const res = await fake.callTool(call, 'schedule_callback', { local_time: '2026-12-02T16:30', note: 'After work' });
    expect(res).toMatchObject({
      status: 200,
      body: { scheduled: true, time_zone: 'America/Chicago', local_time: '2026-12-02T16:30', spoken: 'Wednesday, December 2 at 4:30 PM' },
    });
    expect((await attemptOf(call)).callbackAt).toEqual(new Date('2026-12-02T22:30:00Z'));
    await hangUp(call);
    expect(await app.prisma.campaignContact.findFirstOrThrow({ where: { campaignId } })).toMatchObject({
      state: 'pending',
      callbackAt: new Date('2026-12-02T22:30:00Z'),
      nextAttemptAt: new Date('2026-12-02T22:30:00Z'),
    });
  });

  it('answers a time outside the calling hours, or past, or too far, with what to offer instead, and changes nothing', async () => {
    const { call, userId } = await liveCalls({
      calendar: null,
      campaign: {
        timezone: 'America/Chicago',
        callingHours: { start: '06:00', end: '18:00' },
        activeDays: ['mon', 'tue', 'wed', 'thu', 'fri'],
      },
    });
    const before = await state(userId);
    const late = await fake.callTool(call, 'schedule_callback', { local_time: '2026-12-02T19:00' });
    expect(late.body).toMatchObject({
      error: 'outside_calling_hours',
      nearest_allowed: { local_time: '2026-12-03T06:00', spoken: 'Thursday, December 3 at 6:00 AM' },
    });
    const saturday = await fake.callTool(call, 'schedule_callback', { local_time: '2026-12-05T10:00' });
    expect(saturday.body).toMatchObject({ error: 'outside_calling_hours', nearest_allowed: { local_time: '2026-12-07T06:00' } });
    expect((await fake.callTool(call, 'schedule_callback', { local_time: '2026-11-29T10:00' })).body).toMatchObject({ error: 'in_past' });
    expect((await fake.callTool(call, 'schedule_callback', { local_time: '2027-02-01T10:00' })).body).toMatchObject({ error: 'too_far' });
    expect(await state(userId)).toEqual(before);
  });
});

describe('transfer_call and the campaign’s settings', () => {
  it('has no number to transfer to until the campaign names one, which the call is given as {{transfer_number}}', async () => {
    const { call, token, campaignId, phones, userId } = await liveCalls({ calendar: null });
    expect((await fake.callTool(call, 'transfer_call', {})).body).toMatchObject({ error: 'transfer_unavailable' });
    const set = await setTools(token, campaignId, { transferNumber: '(415) 555-0199' });
    expect(set).toMatchObject({ transferNumber: '+14155550199', bookingCalendar: null });
    expect((await fake.callTool(call, 'transfer_call', {})).body).toEqual({ transfer_number: '+14155550199' });
    // The next call of the campaign carries it to the agent.
    const next = nextNumber();
    const group = await app.prisma.campaign.findUniqueOrThrow({ where: { id: campaignId } });
    await app.prisma.contact.create({ data: { userId, groupId: group.contactGroupId, phoneNumber: next } });
    await enrollContacts(app.sql, campaignId, clock.now());
    await dialer.run(campaignId);
    const placed = fake.calls.find((c) => c.body.to_number === next)!;
    expect(placed.body.retell_llm_dynamic_variables).toMatchObject({ transfer_number: '+14155550199' });
    expect(fake.calls.find((c) => c.body.to_number === phones[0])!.body.retell_llm_dynamic_variables).not.toHaveProperty('transfer_number');
  });

  it('refuses a bad calendar or number field by field, another customer’s campaign as not found, and clears with null', async () => {
    const { token, campaignId } = await liveCalls();
    const bad = await app.gql(
      SET_TOOLS,
      {
        id: campaignId,
        input: {
          bookingCalendar: { ...CALENDAR, timeZone: 'Mars/Olympus', weeklyHours: [{ day: 'mon', start: '12:00', end: '09:00' }] },
          transferNumber: 'call me',
        },
      },
      token,
    );
    expect(bad.errors![0]!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      fieldErrors: { 'bookingCalendar.timeZone': [expect.any(String)], 'bookingCalendar.weeklyHours.0.end': ['Must be later than start.'] },
    });
    const number = await app.gql(SET_TOOLS, { id: campaignId, input: { transferNumber: 'call me' } }, token);
    expect(number.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: { transferNumber: [expect.any(String)] } });
    const stranger = await app.gql(SET_TOOLS, { id: campaignId, input: { transferNumber: null } }, await app.token(randomUUID()));
    expect(stranger.errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect((await setTools(token, campaignId, {})).bookingCalendar).toMatchObject({ timeZone: 'America/New_York', bufferMinutes: 0 });
    expect(await setTools(token, campaignId, { bookingCalendar: null })).toMatchObject({ bookingCalendar: null });
    const history = await app.prisma.campaignChange.findMany({ where: { campaignId }, orderBy: { seq: 'asc' } });
    expect(history.map((h) => Object.keys(h.changes as object))).toContainEqual(['booking_calendar']);
  });
});
