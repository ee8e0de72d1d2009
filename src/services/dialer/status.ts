import type { PrismaClient } from '../../generated/prisma/client.js';

export interface DialerStatus {
  /** Calls placed and not finished yet, across every worker. */
  callsInFlight: number;
  /** Contacts of running campaigns whose next call is due now: the dialer's backlog. */
  contactsDue: number;
  /** Credit held for calls in flight, across every account. */
  heldCents: bigint;
}

/** The dialer's state as the database knows it, the same whichever process asks (for the metrics gauges). */
export async function dialerStatus(db: PrismaClient, now: Date): Promise<DialerStatus> {
  const [row] = await db.$queryRaw<{ in_flight: number; due: number; held: bigint }[]>`
    SELECT (SELECT count(*)::int FROM campaign_contacts WHERE state = 'dialing') AS in_flight,
           (SELECT count(*)::int FROM campaign_contacts cc JOIN campaigns c ON c.id = cc.campaign_id
             WHERE c.status = 'running' AND cc.state = 'pending' AND cc.next_attempt_at <= ${now}) AS due,
           (SELECT coalesce(sum(held_cents), 0)::bigint FROM credit_accounts) AS held`;
  return { callsInFlight: row!.in_flight, contactsDue: row!.due, heldCents: row!.held };
}
