import { named } from '../../../db/prisma-names.js';
import { statement, type SqlSession } from '../../../db/sql.js';
import type { Prisma, PrismaClient } from '../../../generated/prisma/client.js';
import { IN_FLIGHT_SQL } from '../../call-outcomes.js';

// The sweep's reads and writes, and the dialer's state for the metrics gauges.

const clearMarksStatement = statement(
  'dialer.clear_ended',
  `DELETE FROM ended_calls e WHERE NOT EXISTS (
     SELECT 1 FROM call_attempts a WHERE a.id = e.attempt_id AND a.status IN ${IN_FLIGHT_SQL})`,
);

/** Forgets the marks of ended calls whose results are written. */
export async function clearEndedMarks(sql: SqlSession): Promise<void> {
  await sql.run(clearMarksStatement);
}

const expiredStatement = statement<{ id: string; pendingResult: Prisma.JsonValue; endedAt: Date | null }>(
  'dialer.expired_leases',
  `SELECT a.id, a.pending_result AS "pendingResult", e.ended_at AS "endedAt"
     FROM call_attempts a LEFT JOIN ended_calls e ON e.attempt_id = a.id
    WHERE a.status IN ${IN_FLIGHT_SQL} AND a.lease_expires_at < $1
    LIMIT 5000`,
);

/**
 * Unfinished attempts whose lease ran out (at most 5,000), with the result their provider left for
 * them, if any, and when a worker heard the call end, if one did (a worker that died before writing it).
 */
export function expiredAttempts(
  sql: SqlSession,
  now: Date,
): Promise<{ id: string; pendingResult: Prisma.JsonValue; endedAt: Date | null }[]> {
  return sql.run(expiredStatement, [now]);
}

const closeCancelledStatement = statement<{ campaignId: string }>(
  'dialer.close_cancelled',
  `UPDATE campaign_contacts SET state = 'done', outcome = 'cancelled', next_attempt_at = NULL, updated_at = $1
   WHERE state = 'pending' AND campaign_id IN (SELECT id FROM campaigns WHERE status = 'cancelled')
   RETURNING campaign_id AS "campaignId"`,
);

/** Closes the waiting contacts of cancelled campaigns; returns the campaigns, once each. */
export async function closeCancelled(sql: SqlSession, now: Date): Promise<string[]> {
  const closed = await sql.run(closeCancelledStatement, [now]);
  return [...new Set(closed.map((c) => c.campaignId))];
}

/** Scheduled campaigns whose start has come. */
export async function scheduledToStart(db: PrismaClient, now: Date): Promise<string[]> {
  const rows = await named('dialer.scheduled_due', () =>
    db.campaign.findMany({ where: { status: 'scheduled', startedAt: { lte: now } }, select: { id: true } }),
  );
  return rows.map((c) => c.id);
}

export async function runningCampaigns(db: PrismaClient): Promise<string[]> {
  const rows = await named('dialer.running', () => db.campaign.findMany({ where: { status: 'running' }, select: { id: true } }));
  return rows.map((c) => c.id);
}

interface StatusCounts {
  inFlight: number;
  due: number;
  held: bigint;
  /** Seconds since the earliest due time among the contacts due. */
  lag: number;
}

const statusStatement = statement<StatusCounts>(
  'dialer.status',
  `SELECT (SELECT count(*)::int FROM campaign_contacts WHERE state = 'dialing') AS "inFlight",
          due.count AS due,
          (SELECT coalesce(sum(held_cents), 0)::bigint FROM credit_accounts) AS held,
          coalesce(extract(epoch FROM $1::timestamptz - due.earliest), 0)::float8 AS lag
   FROM (SELECT count(*)::int AS count, min(cc.next_attempt_at) AS earliest
         FROM campaign_contacts cc JOIN campaigns c ON c.id = cc.campaign_id
         WHERE c.status = 'running' AND cc.state = 'pending' AND cc.next_attempt_at <= $1) AS due`,
);

/** The dialer's state as the database knows it: calls in flight, contacts due and how late, credit held. */
export async function statusCounts(sql: SqlSession, now: Date): Promise<StatusCounts> {
  const [row] = await sql.run(statusStatement, [now]);
  return row!;
}
