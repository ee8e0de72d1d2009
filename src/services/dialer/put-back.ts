import { releaseHoldsWithin } from '../billing/calls.js';
import { ledgerTransaction, lockAccount, type Balances } from '../billing/ledger.js';
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
  const ids = JSON.stringify(attemptIds);
  const now = env.clock.now();
  await retryOnConflict(() =>
    ledgerTransaction(env.db, async (tx) => {
      // Accounts first, then attempt rows: the order every dialer transaction takes them in.
      const owners = await tx.$queryRaw<{ user_id: string }[]>`
        SELECT DISTINCT user_id FROM call_attempts WHERE id IN (SELECT (jsonb_array_elements_text(${ids}::jsonb))::uuid) ORDER BY user_id`;
      const accounts = new Map<string, Balances>();
      for (const { user_id } of owners) accounts.set(user_id, await lockAccount(tx, user_id));
      const unplaced = await tx.$queryRaw<{ id: string; user_id: string; campaign_id: string; contact_id: string }[]>`
        SELECT id, user_id, campaign_id, contact_id FROM call_attempts
        WHERE id IN (SELECT (jsonb_array_elements_text(${ids}::jsonb))::uuid) AND status = 'queued' FOR UPDATE`;
      if (unplaced.length === 0) return;
      for (const [userId, account] of accounts) {
        const mine = unplaced.filter((a) => a.user_id === userId).map((a) => a.id);
        if (mine.length) await releaseHoldsWithin(tx, env, account, userId, mine);
      }
      await tx.$executeRaw`DELETE FROM call_attempts WHERE id IN (SELECT (jsonb_array_elements_text(${JSON.stringify(unplaced.map((a) => a.id))}::jsonb))::uuid)`;
      await tx.$executeRaw`
        UPDATE campaign_contacts cc SET state = 'pending', attempts = cc.attempts - 1,
          first_attempt_at = CASE WHEN cc.attempts = 1 THEN NULL ELSE cc.first_attempt_at END,
          last_attempt_at = (SELECT max(a.created_at) FROM call_attempts a WHERE a.campaign_id = cc.campaign_id AND a.contact_id = cc.contact_id),
          next_attempt_at = ${dueAt}, lease_expires_at = NULL, updated_at = ${now}
        FROM jsonb_to_recordset(${JSON.stringify(unplaced)}::jsonb) AS r(campaign_id uuid, contact_id uuid)
        WHERE cc.campaign_id = r.campaign_id AND cc.contact_id = r.contact_id AND cc.state = 'dialing'`;
    }),
  );
}
