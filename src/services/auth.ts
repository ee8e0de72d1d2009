import { createRemoteJWKSet, errors, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
import type { Sql, SqlSession } from '../db/sql.js';
import { looksLikeApiKey, principalOfKey } from './api-keys/api-keys.js';
import { AuthenticationError } from './errors.js';
import type { Principal } from './context.js';
import { insertUserIfMissing } from './users/store.js';
import { uuid } from './validation.js';

// Bearer-token authentication, written once for both surfaces (DESIGN.md section 5).

export interface AuthSettings {
  secret?: string | undefined;
  jwksUrl?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
}

export const MIN_SECRET_LENGTH = 32;
const CLOCK_TOLERANCE_SECONDS = 30;
/** Asymmetric algorithms accepted from a JWKS; HS256 is the only one accepted with a shared secret. */
const JWKS_ALGORITHMS = ['RS256', 'ES256'];

export interface Authenticator {
  /** Verifies an `Authorization` header value and returns who is calling, or throws AuthenticationError. */
  authenticate(header: string | null | undefined): Promise<Principal>;
}

/** Accepts JWTs (HS256 with the shared secret, or RS256/ES256 from the JWKS) and the API keys in `keys`. */
export function createAuthenticator(settings: AuthSettings, users: UserRegistry, keys: Sql): Authenticator {
  let key: Uint8Array | JWTVerifyGetKey;
  let algorithms: string[];
  if (settings.jwksUrl) {
    key = createRemoteJWKSet(new URL(settings.jwksUrl));
    algorithms = JWKS_ALGORITHMS;
  } else if (settings.secret && settings.secret.length >= MIN_SECRET_LENGTH) {
    key = new TextEncoder().encode(settings.secret);
    algorithms = ['HS256'];
  } else {
    throw new Error(`A JWT secret of at least ${MIN_SECRET_LENGTH} characters or a JWKS URL is required`);
  }

  const verified = new VerifiedTokens();
  return {
    async authenticate(header) {
      const token = bearerToken(header);
      if (looksLikeApiKey(token)) {
        const principal = await principalOfKey(keys, token, new Date());
        if (!principal) throw new AuthenticationError('invalid');
        return principal;
      }
      const known = verified.get(token);
      if (known) return known;
      let payload;
      try {
        ({ payload } = await jwtVerify(token, key as Uint8Array, {
          algorithms,
          issuer: settings.issuer,
          audience: settings.audience,
          requiredClaims: ['exp', 'sub'],
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
        }));
      } catch (error) {
        // Only a token that verified in every other respect is reported as expired.
        throw new AuthenticationError(error instanceof errors.JWTExpired ? 'expired' : 'invalid');
      }
      if (!uuid.safeParse(payload.sub).success) throw new AuthenticationError('invalid');
      const principal: Principal = {
        id: payload.sub!.toLowerCase(),
        isAdmin: payload.role === 'admin',
        tokenExpiresAt: new Date(payload.exp! * 1000),
      };
      await users.ensure(principal.id);
      verified.set(token, principal, payload.exp! * 1000);
      return principal;
    },
  };
}

/**
 * Tokens verified in the last minute, by their exact text. Verifying a signature (WebCrypto, per
 * request) costs more than the rest of a small request; the same text verifies the same way until its
 * `exp`. The minute bounds how long a token stays accepted after its JWKS key was withdrawn.
 */
class VerifiedTokens {
  readonly #entries = new Map<string, { principal: Principal; until: number }>();

  constructor(
    private readonly capacity = 10_000,
    private readonly maxAgeMs = 60_000,
  ) {}

  get(token: string): Principal | undefined {
    const entry = this.#entries.get(token);
    if (!entry) return undefined;
    if (entry.until > Date.now()) return entry.principal;
    this.#entries.delete(token);
    return undefined;
  }

  set(token: string, principal: Principal, expiresAtMs: number): void {
    const until = Math.min(Date.now() + this.maxAgeMs, expiresAtMs);
    if (until <= Date.now()) return;
    if (this.#entries.size >= this.capacity) this.#entries.clear();
    this.#entries.set(token, { principal, until });
  }
}

function bearerToken(header: string | null | undefined): string {
  if (!header) throw new AuthenticationError('missing');
  const [scheme, token, ...rest] = header.trim().split(/\s+/);
  // Like DRF, a header of another scheme is simply not our credentials.
  if (scheme?.toLowerCase() !== 'bearer') throw new AuthenticationError('missing');
  if (!token || rest.length > 0) throw new AuthenticationError('invalid');
  return token;
}

/** Creates a user row the first time a token names it; remembers recent ids to spare the database. */
export class UserRegistry {
  private readonly known = new Set<string>();

  constructor(
    private readonly sql: SqlSession,
    private readonly capacity = 10_000,
  ) {}

  async ensure(id: string): Promise<void> {
    if (this.known.has(id)) return;
    await insertUserIfMissing(this.sql, id);
    if (this.known.size >= this.capacity) this.known.clear();
    this.known.add(id);
  }
}

export interface TokenRequest {
  sub: string;
  role?: 'admin' | undefined;
  ttlSeconds?: number;
  issuer?: string | undefined;
  audience?: string | undefined;
}

/** Signs an HS256 token for development and tests (`npm run token`). */
export function signToken(secret: string, request: TokenRequest): Promise<string> {
  const jwt = new SignJWT(request.role ? { role: request.role } : {})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(request.sub)
    .setIssuedAt()
    .setExpirationTime(`${request.ttlSeconds ?? 3600}s`);
  if (request.issuer) jwt.setIssuer(request.issuer);
  if (request.audience) jwt.setAudience(request.audience);
  return jwt.sign(new TextEncoder().encode(secret));
}
