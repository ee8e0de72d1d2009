import { named } from '../../db/prisma-names.js';
import { dynamicStatement, statement, type SqlSession, type SqlTransaction } from '../../db/sql.js';
import type { Prisma, PrismaClient, WebhookMessageState } from '../../generated/prisma/client.js';
import { uuidv7 } from '../ids.js';
import type { OutgoingEvent } from './events.js';

// The webhooks store: the only module of the domain that talks to the database.

export type EndpointQuery = { include?: Prisma.WebhookEndpointInclude; select?: Prisma.WebhookEndpointSelect };
export type MessageQuery = { include?: Prisma.WebhookMessageInclude; select?: Prisma.WebhookMessageSelect };

const emitStatement = statement<{ made: number }>('webhooks.emit', 'SELECT webhook_emit($1::jsonb) AS made');

/**
 * Writes events in the caller's transaction, with a delivery for each endpoint that takes them (the SQL
 * function webhook_emit fans them out); an event no endpoint takes leaves nothing behind.
 */
export async function emit(session: SqlSession, events: OutgoingEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const rows = events.map((e) => ({ user_id: e.userId, type: e.type, data: e.data, endpoint_id: e.endpointId ?? null }));
  const [row] = await session.run(emitStatement, [JSON.stringify(rows)]);
  return row!.made;
}

export interface NewEndpoint {
  userId: string;
  url: string;
  description: string;
  eventTypes: string[];
  enabled: boolean;
  secret: string;
}

const insertEndpointStatement = statement(
  'webhooks.insert_endpoint',
  `INSERT INTO webhook_endpoints (id, user_id, url, description, event_types, enabled, secret, updated_at)
   VALUES ($1::uuid, $2::uuid, $3, $4, $5::text[], $6, $7, now())`,
);

/** Adds an endpoint; its id. */
export async function insertEndpoint(tx: SqlSession, endpoint: NewEndpoint): Promise<string> {
  const id = uuidv7();
  await tx.run(insertEndpointStatement, [
    id,
    endpoint.userId,
    endpoint.url,
    endpoint.description,
    endpoint.eventTypes,
    endpoint.enabled,
    endpoint.secret,
  ]);
  return id;
}

const live = (userId: string) => ({ userId, deletedAt: null });

export function findEndpoints<Q extends EndpointQuery>(db: PrismaClient, userId: string, query: Q) {
  return named('webhooks.endpoints', () =>
    db.webhookEndpoint.findMany({ ...query, where: live(userId), orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] }),
  ) as Promise<Prisma.WebhookEndpointGetPayload<Q>[]>;
}

export function findEndpoint<Q extends EndpointQuery>(db: PrismaClient, userId: string, id: string, query: Q) {
  return named('webhooks.endpoint', () =>
    db.webhookEndpoint.findFirst({ ...query, where: { id, ...live(userId) } }),
  ) as Promise<Prisma.WebhookEndpointGetPayload<Q> | null>;
}

const countEndpointsStatement = statement<{ n: number }>(
  'webhooks.count_endpoints',
  'SELECT count(*)::int AS n FROM webhook_endpoints WHERE user_id = $1::uuid AND deleted_at IS NULL',
);

/** The user's endpoints that are not deleted. */
export async function countEndpoints(tx: SqlSession, userId: string): Promise<number> {
  return (await tx.run(countEndpointsStatement, [userId]))[0]!.n;
}

/** Changes the user's endpoint; false when the user has no such endpoint. */
export async function updateEndpoint(
  db: PrismaClient,
  userId: string,
  id: string,
  data: Prisma.WebhookEndpointUpdateManyMutationInput,
): Promise<boolean> {
  const { count } = await named('webhooks.updateEndpoint', () => db.webhookEndpoint.updateMany({ where: { id, ...live(userId) }, data }));
  return count > 0;
}

// The secret moved aside is read from the row being updated: a rotation that waited for another's row
// lock moves aside the secret that one made, so every secret a rotation returned signs for a while.
const rotateSecretStatement = statement<{ id: string }>(
  'webhooks.rotate_secret',
  `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $3, secret = $4, updated_at = now()
   WHERE id = $1::uuid AND user_id = $2::uuid AND deleted_at IS NULL
   RETURNING id`,
);

/** Makes `secret` the endpoint's, and its secret until now the previous one, until `previousUntil`; false when the user has no such endpoint. */
export async function rotateSecret(sql: SqlSession, userId: string, id: string, secret: string, previousUntil: Date): Promise<boolean> {
  return (await sql.run(rotateSecretStatement, [id, userId, previousUntil, secret])).length > 0;
}

const lockEndpointStatement = statement<{ id: string }>(
  'webhooks.lock_endpoint',
  'SELECT id FROM webhook_endpoints WHERE id = $1::uuid AND user_id = $2::uuid FOR NO KEY UPDATE',
);

/** Locks the user's endpoint until the transaction ends. NO KEY: deliveries to it (which take KEY SHARE) are still made meanwhile. */
export async function lockEndpoint(tx: SqlTransaction, userId: string, id: string): Promise<void> {
  await tx.run(lockEndpointStatement, [id, userId]);
}

export function findMessage<Q extends MessageQuery>(db: PrismaClient, userId: string, id: string, query: Q) {
  return named('webhooks.message', () =>
    db.webhookMessage.findFirst({ ...query, where: { id, endpoint: { userId } } }),
  ) as Promise<Prisma.WebhookMessageGetPayload<Q> | null>;
}

const replayStatement = statement<{ id: string }>(
  'webhooks.replay',
  `INSERT INTO webhook_messages (id, event_id, endpoint_id, replay_of, created_at)
   SELECT webhook_uuid_v7(), m.event_id, m.endpoint_id, m.id, now()
   FROM webhook_messages m JOIN webhook_endpoints p ON p.id = m.endpoint_id
   WHERE p.user_id = $1::uuid AND p.enabled AND p.deleted_at IS NULL
     AND ($2::uuid IS NULL OR m.id = $2::uuid)
     AND ($3::uuid IS NULL OR (m.endpoint_id = $3::uuid AND m.state = 'failed' AND m.created_at >= $4
                               AND NOT EXISTS (SELECT 1 FROM webhook_messages r WHERE r.replay_of = m.id)))
   ORDER BY m.id
   RETURNING id`,
);

/** Sends one delivery again, as a new delivery of the same event; its id, or undefined when its endpoint is not enabled. */
export async function replayMessage(sql: SqlSession, userId: string, messageId: string): Promise<string | undefined> {
  return (await sql.run(replayStatement, [userId, messageId, null, null]))[0]?.id;
}

/**
 * Sends again every failed delivery to the endpoint made since `since` and not replayed yet; how many.
 * Run it holding the endpoint's lock (`lockEndpoint`), so that a replay that waited sees the replays made
 * by the one before it.
 */
export async function replayFailed(sql: SqlTransaction, userId: string, endpointId: string, since: Date): Promise<number> {
  return (await sql.run(replayStatement, [userId, null, endpointId, since])).length;
}

// Only a row this transaction wrote (its xmin): a ping made at the same moment by another request,
// committed meanwhile, is that request's, though read committed would show it here too.
const latestPingStatement = statement<{ id: string }>(
  'webhooks.latest_ping',
  `SELECT m.id FROM webhook_messages m JOIN webhook_events e ON e.id = m.event_id
   WHERE m.endpoint_id = $1::uuid AND e.type = 'webhook.ping' AND m.xmin = pg_current_xact_id()::xid
   ORDER BY m.id DESC LIMIT 1`,
);

/** The ping delivery to the endpoint that this transaction made. */
export async function latestPing(tx: SqlSession, endpointId: string): Promise<string | undefined> {
  return (await tx.run(latestPingStatement, [endpointId]))[0]?.id;
}

// The delivery workers' side.

const unqueuedStatement = statement<{ id: string }>(
  'webhooks.unqueued',
  `UPDATE webhook_messages SET queued = true
   WHERE id IN (SELECT id FROM webhook_messages WHERE NOT queued ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
   RETURNING id`,
);

/** Marks up to `limit` deliveries not yet on the queue as queued; the caller queues them in the same transaction. */
export function takeUnqueued(tx: SqlTransaction, limit: number): Promise<{ id: string }[]> {
  return tx.run(unqueuedStatement, [limit]);
}

/** What sending a delivery needs. */
export interface Outgoing {
  id: string;
  eventId: string;
  state: WebhookMessageState;
  attempts: number;
  createdAt: Date;
  payload: unknown;
  userId: string;
  endpointId: string;
  url: string;
  active: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  failingSince: Date | null;
}

const outgoingColumns = `m.id, m.event_id AS "eventId", m.state::text AS state, m.attempts, m.created_at AS "createdAt", e.payload,
  p.user_id AS "userId", p.id AS "endpointId", p.url, (p.enabled AND p.deleted_at IS NULL) AS active, p.secret,
  p.previous_secret AS "previousSecret", p.previous_secret_expires_at AS "previousSecretExpiresAt", p.failing_since AS "failingSince"
  FROM webhook_messages m JOIN webhook_events e ON e.id = m.event_id JOIN webhook_endpoints p ON p.id = m.endpoint_id
  WHERE m.id = $1::uuid`;

const outgoingStatement = statement<Outgoing>('webhooks.outgoing', `SELECT ${outgoingColumns}`);
// Endpoint first, then the message: the order in which a user's change of the endpoint would lock them.
const lockOutgoingStatement = statement<Outgoing>('webhooks.lock_outgoing', `SELECT ${outgoingColumns} FOR NO KEY UPDATE OF p, m`);

export async function readOutgoing(sql: SqlSession, id: string): Promise<Outgoing | undefined> {
  return (await sql.run(outgoingStatement, [id]))[0];
}

export async function lockOutgoing(tx: SqlSession, id: string): Promise<Outgoing | undefined> {
  return (await tx.run(lockOutgoingStatement, [id]))[0];
}

/** An attempt's record on its delivery. */
export interface AttemptRecord {
  state: WebhookMessageState;
  attempts: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  at: Date;
  nextAttemptAt: Date | null;
}

const recordAttemptStatement = statement(
  'webhooks.record_attempt',
  `UPDATE webhook_messages SET state = $2::"WebhookMessageState", attempts = $3, last_status_code = $4, last_latency_ms = $5,
     last_error = left($6, 500), last_attempt_at = $7, next_attempt_at = $8,
     delivered_at = CASE WHEN $2 = 'succeeded' THEN $7 ELSE delivered_at END
   WHERE id = $1::uuid`,
);

export async function recordAttempt(tx: SqlSession, id: string, record: AttemptRecord): Promise<void> {
  await tx.run(recordAttemptStatement, [
    id,
    record.state,
    record.attempts,
    record.statusCode,
    record.latencyMs,
    record.error,
    record.at,
    record.nextAttemptAt,
  ]);
}

const giveUpStatement = statement(
  'webhooks.give_up',
  `UPDATE webhook_messages SET state = 'failed', last_error = left($2, 500), next_attempt_at = NULL WHERE id = $1::uuid AND state = 'pending'
   RETURNING id`,
);

/** Ends a delivery that will not be tried again, with why; false when it had ended already. */
export async function giveUp(session: SqlSession, id: string, reason: string): Promise<boolean> {
  return (await session.run(giveUpStatement, [id, reason])).length > 0;
}

const endpointHealthStatement = statement(
  'webhooks.endpoint_health',
  `UPDATE webhook_endpoints SET failing_since = $2, updated_at = now() WHERE id = $1::uuid AND failing_since IS DISTINCT FROM $2`,
);

/** Since when every attempt at the endpoint has failed (null: the last one succeeded). */
export async function setFailingSince(tx: SqlSession, endpointId: string, since: Date | null): Promise<void> {
  await tx.run(endpointHealthStatement, [endpointId, since]);
}

const disableStatement = statement<{ id: string }>(
  'webhooks.disable',
  `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = now()
   WHERE id = $1::uuid AND enabled RETURNING id`,
);

/** Disables the endpoint with a reason; false when it was not enabled. */
export async function disableEndpoint(tx: SqlSession, endpointId: string, reason: string): Promise<boolean> {
  return (await tx.run(disableStatement, [endpointId, reason])).length > 0;
}

/** A session as pg-boss's `db` option wants it, so that jobs are queued inside the caller's transaction. */
export function jobEngineSession(tx: SqlSession): { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } {
  return {
    executeSql: async (text, values) => ({ rows: await tx.run(dynamicStatement('webhooks.queue_job', text), values) }),
  };
}

const pendingBetweenStatement = statement<{ found: boolean }>(
  'webhooks.pending_between',
  `SELECT EXISTS (SELECT FROM webhook_messages WHERE state = 'pending' AND id >= $1::uuid AND id < $2::uuid) AS found`,
);

/** Whether a delivery with an id in [from, to) is still pending (to be tried again). */
export async function pendingMessagesBetween(session: SqlSession, from: string, to: string): Promise<boolean> {
  return (await session.run(pendingBetweenStatement, [from, to]))[0]!.found;
}

const eventsNamedStatement = statement<{ found: boolean }>(
  'webhooks.events_named_between',
  `SELECT EXISTS (SELECT FROM webhook_messages WHERE event_id >= $1::uuid AND event_id < $2::uuid) AS found`,
);

/** Whether a delivery (a replay made later, or one still kept) sends an event with an id in [from, to). */
export async function messagesOfEventsBetween(session: SqlSession, from: string, to: string): Promise<boolean> {
  return (await session.run(eventsNamedStatement, [from, to]))[0]!.found;
}
