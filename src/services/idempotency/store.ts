import { statement, type SqlSession } from '../../db/sql.js';
import type { CredentialScope } from '../../generated/prisma/client.js';

// The idempotency keys store: the only module of the domain that talks to the database.

/** Who sent a request: one API key, or (no key) the user's tokens. */
export interface Credential {
  apiKeyId: string | null;
  scope: CredentialScope;
}

export interface KeptRow extends Credential {
  id: string;
  fingerprint: Uint8Array;
  responseStatus: number | null;
  responseType: string | null;
  responseBody: string | null;
}

// A key is taken when it is new, when its row is older than the time keys are kept, or when its first
// request started so long ago that its process must have died (it answered nothing that was kept).
const claimStatement = statement<{ id: string }>(
  'idempotency.claim',
  `INSERT INTO idempotency_keys (id, user_id, key, fingerprint, api_key_id, scope, created_at)
   VALUES ($1::uuid, $2::uuid, $3, $4, $5::uuid, $6::"CredentialScope", now())
   ON CONFLICT (user_id, key) DO UPDATE
     SET id = EXCLUDED.id, fingerprint = EXCLUDED.fingerprint, api_key_id = EXCLUDED.api_key_id, scope = EXCLUDED.scope,
         created_at = now(), completed_at = NULL, response_status = NULL, response_type = NULL, response_body = NULL
     WHERE idempotency_keys.created_at < now() - make_interval(hours => $7)
        OR (idempotency_keys.completed_at IS NULL AND idempotency_keys.created_at < now() - make_interval(mins => $8))
   RETURNING id`,
);

/** Takes the key for a new request; false when another request holds it. */
export async function claimKey(
  sql: SqlSession,
  row: { id: string; userId: string; key: string; fingerprint: Buffer; credential: Credential },
  keptHours: number,
  abandonedMinutes: number,
): Promise<boolean> {
  const { apiKeyId, scope } = row.credential;
  const claimed = await sql.run(claimStatement, [
    row.id,
    row.userId,
    row.key,
    row.fingerprint,
    apiKeyId,
    scope,
    keptHours,
    abandonedMinutes,
  ]);
  return claimed.length > 0;
}

const findStatement = statement<KeptRow>(
  'idempotency.find',
  `SELECT id, fingerprint, api_key_id AS "apiKeyId", scope::text AS scope, response_status AS "responseStatus", response_type AS "responseType", response_body AS "responseBody"
   FROM idempotency_keys WHERE user_id = $1::uuid AND key = $2`,
);

export async function findKey(sql: SqlSession, userId: string, key: string): Promise<KeptRow | undefined> {
  return (await sql.run(findStatement, [userId, key]))[0];
}

const completeStatement = statement(
  'idempotency.complete',
  `UPDATE idempotency_keys SET response_status = $2, response_type = $3, response_body = $4, completed_at = now() WHERE id = $1::uuid`,
);

export async function keepResponse(sql: SqlSession, id: string, response: { status: number; contentType: string | null; body: string }) {
  await sql.run(completeStatement, [id, response.status, response.contentType, response.body]);
}

const releaseStatement = statement('idempotency.release', `DELETE FROM idempotency_keys WHERE id = $1::uuid`);

export async function releaseKey(sql: SqlSession, id: string): Promise<void> {
  await sql.run(releaseStatement, [id]);
}

const purgeStatement = statement(
  'idempotency.purge',
  `DELETE FROM idempotency_keys WHERE user_id = $1::uuid AND created_at < now() - make_interval(hours => $2)`,
);

/** Forgets the user's keys older than the time keys are kept. */
export async function purgeKeys(sql: SqlSession, userId: string, keptHours: number): Promise<void> {
  await sql.run(purgeStatement, [userId, keptHours]);
}

const purgeExpiredStatement = statement<{ purged: number }>(
  'idempotency.purge_expired',
  `WITH gone AS (DELETE FROM idempotency_keys WHERE id IN (
     SELECT id FROM idempotency_keys WHERE id < uuidv7_floor(now() - make_interval(hours => $1))
       AND created_at < now() - make_interval(hours => $1) ORDER BY id LIMIT $2) RETURNING 1)
   SELECT count(*)::int AS purged FROM gone`,
);

/** Forgets up to `limit` of every user's keys older than the time keys are kept (their ids are UUIDv7s of their claims); how many went. */
export async function purgeExpiredKeys(sql: SqlSession, keptHours: number, limit: number): Promise<number> {
  return (await sql.run(purgeExpiredStatement, [keptHours, limit]))[0]!.purged;
}
