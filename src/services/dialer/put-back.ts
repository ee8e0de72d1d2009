import { endCalls } from '../billing/calls.js';
import { lockAccounts } from '../billing/ledger.js';
import type { ServiceEnv } from '../context.js';
import { retryOnConflict } from './retry.js';
import { lockUnplaced, putBack } from './store/placing.js';

/**
 * Calls the provider refused to start for now (rate or concurrency limit) did not happen: their attempts
 * are removed, their holds released and their contacts put back in the queue, due at `dueAt`, with the
 * attempt count (and the first and last attempt times) as they were before, so that the refusal spends
 * nothing of the contact's retry budget. Attempts that are no longer `queued` are left alone.
 */
export async function putBackUnplaced(env: ServiceEnv, attemptIds: string[], dueAt: Date): Promise<void> {
  if (attemptIds.length === 0) return;
  const now = env.clock.now();
  await retryOnConflict(() =>
    env.sql.transaction(async (tx) => {
      // Attempt rows first (in id order), then accounts: the order every dialer transaction takes them in.
      const unplaced = await lockUnplaced(tx, attemptIds);
      if (unplaced.length === 0) return;
      const ids = unplaced.map((a) => a.id);
      await endCalls(
        tx,
        env,
        await lockAccounts(
          tx,
          unplaced.map((a) => a.userId),
        ),
        [],
        ids,
      );
      await putBack(tx, ids, dueAt, now);
    }),
  );
}
