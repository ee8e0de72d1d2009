import { createRemoteJWKSet, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
import type { PrismaClient } from '../generated/prisma/client.js';
import { AuthenticationError } from './errors.js';
import type { Principal } from './context.js';
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

export function createAuthenticator(settings: AuthSettings, users: UserRegistry): Authenticator {
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

  return {
    async authenticate(header) {
      const token = bearerToken(header);
      let payload;
      try {
        ({ payload } = await jwtVerify(token, key as Uint8Array, {
          algorithms,
          issuer: settings.issuer,
          audience: settings.audience,
          requiredClaims: ['exp', 'sub'],
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
        }));
      } catch {
        throw new AuthenticationError('invalid');
      }
      if (!uuid.safeParse(payload.sub).success) throw new AuthenticationError('invalid');
      const principal: Principal = { id: payload.sub!.toLowerCase(), isAdmin: payload.role === 'admin' };
      await users.ensure(principal.id);
      return principal;
    },
  };
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
    private readonly db: PrismaClient,
    private readonly capacity = 10_000,
  ) {}

  async ensure(id: string): Promise<void> {
    if (this.known.has(id)) return;
    await this.db.user.upsert({ where: { id }, create: { id }, update: {} });
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
