import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v1LeanLane } from '../src/ops/metrics.js';
import { startTestApp, TEST_SECRET, type TestApp } from './support/app.js';
import { createCampaign, customer, type Customer } from './support/campaigns.js';
import { rawRequest, type RawAnswer } from './support/raw-http.js';

// The v1 lean lane (src/rest/lean-lane.ts): a GET of JSON under /api/v1/ is answered from node:http,
// through the router's own steps. Its answers are the full path's to the byte, headers included: each
// request goes both to the app's server and to a server of the full path alone (Hono, no lanes), as a
// plain client sends it (node:http, no Accept-Encoding), and the lane's counter says which it answered.

const ORIGIN = 'https://app.example';

const get = (url: string, headers: Record<string, string> = {}, method = 'GET') => rawRequest(url, { method, headers });

const answered = async () => (await v1LeanLane.get()).values[0]?.value ?? 0;

/** Sends a request and says whether the lane answered it. */
async function throughLane(send: () => Promise<RawAnswer>): Promise<{ answer: RawAnswer; lane: boolean }> {
  const before = await answered();
  const answer = await send();
  return { answer, lane: (await answered()) > before };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let app: TestApp;
let limited: TestApp;
let full: Server;
let fullUrl: string;
let alice: Customer;
let bob: Customer;
let alicesCampaign: string;
let bobsCampaign: string;

beforeAll(async () => {
  app = await startTestApp({ corsOrigins: [ORIGIN], rateLimits: { requests: { points: 1_000_000, durationSeconds: 60 } } });
  limited = await startTestApp({
    database: { ...app.db, close: async () => {} },
    corsOrigins: [ORIGIN],
    rateLimits: { requests: { points: 2, durationSeconds: 600 } },
  });
  full = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fullPath, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server));
  });
  fullUrl = `http://127.0.0.1:${(full.address() as AddressInfo).port}`;
  alice = await customer(app, { contacts: 3 });
  bob = await customer(app, { contacts: 2 });
  alicesCampaign = (await createCampaign(app, alice, { name: 'First "quoted" ✓' })).id as string;
  await createCampaign(app, alice, { name: 'Second' });
  bobsCampaign = (await createCampaign(app, bob, { name: "Bob's" })).id as string;
});
afterAll(async () => {
  await new Promise<void>((resolve) => full?.close(() => resolve()));
  await limited?.close();
  await app?.close();
});

/** The same request to the app and to the full path alone: the lane answers, with the full path's bytes. */
async function expectSameAsFullPath(path: string, headers: Record<string, string>, url = app.url): Promise<RawAnswer> {
  const sent = { ...headers, 'x-request-id': `lane-${randomUUID()}` };
  const lean = await throughLane(() => get(url + path, sent));
  const whole = await get(fullUrl + path, sent);
  expect(lean.lane, path).toBe(true);
  expect(lean.answer.status, path).toBe(whole.status);
  expect(lean.answer.bytes.equals(whole.bytes), path).toBe(true);
  expect(lean.answer.headers, path).toEqual(whole.headers);
  return lean.answer;
}

describe('the v1 lean lane', () => {
  it('answers the lists and single reads as the full path does, byte for byte, headers included', async () => {
    const stale = await new SignJWT({ sub: alice.id })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 120)
      .sign(new TextEncoder().encode(TEST_SECRET));
    const cases: [string, Record<string, string>, number][] = [
      ['/api/v1/campaigns/', bearer(alice.token), 200],
      ['/api/v1/campaigns/', { ...bearer(alice.token), origin: ORIGIN }, 200],
      ['/api/v1/campaigns/', { ...bearer(alice.token), origin: 'https://elsewhere.example' }, 200],
      ['/api/v1/campaigns/?limit=1&offset=1', bearer(alice.token), 200],
      ['/api/v1/campaigns/?limit=1&limit=5', bearer(alice.token), 200],
      ['/api/v1/agents/active/', bearer(alice.token), 200],
      [`/api/v1/campaigns/${alicesCampaign}/`, bearer(alice.token), 200],
      [`/api/v1/campaigns/${alicesCampaign}/report/`, bearer(alice.token), 200],
      ['/api/v1/campaigns/recordings/', bearer(alice.token), 200],
      ['/api/v1/agents/templates/', bearer(alice.token), 200],
      ['/api/v1/billing/credits/', bearer(alice.token), 200],
      // Refusals: no token, an expired one, another customer's id, a path id that is no id, a bad query.
      ['/api/v1/campaigns/', {}, 401],
      ['/api/v1/campaigns/', { ...bearer(stale), origin: ORIGIN }, 401],
      [`/api/v1/campaigns/${bobsCampaign}/`, bearer(alice.token), 404],
      ['/api/v1/campaigns/not-an-id/', bearer(alice.token), 404],
      ['/api/v1/campaigns/?limit=many', bearer(alice.token), 400],
    ];
    for (const [path, headers, status] of cases) {
      const answer = await expectSameAsFullPath(path, headers);
      expect(answer.status, path).toBe(status);
    }
    const list = JSON.parse((await get(`${app.url}/api/v1/campaigns/`, bearer(alice.token))).text) as { name: string }[];
    expect(list.map((c) => c.name)).toEqual(['Second', 'First "quoted" ✓']);
  });

  it('compresses as the full path does for clients that ask, byte for byte', async () => {
    for (const accept of ['gzip', 'br', 'gzip, deflate, br', 'identity', 'gzip;q=0, br;q=0']) {
      for (const [path, headers] of [
        ['/api/v1/campaigns/', { ...bearer(alice.token), origin: ORIGIN }],
        ['/api/v1/agents/templates/', bearer(alice.token)],
        ['/api/v1/campaigns/', {}],
      ] as [string, Record<string, string>][]) {
        const answer = await expectSameAsFullPath(path, { ...headers, 'accept-encoding': accept });
        const encoding = answer.headers.find(([name]) => name === 'content-encoding')?.[1];
        const text = encoding === 'br' ? brotliDecompressSync(answer.bytes) : encoding === 'gzip' ? gunzipSync(answer.bytes) : answer.bytes;
        expect(JSON.parse(text.toString('utf8'))).toBeTruthy();
      }
    }
  });

  it('spends the caller’s budget once per request and answers 429 with Retry-After as the full path does', async () => {
    const token = await limited.token(alice.id);
    const sent = { ...bearer(token), origin: ORIGIN };
    expect((await throughLane(() => get(`${limited.url}/api/v1/campaigns/`, sent))).answer.status).toBe(200);
    expect((await throughLane(() => get(`${limited.url}/api/v1/agents/active/`, sent))).answer.status).toBe(200);
    const refused = await throughLane(() => get(`${limited.url}/api/v1/campaigns/`, sent));
    expect(refused.lane).toBe(true);
    expect(refused.answer.status).toBe(429);
    expect(JSON.parse(refused.answer.text)).toMatchObject({ detail: expect.any(String) });
    expect(refused.answer.headers.map(([name]) => name)).toEqual(
      expect.arrayContaining(['retry-after', 'access-control-allow-origin', 'x-request-id']),
    );
  });

  it('leaves to the full path what it answers differently: CSV, escapes, bodies, other methods, unslashed paths', async () => {
    const token = bearer(alice.token);
    const untouched: [string, Record<string, string>, string?][] = [
      ['/api/v1/calls/history/?format=csv', token],
      ['/api/v1/campaigns/?limit=%31', token],
      ['/api/v1/campaigns/?=1', token],
      ['/api/v1/campaigns', token],
      ['/api/v1/', token],
      ['/api/v1/campaigns/', { ...token, 'content-length': '2' }],
      ['/api/v1/campaigns/', token, 'HEAD'],
    ];
    for (const [path, headers, method] of untouched) {
      const before = await answered();
      const answer = await (headers['content-length']
        ? rawRequest(app.url + path, { headers, body: '{}' })
        : get(app.url + path, headers, method));
      expect(await answered(), path).toBe(before);
      expect(answer.status, path).toBeLessThan(500);
    }
  });

  it('counts and logs what it answers under the route, as the full path does', async () => {
    await get(`${app.url}/api/v1/campaigns/${alicesCampaign}/`, bearer(alice.token));
    const metrics = await get(`${app.url}/metrics`);
    expect(metrics.text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/campaigns\/:id\/",status="200"\} [1-9]/);
  });
});
