import type { SqlSession, SqlTransaction } from '../../db/sql.js';
import type { ServiceEnv } from '../context.js';
import * as store from './store.js';

// Between the outbox and the job queue: new deliveries are moved onto the queue in the transaction that
// marks them queued, so each is queued exactly once whichever worker moves it.

/** The job of one attempt at one delivery. */
export interface DeliveryJob {
  messageId: string;
  attempt: number;
}

const RELAY_BATCH = 500;

/** Moves every new delivery onto the queue; `queue` inserts their first attempts' jobs in the given transaction. */
export async function queueDeliveries(env: ServiceEnv, queue: (tx: SqlTransaction, jobs: DeliveryJob[]) => Promise<void>): Promise<number> {
  let moved = 0;
  for (;;) {
    const batch = await env.sql.transaction(async (tx) => {
      const taken = await store.takeUnqueued(tx, RELAY_BATCH);
      if (taken.length)
        await queue(
          tx,
          taken.map((m) => ({ messageId: m.id, attempt: 1 })),
        );
      return taken.length;
    });
    moved += batch;
    if (batch < RELAY_BATCH) return moved;
  }
}

/** Gives up a delivery whose job failed without an attempt being recorded, again and again (it was dead-lettered). */
export async function failDelivery(env: ServiceEnv, messageId: string): Promise<boolean> {
  return store.giveUp(env.sql, messageId, 'Every try to make the attempt failed before its result was recorded; dead-lettered.');
}

/** A session as the job queue's `db` option takes it, so that jobs are queued inside the session's transaction. */
export const queueSession = (tx: SqlSession) => store.jobEngineSession(tx);
