import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator, type UserRegistry } from '../src/services/auth.js';
import type { Sql } from '../src/db/sql.js';
import { startTestApp, TEST_SECRET, type TestApp } from './support/app.js';
import { createCampaign, customer } from './support/campaigns.js';
import { ALWAYS_OPEN, CAMPAIGN_UPDATED } from './support/live.js';
import { subscribe } from './support/sse.js';

// Every way a bearer token can be wrong is a 401 on both surfaces, with DRF's bodies on v1.

const REST_PATH = '/api/v1/agents/templates/';
const QUERY = '{ agentTemplates { id } }';
const NOT_PROVIDED = { detail: 'Authentication credentials were not provided.' };
const NOT_VALID = { detail: 'Given token not valid for any token type', code: 'token_not_valid' };

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const secretKey = new TextEncoder().encode(TEST_SECRET);
const now = () => Math.floor(Date.now() / 1000);

function hs256(claims: Record<string, unknown>, secret: Uint8Array = secretKey) {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(secret);
}

async function expectRejected(app: TestApp, authorization: string | undefined, body: object) {
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
  const rest = await app.request('GET', REST_PATH, { headers });
  expect(rest.status).toBe(401);
  expect(rest.json).toEqual(body);
  expect(rest.headers.get('www-authenticate')).toBe('Bearer realm="api"');

  const graphql = await app.request('POST', '/graphql', { headers, body: { query: QUERY } });
  expect(graphql.status).toBe(401);
  expect(graphql.headers.get('www-authenticate')).toBe('Bearer realm="api"');
  expect(graphql.json.data ?? null).toBeNull();
  expect(graphql.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
}

describe('with a shared secret (HS256)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('accepts a valid token on both surfaces and creates the user on first sight', async () => {
    const sub = randomUUID();
    const token = await app.token(sub);
    expect(await app.prisma.user.findUnique({ where: { id: sub } })).toBeNull();
    expect((await app.request('GET', REST_PATH, { token })).status).toBe(200);
    const graphql = await app.gql(QUERY, {}, token);
    expect(graphql.status).toBe(200);
    expect(graphql.data.agentTemplates.length).toBeGreaterThan(0);
    expect(await app.prisma.user.findUnique({ where: { id: sub } })).not.toBeNull();
  });

  it('no header', () => expectRejected(app, undefined, NOT_PROVIDED));
  it('another scheme', () => expectRejected(app, 'Basic dXNlcjpwYXNz', NOT_PROVIDED));
  it('"Bearer" with no token', () => expectRejected(app, 'Bearer', NOT_VALID));
  it('a malformed header', () => expectRejected(app, 'Bearer two tokens', NOT_VALID));
  it('garbage instead of a JWT', () => expectRejected(app, 'Bearer not.a.jwt', NOT_VALID));

  it('a bad signature', async () => {
    const token = await hs256({ sub: randomUUID(), exp: now() + 60 }, new TextEncoder().encode('x'.repeat(48)));
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('alg none', async () => {
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: randomUUID(), exp: now() + 60 })}.`;
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('an RS256 token where HS256 is configured', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({ sub: randomUUID() }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('1h').sign(privateKey);
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('an HS512 token signed with the right secret (algorithms are pinned)', async () => {
    const token = await new SignJWT({ sub: randomUUID() }).setProtectedHeader({ alg: 'HS512' }).setExpirationTime('1h').sign(secretKey);
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it("expired: says so on both surfaces, in simplejwt's words on v1", async () => {
    const token = await hs256({ sub: randomUUID(), exp: now() - 120 });
    await expectRejected(app, `Bearer ${token}`, {
      ...NOT_VALID,
      messages: [{ token_class: 'AccessToken', token_type: 'access', message: 'Token is expired' }],
    });
    const graphql = await app.request('POST', '/graphql', { token, body: { query: QUERY } });
    expect(graphql.json.errors[0]).toMatchObject({ message: 'Token is expired', extensions: { reason: 'token_expired' } });
  });

  it("ends a subscription at its token's expiry, with a last event that says so", async () => {
    const alice = await customer(app);
    const campaign = await createCampaign(app, alice, ALWAYS_OPEN);
    const shortLived = await hs256({ sub: alice.id, exp: now() + 3 });
    const byShortLived = await subscribe(app.url, CAMPAIGN_UPDATED, { id: campaign.id }, shortLived);
    const byLongLived = await subscribe(app.url, CAMPAIGN_UPDATED, { id: campaign.id }, alice.token);
    try {
      await byShortLived.ended;
      expect(byShortLived.completed).toBe(true);
      expect(byShortLived.results.at(-1)).toMatchObject({
        errors: [{ extensions: { code: 'UNAUTHENTICATED', reason: 'token_expired' } }],
      });
      // The other stream, opened with a token still valid, goes on.
      expect(byLongLived.completed).toBe(false);
    } finally {
      byShortLived.close();
      byLongLived.close();
    }
  });

  it('expired but signed with another key: invalid, not expired', async () => {
    const token = await hs256({ sub: randomUUID(), exp: now() - 120 }, new TextEncoder().encode('y'.repeat(48)));
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('no exp', async () => {
    const token = await hs256({ sub: randomUUID() });
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('no sub', async () => {
    const token = await hs256({ exp: now() + 60 });
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('a sub that is not a UUID', async () => {
    const token = await hs256({ sub: 'alice', exp: now() + 60 });
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('refuses to start with a secret shorter than 32 characters', () => {
    expect(() => createAuthenticator({ secret: 'short' }, {} as UserRegistry, {} as Sql)).toThrow(/at least 32/);
  });
});

describe('with issuer and audience configured', () => {
  let app: TestApp;
  const auth = { secret: TEST_SECRET, issuer: 'https://id.example.test/', audience: 'campaigns-api' };
  beforeAll(async () => {
    app = await startTestApp({ auth });
  });
  afterAll(() => app.close());

  it('accepts the right issuer and audience', async () => {
    expect((await app.request('GET', REST_PATH, { token: await app.token() })).status).toBe(200);
  });

  it('wrong issuer', async () => {
    const token = await hs256({ sub: randomUUID(), exp: now() + 60, iss: 'https://evil.test/', aud: auth.audience });
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('wrong audience', async () => {
    const token = await hs256({ sub: randomUUID(), exp: now() + 60, iss: auth.issuer, aud: 'other-api' });
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('no issuer or audience at all', async () => {
    const token = await hs256({ sub: randomUUID(), exp: now() + 60 });
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });
});

describe('with a JWKS (RS256 / ES256)', () => {
  let app: TestApp;
  let jwks: Server;
  let keys: CryptoKeyPair;

  beforeAll(async () => {
    keys = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const { port } = jwks.address() as AddressInfo;
    app = await startTestApp({ auth: { jwksUrl: `http://127.0.0.1:${port}/jwks.json` } });
  });
  afterAll(async () => {
    await app.close();
    jwks.close();
  });

  it('accepts a token signed by a key of the set', async () => {
    const token = await new SignJWT({ sub: randomUUID() })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setExpirationTime('5m')
      .sign(keys.privateKey);
    expect((await app.request('GET', REST_PATH, { token })).status).toBe(200);
  });

  it('refuses the HS256/RS256 confusion: an HS256 token keyed with the public key', async () => {
    const pem = await exportSPKI(keys.publicKey);
    const token = await hs256({ sub: randomUUID(), exp: now() + 60 }, new TextEncoder().encode(pem));
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });

  it('refuses a token signed by a key outside the set', async () => {
    const stranger = await generateKeyPair('RS256');
    const token = await new SignJWT({ sub: randomUUID() })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setExpirationTime('5m')
      .sign(stranger.privateKey);
    await expectRejected(app, `Bearer ${token}`, NOT_VALID);
  });
});
