import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseEncoding } from '../src/http/compression.js';
import { startTestApp, type TestApp } from './support/app.js';
import { contactRows, importGroup } from './support/campaigns.js';

// GraphiQL is a small page whose assets a browser keeps for a year, and every response a client may
// compress comes compressed, except the streams that must arrive as they are written.

let app: TestApp;
let token: string;

/** A response's headers and its body's bytes as sent, before any decoding (fetch would decode them). */
function raw(path: string, headers: Record<string, string>, init: { method?: string; body?: string } = {}) {
  return new Promise<{ response: { status: number; headers: Headers }; bytes: Buffer }>((resolve, reject) => {
    const req = request(app.url + path, { method: init.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
        resolve({ response: { status: res.statusCode!, headers: responseHeaders }, bytes: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

beforeAll(async () => {
  app = await startTestApp({ graphiqlToken: 'demo.token.value' });
  token = await app.token();
});
afterAll(() => app.close());

describe('GraphiQL', () => {
  it('is a page of a few kilobytes that opens with the token in its headers and says what to run', async () => {
    const { response, bytes } = await raw('/graphql', { accept: 'text/html' });
    expect(response.status).toBe(200);
    expect(bytes.length).toBeLessThan(16 * 1024);
    const page = bytes.toString();
    expect(page).toContain('\\"Authorization\\": \\"Bearer demo.token.value\\"');
    expect(page).toContain('"defaultEditorToolsVisibility":"headers"');
    expect(page).toContain('query FirstLook');
    expect(page).toContain('Re-fetch GraphQL schema');
  });

  it('has Swagger UI for v1 start authorized with the same token, and without one it asks', async () => {
    const page = await (await fetch(`${app.url}/api/v1/docs/`)).text();
    expect(page).toContain(`onComplete: () => window.ui.preauthorizeApiKey('bearerAuth', "demo.token.value")`);
    const plain = await startTestApp();
    try {
      expect(await (await fetch(`${plain.url}/api/v1/docs/`)).text()).not.toContain('preauthorizeApiKey');
    } finally {
      await plain.close();
    }
  });

  it('without a token, its first query says where the token goes', async () => {
    const plain = await startTestApp();
    try {
      const page = await (await fetch(`${plain.url}/graphql`, { headers: { accept: 'text/html' } })).text();
      expect(page).toContain('Every request needs a token: put it in Headers below');
      expect(page).toContain('\\"Authorization\\": \\"Bearer \\u003ctoken>\\"');
    } finally {
      await plain.close();
    }
  });

  it('serves its assets under a versioned path, cached for a year, brotli or gzip when asked, 9 MB in all', async () => {
    const page = (await raw('/graphql', { accept: 'text/html' })).bytes.toString();
    const assets = [...page.matchAll(/"(\/graphql\/assets\/[0-9a-f]{16}\/[\w.]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(5);
    let identityTotal = 0;
    let brotliTotal = 0;
    for (const path of new Set(assets)) {
      const plain = await raw(path, {});
      expect(plain.response.status, path).toBe(200);
      expect(plain.response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      identityTotal += plain.bytes.length;
      if (path.endsWith('.ico')) continue;
      const br = await raw(path, { 'accept-encoding': 'gzip, deflate, br' });
      expect(br.response.headers.get('content-encoding')).toBe('br');
      expect(brotliDecompressSync(br.bytes).equals(plain.bytes)).toBe(true);
      brotliTotal += br.bytes.length;
      const gz = await raw(path, { 'accept-encoding': 'gzip' });
      expect(gz.response.headers.get('content-encoding')).toBe('gzip');
      expect(gunzipSync(gz.bytes).equals(plain.bytes)).toBe(true);
    }
    expect(identityTotal).toBeGreaterThan(8_000_000);
    // Compressed, the whole of GraphiQL is about a fifth of its size.
    expect(brotliTotal).toBeLessThan(identityTotal / 4);
    // An old version's path is gone, not served stale.
    expect((await raw(assets[0]!.replace(/[0-9a-f]{16}/, '0000000000000000'), {})).response.status).toBe(404);
  });
});

describe('compression', () => {
  it('picks brotli, then gzip, and honours q=0', () => {
    expect(chooseEncoding('gzip, deflate, br')).toBe('br');
    expect(chooseEncoding('gzip')).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0.5')).toBe('gzip');
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding('identity')).toBeNull();
    expect(chooseEncoding(undefined)).toBeNull();
  });

  it('compresses v1 and GraphQL answers for clients that ask, and only for them', async () => {
    await importGroup(app, token, contactRows(300));
    const plain = await raw('/api/v1/campaigns/recordings/', { authorization: `Bearer ${token}` });
    const groups = await raw(
      '/graphql',
      {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'accept-encoding': 'br',
      },
      {
        method: 'POST',
        body: JSON.stringify({
          query: '{ contactGroups(first: 1) { edges { node { contacts(first: 100) { edges { node { id phoneNumber } } } } } } }',
        }),
      },
    );
    expect(groups.response.headers.get('content-encoding')).toBe('br');
    const decoded = JSON.parse(brotliDecompressSync(groups.bytes).toString());
    expect(decoded.data.contactGroups.edges[0].node.contacts.edges).toHaveLength(100);
    expect(groups.response.headers.get('vary')).toMatch(/Accept-Encoding/i);
    expect(plain.response.headers.get('content-encoding')).toBeNull();

    const schema = await raw('/api/v1/schema/', { 'accept-encoding': 'gzip' });
    expect(schema.response.headers.get('content-encoding')).toBe('gzip');
    const identity = await raw('/api/v1/schema/', {});
    expect(gunzipSync(schema.bytes).equals(identity.bytes)).toBe(true);
    expect(schema.bytes.length).toBeLessThan(identity.bytes.length / 4);
  });

  it('leaves a subscription stream as it is written', async () => {
    const controller = new AbortController();
    const response = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'accept-encoding': 'gzip, br',
      },
      body: JSON.stringify({ query: 'subscription { campaignUpdated(id: "00000000-0000-4000-8000-000000000000") { id } }' }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    // Yoga marks it `none` so that no proxy holds it back to compress it either.
    expect(response.headers.get('content-encoding')).toBe('none');
    controller.abort();
  });
});
