import type { ChildProcess } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { waitFor } from './support/wait.js';
import { databaseUrlOf, workerProcesses } from './support/workers.js';

// At least once, never lost: events wait in the database until a worker runs, and a worker killed with
// SIGKILL in the middle of a delivery leaves it to the next worker, which delivers it.

describe.runIf(inject('testDatabase').kind === 'postgres')('webhook delivery across a worker killed mid-delivery', () => {
  let app: TestApp;
  let receiver: Receiver;
  const workers = workerProcesses({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_SECONDS: '1' });
  beforeAll(async () => {
    app = await startTestApp({ settings: { webhooks: { allowPrivateUrls: true } } });
  });
  afterEach(async () => {
    await workers.killAll();
    await receiver?.close();
  });
  afterAll(() => app.close());

  it('delivers an event whose worker was killed while its receiver was answering', async () => {
    let first: ChildProcess | undefined;
    let killed: Promise<number | null> | undefined;
    // The first attempt kills its worker and is never answered; later ones are.
    receiver = await startReceiver((_request, index) => {
      if (index > 0) return { status: 200 };
      killed = workers.stop(first!, 'SIGKILL');
      return 'hang';
    });
    const token = await app.token();
    const made = await app.gql(
      `mutation($url: String!) { createWebhookEndpoint(input: { url: $url }) { secret endpoint { id } } }`,
      { url: receiver.url },
      token,
    );
    const { secret, endpoint } = made.data.createWebhookEndpoint as { secret: string; endpoint: { id: string } };
    // Sent while no worker runs: it waits in the database.
    const ping = await app.gql(`mutation($id: UUID!) { pingWebhookEndpoint(id: $id) { id eventId } }`, { id: endpoint.id }, token);
    const { id, eventId } = ping.data.pingWebhookEndpoint as { id: string; eventId: string };

    const url = await databaseUrlOf(app);
    first = workers.start(url);
    await waitFor(async () => (killed ? true : undefined), 60_000, 'the first attempt');
    await killed;
    workers.start(url);

    const delivered = await waitFor(
      async () => {
        const m = await app.prisma.webhookMessage.findUniqueOrThrow({ where: { id } });
        return m.state === 'succeeded' ? m : undefined;
      },
      90_000,
      'the delivery after the crash',
    );
    expect(delivered.lastStatusCode).toBe(200);
    // The attempt the killed worker never recorded was made again, with the same id and a valid signature.
    expect(receiver.received).toHaveLength(2);
    for (const request of receiver.received) {
      expect(request.headers['webhook-id']).toBe(eventId);
      new Webhook(secret).verify(request.body, request.headers);
    }
  }, 150_000);
});
