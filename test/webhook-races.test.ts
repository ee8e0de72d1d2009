import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookDelivery, type WebhookRuntime, type WebhookRuntimeOptions } from '../src/jobs/webhooks.js';
import { systemClock } from '../src/services/context.js';
import { defaultSettings } from '../src/services/settings.js';
import { MAX_ENDPOINTS } from '../src/services/webhooks/endpoints.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv } from './support/dialer.js';
import { startReceiver, type Received, type Receiver } from './support/receiver.js';
import { waitFor } from './support/wait.js';

// Requests that change one customer's webhook endpoints at the same moment, through GraphQL. On
// PostgreSQL each request runs on its own connection, so only the database can keep them apart, as it
// must between API processes. One round of a race may happen not to overlap, so each runs several.

const ROUNDS = 5;
// Several rounds of many requests each: a generous limit, for a machine shared with other work.
const RACE_TIMEOUT_MS = 180_000;

// A failed attempt gives its delivery up at once, so that a test can make failed deliveries quickly.
const OPTIONS: WebhookRuntimeOptions = {
  delivery: { timeoutMs: 5_000, retryBaseMs: 100, retryMaxDelayMs: 400, retryWindowMs: 0, disableAfterMs: 3_600_000 },
  relayMs: 50,
  jobExpireSeconds: 10,
  superviseSeconds: 1,
  concurrency: 10,
};

const CREATE = `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { id } } }`;
const ROTATE = `mutation($id: UUID!) { rotateWebhookEndpointSecret(id: $id) { secret } }`;
const PING = `mutation($id: UUID!) { pingWebhookEndpoint(id: $id) { id eventId } }`;
const REPLAY_FAILED = `mutation($id: UUID!, $since: DateTime!) { replayFailedWebhookDeliveries(endpointId: $id, since: $since) }`;

let app: TestApp;
let runtime: WebhookRuntime;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ settings: { webhooks: { allowPrivateUrls: true } } });
  const env = { ...dialerEnv(app, systemClock), settings: { ...defaultSettings, webhooks: { allowPrivateUrls: true } } };
  runtime = await startWebhookDelivery(env, app.db, OPTIONS);
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await runtime.stop();
  await app.close();
});

async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

async function gqlData(query: string, variables: Record<string, unknown>, token: string) {
  const result = await app.gql(query, variables, token);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data;
}

async function createEndpoint(token: string, url: string): Promise<{ id: string; secret: string }> {
  const made = (await gqlData(CREATE, { input: { url } }, token)).createWebhookEndpoint;
  return { id: made.endpoint.id, secret: made.secret };
}

/** The request that delivered a ping, once it succeeded. */
async function deliveredPing(token: string, endpointId: string, r: Receiver): Promise<Received> {
  const sent = (await gqlData(PING, { id: endpointId }, token)).pingWebhookEndpoint as { id: string; eventId: string };
  await waitFor(
    async () => ((await app.prisma.webhookMessage.findUniqueOrThrow({ where: { id: sent.id } })).state === 'succeeded' ? true : undefined),
    60_000,
    'the ping to be delivered',
  );
  return r.received.find((q) => q.headers['webhook-id'] === sent.eventId)!;
}

const verifies = (secret: string, request: Received, signature = request.headers['webhook-signature']!) => {
  try {
    new Webhook(secret).verify(request.body, { ...request.headers, 'webhook-signature': signature });
    return true;
  } catch {
    return false;
  }
};

describe('webhook endpoints changed at the same moment', () => {
  it(
    `creating endpoints past the limit: exactly ${MAX_ENDPOINTS}, every other request refused with webhook_endpoint_limit`,
    async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const token = await app.token();
        for (let i = 0; i < MAX_ENDPOINTS - 4; i++) await createEndpoint(token, `https://example.com/hooks/${i}`);
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) => app.gql(CREATE, { input: { url: `https://example.com/raced/${i}` } }, token)),
        );
        expect(results.filter((r) => !r.errors)).toHaveLength(4);
        const refused = results.filter((r) => r.errors).map((r) => r.errors![0]!.extensions);
        expect(refused).toEqual(
          Array.from({ length: 4 }, () => expect.objectContaining({ code: 'CONFLICT', reason: 'webhook_endpoint_limit' })),
        );
        expect((await gqlData('{ webhookEndpoints { id } }', {}, token)).webhookEndpoints).toHaveLength(MAX_ENDPOINTS);
      }
    },
    RACE_TIMEOUT_MS,
  );

  it(
    'two rotations at once: the last secret signs, the other signs beside it for the overlap, the one before stops',
    async () => {
      const r = await receiver();
      const token = await app.token();
      const endpoint = await createEndpoint(token, r.url);
      let current = endpoint.secret;
      for (let round = 0; round < ROUNDS; round++) {
        const returned = (await Promise.all([0, 1].map(() => gqlData(ROTATE, { id: endpoint.id }, token)))).map(
          (data) => data.rotateWebhookEndpointSecret.secret as string,
        );
        const request = await deliveredPing(token, endpoint.id, r);
        // The current secret's signature first, then the previous one's (the default overlap is a day).
        const [first, second, ...more] = request.headers['webhook-signature']!.split(' ');
        expect(more).toEqual([]);
        const last = returned.find((secret) => verifies(secret, request, first))!;
        const other = returned.find((secret) => secret !== last)!;
        expect(last).toBeDefined();
        expect(verifies(other, request, second)).toBe(true);
        expect(verifies(current, request)).toBe(false);
        current = last;
      }
    },
    RACE_TIMEOUT_MS,
  );

  it(
    'replaying failed deliveries from several requests at once sends each exactly once',
    async () => {
      const r = await receiver();
      const token = await app.token();
      const endpoint = await createEndpoint(token, r.url);
      for (let round = 0; round < ROUNDS; round++) {
        r.answer(() => ({ status: 500 }));
        const since = new Date(Date.now() - 1_000).toISOString();
        const pings = await Promise.all(
          Array.from(
            { length: 4 },
            async () => (await gqlData(PING, { id: endpoint.id }, token)).pingWebhookEndpoint as { id: string; eventId: string },
          ),
        );
        await waitFor(
          async () => {
            const failed = await app.prisma.webhookMessage.count({ where: { id: { in: pings.map((p) => p.id) }, state: 'failed' } });
            return failed === pings.length ? true : undefined;
          },
          60_000,
          'the pings to fail',
        );

        r.answer(() => ({ status: 200 }));
        const from = r.received.length;
        const counts = await Promise.all(
          Array.from(
            { length: 4 },
            async () => (await gqlData(REPLAY_FAILED, { id: endpoint.id, since }, token)).replayFailedWebhookDeliveries as number,
          ),
        );
        expect(counts.reduce((a, b) => a + b)).toBe(pings.length);
        await waitFor(
          async () =>
            (await app.prisma.webhookMessage.count({ where: { endpointId: endpoint.id, state: 'pending' } })) === 0 ? true : undefined,
          60_000,
          'the replays to be delivered',
        );
        const sent = r.received.slice(from).map((q) => q.headers['webhook-id']!);
        expect(sent.sort()).toEqual(pings.map((p) => p.eventId).sort());
        const replays = await app.prisma.webhookMessage.groupBy({
          by: ['replayOf'],
          where: { replayOf: { in: pings.map((p) => p.id) } },
          _count: true,
        });
        expect(replays.map((g) => g._count)).toEqual(pings.map(() => 1));
      }
    },
    RACE_TIMEOUT_MS,
  );
});
