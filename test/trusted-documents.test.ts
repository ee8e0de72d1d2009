import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { AgentsWithTemplatesDocument, CampaignLiveDocument } from './generated/gql/graphql.js';
import { startTestApp, type TestApp } from './support/app.js';
import { configProblems } from './support/config.js';

// GRAPHQL_TRUSTED_DOCUMENTS, with the manifest `npm run codegen` writes for the operations of test/codegen.

const MANIFEST = fileURLToPath(new URL('generated/gql/persisted-documents.json', import.meta.url));
/** A generated document's id, as the client preset embeds it: `sha256:<hex>`. */
const hashOf = (document: object) => (document as { __meta__: { hash: string } }).__meta__.hash;
const hash = hashOf(AgentsWithTemplatesDocument);
const variables = { first: 5, status: 'active' };

let trusted: TestApp;
let open: TestApp;
beforeAll(async () => {
  const { trustedDocuments } = loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: MANIFEST }).graphql;
  [trusted, open] = await Promise.all([startTestApp({ trustedDocuments }), startTestApp()]);
});
afterAll(() => Promise.all([trusted?.close(), open?.close()]));

const post = async (app: TestApp, body: Record<string, unknown>) =>
  (await app.request('POST', '/graphql', { token: await app.token(randomUUID()), body })).json as Record<string, any>;

describe('with GRAPHQL_TRUSTED_DOCUMENTS', () => {
  it('answers a known hash from the manifest, sent as Apollo persisted query or as documentId', async () => {
    const expected = { data: { agents: { totalCount: 0, edges: [] } } };
    const sha256Hash = hash.replace(/^sha256:/, '');
    const byExtension = await trusted.request('POST', '/graphql', {
      token: await trusted.token(),
      body: { variables, extensions: { persistedQuery: { version: 1, sha256Hash } } },
    });
    expect(byExtension.status).toBe(200);
    expect(byExtension.json).toEqual(expected);
    expect(await post(trusted, { documentId: hash, variables })).toEqual(expected);
  });

  it('runs a subscription named by its hash', async () => {
    const response = await fetch(`${trusted.url}/graphql`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${await trusted.token()}` },
      body: JSON.stringify({ documentId: hashOf(CampaignLiveDocument), variables: { id: randomUUID() } }),
    });
    expect(response.status).toBe(200);
    // Run, and answered by the resolver: the campaign is not the caller's.
    expect(await response.text()).toContain('"code":"NOT_FOUND"');
  });

  it('refuses an unknown hash with 400 PERSISTED_QUERY_NOT_IN_LIST', async () => {
    const response = await trusted.request('POST', '/graphql', {
      token: await trusted.token(),
      body: { variables, extensions: { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } } },
    });
    expect(response.status).toBe(400);
    expect(response.json.data).toBeUndefined();
    expect(response.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
  });

  it('refuses a document, even one of the manifest, with 400 PERSISTED_QUERY_ONLY', async () => {
    for (const body of [{ query: '{ __typename }' }, { query: print(AgentsWithTemplatesDocument), variables }]) {
      const response = await trusted.request('POST', '/graphql', { token: await trusted.token(), body });
      expect(response.status).toBe(400);
      expect(response.json.errors).toEqual([
        { message: expect.stringMatching(/^This server runs trusted documents only/), extensions: { code: 'PERSISTED_QUERY_ONLY' } },
      ]);
    }
  });

  it('refuses a request naming no document with 400 PERSISTED_QUERY_ID_REQUIRED', async () => {
    const response = await trusted.request('POST', '/graphql', { token: await trusted.token(), body: { variables } });
    expect(response.status).toBe(400);
    expect(response.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
  });

  it('leaves v1 REST as it is', async () => {
    const response = await trusted.request('GET', '/api/v1/agents/templates/', { token: await trusted.token() });
    expect(response.status).toBe(200);
    expect(response.json.length).toBeGreaterThan(0);
  });
});

describe('without it', () => {
  it('runs any document, and needs no hash', async () => {
    expect(await post(open, { query: print(AgentsWithTemplatesDocument), variables })).toEqual({
      data: { agents: { totalCount: 0, edges: [] } },
    });
  });
});

describe('the setting', () => {
  it('names a readable manifest of hashes to documents', () => {
    expect(configProblems({ GRAPHQL_TRUSTED_DOCUMENTS: '/nonexistent/manifest.json' })).toEqual([
      expect.stringMatching(/^GRAPHQL_TRUSTED_DOCUMENTS must be the path of a readable JSON file \(ENOENT/),
    ]);
    expect(configProblems({ GRAPHQL_TRUSTED_DOCUMENTS: fileURLToPath(new URL('../package.json', import.meta.url)) })).toEqual([
      expect.stringMatching(/^GRAPHQL_TRUSTED_DOCUMENTS must name a JSON object of document hashes to documents/),
    ]);
  });

  it('turns GraphiQL off by default, and refuses GRAPHIQL=true beside it', () => {
    expect(loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: MANIFEST }).graphql.graphiql).toBe(false);
    expect(configProblems({ GRAPHQL_TRUSTED_DOCUMENTS: MANIFEST, GRAPHIQL: 'true' })).toEqual([
      expect.stringMatching(/^GRAPHIQL must be off with GRAPHQL_TRUSTED_DOCUMENTS/),
    ]);
  });
});
