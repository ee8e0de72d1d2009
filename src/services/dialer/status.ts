import type { SqlSession } from '../../db/sql.js';
import { statusCounts } from './store/sweep.js';

export interface DialerStatus {
  /** Calls placed and not finished yet, across every worker. */
  callsInFlight: number;
  /** Contacts of running campaigns whose next call is due now: the dialer's backlog. */
  contactsDue: number;
  /** Credit held for calls in flight, across every account. */
  heldCents: bigint;
  /** How long the longest-waiting of those contacts has been due, in seconds; 0 when none is. */
  lagSeconds: number;
}

/** The dialer's state as the database knows it, the same whichever process asks (for the metrics gauges). */
export async function dialerStatus(sql: SqlSession, now: Date): Promise<DialerStatus> {
  const row = await statusCounts(sql, now);
  return { callsInFlight: row.inFlight, contactsDue: row.due, heldCents: row.held, lagSeconds: row.lag };
}
