import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { statement } from '../src/db/sql.js';
import { RESULT_LOCK_WAIT_MS } from '../src/services/dialer/ended-calls.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv, ManualClock, recordingDialer, runningCampaign } from './support/dialer.js';
import { waitFor } from './support/wait.js';

// A worker cut off from PostgreSQL in the middle of a batch of results keeps its customers' accounts
// locked until PostgreSQL ends its session (15 s). Another worker's batch that waited for one of them
// held up every result of every customer behind it, and with results unwritten the campaigns' backlogs
// filled and all dialing stopped (the cluster run's partitions). Locks are taken by separate sessions,
// so this runs on PostgreSQL only.

const lockAccount = statement('test.lock_account', 'SELECT 1 FROM credit_accounts WHERE user_id = $1::uuid FOR UPDATE');

describe.runIf(inject('testDatabase').kind === 'postgres')('results whose account another session keeps locked', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("wait on their own: the other customers' results are written at once, theirs once the lock goes", async () => {
    const clock = new ManualClock(new Date('2026-11-02T10:00:00Z'));
    const env = dialerEnv(app, clock);
    const dialer = recordingDialer(env, () => ({ outcome: 'human', durationSeconds: 30 }));
    dialer.telephony.auto = false;
    const stuck = await runningCampaign(app, env, { rows: [{ Phone: '+14152009001' }] });
    const alsoStuck = await runningCampaign(app, env, { rows: [{ Phone: '+14152009003' }] });
    const others = await runningCampaign(app, env, { rows: [{ Phone: '+14152009002' }] });
    for (const { campaignId } of [stuck, alsoStuck, others]) expect(await dialer.dialer.tick(campaignId)).toBe(1);

    // A session that locks two customers' accounts and then goes silent, as a cut-off worker's.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const silent = app.sql.transaction(async (tx) => {
      await tx.run(lockAccount, [stuck.userId]);
      await tx.run(lockAccount, [alsoStuck.userId]);
      locked();
      await released;
    });
    await isLocked;

    try {
      const started = Date.now();
      dialer.telephony.deliver();
      const status = async (campaignId: string) =>
        (await app.prisma.callAttempt.findFirstOrThrow({ where: { campaignId }, select: { status: true } })).status;
      await waitFor(
        async () => ((await status(others.campaignId)) === 'completed' ? true : undefined),
        10_000,
        "the other customer's result",
      );
      // Written after one bounded wait of the batch, whatever the number of locked accounts, not after the lock.
      expect(Date.now() - started).toBeLessThan(2 * RESULT_LOCK_WAIT_MS + 500);
      expect(await status(stuck.campaignId)).not.toBe('completed');
      expect(await status(alsoStuck.campaignId)).not.toBe('completed');
    } finally {
      release();
      await silent;
    }

    await waitFor(async () => (await dialer.dialer.settled(), true), 10_000, 'the results written');
    for (const { campaignId, userId } of [stuck, alsoStuck]) {
      const attempt = await app.prisma.callAttempt.findFirstOrThrow({ where: { campaignId } });
      expect(attempt.status).toBe('completed');
      // Tried more than once, written once: one charge, and no hold left.
      expect(await app.prisma.creditTransaction.count({ where: { callAttemptId: attempt.id } })).toBe(1);
      const account = await app.prisma.creditAccount.findUniqueOrThrow({ where: { userId } });
      expect(account.heldCents).toBe(0n);
    }
  }, 30_000);
});
