import { statement, type SqlSession } from '../../../db/sql.js';
import { uuidv7 } from '../../ids.js';

// The statements of a provider's call webhooks (Retell's, Twilio's): the attempt an event is about, the
// delivery recorded once, and what the event says, stored on the attempt.

/** The attempt a provider's event is about, locked (FOR UPDATE). */
export interface EventAttempt {
  id: string;
  campaignId: string;
  status: string;
  providerCallId: string | null;
  /** A result is stored on it, waiting to be applied. */
  hasResult: boolean;
}

// Found by the attempt id we gave the provider (the webhook may come before we stored its call id), or
// by the call id for a call created without it.
const lockAttemptStatement = statement<EventAttempt>(
  'dialer.event_attempt',
  `SELECT id, campaign_id AS "campaignId", status::text, provider_call_id AS "providerCallId", pending_result IS NOT NULL AS "hasResult"
   FROM call_attempts
   WHERE id = $1::uuid OR ($2::boolean AND provider_call_id = $3) FOR UPDATE`,
);

export async function lockEventAttempt(tx: SqlSession, attemptId: string | null, callId: string): Promise<EventAttempt | undefined> {
  return (await tx.run(lockAttemptStatement, [attemptId, attemptId === null, callId]))[0];
}

const deliveryStatement = statement<{ id: string }>(
  'dialer.event_delivery',
  // A repeat inserts no row: the table's trigger (webhook_deliveries_once) skips a key recorded already.
  `INSERT INTO webhook_deliveries (id, source, event_key) VALUES ($1::uuid, $2, $3) RETURNING id`,
);

/** Records a delivery of the event from `source` (`retell`, `twilio`); false when it was recorded before (a repeat). */
export async function recordDelivery(tx: SqlSession, source: 'retell' | 'twilio', eventKey: string): Promise<boolean> {
  return (await tx.run(deliveryStatement, [uuidv7(), source, eventKey])).length > 0;
}

const startedStatement = statement(
  'dialer.event_started',
  `UPDATE call_attempts SET status = 'in_progress', provider_call_id = $2, started_at = coalesce(started_at, $3), updated_at = $3
   WHERE id = $1::uuid`,
);

/** The call is under way at the provider. */
export async function markStarted(tx: SqlSession, attemptId: string, callId: string, now: Date): Promise<void> {
  await tx.run(startedStatement, [attemptId, callId, now]);
}

const storeResultStatement = statement(
  'dialer.event_result',
  `UPDATE call_attempts SET provider_call_id = $2, pending_result = $3::jsonb, lease_expires_at = $4, updated_at = now()
   WHERE id = $1::uuid`,
);

/** Keeps the call's result on its attempt, to be applied when `leaseUntil` comes (or at once, by the dialer). */
export async function storeResult(tx: SqlSession, attemptId: string, callId: string, result: string, leaseUntil: Date): Promise<void> {
  await tx.run(storeResultStatement, [attemptId, callId, result, leaseUntil]);
}
