import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProvisioning, type ProvisioningRuntime } from '../src/jobs/provisioning.js';
import { startWebhookDelivery, type WebhookRuntime } from '../src/jobs/webhooks.js';
import { systemClock } from '../src/services/context.js';
import type { DialerControl } from '../src/services/dialer/control.js';
import { RetellTelephony } from '../src/services/voice/providers/retell/telephony.js';
import { inProcessEventBus } from '../src/services/events.js';
import { defaultSettings } from '../src/services/settings.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, manualDialer, ManualClock } from './support/dialer.js';
import { FakeRetell, type CreatedCall, type Script } from './support/fake-retell.js';
import { createAgent } from './support/fixtures.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { waitFor } from './support/wait.js';

// The journey of a campaign whose agents act during their calls, as far as the API, the dialer and the
// in-call tools go, through public surfaces wherever one exists: agents made from a template, a campaign
// with two A/B variants and a booking calendar with one slot left, calls placed through the Retell
// adapter, two callees racing for the last slot, the booking seen on GraphQL and delivered to the
// customer's webhook receiver while the calls are up, a callee opting out by voice and listed before
// hanging up, and the report agreeing with the webhooks after the calls end. The agents are provisioned
// at the Retell fake through the provisioning job (pg-boss), as in production.

const API_KEY = 'key_test_retell_api_0123456789';
const WEBHOOK_KEY = 'key_test_retell_webhook_0123456789';
// Monday 30 November 2026, 08:00 in New York.
const clock = new ManualClock(new Date('2026-11-30T13:00:00Z'));
const PHONES = Array.from({ length: 6 }, (_, i) => `+1415${5_000_001 + i}`);

let app: TestApp;
let fake: FakeRetell;
let dialer: ReturnType<typeof manualDialer>;
let delivery: WebhookRuntime;
let provisioning: ProvisioningRuntime;
let receiver: Receiver;

beforeAll(async () => {
  const control: DialerControl = { wake: async () => {}, report: (result) => dialer.dialer.report(result) };
  const settings = { callRateCentsPerMinute: 60, webhooks: { allowPrivateUrls: true } };
  app = await startTestApp({
    clock,
    events: inProcessEventBus(pino({ level: 'silent' })),
    dialer: control,
    settings,
    retellWebhook: { key: WEBHOOK_KEY, toleranceSeconds: 300, analysisWaitSeconds: 120 },
    voice: { queued: (id) => provisioning.control.queued(id) },
  });
  fake = await new FakeRetell({
    apiKey: API_KEY,
    webhookKey: WEBHOOK_KEY,
    webhookUrl: `${app.url}/webhooks/retell`,
    toolsUrl: `${app.url}/voice/retell/tools`,
    script: () => ({ kind: 'silent' }),
    now: () => clock.now().getTime(),
  }).start();
  provisioning = await startProvisioning(dialerEnv(app, systemClock), app.db, {
    voice: { provider: 'retell', baseUrl: fake.url, apiKey: API_KEY, timeoutSeconds: 10, publicBaseUrl: app.url },
    relayMs: 100,
    retryLimit: 3,
    retryDelaySeconds: 1,
    jobExpireSeconds: 60,
    driftSweepSeconds: 86_400,
  });
  dialer = manualDialer(dialerEnv(app, clock), new RetellTelephony({ baseUrl: fake.url, apiKey: API_KEY, timeoutSeconds: 10 }));
  receiver = await startReceiver();
  delivery = await startWebhookDelivery({ ...dialerEnv(app, systemClock), settings: { ...defaultSettings, ...settings } }, app.db, {
    delivery: { timeoutMs: 2_000, retryBaseMs: 100, retryMaxDelayMs: 400, retryWindowMs: 10_000, disableAfterMs: 60_000 },
    relayMs: 50,
    jobExpireSeconds: 5,
    superviseSeconds: 1,
    concurrency: 10,
  });
});
afterAll(async () => {
  await provisioning?.stop();
  await delivery?.stop();
  await receiver?.close();
  await fake?.close();
  await app?.close();
});

async function gql(query: string, variables: Record<string, unknown>, token: string) {
  const result = await app.gql(query, variables, token);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data;
}

const talk = (customAnalysis: Record<string, unknown> = {}): Script => ({
  kind: 'connected',
  reason: 'user_hangup',
  durationMs: 60_000,
  analysis: { call_summary: 'Talked.', user_sentiment: 'Positive', call_successful: true, custom_analysis_data: customAnalysis },
});

async function deliver(event: 'call_started' | 'call_ended' | 'call_analyzed', call: CreatedCall, script: Script) {
  expect((await fake.send(event, fake.callObject(call, event, script))).status).toBe(200);
  await dialer.dialer.settled();
}

const typesReceived = () => receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type);
const dataOf = (type: string) => receiver.ofType(type).map((r) => (JSON.parse(r.body) as { data: Record<string, unknown> }).data);

describe('the in-call journey', () => {
  it('template → agents → campaign with two variants → calls carry their variant’s agent → a race for the last slot → booking seen mid-call → opt-out by voice listed before hang-up → report and webhooks agree', async () => {
    const userId = randomUUID();
    const token = await app.token(userId);
    const admin = await app.token(randomUUID(), 'admin');
    await gql(
      `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret } }`,
      { input: { url: `${receiver.url}/hooks` } },
      token,
    );

    // Two agents from the appointment setter template, provisioned at Retell by the job: an LLM and a
    // published agent each, the agent's number bound to it.
    const agents = [await createAgent(app, token, { name: 'Sam' }), await createAgent(app, token, { name: 'Alex' })];
    const provisioned = new Map<string, { providerAgentId: string; providerVersion: number }>();
    for (const agent of agents) {
      const ready = await waitFor(
        async () => {
          const { agent: read } = await gql(
            `query($id: UUID!) { agent(id: $id) { provisioning { state error providerAgentId providerVersion version } } }`,
            { id: agent.id },
            token,
          );
          expect(read.provisioning.state).not.toBe('failed');
          return read.provisioning.state === 'ready' ? read.provisioning : undefined;
        },
        30_000,
        'the agent to be provisioned',
      );
      expect(ready).toMatchObject({ error: null, version: 1, providerAgentId: expect.stringMatching(/^agent_/) });
      const [published] = fake.agents.get(ready.providerAgentId)!;
      expect(published).toMatchObject({ agent_name: `callflow:${agent.id}`, is_published: true, version: ready.providerVersion });
      expect(fake.llms.get((published!.response_engine as { llm_id: string }).llm_id)).toMatchObject({
        model: 'gpt-4.1-mini',
      });
      expect(fake.phoneNumbers.get(agent.phoneNumbers[0]!.number)!.outbound_agents).toEqual([
        { agent_id: ready.providerAgentId, agent_version: ready.providerVersion, weight: 1 },
      ]);
      provisioned.set(agent.id, ready);
    }
    expect(provisioned.get(agents[0]!.id)!.providerAgentId).not.toBe(provisioned.get(agents[1]!.id)!.providerAgentId);
    await gql(
      `mutation($input: GrantCreditsInput!) { grantCredits(input: $input) { id } }`,
      { input: { userId, kind: 'top_up', amountCents: 100_000 } },
      admin,
    );

    // Calls at any hour, to the fake provider: the regional rules are off under an admin's exemption.
    await gql(
      `mutation($input: GrantRegionalRuleExemptionInput!) { grantRegionalRuleExemption(input: $input) { id } }`,
      {
        input: {
          userId,
          reason: 'Tests: calls go to a fake provider.',
          expiresAt: new Date(clock.now().getTime() + 86_400_000).toISOString(),
        },
      },
      admin,
    );
    const { importContacts } = await gql(
      `mutation($input: ImportContactsInput!) { importContacts(input: $input) { groupId } }`,
      { input: { groupName: 'Patients', rows: PHONES.map((Phone, i) => ({ Phone, 'First Name': `Patient ${i + 1}` })) } },
      token,
    );
    const { createCampaign } = await gql(
      `mutation($input: CreateCampaignInput!) { createCampaign(input: $input) { id } }`,
      {
        input: {
          name: 'Check-ups',
          agentId: agents[0]!.id,
          contactGroupId: importContacts.groupId,
          concurrentCalls: 6,
          callingHours: { start: '00:00', end: '24:00' },
          activeDays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
          regionalRules: false,
          scheduleConfig: { maxAttempts: 1 },
        },
      },
      token,
    );
    const campaignId: string = createCampaign.id;
    await gql(
      `mutation($id: UUID!, $input: SetCampaignVariantsInput!) { setCampaignVariants(id: $id, input: $input) { id } }`,
      {
        id: campaignId,
        input: {
          variants: [
            { agentId: agents[0]!.id, name: 'Sam', weight: 50 },
            { agentId: agents[1]!.id, name: 'Alex', weight: 50 },
          ],
        },
      },
      token,
    );
    // One slot is left to book: Monday 09:00 to 09:30 in New York, one place.
    await gql(
      `mutation($id: UUID!, $input: CampaignCallToolsInput!) { setCampaignCallTools(id: $id, input: $input) { id } }`,
      {
        id: campaignId,
        input: {
          bookingCalendar: {
            timeZone: 'America/New_York',
            weeklyHours: [{ day: 'mon', start: '09:00', end: '09:30' }],
            slotMinutes: 30,
            capacityPerSlot: 1,
            horizonDays: 1,
          },
        },
      },
      token,
    );
    await gql(`mutation($id: UUID!) { dispatchCampaign(id: $id) { status } }`, { id: campaignId }, token);
    await dialer.run(campaignId);

    // Every call carries the agent of its contact's variant, at the version Retell published, and its
    // attempt records that agent and our version.
    const calls = PHONES.map((phone) => fake.calls.find((c) => c.body.to_number === phone)!);
    expect(calls.every(Boolean)).toBe(true);
    const enrolments = await app.prisma.campaignContact.findMany({ where: { campaignId }, include: { contact: true } });
    const variants = await app.prisma.campaignVariant.findMany({ where: { campaignId } });
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId } });
    for (const call of calls) {
      const enrolment = enrolments.find((e) => e.contact.phoneNumber === call.body.to_number)!;
      const variant = variants.find((v) => v.id === enrolment.variantId)!;
      const agent = provisioned.get(variant.agentId)!;
      expect(call.body).toMatchObject({ override_agent_id: agent.providerAgentId, override_agent_version: agent.providerVersion });
      const attempt = attempts.find((a) => a.id === call.body.metadata.attempt_id)!;
      expect(attempt).toMatchObject({ agentId: variant.agentId, agentVersion: 1 });
    }
    for (const call of calls) await deliver('call_started', call, talk());
    const asAgent = (call: CreatedCall) => ({
      callObject: { ...fake.callObject(call, 'registered'), call_status: 'ongoing' },
    });

    // Two callees take the last slot at the same moment: one gets it.
    const [first, second] = [calls[0]!, calls[1]!];
    const offered = await fake.callTool(first, 'check_availability', {}, asAgent(first));
    expect(offered.body.slots).toEqual([expect.objectContaining({ start: '2026-11-30T09:00:00-05:00' })]);
    const race = await Promise.all(
      [first, second].map((call) => fake.callTool(call, 'book_appointment', { start: '2026-11-30T09:00:00-05:00' }, asAgent(call))),
    );
    const winner = race.findIndex((r) => r.body.booked === true);
    expect(winner).toBeGreaterThanOrEqual(0);
    expect(race[1 - winner]!.body).toMatchObject({ error: 'slot_full', alternatives: [] });
    const booker = [first, second][winner]!;

    // Visible on GraphQL and delivered to the customer's receiver while the call is still up.
    const mid = await gql(
      `query($id: UUID!) { appointments(campaignId: $id) { edges { node { id status scheduledAt callAttempt { id status } } } } }`,
      { id: campaignId },
      token,
    );
    expect(mid.appointments.edges).toEqual([
      {
        node: {
          id: race[winner]!.body.appointment_id,
          status: 'scheduled',
          scheduledAt: '2026-11-30T14:00:00.000Z',
          callAttempt: { id: booker.body.metadata.attempt_id, status: 'in_progress' },
        },
      },
    ]);
    await waitFor(
      async () => (receiver.ofType('appointment.booked').length ? true : undefined),
      30_000,
      'appointment.booked at the receiver',
    );

    // A third callee says to stop calling: listed before hanging up.
    const optOut = calls[2]!;
    expect((await fake.callTool(optOut, 'add_to_do_not_call', { reason: 'Stop calling me' }, asAgent(optOut))).body).toMatchObject({
      listed: true,
    });
    const listed = await gql(`{ doNotCallEntries(first: 10) { edges { node { phoneNumber source } } } }`, {}, token);
    expect(listed.doNotCallEntries.edges).toEqual([{ node: { phoneNumber: PHONES[2], source: 'call' } }]);
    expect((await app.prisma.callAttempt.findUniqueOrThrow({ where: { id: optOut.body.metadata.attempt_id } })).status).toBe('in_progress');
    await waitFor(
      async () => (receiver.ofType('contact.opted_out').length ? true : undefined),
      30_000,
      'contact.opted_out at the receiver',
    );

    // Every call ends; the booking call's analysis names the slot it booked.
    for (const call of calls) {
      const script = call === booker ? talk({ appointment_time: '2026-11-30T09:00:00-05:00' }) : talk();
      await deliver('call_ended', call, script);
      await deliver('call_analyzed', call, script);
    }
    await dialer.run(campaignId);

    const report = await gql(
      `query($id: UUID!) { campaign(id: $id) { status progress { doNotCall done total }
         report { metrics { appointmentsBooked calls { total } variants { name appointments calls } } } } }`,
      { id: campaignId },
      token,
    );
    const { campaign } = report;
    expect(campaign.status).toBe('completed');
    expect(campaign.progress).toEqual({ doNotCall: 1, done: 6, total: 6 });
    expect(campaign.report.metrics.appointmentsBooked).toBe(1);
    expect(campaign.report.metrics.calls.total).toBe(6);
    expect(campaign.report.metrics.variants.reduce((sum: number, v: { appointments: number }) => sum + v.appointments, 0)).toBe(1);

    await waitFor(
      async () => (dataOf('call.finished').length === 6 && receiver.ofType('campaign.status_changed').length ? true : undefined),
      30_000,
      'every call.finished and the campaign completed at the receiver',
    );
    expect(dataOf('appointment.booked')).toEqual([
      expect.objectContaining({ appointment_id: race[winner]!.body.appointment_id, campaign_id: campaignId }),
    ]);
    expect(dataOf('appointment.changed')).toEqual([
      expect.objectContaining({ appointment_id: race[winner]!.body.appointment_id, status: 'confirmed' }),
    ]);
    expect(dataOf('contact.opted_out')).toEqual([expect.objectContaining({ phone_number: PHONES[2], campaign_id: campaignId })]);
    const finished = new Map(dataOf('call.finished').map((f) => [f.to_number, f]));
    expect(finished.get(PHONES[2])).toMatchObject({ outcome: 'do_not_call' });
    expect([...finished.values()].filter((f) => f.outcome === 'do_not_call')).toHaveLength(campaign.progress.doNotCall);
    expect(dataOf('appointment.booked')).toHaveLength(campaign.report.metrics.appointmentsBooked);
    expect(typesReceived().filter((t) => t === 'call.finished')).toHaveLength(campaign.report.metrics.calls.total);
    expect(await app.prisma.appointment.count({ where: { userId } })).toBe(1);
    // A whole campaign's journey: a shared, busy machine may take minutes over it.
  }, 240_000);
});
