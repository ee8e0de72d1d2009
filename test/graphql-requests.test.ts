import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

// Which HTTP requests /graphql executes: JSON and GET as GraphQL over HTTP defines them, multipart as the
// GraphQL multipart request spec does, and nothing else; the requests a browser sends without a preflight
// (GET, multipart) must carry the CSRF header.

const MUTATION = 'mutation { addDoNotCall(input: { phoneNumber: "+1 415 555 0123" }) { phoneNumber } }';
const IMPORT = 'mutation ($input: ImportContactsInput!) { importContacts(input: $input) { totalImported } }';

let app: TestApp;
let token: string;
let userId: string;
beforeAll(async () => {
  app = await startTestApp();
  userId = '5eed0000-0000-4000-8000-0000000000c5';
  token = await app.token(userId);
});
afterAll(() => app.close());

async function written() {
  const [doNotCall, groups] = await Promise.all([
    app.prisma.doNotCallEntry.count({ where: { userId } }),
    app.prisma.contactGroup.count({ where: { userId } }),
  ]);
  return { doNotCall, groups };
}

function upload(groupName: string) {
  const form = new FormData();
  form.set('operations', JSON.stringify({ query: IMPORT, variables: { input: { groupName, file: null } } }));
  form.set('map', JSON.stringify({ 0: ['variables.input.file'] }));
  form.set('0', new Blob(['Phone\n(415) 555-0177\n'], { type: 'text/csv' }), 'contacts.csv');
  return form;
}

describe('POST bodies', () => {
  const refused: [string, string][] = [
    ['application/x-www-form-urlencoded', new URLSearchParams({ query: MUTATION }).toString()],
    ['application/graphql', MUTATION],
    ['text/plain', JSON.stringify({ query: MUTATION })],
    ['application/graphql+json', JSON.stringify({ query: MUTATION })],
    ['application/xml', `<query>${MUTATION}</query>`],
  ];
  for (const [contentType, raw] of refused) {
    it(`refuses ${contentType} with a 415 and runs nothing`, async () => {
      const before = await written();
      const res = await app.request('POST', '/graphql', {
        token,
        raw,
        headers: { 'content-type': contentType, 'x-graphql-yoga-csrf': '1' },
      });
      expect(res.status).toBe(415);
      expect(res.json).toEqual({
        errors: [
          {
            message: `Unsupported media type "${contentType}" in request: send application/json, or multipart/form-data to upload a file.`,
            extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' },
          },
        ],
      });
      expect(await written()).toEqual(before);
    });
  }

  it('refuses a body with no content type', async () => {
    const res = await app.request('POST', '/graphql', { token, raw: new Blob([JSON.stringify({ query: MUTATION })]) });
    expect(res.status).toBe(415);
    expect(res.json.errors[0].message).toMatch(/^Unsupported media type "" in request/);
  });

  it('runs JSON, with or without a charset, and needs no CSRF header for it', async () => {
    const res = await app.request('POST', '/graphql', {
      token,
      raw: JSON.stringify({ query: '{ creditBalance { balanceCents } }' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: { creditBalance: { balanceCents: 0 } } });
  });
});

describe('CSRF prevention', () => {
  it('refuses a multipart upload without the CSRF header with a 403, importing nothing', async () => {
    const before = await written();
    const res = await app.request('POST', '/graphql', { token, raw: upload('No header') });
    expect(res.status).toBe(403);
    expect(res.json.errors[0].message).toBe(
      'Required CSRF header not present: send the X-GraphQL-Yoga-CSRF header (any value) with GET requests and multipart uploads.',
    );
    expect(res.json.errors[0].extensions.code).toBe('CSRF_HEADER_MISSING');
    expect(await written()).toEqual(before);
  });

  it('runs a multipart upload that carries the CSRF header', async () => {
    const res = await app.request('POST', '/graphql', { token, raw: upload('With header'), headers: { 'x-graphql-yoga-csrf': '1' } });
    expect(res.json).toEqual({ data: { importContacts: { totalImported: 1 } } });
  });

  it('asks the same of a GET query, which browsers also send without a preflight', async () => {
    const path = `/graphql?query=${encodeURIComponent('{ creditBalance { balanceCents } }')}`;
    expect((await app.request('GET', path, { token })).status).toBe(403);
    const res = await app.request('GET', path, { token, headers: { 'x-graphql-yoga-csrf': '1' } });
    expect(res.status).toBe(200);
    expect(res.json.data.creditBalance).toBeDefined();
  });

  it('never runs a mutation sent with GET', async () => {
    const before = await written();
    const res = await app.request('GET', `/graphql?query=${encodeURIComponent(MUTATION)}`, {
      token,
      headers: { 'x-graphql-yoga-csrf': '1' },
    });
    expect(res.status).toBe(405);
    expect(await written()).toEqual(before);
  });

  it('still serves GraphiQL to a browser, which sends the header with its requests', async () => {
    const page = await app.request('GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('"additionalHeaders":{"X-GraphQL-Yoga-CSRF":"1"}');
  });
});

describe('body size', () => {
  const LIMIT = 4_000;
  let small: TestApp;
  let smallToken: string;
  beforeAll(async () => {
    small = await startTestApp({ maxImportBodyBytes: LIMIT });
    smallToken = await small.token(userId);
  });
  afterAll(() => small.close());

  const body = (padding: number) => JSON.stringify({ query: MUTATION, extensions: { padding: 'x'.repeat(padding) } });
  /** Sent in chunks, with no declared length (transfer-encoding: chunked). */
  const chunked = (text: string) =>
    fetch(`${small.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${smallToken}`, 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          const bytes = new TextEncoder().encode(text);
          for (let at = 0; at < bytes.length; at += 1_000) controller.enqueue(bytes.subarray(at, at + 1_000));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
  const tooLarge = { errors: [{ message: 'Request body is too large.', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] };
  const count = () => small.prisma.doNotCallEntry.count({ where: { userId } });

  it('refuses a declared length above the limit with a 413 and runs nothing', async () => {
    const res = await small.request('POST', '/graphql', {
      token: smallToken,
      raw: body(LIMIT),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(413);
    expect(res.json).toEqual(tooLarge);
    expect(await count()).toBe(0);
  });

  it('counts a body of no declared length as it arrives: a 413 above the limit, the operation run below it', async () => {
    const refused = await chunked(body(LIMIT));
    expect(refused.status).toBe(413);
    expect(await refused.json()).toEqual(tooLarge);
    expect(await count()).toBe(0);
    const accepted = await chunked(body(LIMIT / 2));
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toEqual({ data: { addDoNotCall: { phoneNumber: '+14155550123' } } });
  });

  it('answers a body that is not JSON with a 400', async () => {
    const res = await small.request('POST', '/graphql', {
      token: smallToken,
      raw: '{"query": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatchObject({ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } });
  });
});
