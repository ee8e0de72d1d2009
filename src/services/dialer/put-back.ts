import { endCalls, lockAccounts } from '../billing/calls.js';
import type { ServiceEnv } from '../context.js';
import { retryOnConflict } from './retry.js';

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
      const unplaced = await tx.query<{ id: string; user_id: string; campaign_id: string; contact_id: string }>(
        `SELECT id, user_id, campaign_id, contact_id FROM call_attempts
         WHERE id = ANY($1::uuid[]) AND status = 'queued' ORDER BY id FOR NO KEY UPDATE`,
        [attemptIds],
      );
      if (unplaced.length === 0) return;
      const ids = unplaced.map((a) => a.id);
      await endCalls(tx, env, await lockAccounts(tx, unplaced.map((a) => a.user_id)), [], ids);
      await tx.query(
        `WITH gone AS (DELETE FROM call_attempts WHERE id = ANY($1::uuid[]) RETURNING campaign_id, contact_id)
         UPDATE campaign_contacts cc SET state = 'pending', attempts = cc.attempts - 1,
           first_attempt_at = CASE WHEN cc.attempts = 1 THEN NULL ELSE cc.first_attempt_at END,
           last_attempt_at = (SELECT max(a.created_at) FROM call_attempts a
                              WHERE a.campaign_id = cc.campaign_id AND a.contact_id = cc.contact_id AND a.id <> ALL($1::uuid[])),
           next_attempt_at = $2, ready_at = $2, lease_expires_at = NULL, updated_at = $3
         FROM gone WHERE cc.campaign_id = gone.campaign_id AND cc.contact_id = gone.contact_id AND cc.state = 'dialing'`,
        [ids, dueAt, now],
      );
    }),
  );
}
