import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Sql } from '../../db/sql.js';
import type { Principal, ServiceContext } from '../context.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import { ownedOrNotFound } from '../owned.js';
import { lockUser } from '../users/store.js';
import { uuid, parseInput, type RawInput } from '../validation.js';
import * as store from './store.js';

// API keys: named bearer credentials a customer makes for server-to-server use, accepted beside JWTs on
// both surfaces. A key is `cfk_<public id>_<secret>`: the public id finds it (and is shown in lists as
// its prefix), the secret is shown once and kept only as its SHA-256. Every request that presents a key
// reads its row, so a revocation holds at once on every instance.

export const API_KEY_PREFIX = 'cfk_';
const KEY_FORMAT = /^cfk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
/** A key's last use is written at most this often, so that using it costs no write per request. */
const TOUCH_EVERY_SECONDS = 60;
/** Keys a user may hold at once (neither revoked nor expired). */
export const MAX_ACTIVE_KEYS = 100;

const createInput = z.object({
  name: z.string().trim().min(1).max(100),
  scope: z.enum(['read', 'full']).default('full'),
  expires_at: z.date().optional(),
});

export interface CreatedApiKey {
  apiKey: { id: string };
  /** The whole key; shown this once. */
  secret: string;
}

const hashOf = (secret: string) => createHash('sha256').update(secret).digest();

/** The key's visible part, as lists show it. */
export const keyPrefix = (publicId: string) => `${API_KEY_PREFIX}${publicId}`;

/** A key cannot manage keys: one that leaked must not be able to make others that outlive it. */
function refuseKeyCallers(ctx: ServiceContext): void {
  if (ctx.user.apiKey) throw new ForbiddenError('API keys cannot create or revoke API keys: sign in with a token.');
}

export async function createApiKey(ctx: ServiceContext, raw: RawInput<typeof createInput>): Promise<CreatedApiKey> {
  refuseKeyCallers(ctx);
  const input = parseInput(createInput, raw);
  const now = ctx.clock.now();
  if (input.expires_at && input.expires_at <= now) throw ValidationError.field('expires_at', 'Must lie in the future.');
  const publicId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  // Counted and added under the user's row lock, so that requests at once, from any process, take turns
  // and none counts before another's key is added.
  const id = await ctx.sql.transaction(async (tx) => {
    await lockUser(tx, ctx.user.id);
    if ((await store.countActiveApiKeys(tx, ctx.user.id, now)) >= MAX_ACTIVE_KEYS) {
      throw new ConflictError(`You hold ${MAX_ACTIVE_KEYS} active API keys, the most there may be: revoke one first.`, 'api_key_limit');
    }
    return store.insertApiKey(tx, {
      userId: ctx.user.id,
      name: input.name,
      publicId,
      secretHash: hashOf(secret),
      scope: input.scope,
      expiresAt: input.expires_at ?? null,
    });
  });
  return { apiKey: { id }, secret: `${keyPrefix(publicId)}_${secret}` };
}

export function listApiKeys<Q extends store.ApiKeyQuery = {}>(ctx: ServiceContext, query: Q = {} as Q) {
  return store.findApiKeys(ctx.db, ctx.user.id, query);
}

export function getApiKey<Q extends store.ApiKeyQuery = {}>(ctx: ServiceContext, id: string, query: Q = {} as Q) {
  return ownedOrNotFound('ApiKey', id, (id) => store.findApiKey(ctx.db, ctx.user.id, id, query));
}

/** Revokes one of the caller's keys at once (again: no change). */
export async function revokeApiKey(ctx: ServiceContext, id: string): Promise<void> {
  refuseKeyCallers(ctx);
  if (!uuid.safeParse(id).success || !(await store.revokeApiKey(ctx.db, ctx.user.id, id, ctx.clock.now()))) {
    throw new NotFoundError('ApiKey');
  }
}

/** Whether a bearer token is meant as an API key (rather than a JWT). */
export const looksLikeApiKey = (token: string) => token.startsWith(API_KEY_PREFIX);

/**
 * Who a presented key speaks for; undefined for a key that is malformed, unknown, revoked or expired.
 * Admin rights never come from a key.
 */
export async function principalOfKey(sql: Sql, token: string, now: Date): Promise<Principal | undefined> {
  const parts = KEY_FORMAT.exec(token);
  if (!parts) return undefined;
  const key = await store.findPresentedKey(sql, parts[1]!);
  if (!key || !timingSafeEqual(Buffer.from(key.secretHash), hashOf(parts[2]!))) return undefined;
  if (key.revokedAt || (key.expiresAt && key.expiresAt <= now)) return undefined;
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > TOUCH_EVERY_SECONDS * 1000) {
    await store.touchApiKey(sql, key.id, TOUCH_EVERY_SECONDS);
  }
  return { id: key.userId, isAdmin: false, apiKey: { id: key.id, scope: key.scope } };
}

/**
 * Those of the keys `ids` that still authenticate (neither revoked nor expired). What a key started that
 * outlives its request (a subscription, an export link) asks this again, so that it ends with the key.
 */
export function keysStillHolding(sql: Sql, ids: string[], now: Date): Promise<Set<string>> {
  return store.findHoldingKeys(sql, ids, now);
}

/** A read-only key may not change anything: `writes` is whether the request would. */
export function refuseWritesWithReadKey(user: Principal, writes: boolean): void {
  if (writes && user.apiKey?.scope === 'read') {
    throw new ForbiddenError('This API key may only read: use a key with the full scope to change anything.');
  }
}
