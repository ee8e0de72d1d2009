import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDialer } from '../src/jobs/dialer.js';
import { DEFAULT_DIALER_OPTIONS } from '../src/services/dialer/options.js';
import { systemClock } from '../src/services/context.js';
import { startTestApp, type TestApp } from './support/app.js';
import { campaignCompleted, dialerEnv, ledgerMatchesAccount, runningCampaign } from './support/dialer.js';
import { waitFor } from './support/wait.js';
import { createCampaign, customer } from './support/campaigns.js';
import { ALWAYS_OPEN } from './support/live.js';
import { databaseUrlOf, serverProcess, stopServer, workerProcesses } from './support/workers.js';

// The dialer as it runs in production: on the pg-boss job engine, with the simulated provider.

const numbers = (count: number, base: number) => Array.from({ length: count }, (_, i) => ({ Phone: `+1415${base + i}` }));

async function expectConsistent(app: TestApp, campaignId: string, userId: string) {
  const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId }, orderBy: { createdAt: 'asc' } });
  expect(attempts.filter((a) => ['queued', 'ringing', 'in_progress'].includes(a.status))).toEqual([]);
  // No contact had two calls at once: each attempt ended before the next one to that contact began.
  const byContact = new Map<string, typeof attempts>();
  for (const a of attempts) byContact.set(a.contactId, [...(byContact.get(a.contactId) ?? []), a]);
  for (const list of byContact.values()) {
    for (let i = 1; i < list.length; i += 1) expect(list[i]!.createdAt.getTime()).toBeGreaterThanOrEqual(list[i - 1]!.endedAt!.getTime());
  }
  const enrolled = await app.prisma.campaignContact.findMany({ where: { campaignId } });
  for (const cc of enrolled) {
    expect(cc.state).toBe('done');
    expect(cc.attempts).toBe(byContact.get(cc.contactId)?.length ?? 0);
  }
  const { ledger, account, account_ } = await ledgerMatchesAccount(app, userId);
  expect(ledger).toBe(account);
  expect(account_.heldCents).toBe(0n);
  return attempts;
}

describe('on the job engine, in process', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('dials a campaign to completion after a wake-up', async () => {
    const env = dialerEnv(app, systemClock);
    const runtime = await startDialer(env, app.db, {
      telephony: { provider: 'simulated', seed: 'runtime-test', timeScale: 0 },
      dialer: DEFAULT_DIALER_OPTIONS,
      sweepSeconds: 1,
    });
    try {
      const setup = await runningCampaign(app, env, {
        rows: numbers(60, 3_000_000),
        campaign: { concurrentCalls: 8, scheduleConfig: { max_attempts: 2, max_attempts_per_day: 2, retry_interval_minutes: 1 } },
      });
      await runtime.control.wake(setup.campaignId);
      // Retries wait a minute; everything else must be done within seconds.
      await waitFor(async () => {
        const open = await app.prisma.campaignContact.count({ where: { campaignId: setup.campaignId, state: 'dialing' } });
        const attempts = await app.prisma.callAttempt.count({ where: { campaignId: setup.campaignId } });
        return open === 0 && attempts >= 60 ? true : undefined;
      }, 30_000);
      const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: setup.campaignId } });
      expect(new Set(attempts.map((a) => a.contactId)).size).toBe(60);
      expect(attempts.some((a) => a.status === 'completed')).toBe(true);
    } finally {
      await runtime.stop();
    }
  }, 60_000);
});

// Each worker is a process of its own that compiles the source at start, and a retried call waits a
// minute: on a loaded machine the whole runs for minutes, hence the generous limits. A campaign that
// does not complete fails with where it stood, which tells a slow machine from a stuck campaign.
describe.runIf(inject('testDatabase').kind === 'postgres')('two worker processes, one killed mid-campaign', () => {
  let app: TestApp;
  const workers = workerProcesses({
    SIM_SEED: 'kill-test',
    SIM_TIME_SCALE: '0.004',
    DIALER_LEASE_SECONDS: '5',
    DIALER_SWEEP_SECONDS: '1',
    CALL_RATE_CENTS_PER_MINUTE: '60',
  });
  const worker = workers.start;
  const stop = workers.stop;
  const databaseUrl = () => databaseUrlOf(app);
  beforeAll(async () => {
    app = await startTestApp();
  });
  // Each test's workers end with it, so none dials the next test's campaign.
  afterEach(() => workers.killAll());
  afterAll(() => app.close());

  it('dials no contact twice at once, loses no attempt, and completes', async () => {
    const env = dialerEnv(app, systemClock);
    const setup = await runningCampaign(app, env, {
      rows: numbers(300, 4_000_000),
      campaign: { concurrentCalls: 20, scheduleConfig: { max_attempts: 2, max_attempts_per_day: 2, retry_interval_minutes: 1 } },
    });
    const url = await databaseUrl();
    const first = worker(url);
    worker(url);
    // The workers' sweeps find the running campaign; kill one once calls are under way.
    await waitFor(
      async () => ((await app.prisma.callAttempt.count({ where: { campaignId: setup.campaignId } })) > 60 ? true : undefined),
      120_000,
    ).catch(() => undefined);
    await stop(first, 'SIGKILL');
    worker(url);
    await campaignCompleted(app, setup.campaignId, 240_000);
    const attempts = await expectConsistent(app, setup.campaignId, setup.userId);
    expect(new Set(attempts.map((a) => a.contactId)).size).toBe(300);
  }, 420_000);

  it('on SIGTERM, finishes what a worker started and hands the campaign to the next worker', async () => {
    const env = dialerEnv(app, systemClock);
    const setup = await runningCampaign(app, env, {
      rows: numbers(300, 5_000_000),
      campaign: { concurrentCalls: 20, scheduleConfig: { max_attempts: 1, max_attempts_per_day: 1, retry_interval_minutes: 1 } },
    });
    const url = await databaseUrl();
    const first = worker(url);
    await waitFor(
      async () => ((await app.prisma.callAttempt.count({ where: { campaignId: setup.campaignId } })) > 60 ? true : undefined),
      120_000,
    );
    expect(await stop(first, 'SIGTERM')).toBe(0);

    // Nothing it started was left to a lease: every call it placed has ended and been applied.
    const unfinished = await app.prisma.callAttempt.count({
      where: { campaignId: setup.campaignId, status: { in: ['queued', 'ringing', 'in_progress'] } },
    });
    expect(unfinished).toBe(0);
    expect(await app.prisma.campaignContact.count({ where: { campaignId: setup.campaignId, state: 'dialing' } })).toBe(0);
    const before = await app.prisma.campaignContact.count({ where: { campaignId: setup.campaignId, state: 'pending' } });
    expect(before).toBeGreaterThan(0);

    // The next worker never sweeps: it finds the campaign only through the wake-up the first one queued.
    worker(url, { DIALER_SWEEP_SECONDS: '3600' });
    await campaignCompleted(app, setup.campaignId, 240_000);
    const attempts = await expectConsistent(app, setup.campaignId, setup.userId);
    expect(attempts).toHaveLength(300);
    expect(attempts.filter((a) => a.disconnectReason === 'no_report')).toEqual([]);
  }, 420_000);
});

describe.runIf(inject('testDatabase').kind === 'postgres')('an API instance that runs no dialer', () => {
  let app: TestApp;
  const workers = workerProcesses({ SIM_SEED: 'api-wake', SIM_TIME_SCALE: '0', DIALER_SWEEP_SECONDS: '3600' });
  let api: Awaited<ReturnType<typeof serverProcess>> | undefined;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await workers.killAll();
    if (api) await stopServer(api.child);
    await app.close();
  });

  it('wakes the workers when a campaign is dispatched, rather than leaving it to their next sweep', async () => {
    const url = await databaseUrlOf(app);
    workers.start(url);
    // The worker listens for wake-ups; its sweep is an hour away.
    await waitFor(async () => {
      const listening = await app.prisma.$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`;
      return listening[0]!.n > 0n ? true : undefined;
    }, 60_000);
    api = await serverProcess(url, { DIALER: 'off' });

    const alice = await customer(app, { contacts: 3 });
    const id = (await createCampaign(app, alice, ALWAYS_OPEN)).id as string;
    const dispatched = await fetch(`${api.url}/api/v1/campaigns/${id}/dispatch/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ triggered_by: 'tests' }),
    });
    expect(dispatched.status).toBe(202);
    await campaignCompleted(app, id, 30_000);
    expect(await app.prisma.callAttempt.count({ where: { campaignId: id } })).toBe(3);
  }, 120_000);
});
