import { createHash, timingSafeEqual } from 'node:crypto';
import type { Principal, ServiceEnv } from '../context.js';
import { ConflictError, ValidationError } from '../errors.js';
import { uuidv7 } from '../ids.js';
import * as store from './store.js';

// Idempotency keys, after Stripe's: a POST carrying `Idempotency-Key` runs once per customer and key; a
// repeat of the same request within 24 hours gets the first response again (status and body, marked
// `Idempotent-Replayed: true`) without acting; the key with another request is refused; a repeat that
// arrives while the first still runs waits for it. Unlike Stripe, a response that refused the request
// (it changed nothing: bad input, a conflict, an error) is not kept, so the client may fix the request
// and send it again with the same key. Each surface says which of its responses changed something.
// A kept response is the answer to one credential: it is replayed to that credential only (the same API
// key, or the user's tokens, an admin's apart), so a key never gets what a token, or another key, was
// answered (a new key's secret, a webhook's signing secret, a write it may not make).

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const KEPT_HOURS = 24;
/** A first request still unanswered after this long died with its process; its key may be taken again. */
export const ABANDONED_MINUTES = 5;
/** How long a repeat waits for the first request before it is told to retry later. */
const WAIT_MS = 10_000;
const POLL_MS = 100;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

export interface KeptResponse {
  status: number;
  contentType: string | null;
  body: string;
}

/**
 * Whether a caller's requests are kept and replayed at all. A read-only API key changes nothing, so a key
 * has nothing to guard for it: each of its requests runs, and is authorized, as one without a key.
 */
export const keptForCaller = (user: Principal) => user.apiKey?.scope !== 'read';

/** The credential a kept response belongs to. */
export function credentialOf(user: Principal): store.Credential {
  if (user.apiKey) return { apiKeyId: user.apiKey.id, scope: user.apiKey.scope };
  return { apiKeyId: null, scope: user.isAdmin ? 'admin' : 'user' };
}

/** The header's value as a key: 1 to 255 visible ASCII characters. */
export function readKey(raw: string): string {
  if (!KEY_FORMAT.test(raw)) {
    throw ValidationError.field(IDEMPOTENCY_HEADER, 'Ensure this header has 1 to 255 visible ASCII characters (no spaces).');
  }
  return raw;
}

/**
 * What makes two requests the same: method, path with query, media type and body. A multipart body's
 * boundary is random per send, so it is replaced by a fixed one first.
 */
export function requestFingerprint(request: { method: string; path: string; contentType: string; body: Uint8Array }): Buffer {
  let { contentType } = request;
  let body = Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength);
  const boundary = /^multipart\/[^;]+;.*\bboundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (boundary) {
    contentType = contentType.replace(boundary, 'boundary');
    body = replaceAll(body, Buffer.from(boundary), Buffer.from('boundary'));
  }
  return createHash('sha256').update(`${request.method} ${request.path}\n${contentType}\n`).update(body).digest();
}

function replaceAll(haystack: Buffer, needle: Buffer, replacement: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, from)) {
    parts.push(haystack.subarray(from, at), replacement);
    from = at + needle.length;
  }
  parts.push(haystack.subarray(from));
  return Buffer.concat(parts);
}

/**
 * Runs `run` once for this user's key, or answers what its first run kept, to the credential that made
 * that run only. `run` answers the response to keep, or undefined when the response changed nothing and
 * the key is let go. Only for a caller `keptForCaller` allows: a read-only key never reaches a kept answer.
 */
export async function runOnce(
  env: ServiceEnv,
  user: Principal,
  key: string,
  fingerprint: Buffer,
  run: () => Promise<KeptResponse | undefined>,
): Promise<{ replayed: KeptResponse } | { ran: true }> {
  const userId = user.id;
  const credential = credentialOf(user);
  await store.purgeKeys(env.sql, userId, KEPT_HOURS);
  const waitUntil = Date.now() + WAIT_MS;
  for (;;) {
    const id = uuidv7();
    if (await store.claimKey(env.sql, { id, userId, key, fingerprint, credential }, KEPT_HOURS, ABANDONED_MINUTES)) {
      let kept: KeptResponse | undefined;
      try {
        kept = await run();
      } finally {
        if (kept) await store.keepResponse(env.sql, id, kept);
        else await store.releaseKey(env.sql, id);
      }
      return { ran: true };
    }
    const held = await store.findKey(env.sql, userId, key);
    // Let go meanwhile: try to take it again.
    if (!held) continue;
    // Before the request is compared: another credential learns nothing of what the key was used for.
    if (held.apiKeyId !== credential.apiKeyId || held.scope !== credential.scope) {
      throw new ConflictError(
        'This Idempotency-Key was used by another credential (a token or another API key) in the last ' +
          `${KEPT_HOURS} hours: its answer is kept for that credential only. Send a new key.`,
        'idempotency_key_other_credential',
      );
    }
    if (!timingSafeEqual(Buffer.from(held.fingerprint), fingerprint)) {
      throw ValidationError.field(
        IDEMPOTENCY_HEADER,
        `This key was used with another request in the last ${KEPT_HOURS} hours: send a new key with a new request.`,
      );
    }
    if (held.responseStatus !== null) {
      return { replayed: { status: held.responseStatus, contentType: held.responseType, body: held.responseBody ?? '' } };
    }
    if (Date.now() > waitUntil) {
      throw new ConflictError('A request with this Idempotency-Key is still running: retry it later.', 'idempotency_key_in_use');
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Forgets every user's expired keys, a batch at a time (the retention run): a customer's own keys are
 * purged as it sends new ones, but one that stops sending would keep its last day's keys for ever.
 */
export async function purgeExpiredKeys(env: ServiceEnv, batch = 10_000): Promise<number> {
  let purged = 0;
  for (;;) {
    const n = await store.purgeExpiredKeys(env.sql, KEPT_HOURS, batch);
    purged += n;
    if (n < batch) return purged;
  }
}
