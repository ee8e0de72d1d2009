import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { CALL_OUTCOMES } from '../src/services/call-outcomes.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, dispatch } from './support/campaigns.js';
import { campaignCompleted } from './support/dialer.js';
import { ALWAYS_OPEN } from './support/live.js';
import { sample, total } from './support/prometheus.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { waitFor } from './support/wait.js';
import { databaseUrlOf, workerProcesses } from './support/workers.js';

// `npm run worker` serves /healthz, /readyz and /metrics on a port of its own (WORKER_PORT), and its
// metrics count the work it does: calls by outcome, provider errors, webhook deliveries by state, the
// job queues' backlog. A worker needs PostgreSQL, so this file runs only there.

describe.runIf(inject('testDatabase').kind === 'postgres')("a worker's operations endpoints", () => {
  let app: TestApp;
  let receiver: Receiver | undefined;
  const workers = workerProcesses({
    LOG_LEVEL: 'info',
    SIM_SEED: 'worker-operations',
    SIM_TIME_SCALE: '0',
    DIALER_SWEEP_SECONDS: '1',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
  beforeAll(async () => {
    app = await startTestApp({ settings: { webhooks: { allowPrivateUrls: true } } });
  });
  afterEach(async () => {
    await workers.killAll();
    await receiver?.close();
  });
  afterAll(() => app.close());

  it('answers /healthz, /readyz and /metrics, with every counted series there from the start, and nothing else', async () => {
    const worker = workers.start(await databaseUrlOf(app));
    const url = await workers.listening(worker);

    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(Object.keys(((await ready.json()) as { checks: object }).checks).sort()).toEqual(['database', 'jobEngine', 'migrations']);
    expect((await fetch(`${url}/graphql`)).status).toBe(404);

    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    for (const outcome of CALL_OUTCOMES) expect(sample(text, 'dialer_calls_ended_total', { outcome })).toBe(0);
    for (const reason of ['retry_later', 'invalid_destination', 'error']) {
      expect(sample(text, 'telephony_provider_errors_total', { provider: 'simulated', reason })).toBe(0);
    }
    for (const state of ['succeeded', 'pending', 'failed']) expect(sample(text, 'webhook_deliveries_total', { state })).toBe(0);
    for (const queue of ['dialer-wake', 'webhook-deliver', 'webhook-dead-letter', 'agent-provision', 'agent-drift-sweep']) {
      expect(sample(text, 'job_queue_backlog', { queue })).toBeGreaterThanOrEqual(0);
    }
    expect(sample(text, 'dialer_lag_seconds')).toBe(0);
  }, 300_000);

  it('asks for METRICS_TOKEN on /metrics when it is set, and never on /healthz', async () => {
    const metricsToken = 'worker-scrape-token-0123';
    const worker = workers.start(await databaseUrlOf(app), { METRICS_TOKEN: metricsToken });
    const url = await workers.listening(worker);
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).status).toBe(200);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  }, 300_000);

  it('counts the calls it ended by outcome and the webhook deliveries it made, after a real campaign', async () => {
    const worker = workers.start(await databaseUrlOf(app));
    const url = await workers.listening(worker);
    receiver = await startReceiver();

    const who = await customer(app, { contacts: 4 });
    const made = await app.gql(
      'mutation($url: String!) { createWebhookEndpoint(input: { url: $url }) { endpoint { id } } }',
      { url: receiver.url },
      who.token,
    );
    const endpointId = (made.data.createWebhookEndpoint as { endpoint: { id: string } }).endpoint.id;
    const { id } = await createCampaign(app, who, ALWAYS_OPEN);
    // This app runs no dialer: the worker's sweep finds the campaign running and dials it.
    expect((await dispatch(app, who.token, id)).status).toBe(202);
    await campaignCompleted(app, id, 180_000);
    // Every event of the campaign (its calls, its status) delivered by the worker.
    const delivered = await waitFor(
      async () => {
        const messages = await app.prisma.webhookMessage.findMany({ where: { endpointId } });
        return messages.length > 0 && messages.every((m) => m.state === 'succeeded') ? messages.length : undefined;
      },
      180_000,
      'every delivery',
    );

    const text = await (await fetch(`${url}/metrics`)).text();
    const attempts = await app.prisma.callAttempt.groupBy({ by: ['outcome'], where: { campaignId: id }, _count: true });
    expect(total(text, 'dialer_calls_ended_total')).toBe(4);
    for (const { outcome, _count } of attempts) expect(sample(text, 'dialer_calls_ended_total', { outcome: outcome! })).toBe(_count);
    expect(sample(text, 'webhook_deliveries_total', { state: 'succeeded' })).toBe(delivered);
    expect(receiver.received).toHaveLength(delivered);
    expect(sample(text, 'telephony_provider_errors_total', { provider: 'simulated', reason: 'error' })).toBe(0);
    // The work is done: nothing waits to be delivered, and no contact is due.
    expect(sample(text, 'job_queue_backlog', { queue: 'webhook-deliver' })).toBe(0);
    expect(sample(text, 'dialer_lag_seconds')).toBe(0);
  }, 400_000);

  it('refuses to start on a port another process holds, naming WORKER_PORT', async () => {
    const first = workers.start(await databaseUrlOf(app));
    const port = new URL(await workers.listening(first)).port;
    const second = workers.start(await databaseUrlOf(app), { WORKER_PORT: port });
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(code).toBe(1);
    expect(workers.stderr(second)).toContain(`WORKER_PORT=${Number(port) + 1} npm run worker`);
  }, 300_000);
});
