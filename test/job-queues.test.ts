import PgBoss from 'pg-boss';
import { describe, expect, inject, it } from 'vitest';
import { ensureQueue } from '../src/jobs/queues.js';
import { openTestDatabase } from './support/database.js';

// Worker processes start together on a fresh database, and each makes sure the queues it uses exist.
// pg-boss's queue creation can deadlock between them; every one of them must still start.

describe.runIf(inject('testDatabase').kind === 'postgres')('queues made by processes starting together', () => {
  it('exist once every process has started, and no process fails', async () => {
    for (let round = 0; round < 5; round += 1) {
      const db = await openTestDatabase();
      const bosses = Array.from(
        { length: 4 },
        () => new PgBoss({ ...(db.jobEngineConnection as { connectionString: string }), max: 2, schedule: false, supervise: false }),
      );
      // Dropping the database ends connections a stopping pool may still hold; the engine reports that as an error.
      for (const boss of bosses) boss.on('error', () => {});
      try {
        // pg-boss's own schema install is serialized by an advisory lock; the queues are not.
        for (const boss of bosses) await boss.start();
        await Promise.all(bosses.map((boss) => ensureQueue(boss, 'shared-queue')));
        expect((await bosses[0]!.getQueues()).map((queue) => queue.name)).toEqual(['shared-queue']);
      } finally {
        await Promise.all(bosses.map((boss) => boss.stop({ graceful: false, wait: true })));
        await db.close();
      }
    }
  });
});
