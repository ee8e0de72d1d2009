import type { Prisma } from '../../generated/prisma/client.js';

/**
 * After a change of a campaign's calling hours, days or time zone, its waiting contacts are due again
 * from when the retry policy allows (ready_at) rather than from an opening of the old window; the next
 * tick applies the new window to them. Run it in the transaction that makes the change.
 */
export async function replanWaiting(tx: Prisma.TransactionClient, campaignId: string, now: Date): Promise<number> {
  return tx.$executeRaw`
    UPDATE campaign_contacts SET next_attempt_at = ready_at, updated_at = ${now}
    WHERE campaign_id = ${campaignId}::uuid AND state = 'pending' AND ready_at IS NOT NULL AND next_attempt_at > ready_at`;
}
