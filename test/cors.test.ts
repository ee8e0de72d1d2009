import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

// Browsers calling /graphql and /api/v1 from another origin, over real HTTP: which origins may read the
// answers, what a preflight allows, and that no answer ever allows credentials.

const APP_ORIGIN = 'https://app.example.com';
const EVIL_ORIGIN = 'https://evil.example.net';
const QUERY = { query: '{ creditBalance { balanceCents } }' };

let any: TestApp;
let listed: TestApp;
let none: TestApp;
beforeAll(async () => {
  [any, listed, none] = await Promise.all([
    startTestApp({ corsOrigins: '*' }),
    startTestApp({ corsOrigins: [APP_ORIGIN, 'http://localhost:5173'] }),
    startTestApp({ corsOrigins: [] }),
  ]);
});
afterAll(() => Promise.all([any.close(), listed.close(), none.close()]));

const preflight = (app: TestApp, path: string, origin: string, method = 'POST') =>
  app.request('OPTIONS', path, {
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
  });

const fromOrigin = async (app: TestApp, origin: string) => ({
  graphql: await app.request('POST', '/graphql', { token: await app.token(), headers: { origin }, body: QUERY }),
  rest: await app.request('GET', '/api/v1/billing/credits/', { token: await app.token(), headers: { origin } }),
});

describe('with any origin allowed (the development default)', () => {
  it('lets every origin read answers on both surfaces, with a wildcard and never with credentials', async () => {
    for (const res of Object.values(await fromOrigin(any, EVIL_ORIGIN))) {
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('access-control-expose-headers')).toBe('Retry-After, X-Request-Id');
    }
  });

  it('names the origin on every kind of answer: errors and redirects too', async () => {
    const unauthenticated = await any.request('POST', '/graphql', { headers: { origin: EVIL_ORIGIN }, body: QUERY });
    const redirect = await any.request('GET', '/api/v1/billing/credits', { headers: { origin: EVIL_ORIGIN } });
    const missing = await any.request('GET', '/api/v1/nothing/here/', { headers: { origin: EVIL_ORIGIN } });
    expect([unauthenticated.status, redirect.status, missing.status]).toEqual([401, 308, 404]);
    for (const res of [unauthenticated, redirect, missing]) expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers preflights on both surfaces with the methods and headers the API takes', async () => {
    for (const [path, method] of [
      ['/graphql', 'POST'],
      ['/api/v1/campaigns/', 'GET'],
      ['/api/v1/contacts/groups/5eed0000-0000-4000-8000-000000000001/', 'PATCH'],
    ]) {
      const res = await preflight(any, path!, EVIL_ORIGIN, method);
      expect(res.status).toBe(204);
      expect(Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-')))).toEqual({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
        'access-control-allow-headers': 'Authorization, Content-Type, X-GraphQL-Yoga-CSRF, X-Request-Id',
        'access-control-max-age': '600',
      });
    }
  });
});

describe('with listed origins', () => {
  it('lets a listed origin read answers on both surfaces, named exactly, without credentials', async () => {
    for (const res of Object.values(await fromOrigin(listed, APP_ORIGIN))) {
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('vary')).toContain('Origin');
    }
    const res = await preflight(listed, '/graphql', 'http://localhost:5173');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('gives any other origin no CORS headers, so its pages cannot read the answers', async () => {
    for (const origin of [EVIL_ORIGIN, 'https://app.example.com.evil.example.net', 'null']) {
      for (const res of Object.values(await fromOrigin(listed, origin))) {
        expect(res.headers.get('access-control-allow-origin')).toBeNull();
        expect(res.headers.get('access-control-allow-credentials')).toBeNull();
        expect(res.headers.get('vary')).toContain('Origin');
      }
      const res = await preflight(listed, '/api/v1/campaigns/', origin);
      expect(res.status).toBe(204);
      expect([...res.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
  });
});

describe('with no origin listed (the production default)', () => {
  it('allows no origin at all', async () => {
    for (const origin of [APP_ORIGIN, EVIL_ORIGIN]) {
      for (const res of Object.values(await fromOrigin(none, origin))) {
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBeNull();
        expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      }
      const res = await preflight(none, '/graphql', origin);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
  });
});

it('leaves webhooks and the operations endpoints out: servers call them, not pages', async () => {
  for (const path of ['/healthz', '/metrics']) {
    const res = await any.request('GET', path, { headers: { origin: EVIL_ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  }
  const res = await preflight(any, '/webhooks/stripe', EVIL_ORIGIN);
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
});
