import { named } from '../../db/prisma-names.js';
import { statement, type Sql, type SqlSession } from '../../db/sql.js';
import { uuidv7 } from '../ids.js';
import type { ApiKeyScope, Prisma, PrismaClient } from '../../generated/prisma/client.js';

// The API keys store: the only module of the domain that talks to the database.

export type ApiKeyQuery = { include?: Prisma.ApiKeyInclude; select?: Prisma.ApiKeySelect };

export interface NewApiKey {
  userId: string;
  name: string;
  publicId: string;
  secretHash: Uint8Array<ArrayBuffer>;
  scope: ApiKeyScope;
  expiresAt: Date | null;
}

const insertStatement = statement(
  'apiKeys.insert',
  `INSERT INTO api_keys (id, user_id, name, public_id, secret_hash, scope, expires_at)
   VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::"ApiKeyScope", $7)`,
);

/** Adds a key; its id. */
export async function insertApiKey(tx: SqlSession, key: NewApiKey): Promise<string> {
  const id = uuidv7();
  await tx.run(insertStatement, [id, key.userId, key.name, key.publicId, key.secretHash, key.scope, key.expiresAt]);
  return id;
}

/** The user's keys, newest first, revoked ones too. */
export function findApiKeys<Q extends ApiKeyQuery>(db: PrismaClient, userId: string, query: Q) {
  return named('apiKeys.list', () =>
    db.apiKey.findMany({ ...query, where: { userId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] }),
  ) as Promise<Prisma.ApiKeyGetPayload<Q>[]>;
}

export function findApiKey<Q extends ApiKeyQuery>(db: PrismaClient, userId: string, id: string, query: Q) {
  return named('apiKeys.one', () => db.apiKey.findFirst({ ...query, where: { id, userId } })) as Promise<Prisma.ApiKeyGetPayload<Q> | null>;
}

const countActiveStatement = statement<{ n: number }>(
  'apiKeys.count_active',
  `SELECT count(*)::int AS n FROM api_keys
   WHERE user_id = $1::uuid AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
);

/** The user's keys that are neither revoked nor expired at `now`. */
export async function countActiveApiKeys(tx: SqlSession, userId: string, now: Date): Promise<number> {
  return (await tx.run(countActiveStatement, [userId, now]))[0]!.n;
}

/** Revokes the user's key, keeping the first revocation's time; false when the user has no such key. */
export async function revokeApiKey(db: PrismaClient, userId: string, id: string, now: Date): Promise<boolean> {
  const { count } = await named('apiKeys.revoke', () =>
    db.apiKey.updateMany({ where: { id, userId, revokedAt: null }, data: { revokedAt: now } }),
  );
  if (count > 0) return true;
  return (await findApiKey(db, userId, id, { select: { id: true } })) !== null;
}

export interface PresentedKey {
  id: string;
  userId: string;
  scope: ApiKeyScope;
  /** A Buffer on node-postgres, a Uint8Array on PGlite. */
  secretHash: Uint8Array;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

// Asked on every request a key authenticates: one row by its unique public id.
const presentedStatement = statement<PresentedKey>(
  'apiKeys.presented',
  `SELECT id, user_id AS "userId", scope::text AS scope, secret_hash AS "secretHash", expires_at AS "expiresAt",
          revoked_at AS "revokedAt", last_used_at AS "lastUsedAt"
   FROM api_keys WHERE public_id = $1`,
);

export async function findPresentedKey(sql: Sql, publicId: string): Promise<PresentedKey | undefined> {
  return (await sql.run(presentedStatement, [publicId]))[0];
}

const touchStatement = statement(
  'apiKeys.touch',
  `UPDATE api_keys SET last_used_at = now()
   WHERE id = $1::uuid AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
);

/** Records the key's use, unless it was recorded in the last `everySeconds`. */
export async function touchApiKey(sql: Sql, id: string, everySeconds: number): Promise<void> {
  await sql.run(touchStatement, [id, everySeconds]);
}

const holdingStatement = statement<{ id: string }>(
  'apiKeys.holding',
  `SELECT id FROM api_keys WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
);

/** Those of the keys `ids` that are neither revoked nor expired at `now`. */
export async function findHoldingKeys(sql: Sql, ids: string[], now: Date): Promise<Set<string>> {
  return new Set((await sql.run(holdingStatement, [ids, now])).map((row) => row.id));
}
