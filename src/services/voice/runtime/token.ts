import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

// The token a voice runtime outside this service (the one Twilio streams a call to) fetches its call's
// configuration with: `<payload>.<signature>`, the payload naming the call attempt, the agent and the
// version the call uses and when the token expires, the signature an HMAC-SHA256 under a secret kept in
// the database (`signing_keys`), so that any instance reads what another made. It opens nothing but
// that one call's configuration, and only while the call is under way.

/** How long after a call is placed its token expires (its call ending ends it sooner). */
export const RUNTIME_TOKEN_MINUTES = 15;

export interface RuntimeGrant {
  attemptId: string;
  agentId: string;
  agentVersion: number;
  expiresAt: Date;
}

const payloadSchema = z.object({ a: z.guid(), g: z.guid(), v: z.number().int().min(0), e: z.number().int() });

const sign = (secret: Buffer, payload: string) => createHmac('sha256', secret).update(`voice-runtime:${payload}`).digest('base64url');

export function runtimeToken(secret: Buffer, grant: RuntimeGrant): string {
  const payload = Buffer.from(
    JSON.stringify({ a: grant.attemptId, g: grant.agentId, v: grant.agentVersion, e: grant.expiresAt.getTime() }),
  ).toString('base64url');
  return `${payload}.${sign(secret, payload)}`;
}

/** What the token grants, if we signed it and it has not expired at `now`; else undefined. */
export function readRuntimeToken(secret: Buffer, token: string, now: Date): RuntimeGrant | undefined {
  const [payload, signature, ...rest] = token.split('.');
  if (!payload || !signature || rest.length > 0) return undefined;
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let parsed: z.output<typeof payloadSchema>;
  try {
    parsed = payloadSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString()));
  } catch {
    return undefined;
  }
  if (parsed.e <= now.getTime()) return undefined;
  return { attemptId: parsed.a.toLowerCase(), agentId: parsed.g.toLowerCase(), agentVersion: parsed.v, expiresAt: new Date(parsed.e) };
}
