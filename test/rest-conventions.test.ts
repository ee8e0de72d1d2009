import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { paginationQuery } from '../src/rest/pagination.js';
import { defineRoute } from '../src/rest/route.js';
import { v1Routes } from '../src/rest/routes/index.js';
import { ConflictError } from '../src/services/errors.js';
import { int64, jsonObject } from '../src/services/validation.js';
import { startTestApp, type TestApp } from './support/app.js';

// The v1 conventions every endpoint shares (DESIGN.md section 7), exercised through probe routes mounted
// beside the real ones, so later endpoints inherit behaviour that is already tested.

const probeBody = z.object({
  name: z.string().max(255),
  count: int64.optional(),
  settings: z.preprocess((v) => (typeof v === 'string' ? JSON.parse(v) : v), jsonObject).optional(),
});

let echoed: unknown[] = [];
const probes = [
  defineRoute({
    method: 'POST',
    path: '/probe/echo/',
    operationId: 'probeEcho',
    summary: 'Echo',
    tag: 'Probe',
    body: probeBody,
    status: 201,
    response: z.object({ name: z.string(), count: z.string().nullable(), settings: z.unknown() }),
    handler: async ({ body }) => {
      echoed.push(body);
      return { name: body.name, count: body.count === undefined ? null : String(body.count), settings: body.settings ?? null };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/probe/page/',
    operationId: 'probePage',
    summary: 'Page',
    tag: 'Probe',
    query: paginationQuery,
    status: 200,
    response: z.object({ limit: z.number(), offset: z.number() }),
    handler: async ({ query }) => query,
  }),
  defineRoute({
    method: 'POST',
    path: '/probe/conflict/',
    operationId: 'probeConflict',
    summary: 'Conflict',
    tag: 'Probe',
    status: 200,
    handler: async () => {
      throw new ConflictError('This campaign is already completed.', 'campaign_completed');
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/probe/crash/',
    operationId: 'probeCrash',
    summary: 'Crash',
    tag: 'Probe',
    status: 200,
    handler: async () => {
      throw new Error('secret internals: connection string postgres://admin:pw@db');
    },
  }),
];

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ routes: [...v1Routes, ...probes], maxBodyBytes: 4096 });
  token = await app.token();
});
afterAll(() => app.close());

const post = (body: RequestInit['body'], contentType?: string) =>
  app.request('POST', '/api/v1/probe/echo/', {
    token,
    raw: body ?? undefined,
    headers: contentType ? { 'content-type': contentType } : {},
  });

describe('paths', () => {
  it('answers 308 to the slashed path, keeping the query string', async () => {
    const res = await app.request('GET', '/api/v1/agents/templates?x=1', { token });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/api/v1/agents/templates/?x=1');
  });

  it('answers a JSON 404 for unknown paths, authenticated or not', async () => {
    for (const opts of [{ token }, {}]) {
      const res = await app.request('GET', '/api/v1/nothing/here/', opts);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.json).toEqual({ detail: 'Not found.' });
    }
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const res = await app.request('PUT', '/api/v1/agents/templates/', { token });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(res.json).toEqual({ detail: 'Method "PUT" not allowed.' });
  });
});

describe('request bodies', () => {
  it('reads JSON, urlencoded and multipart alike', async () => {
    const json = await post(JSON.stringify({ name: 'a', count: 3, settings: { k: 1 } }), 'application/json');
    const form = await post(new URLSearchParams({ name: 'a', count: '3', settings: '{"k":1}' }), undefined);
    const multipart = new FormData();
    multipart.set('name', 'a');
    multipart.set('count', '3');
    multipart.set('settings', '{"k":1}');
    const parts = await post(multipart);
    for (const res of [json, form, parts]) {
      expect(res.status).toBe(201);
      expect(res.json).toEqual({ name: 'a', count: '3', settings: { k: 1 } });
    }
  });

  it('refuses other media types with 415', async () => {
    echoed = [];
    const res = await post('name=a', 'text/plain');
    expect(res.status).toBe(415);
    expect(res.json).toEqual({ detail: 'Unsupported media type "text/plain" in request.' });
    expect(echoed).toEqual([]);
  });

  it('answers malformed JSON with a 400 parse error, not a 500', async () => {
    const res = await post('{"name": "a",', 'application/json');
    expect(res.status).toBe(400);
    expect(res.json.detail).toMatch(/^JSON parse error - /);
  });

  it('answers 413 for a body over the limit, whether declared or streamed', async () => {
    echoed = [];
    const big = JSON.stringify({ name: 'x'.repeat(10_000) });
    expect((await post(big, 'application/json')).status).toBe(413);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const res = await fetch(`${app.url}/api/v1/probe/echo/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(echoed).toEqual([]);
  });

  it('reports missing and overlong fields with DRF messages', async () => {
    expect((await post('{}', 'application/json')).json).toEqual({ name: ['This field is required.'] });
    expect((await post(JSON.stringify({ name: 'x'.repeat(256) }), 'application/json')).json).toEqual({
      name: ['Ensure this field has no more than 255 characters.'],
    });
    expect((await post('[1, 2]', 'application/json')).json).toEqual({
      non_field_errors: ['Expected a dictionary of items but got type "list".'],
    });
  });
});

describe('64-bit integers', () => {
  const count = async (raw: string) => post(`{"name": "n", "count": ${raw}}`, 'application/json');

  it('keeps the extremes exactly', async () => {
    expect((await count('9223372036854775807')).json.count).toBe('9223372036854775807');
    expect((await count('-9223372036854775808')).json.count).toBe('-9223372036854775808');
    expect((await count('"42"')).json.count).toBe('42');
    // DRF reads a JSON float with no fraction as that integer.
    expect((await count('1e3')).json.count).toBe('1000');
  });

  it('refuses values one past either end, never rounding them', async () => {
    const over = await count('9223372036854775808');
    expect(over.status).toBe(400);
    expect(over.json).toEqual({ count: ['Ensure this value is less than or equal to 9223372036854775807.'] });
    const under = await count('-9223372036854775809');
    expect(under.json).toEqual({ count: ['Ensure this value is greater than or equal to -9223372036854775808.'] });
  });

  it('refuses non-integers', async () => {
    for (const raw of ['1.5', '"ten"', 'true', '"1.0"', '[]']) {
      const res = await count(raw);
      expect(res.status, raw).toBe(400);
      expect(res.json.count, raw).toHaveLength(1);
    }
  });
});

describe('limit and offset', () => {
  const page = (qs: string) => app.request('GET', `/api/v1/probe/page/${qs}`, { token });

  it('defaults to 50 and 0 and clamps limit to 500', async () => {
    expect((await page('')).json).toEqual({ limit: 50, offset: 0 });
    expect((await page('?limit=10&offset=20')).json).toEqual({ limit: 10, offset: 20 });
    expect((await page('?limit=100000')).json).toEqual({ limit: 500, offset: 0 });
  });

  it('makes a non-integer or negative value a 400 field error', async () => {
    expect((await page('?limit=abc')).json).toEqual({ limit: ['A valid integer is required.'] });
    expect((await page('?offset=-1')).json).toEqual({ offset: ['Ensure this value is greater than or equal to 0.'] });
    expect((await page('?limit=0')).json).toEqual({ limit: ['Ensure this value is greater than or equal to 1.'] });
    expect((await page('?limit=2.5')).status).toBe(400);
  });
});

describe('errors', () => {
  it('gives a conflict its machine reason and human detail', async () => {
    const res = await app.request('POST', '/api/v1/probe/conflict/', { token });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ detail: 'This campaign is already completed.', reason: 'campaign_completed' });
  });

  it('masks unexpected errors as a plain 500', async () => {
    const res = await app.request('GET', '/api/v1/probe/crash/', { token });
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ detail: 'A server error occurred.' });
    expect(res.text).not.toContain('postgres://');
  });

  it('treats a path id that is not a UUID as not found', async () => {
    const res = await app.request('DELETE', '/api/v1/agents/123/', { token });
    expect(res.status).toBe(404);
    const ok = await app.request('DELETE', `/api/v1/agents/${randomUUID()}/`, { token });
    expect(ok.status).toBe(404);
  });
});

describe('documentation', () => {
  it('prints the OpenAPI document from the routes, probes included', async () => {
    const doc = (await app.request('GET', '/api/v1/schema/')).json;
    expect(doc.paths['/api/v1/probe/echo/'].post.requestBody.content).toHaveProperty('multipart/form-data');
    expect(doc.paths['/api/v1/probe/page/'].get.parameters.map((p: any) => p.name)).toEqual(['limit', 'offset']);
  });

  it('shows a realistic example of every body, one its schema accepts', async () => {
    const doc = (await app.request('GET', '/api/v1/schema/')).json;
    const withBodies = v1Routes.filter((route) => route.body);
    expect(withBodies.length).toBeGreaterThan(3);
    for (const route of withBodies) {
      expect(route.example, route.operationId).toBeDefined();
      expect(route.body!.safeParse(route.example).success, route.operationId).toBe(true);
      const content = doc.paths[`/api/v1${route.path}`][route.method.toLowerCase()].requestBody.content;
      expect(content['application/json'].example, route.operationId).toEqual(route.example);
    }
    // The import's example is one a customer can send as it is.
    const importRoute = v1Routes.find((route) => route.operationId === 'importContacts')!;
    const imported = await app.request('POST', '/api/v1/contacts/import/', { token, body: importRoute.example });
    expect(imported.status).toBe(201);
    expect(imported.json.totalImported).toBe(2);
  });

  it('serves the interactive page with local assets only', async () => {
    const page = await app.request('GET', '/api/v1/docs/');
    expect(page.status).toBe(200);
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(2);
    for (const ref of refs) {
      expect(ref).toMatch(/^\//);
      expect((await app.request('GET', ref)).status, ref).toBe(200);
    }
  });
});
