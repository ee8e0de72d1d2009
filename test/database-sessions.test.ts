import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { statement } from '../src/db/sql.js';
import { startTestApp, type TestApp } from './support/app.js';

// A process cut off from PostgreSQL in the middle of a transaction must not hold its locks for as long
// as the cut lasts: every other process waiting for them would stall with it (the cluster run's
// partitioned worker stopped every worker's dialing).

const lock = statement('test.lock', 'SELECT pg_advisory_xact_lock(4242)');
const setting = statement<{ value: string }>('test.setting', 'SELECT current_setting($1) AS value');

describe.runIf(inject('testDatabase').kind === 'postgres')('a session of the service on PostgreSQL', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('gives up on unacknowledged data after 15 s', async () => {
    const [row] = await app.sql.run(setting, ['tcp_user_timeout']);
    expect(row!.value).toBe('15000');
  });

  it('that goes silent inside a transaction is ended after 15 s, and its locks with it', async () => {
    const started = Date.now();
    // The silent one: takes a lock, then sends nothing for longer than the limit, as a cut-off worker would.
    const silent = app.sql.transaction(async (tx) => {
      await tx.run(lock);
      await new Promise((resolve) => setTimeout(resolve, 17_500));
      await tx.run(lock);
    });
    const ended = silent.then(
      () => 'committed',
      () => 'ended',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Another session waits for the same lock, and has it once the silent one is ended.
    await app.sql.transaction((tx) => tx.run(lock));
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(14_500);
    expect(waited).toBeLessThan(19_000);
    expect(await ended).toBe('ended');
  }, 40_000);
});
