import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestApp, type GraphQLResult, type TestApp } from './support/app.js';
import { createCampaign, customer } from './support/campaigns.js';
import { ALWAYS_OPEN, CALL_ATTEMPT_UPDATED, CAMPAIGN_UPDATED } from './support/live.js';
import { subscribe, type LiveSubscription } from './support/sse.js';
import { serverProcess, stopServer } from './support/workers.js';

// Live updates across processes, through Redis (at REDIS_TEST_URL, 127.0.0.1:6379 by default): a
// subscriber on one server sees the calls another server's dialer places. Several processes need one
// real PostgreSQL database.

const REDIS_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

describe.runIf(inject('testDatabase').kind === 'postgres')('two server processes sharing Redis', () => {
  let app: TestApp;
  const servers: ChildProcess[] = [];
  const streams: LiveSubscription[] = [];
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    streams.forEach((s) => s.close());
    await Promise.all(servers.map(stopServer));
    await app.close();
  });
  const server = async (databaseUrl: string, env: Record<string, string>) => {
    const started = await serverProcess(databaseUrl, env);
    servers.push(started.child);
    return started;
  };

  it('delivers to a subscriber on one server what another server’s dialer does', async () => {
    const [{ name }] = (await app.prisma.$queryRaw<{ name: string }[]>`SELECT current_database() AS name`) as [{ name: string }];
    const databaseUrl = new URL((inject('testDatabase') as { serverUrl: string }).serverUrl);
    databaseUrl.pathname = `/${name}`;
    // A channel prefix of this test's own, so that parallel runs sharing the Redis do not hear each other.
    const redis = { REDIS_URL, REDIS_PREFIX: `callflow-test-${randomUUID()}` };
    const [api, dialer] = await Promise.all([
      server(databaseUrl.toString(), { ...redis, DIALER: 'off' }),
      server(databaseUrl.toString(), { ...redis, SIM_TIME_SCALE: '0', SIM_SEED: 'two-servers', DIALER_SWEEP_SECONDS: '1' }),
    ]);

    const alice = await customer(app, { contacts: 6 });
    const id = (await createCampaign(app, alice, ALWAYS_OPEN)).id as string;
    const campaign = await subscribe(api.url, CAMPAIGN_UPDATED, { id }, alice.token);
    const attempts = await subscribe(api.url, CALL_ATTEMPT_UPDATED, { campaignId: id }, alice.token);
    streams.push(campaign, attempts);
    await campaign.until((results) => results.length === 1);

    const dispatched = await fetch(`${dialer.url}/api/v1/campaigns/${id}/dispatch/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ triggered_by: 'tests' }),
    });
    expect(dispatched.status).toBe(202);

    const campaignIn = (results: GraphQLResult[]) => results.map((r) => r.data?.campaignUpdated);
    await campaign.until((results) => campaignIn(results).some((c) => c?.status === 'completed'), 90_000);
    expect(campaignIn(campaign.results).at(-1)).toMatchObject({ id, status: 'completed', progress: { total: 6, done: 6 } });
    const dialed = await app.prisma.callAttempt.findMany({ where: { campaignId: id } });
    expect(dialed).toHaveLength(6);
    await attempts.until((results) =>
      dialed.every((a) => results.some((r) => r.data?.callAttemptUpdated?.id === a.id && r.data.callAttemptUpdated.status === a.status)),
    );
    for (const s of [campaign, attempts]) expect(s.results.filter((r) => r.errors)).toEqual([]);

    // A shutdown cuts the streams rather than waiting for them (it would exit 1 at its timeout), and
    // does not complete them, so that clients reconnect elsewhere.
    const exited = new Promise((resolve) => api.child.once('exit', resolve));
    api.child.kill('SIGTERM');
    await Promise.all([campaign.ended, attempts.ended]);
    expect([campaign.completed, attempts.completed]).toEqual([false, false]);
    expect(await exited).toBe(0);
  }, 180_000);
});
