import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookDelivery, type WebhookRuntime, type WebhookRuntimeOptions } from '../src/jobs/webhooks.js';
import { serviceContext, systemClock } from '../src/services/context.js';
import { grantCredits } from '../src/services/billing/grants.js';
import { defaultSettings } from '../src/services/settings.js';
import { send } from '../src/services/webhooks/send.js';
import { bodySchemaOf, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../src/services/webhooks/events.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, recordingDialer, runningCampaign } from './support/dialer.js';
import { startReceiver, type Received, type Receiver } from './support/receiver.js';
import { waitFor } from './support/wait.js';

// Webhooks to customers, end to end: endpoints made on GraphQL, events written by the services and the
// dialer, deliveries on the job engine to a real local receiver, and signatures checked by the
// Standard Webhooks library as an independent verifier.

const CREATE = /* GraphQL */ `
  mutation ($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      secret
      endpoint {
        id
        url
        eventTypes
        enabled
      }
    }
  }
`;
const DELIVERIES = /* GraphQL */ `
  query ($id: UUID!) {
    webhookEndpoint(id: $id) {
      enabled
      disabledReason
      failingSince
      deliveries(first: 50) {
        totalCount
        edges {
          node {
            id
            eventId
            eventType
            state
            attempts
            lastStatusCode
            lastLatencyMs
            lastError
            nextAttemptAt
            deliveredAt
            replayOf
          }
        }
      }
    }
  }
`;

// Retries from a tenth of a second apart, given up after 5 s; an endpoint failing for 10 s is disabled.
// The window leaves room for a few attempts however slow the machine (each waits up to half a second
// for the queue's polling); the timeout is one no local receiver misses unless the test makes it hang,
// and an attempt's job outlives it, so that no attempt is taken for lost while it still waits.
const FAST: WebhookRuntimeOptions = {
  delivery: { timeoutMs: 8_000, retryBaseMs: 100, retryMaxDelayMs: 400, retryWindowMs: 5_000, disableAfterMs: 10_000 },
  relayMs: 50,
  jobExpireSeconds: 20,
  superviseSeconds: 1,
  concurrency: 10,
};

interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  state: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  replayOf: string | null;
}

/**
 * The events among what a receiver got, each once. Delivery is at least once: an attempt whose answer
 * was lost is made again, with the same webhook-id and body, and receivers deduplicate by webhook-id.
 */
function eventsIn(received: Received[]): Received[] {
  const byId = new Map<string, Received>();
  for (const request of received) {
    const first = byId.get(request.headers['webhook-id']!);
    if (first) expect(request.body).toBe(first.body);
    else byId.set(request.headers['webhook-id']!, request);
  }
  return [...byId.values()];
}

/** The body of a received delivery, checked against its event type's published schema. */
function bodyOf(request: Received): { type: WebhookEventType; timestamp: string; data: Record<string, any> } {
  const body = JSON.parse(request.body) as { type: WebhookEventType };
  expect(WEBHOOK_EVENT_TYPES).toContain(body.type);
  bodySchemaOf(body.type).strict().parse(body);
  return body as never;
}

// Several tests wait out the retry window, or the time after which a failing endpoint is disabled.
describe('webhooks to customers', { timeout: 120_000 }, () => {
  let app: TestApp;
  let runtime: WebhookRuntime;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    app = await startTestApp({ settings: { webhooks: { allowPrivateUrls: true } } });
    const env = { ...dialerEnv(app, systemClock), settings: { ...defaultSettings, webhooks: { allowPrivateUrls: true } } };
    runtime = await startWebhookDelivery(env, app.db, FAST);
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await runtime.stop();
    await app.close();
  });

  async function receiver(answer?: Parameters<typeof startReceiver>[0]) {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  }

  async function createEndpoint(token: string, input: Record<string, unknown>) {
    const result = await app.gql(CREATE, { input }, token);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data.createWebhookEndpoint as {
      secret: string;
      endpoint: { id: string; url: string; eventTypes: string[]; enabled: boolean };
    };
  }

  async function log(token: string, id: string) {
    const result = await app.gql(DELIVERIES, { id }, token);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    const endpoint = result.data.webhookEndpoint;
    const deliveries: Delivery[] = endpoint.deliveries.edges.map((e: { node: Delivery }) => e.node);
    return { ...endpoint, deliveries } as {
      enabled: boolean;
      disabledReason: string | null;
      failingSince: string | null;
      deliveries: Delivery[];
    };
  }

  async function ping(token: string, id: string): Promise<Delivery> {
    const result = await app.gql(`mutation($id: UUID!) { pingWebhookEndpoint(id: $id) { id eventId state } }`, { id }, token);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data.pingWebhookEndpoint;
  }

  const deliveryOf = async (token: string, endpointId: string, id: string) =>
    (await log(token, endpointId)).deliveries.find((d) => d.id === id)!;

  const settled = (token: string, endpointId: string, id: string, timeoutMs = 60_000) =>
    waitFor(
      async () => {
        const d = await deliveryOf(token, endpointId, id);
        return d && d.state !== 'pending' ? d : undefined;
      },
      timeoutMs,
      'the delivery to succeed or be given up',
    );

  it('signs a ping as Standard Webhooks says, verified by its own library, and logs the delivery', async () => {
    const r = await receiver();
    const token = await app.token();
    const made = await createEndpoint(token, { url: `${r.url}/hooks`, description: 'CRM' });
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(made.endpoint).toMatchObject({ url: `${r.url}/hooks`, eventTypes: [], enabled: true });

    const sent = await ping(token, made.endpoint.id);
    const done = await settled(token, made.endpoint.id, sent.id);
    expect(done).toMatchObject({ state: 'succeeded', attempts: 1, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
    expect(done.lastLatencyMs).toBeGreaterThanOrEqual(0);
    expect(done.deliveredAt).not.toBeNull();

    expect(r.received).toHaveLength(1);
    const request = r.received[0]!;
    expect(request.path).toBe('/hooks');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toBe(sent.eventId);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const verified = new Webhook(made.secret).verify(request.body, request.headers) as { type: string; data: unknown };
    expect(verified).toMatchObject({ type: 'webhook.ping', data: { endpoint_id: made.endpoint.id } });
    bodyOf(request);
    // Another secret, or a changed body, does not verify.
    expect(() => new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(request.body, request.headers)).toThrow();
    expect(() => new Webhook(made.secret).verify(request.body.replace('ping', 'pong'), request.headers)).toThrow();

    // The secret is shown once: no query returns it.
    const listed = await app.gql(`{ webhookEndpoints { id url description } }`, {}, token);
    expect(JSON.stringify(listed)).not.toContain(made.secret);
    expect(listed.data.webhookEndpoints).toEqual([{ id: made.endpoint.id, url: `${r.url}/hooks`, description: 'CRM' }]);
  });

  it("sends a campaign's events as they happen: each call's end, its analysis, an appointment, an opt-out, the campaign's end", async () => {
    const r = await receiver();
    const env = dialerEnv(app, systemClock);
    const setup = await runningCampaign(app, env, {
      rows: [{ Phone: '+14155550301' }, { Phone: '+14155550302' }, { Phone: '+14155550303' }],
      campaign: { scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 60, retry_on: ['no_answer'] } },
    });
    const made = await createEndpoint(setup.token, { url: r.url });
    const at = new Date(Date.now() + 2 * 86_400_000);
    const run = recordingDialer(env, (call) =>
      call.to === '+14155550301'
        ? {
            outcome: 'human',
            durationSeconds: 90,
            summary: 'Booked for Thursday.',
            sentiment: 'positive',
            appointment: { scheduledAt: at, notes: 'cleaning' },
          }
        : call.to === '+14155550302'
          ? { outcome: 'human', durationSeconds: 20, doNotCall: true, summary: 'Asked not to be called.', sentiment: 'negative' }
          : { outcome: 'no_answer', durationSeconds: 0 },
    );
    await run.run(setup.campaignId);

    await waitFor(async () => (r.ofType('campaign.status_changed').length ? true : undefined), 15_000, 'the campaign to complete');
    await waitFor(async () => (eventsIn(r.received).length >= 8 ? true : undefined), 15_000, 'every event');
    for (const request of r.received) new Webhook(made.secret).verify(request.body, request.headers);
    const bodies = eventsIn(r.received).map(bodyOf);
    const of = (type: string) => bodies.filter((b) => b.type === type).map((b) => b.data);

    const finished = of('call.finished');
    expect(finished).toHaveLength(3);
    const byNumber = new Map(finished.map((f) => [f.to_number, f]));
    // Sixty cents a minute (the test's rate), billed per second.
    expect(byNumber.get('+14155550301')).toMatchObject({
      status: 'completed',
      duration_seconds: 90,
      cost_cents: 90,
      outcome: 'reached',
      last_attempt: true,
    });
    expect(byNumber.get('+14155550302')).toMatchObject({ status: 'completed', outcome: 'do_not_call', last_attempt: true });
    expect(byNumber.get('+14155550303')).toMatchObject({ status: 'no_answer', cost_cents: 0, outcome: 'not_reached', last_attempt: true });
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
    for (const a of attempts) expect(finished.find((f) => f.call_id === a.id)!.cost_cents).toBe(Number(a.costCents));

    expect(
      of('call.analysed')
        .map((a) => a.summary)
        .sort(),
    ).toEqual(['Asked not to be called.', 'Booked for Thursday.']);
    const [appointment] = of('appointment.booked');
    expect(appointment).toMatchObject({ status: 'scheduled', scheduled_at: at.toISOString(), campaign_id: setup.campaignId });
    expect(of('contact.opted_out')).toEqual([expect.objectContaining({ phone_number: '+14155550302', campaign_id: setup.campaignId })]);
    expect(of('campaign.status_changed')).toEqual([
      { campaign_id: setup.campaignId, name: 'Dialer test', status: 'completed', previous_status: 'running', paused_reason: null },
    ]);
  });

  it('sends an endpoint only the event types it takes, and nothing to another customer', async () => {
    const r = await receiver();
    const other = await receiver();
    const token = await app.token();
    await createEndpoint(token, { url: r.url, eventTypes: ['campaign.status_changed'] });
    await createEndpoint(await app.token(), { url: other.url });
    // An import: not a type the endpoint takes.
    const imported = await app.gql(
      `mutation { importContacts(input: { groupName: "Leads", rows: [{ Phone: "+14155550401" }] }) { groupId } }`,
      {},
      token,
    );
    expect(imported.errors).toBeUndefined();
    // A paused campaign: through the service's own state change.
    const setup = await runningCampaign(app, dialerEnv(app, systemClock), { rows: [{ Phone: '+14155550402' }] });
    await createEndpoint(setup.token, { url: r.url, eventTypes: ['campaign.status_changed'] });
    const paused = await app.gql(`mutation($id: UUID!) { pauseCampaign(id: $id) { status } }`, { id: setup.campaignId }, setup.token);
    expect(paused.errors).toBeUndefined();
    await waitFor(async () => (r.received.length ? true : undefined), 15_000, 'the status change');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(eventsIn(r.received).map(bodyOf)).toEqual([
      expect.objectContaining({
        type: 'campaign.status_changed',
        data: expect.objectContaining({ status: 'paused', previous_status: 'running', paused_reason: 'user_requested' }),
      }),
    ]);
    expect(other.received).toEqual([]);
  });

  it('sends import.finished and credits.low from the services that make them', async () => {
    const r = await receiver();
    const token = await app.token();
    const userId = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sub as string;
    await createEndpoint(token, { url: r.url, eventTypes: ['import.finished', 'credits.low'] });

    const imported = await app.gql(
      `mutation { importContacts(input: { groupName: "November", rows: [{ Phone: "+14155550501" }, { Phone: "+14155550501" }, { Phone: "nope" }] }) { groupId totalImported totalInvalid totalDuplicates totalDoNotCall } }`,
      {},
      token,
    );
    expect(imported.errors).toBeUndefined();

    const threshold = await app.gql(`mutation { setLowCreditThreshold(cents: "500") { lowBalanceThresholdCents } }`, {}, token);
    expect(threshold.data.setLowCreditThreshold.lowBalanceThresholdCents).toBe(500);
    const admin = serviceContext(dialerEnv(app, systemClock), { id: randomUUID(), isAdmin: true });
    await grantCredits(admin, { user_id: userId, kind: 'top_up', amount_cents: 1_000 });
    await grantCredits(admin, { user_id: userId, kind: 'adjustment', amount_cents: -600 });
    // Further down, and back up: one event per fall below the threshold.
    await grantCredits(admin, { user_id: userId, kind: 'adjustment', amount_cents: -100 });

    await waitFor(async () => (eventsIn(r.received).length >= 2 ? true : undefined), 15_000, 'the events');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const bodies = eventsIn(r.received).map(bodyOf);
    // The same totals as the import's own answer.
    const totals = imported.data.importContacts;
    expect(bodies.find((b) => b.type === 'import.finished')!.data).toEqual({
      contact_group_id: totals.groupId,
      name: 'November',
      total_imported: totals.totalImported,
      total_invalid: 1,
      total_duplicates: 1,
      total_do_not_call: totals.totalDoNotCall,
    });
    expect([totals.totalInvalid, totals.totalDuplicates]).toEqual([1, 1]);
    expect(bodies.filter((b) => b.type === 'credits.low').map((b) => b.data)).toEqual([{ balance_cents: 400, threshold_cents: 500 }]);
  });

  it('sends appointment.changed when the user moves an appointment', async () => {
    const r = await receiver();
    const env = dialerEnv(app, systemClock);
    const setup = await runningCampaign(app, env, { rows: [{ Phone: '+14155550601' }] });
    const run = recordingDialer(env, () => ({
      outcome: 'human',
      durationSeconds: 30,
      appointment: { scheduledAt: new Date(Date.now() + 86_400_000), notes: '' },
    }));
    await run.run(setup.campaignId);
    await createEndpoint(setup.token, { url: r.url, eventTypes: ['appointment.changed'] });
    const appointment = await app.prisma.appointment.findFirstOrThrow({ where: { campaignId: setup.campaignId } });
    const moved = new Date(Date.now() + 3 * 86_400_000);
    const result = await app.gql(
      `mutation($id: UUID!, $at: DateTime!) { updateAppointment(id: $id, input: { status: "confirmed", scheduledAt: $at }) { id } }`,
      { id: appointment.id, at: moved.toISOString() },
      setup.token,
    );
    expect(result.errors).toBeUndefined();
    await waitFor(async () => (r.received.length ? true : undefined), 15_000, 'the change');
    expect(bodyOf(r.received[0]!).data).toMatchObject({
      appointment_id: appointment.id,
      status: 'confirmed',
      scheduled_at: moved.toISOString(),
    });
  });

  it('writes no event for a change that rolled back, and one for the same change committed', async () => {
    const setup = await runningCampaign(app, dialerEnv(app, systemClock), { rows: [{ Phone: '+14155550701' }] });
    const r = await receiver();
    await createEndpoint(setup.token, { url: r.url });
    const events = () => app.prisma.webhookEvent.count({ where: { userId: setup.userId } });
    const pause = `UPDATE campaigns SET status = 'paused', paused_reason = 'user_requested' WHERE id = '${setup.campaignId}'`;
    await expect(
      app.sql.transaction(async (tx) => {
        await tx.run({ name: 'test.pause', text: pause, dynamic: true });
        // Inside the transaction the event is there, with the change.
        const inside = await tx.run<{ n: number }>({
          name: 'test.events',
          text: `SELECT count(*)::int AS n FROM webhook_events WHERE user_id = '${setup.userId}'`,
          dynamic: true,
        });
        expect(inside[0]!.n).toBe(1);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await events()).toBe(0);
    await app.sql.transaction((tx) => tx.run({ name: 'test.pause', text: pause, dynamic: true }));
    expect(await events()).toBe(1);
    await waitFor(async () => (r.received.length ? true : undefined), 15_000, 'the committed change');
  });

  it('retries a failing receiver with growing delays, one webhook-id throughout, until it answers', async () => {
    const r = await receiver((_request, index) => ({ status: index < 2 ? 503 : 200 }));
    const token = await app.token();
    const made = await createEndpoint(token, { url: r.url });
    const sent = await ping(token, made.endpoint.id);
    const pending = await waitFor(async () => {
      const d = await deliveryOf(token, made.endpoint.id, sent.id);
      return d.attempts === 1 ? d : undefined;
    }, 15_000);
    expect(pending).toMatchObject({ state: 'pending', lastStatusCode: 503, lastError: 'answered 503' });
    const done = await settled(token, made.endpoint.id, sent.id);
    expect(done).toMatchObject({ state: 'succeeded', attempts: 3, lastStatusCode: 200 });
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((q) => q.headers['webhook-id']))).toEqual(new Set([sent.eventId]));
    const gaps = [r.received[1]!.at - r.received[0]!.at, r.received[2]!.at - r.received[1]!.at];
    // 100 ms, then 200 ms, each ±20%.
    expect(gaps[0]).toBeGreaterThanOrEqual(80);
    expect(gaps[1]).toBeGreaterThanOrEqual(160);
    expect((await log(token, made.endpoint.id)).failingSince).toBeNull();
  });

  it('gives a delivery up after the retry window (dead letter), and replays it once the receiver recovers', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const token = await app.token();
    const made = await createEndpoint(token, { url: r.url });
    const before = new Date();
    const sent = await ping(token, made.endpoint.id);
    const failed = await settled(token, made.endpoint.id, sent.id);
    expect(failed).toMatchObject({ state: 'failed', lastStatusCode: 500, nextAttemptAt: null });
    // Each attempt reached the receiver, and it was tried until an attempt began after the retry window.
    // (How many attempts fit in the window depends on how fast the machine is, not on the rules.)
    expect(r.received).toHaveLength(failed.attempts);
    const row = await app.prisma.webhookMessage.findUniqueOrThrow({ where: { id: sent.id } });
    expect(row.lastAttemptAt!.getTime() - row.createdAt.getTime()).toBeGreaterThanOrEqual(FAST.delivery.retryWindowMs);
    expect((await log(token, made.endpoint.id)).failingSince).not.toBeNull();

    r.answer(() => ({ status: 204 }));
    // Enabled again in case the slow machine let the endpoint fail long enough to be disabled.
    await app.gql(
      `mutation($id: UUID!) { updateWebhookEndpoint(id: $id, input: { enabled: true }) { id } }`,
      { id: made.endpoint.id },
      token,
    );
    const replayed = await app.gql(
      `mutation($id: UUID!, $since: DateTime!) { replayFailedWebhookDeliveries(endpointId: $id, since: $since) }`,
      { id: made.endpoint.id, since: before.toISOString() },
      token,
    );
    expect(replayed.data.replayFailedWebhookDeliveries).toBe(1);
    const again = await app.gql(
      `mutation($id: UUID!, $since: DateTime!) { replayFailedWebhookDeliveries(endpointId: $id, since: $since) }`,
      { id: made.endpoint.id, since: before.toISOString() },
      token,
    );
    expect(again.data.replayFailedWebhookDeliveries).toBe(0);
    const replay = await waitFor(async () => {
      const d = (await log(token, made.endpoint.id)).deliveries.find((x) => x.replayOf === sent.id);
      return d?.state === 'succeeded' ? d : undefined;
    }, 15_000);
    expect(replay).toMatchObject({ eventId: sent.eventId, attempts: 1, lastStatusCode: 204 });
    expect(r.received.at(-1)!.headers['webhook-id']).toBe(sent.eventId);
    expect((await log(token, made.endpoint.id)).failingSince).toBeNull();

    // One delivery, replayed by hand.
    const one = await app.gql(`mutation($id: UUID!) { replayWebhookDelivery(id: $id) { replayOf state } }`, { id: sent.id }, token);
    expect(one.data.replayWebhookDelivery).toEqual({ replayOf: sent.id, state: 'pending' });
  });

  it('tries again after an attempt that began inside the retry window, however late its answer came', async () => {
    // The first attempt is answered only after the window has passed: it began inside it, so it is not the last.
    const r = await receiver((request, index) => ({
      status: 500,
      delayMs: index === 0 ? Date.parse(bodyOf(request).timestamp) + FAST.delivery.retryWindowMs + 300 - Date.now() : 0,
    }));
    const token = await app.token();
    const made = await createEndpoint(token, { url: r.url });
    const sent = await ping(token, made.endpoint.id);
    const failed = await settled(token, made.endpoint.id, sent.id);
    expect(failed).toMatchObject({ state: 'failed', lastStatusCode: 500, nextAttemptAt: null });
    expect(r.received).toHaveLength(failed.attempts);
    const row = await app.prisma.webhookMessage.findUniqueOrThrow({ where: { id: sent.id } });
    expect(row.lastAttemptAt!.getTime() - row.createdAt.getTime()).toBeGreaterThanOrEqual(FAST.delivery.retryWindowMs);
  });

  it('times out a slow receiver and tries again', async () => {
    const r = await receiver((_request, index) => (index === 0 ? 'hang' : { status: 200 }));
    const token = await app.token();
    const made = await createEndpoint(token, { url: r.url });
    const sent = await ping(token, made.endpoint.id);
    const done = await settled(token, made.endpoint.id, sent.id);
    expect(done).toMatchObject({ state: 'succeeded', attempts: 2, lastStatusCode: 200 });
    expect(r.received).toHaveLength(2);
    // The log keeps the answered attempt's latency, not the one cut off at the timeout.
    const log = await app.prisma.webhookMessage.findUniqueOrThrow({ where: { id: sent.id } });
    expect(log.lastLatencyMs).toBeLessThan(FAST.delivery.timeoutMs);
  });

  it('does not follow a redirect', async () => {
    const r = await receiver((request) => (request.path === '/moved' ? { status: 200 } : { status: 302, headers: { location: '/moved' } }));
    const token = await app.token();
    const made = await createEndpoint(token, { url: `${r.url}/hook` });
    const sent = await ping(token, made.endpoint.id);
    await waitFor(async () => ((await deliveryOf(token, made.endpoint.id, sent.id)).attempts >= 1 ? true : undefined), 15_000);
    const d = await deliveryOf(token, made.endpoint.id, sent.id);
    expect(d.lastStatusCode).toBe(302);
    expect(d.lastError).toBe('answered 302; redirects are not followed');
    expect(r.received.every((q) => q.path === '/hook')).toBe(true);
  });

  it('disables an endpoint that answers 410 Gone, and tells the customer on another endpoint', async () => {
    const gone = await receiver(() => ({ status: 410 }));
    const watcher = await receiver();
    const token = await app.token();
    const made = await createEndpoint(token, { url: gone.url });
    await createEndpoint(token, { url: watcher.url, eventTypes: ['webhook_endpoint.disabled'] });
    const sent = await ping(token, made.endpoint.id);
    const d = await settled(token, made.endpoint.id, sent.id);
    expect(d).toMatchObject({ state: 'failed', attempts: 1, lastStatusCode: 410 });
    const endpoint = await log(token, made.endpoint.id);
    expect(endpoint).toMatchObject({ enabled: false, disabledReason: 'gone' });
    await waitFor(async () => (watcher.received.length ? true : undefined), 15_000, 'the disabled event');
    expect(bodyOf(watcher.received[0]!).data).toEqual({ endpoint_id: made.endpoint.id, url: gone.url, reason: 'gone' });
    // Disabled: a ping is refused.
    const refused = await app.gql(`mutation($id: UUID!) { pingWebhookEndpoint(id: $id) { id } }`, { id: made.endpoint.id }, token);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', reason: 'webhook_endpoint_disabled' });
  });

  it('disables an endpoint at which every delivery failed for too long', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const token = await app.token();
    const made = await createEndpoint(token, { url: r.url });
    // Each ping fails for a retry window; the endpoint has failed for long enough after two or three,
    // counted from its first failed attempt, whenever the machine let that come.
    const pings = Math.ceil(FAST.delivery.disableAfterMs / FAST.delivery.retryWindowMs) + 2;
    for (let i = 0; i < pings && (await log(token, made.endpoint.id)).enabled; i++) {
      const sent = await ping(token, made.endpoint.id);
      await settled(token, made.endpoint.id, sent.id);
    }
    expect(await log(token, made.endpoint.id)).toMatchObject({ enabled: false, disabledReason: 'failing' });
  });

  it('signs with both secrets during a rotation overlap, then with the new one only', async () => {
    const r = await receiver();
    const token = await app.token();
    const made = await createEndpoint(token, { url: r.url });
    const rotate = async (overlapSeconds: number) => {
      const result = await app.gql(
        `mutation($id: UUID!, $s: Int) { rotateWebhookEndpointSecret(id: $id, overlapSeconds: $s) { secret endpoint { previousSecretExpiresAt } } }`,
        { id: made.endpoint.id, s: overlapSeconds },
        token,
      );
      return result.data.rotateWebhookEndpointSecret as { secret: string };
    };
    const second = await rotate(3_600);
    expect(second.secret).not.toBe(made.secret);
    const a = await ping(token, made.endpoint.id);
    await settled(token, made.endpoint.id, a.id);
    const during = r.received.at(-1)!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    new Webhook(second.secret).verify(during.body, during.headers);
    new Webhook(made.secret).verify(during.body, during.headers);

    const third = await rotate(0);
    const b = await ping(token, made.endpoint.id);
    await settled(token, made.endpoint.id, b.id);
    const after = r.received.at(-1)!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    new Webhook(third.secret).verify(after.body, after.headers);
    expect(() => new Webhook(second.secret).verify(after.body, after.headers)).toThrow();
  });

  it("keeps every customer's endpoints and deliveries to that customer (404 for others)", async () => {
    const r = await receiver();
    const owner = await app.token();
    const stranger = await app.token();
    const made = await createEndpoint(owner, { url: r.url });
    const sent = await ping(owner, made.endpoint.id);
    const id = made.endpoint.id;
    expect((await app.gql(`query($id: UUID!) { webhookEndpoint(id: $id) { id } }`, { id }, stranger)).data.webhookEndpoint).toBeNull();
    expect(
      (await app.gql(`query($id: UUID!) { webhookDelivery(id: $id) { id } }`, { id: sent.id }, stranger)).data.webhookDelivery,
    ).toBeNull();
    for (const mutation of [
      `mutation($id: UUID!) { pingWebhookEndpoint(id: $id) { id } }`,
      `mutation($id: UUID!) { deleteWebhookEndpoint(id: $id) }`,
      `mutation($id: UUID!) { rotateWebhookEndpointSecret(id: $id) { secret } }`,
      `mutation($id: UUID!) { updateWebhookEndpoint(id: $id, input: { enabled: false }) { id } }`,
      `mutation($id: UUID!) { replayWebhookDelivery(id: $id) { id } }`,
    ]) {
      const result = await app.gql(mutation, { id: mutation.includes('replay') ? sent.id : id }, stranger);
      expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    expect((await app.gql(`{ webhookEndpoints { id } }`, {}, stranger)).data.webhookEndpoints).toEqual([]);
    expect((await log(owner, id)).enabled).toBe(true);
  });

  it('deletes an endpoint without losing its log, and sends it nothing more', async () => {
    const r = await receiver();
    const token = await app.token();
    const made = await createEndpoint(token, { url: r.url });
    const sent = await ping(token, made.endpoint.id);
    await settled(token, made.endpoint.id, sent.id);
    const deleted = await app.gql(`mutation($id: UUID!) { deleteWebhookEndpoint(id: $id) }`, { id: made.endpoint.id }, token);
    expect(deleted.data.deleteWebhookEndpoint).toBe(true);
    expect((await app.gql(`{ webhookEndpoints { id } }`, {}, token)).data.webhookEndpoints).toEqual([]);
    expect(await app.prisma.webhookMessage.count({ where: { endpointId: made.endpoint.id } })).toBe(1);
    const refused = await app.gql(`mutation($id: UUID!) { pingWebhookEndpoint(id: $id) { id } }`, { id: made.endpoint.id }, token);
    expect(refused.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('refuses bad endpoint input with field errors and makes nothing', async () => {
    const token = await app.token();
    for (const [input, field] of [
      [{ url: 'ftp://example.com/x' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: `https://example.com/${'x'.repeat(3000)}` }, 'url'],
      [{ url: 'https://user:pw@example.com/' }, 'url'],
      [{ url: 'https://example.com/', eventTypes: ['call.finished', 'nope'] }, 'eventTypes.1'],
      [{ url: 'https://example.com/', description: 'd'.repeat(501) }, 'description'],
    ] as const) {
      const result = await app.gql(CREATE, { input }, token);
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(Object.keys(result.errors![0]!.extensions!.fieldErrors)).toEqual([field]);
    }
    expect((await app.gql(`{ webhookEndpoints { id } }`, {}, token)).data.webhookEndpoints).toEqual([]);
    const rotate = await app.gql(
      `mutation($id: UUID!) { rotateWebhookEndpointSecret(id: $id, overlapSeconds: -1) { secret } }`,
      { id: randomUUID() },
      token,
    );
    expect(rotate.errors?.[0]?.extensions?.code).toBeDefined();
  });

  it('publishes a JSON Schema and an example of every event type, and each example fits its schema', async () => {
    const result = await app.gql(`{ webhookEventTypes { type description schema example } }`, {}, await app.token());
    const types = result.data.webhookEventTypes as { type: WebhookEventType; schema: { type: string }; example: unknown }[];
    expect(types.map((t) => t.type)).toEqual(WEBHOOK_EVENT_TYPES);
    for (const t of types) {
      expect(t.schema.type).toBe('object');
      bodySchemaOf(t.type).strict().parse(t.example);
    }
  });
});

describe('webhook endpoints in production', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ settings: { webhooks: { allowPrivateUrls: false } } });
  });
  afterAll(() => app.close());

  it('refuses URLs on loopback, private or link-local addresses', async () => {
    const token = await app.token();
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://[::1]/hook',
      'http://10.1.2.3/hook',
      'http://192.168.1.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[fe80::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://0.0.0.0/hook',
    ]) {
      const result = await app.gql(CREATE, { input: { url } }, token);
      expect(result.errors?.[0]?.extensions?.fieldErrors, url).toEqual({
        url: [expect.stringMatching(/loopback, private or link-local|does not resolve/)],
      });
    }
  });

  it('accepts only globally routable unicast, judging the IPv4 address an IPv6 one carries', async () => {
    const userId = randomUUID();
    const token = await app.token(userId);
    const refused = [
      // NAT64: the well-known prefix carrying metadata, loopback or private addresses; the local-use /48 always.
      'http://[64:ff9b::a9fe:a9fe]/hook',
      'http://[64:ff9b::127.0.0.1]/hook',
      'http://[64:ff9b::c0a8:101]/hook',
      'http://[64:ff9b:1::808:808]/hook',
      // 6to4 of the metadata address, loopback and a private one.
      'http://[2002:a9fe:a9fe::1]/hook',
      'http://[2002:7f00:1::1]/hook',
      'http://[2002:a00:1::1]/hook',
      // Teredo: a client (stored inverted) on loopback, a server on a private network.
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook',
      'http://[2001:0:a00:1::f7f7:f7f7]/hook',
      // IPv4-compatible and IPv4-translated forms.
      'http://[::127.0.0.1]/hook',
      'http://[::a9fe:a9fe]/hook',
      'http://[::ffff:0:7f00:1]/hook',
      'http://[::ffff:10.0.0.1]/hook',
      // Documentation and benchmarking ranges.
      'http://192.0.2.10/hook',
      'http://198.51.100.7/hook',
      'http://203.0.113.9/hook',
      'http://[2001:db8::1]/hook',
      'http://[3fff::1]/hook',
      'http://198.18.0.1/hook',
      'http://[2001:2::1]/hook',
      // Carrier-grade NAT, reserved, broadcast, unique local, multicast, discard, unallocated IPv6.
      'http://100.64.0.1/hook',
      'http://240.0.0.1/hook',
      'http://255.255.255.255/hook',
      'http://[fd00::1]/hook',
      'http://[ff02::1]/hook',
      'http://[100::1]/hook',
      'http://[4000::1]/hook',
    ];
    for (const url of refused) {
      const result = await app.gql(CREATE, { input: { url } }, token);
      expect(result.errors?.[0]?.extensions?.fieldErrors, url).toEqual({ url: [expect.stringMatching(/not globally routable/)] });
    }
    expect(await app.prisma.webhookEndpoint.count({ where: { userId } })).toBe(0);

    // Saved, never called: nothing in this file emits an event for this user.
    for (const url of [
      'https://93.184.215.14/hook',
      'https://[2606:4700:4700::1111]/hook',
      'https://[64:ff9b::808:808]/hook',
      'https://[2002:808:808::1]/hook',
      'https://[::ffff:8.8.8.8]/hook',
    ]) {
      const result = await app.gql(CREATE, { input: { url } }, token);
      expect(result.errors, url).toBeUndefined();
    }
  });

  it('will not connect to such an address at delivery, even when a name resolves to one later', async () => {
    const r = await startReceiver();
    try {
      for (const url of [r.url, r.url.replace('127.0.0.1', 'localhost')]) {
        const outcome = await send(url, {}, '{}', { timeoutMs: 2_000, allowPrivateAddresses: false });
        expect(outcome).toMatchObject({ statusCode: null, error: 'the host resolves to a loopback, private or link-local address' });
      }
      // The receiver's own loopback address, through NAT64's well-known prefix.
      const nat64 = r.url.replace('127.0.0.1', '[64:ff9b::7f00:1]');
      expect(await send(nat64, {}, '{}', { timeoutMs: 2_000, allowPrivateAddresses: false })).toMatchObject({
        statusCode: null,
        error: 'the host resolves to a loopback, private or link-local address',
      });
      expect(r.received).toEqual([]);
      expect((await send(r.url, {}, '{}', { timeoutMs: 2_000, allowPrivateAddresses: true })).statusCode).toBe(200);
    } finally {
      await r.close();
    }
  });
});
