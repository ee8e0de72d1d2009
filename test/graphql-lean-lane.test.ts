import { createHash, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlLeanLane } from '../src/ops/metrics.js';
import { startTestApp, TEST_SECRET, type TestApp } from './support/app.js';
import { createCampaign, customer, type Customer } from './support/campaigns.js';
import { rawRequest, type RawAnswer } from './support/raw-http.js';

// The lean lane (src/schema/server/lean-lane.ts): a POST whose document the full path has answered with a
// compiled read is answered from node:http. Its answers are the full path's to the byte, headers
// included, and every refusal still happens: each request here is sent as a client sends it (node:http,
// no Accept-Encoding), and the lane's counter says whether it answered or handed the request over.

const NESTED = /* GraphQL */ `
  query Nested($first: Int, $contacts: Int) {
    campaigns(first: $first) {
      edges {
        node {
          id
          name
          agent {
            name
          }
          contactGroup {
            name
            contacts(first: $contacts) {
              edges {
                node {
                  id
                  firstName
                  lastName
                  phoneNumber
                }
              }
            }
          }
        }
      }
    }
  }
`;
const ONE = 'query One($id: UUID!) { campaign(id: $id) { id name agent { name } } }';
const CREATE_KEY = 'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { secret apiKey { id } } }';
const REVOKE_KEY = 'mutation ($id: UUID!) { revokeApiKey(id: $id) { id } }';
const NESTED_ID = `sha256:${createHash('sha256').update(NESTED).digest('hex')}`;
const ORIGIN = 'https://app.example';

/** A POST to /graphql as a plain client sends it: JSON, no Accept-Encoding, a new connection. */
function post(app: TestApp, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  return rawRequest(`${app.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers },
    body: text,
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const codeOf = (answer: RawAnswer) =>
  (JSON.parse(answer.text) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code;

async function laneCount(outcome: 'answered' | 'handed_over'): Promise<number> {
  return (await graphqlLeanLane.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

/** Sends a request and says how the lane took it: answered, handed over, or not begun at all. */
async function throughLane(send: () => Promise<RawAnswer>): Promise<{ answer: RawAnswer; lane: 'answered' | 'handed_over' | 'none' }> {
  const [answered, handed] = [await laneCount('answered'), await laneCount('handed_over')];
  const answer = await send();
  const lane = (await laneCount('answered')) > answered ? 'answered' : (await laneCount('handed_over')) > handed ? 'handed_over' : 'none';
  return { answer, lane };
}

let app: TestApp;
let trusted: TestApp;
let alice: Customer;
let bob: Customer;
let bobsCampaign: string;

beforeAll(async () => {
  app = await startTestApp({
    corsOrigins: [ORIGIN],
    rateLimits: { requests: { points: 1_000_000, durationSeconds: 60 } },
  });
  trusted = await startTestApp({
    database: { ...app.db, close: async () => {} },
    trustedDocuments: new Map([[NESTED_ID, NESTED]]),
  });
  alice = await customer(app, { contacts: 3 });
  bob = await customer(app, { contacts: 2 });
  await createCampaign(app, alice, { name: 'First "quoted"' });
  await createCampaign(app, alice, { name: 'Second' });
  bobsCampaign = (await createCampaign(app, bob, { name: "Bob's" })).id as string;
});
afterAll(async () => {
  await trusted?.close();
  await app?.close();
});

describe('the lean lane', () => {
  it('answers a known compiled read as the full path does, byte for byte, headers included', async () => {
    let n = 0;
    for (const headers of [
      { accept: 'application/json' } as Record<string, string>,
      { accept: 'application/graphql-response+json' },
      {},
      { accept: 'application/graphql-response+json, application/json;q=0.9', origin: ORIGIN },
      { origin: 'https://elsewhere.example' },
      // Compressed as the full path compresses: a small answer as it is, a larger one by the client's choice.
      { 'accept-encoding': 'gzip, deflate, br', origin: ORIGIN },
      { 'accept-encoding': 'gzip' },
      { 'accept-encoding': 'identity' },
      { 'accept-encoding': 'br', size: 'small' },
    ]) {
      // The same X-Request-Id on both, so that every header can be compared. The first of a document is
      // the full path's (which makes it known), the second the lane's; each round's document is new.
      n += 1;
      const { size, ...sent }: Record<string, string> = { ...headers, ...bearer(alice.token), 'x-request-id': `lean-${randomUUID()}` };
      const variables = size === 'small' ? { first: 1, contacts: 0 } : { first: 5, contacts: 3 };
      const body = { query: `${NESTED}${' '.repeat(n)}`, operationName: 'Nested', variables };
      const full = await throughLane(() => post(app, body, sent));
      const lean = await throughLane(() => post(app, body, sent));
      expect(full.lane).not.toBe('answered');
      expect(lean.lane).toBe('answered');
      expect(lean.answer.status).toBe(200);
      expect(lean.answer.bytes.equals(full.answer.bytes)).toBe(true);
      expect(lean.answer.headers).toEqual(full.answer.headers);
      const encoding = lean.answer.headers.find(([name]) => name === 'content-encoding')?.[1];
      expect(encoding).toBe({ 'gzip, deflate, br': 'br', gzip: 'gzip' }[headers['accept-encoding'] ?? '']);
    }
  });

  it('hands over what only the full path answers: refusals by authentication, variables and cost, and resolvers', async () => {
    const known = { query: NESTED, variables: { first: 2 } };
    await post(app, known, bearer(alice.token));
    expect((await throughLane(() => post(app, known, bearer(alice.token)))).lane).toBe('answered');

    const anonymous = await throughLane(() => post(app, known));
    expect(anonymous.lane).toBe('handed_over');
    expect(anonymous.answer.status).toBe(401);
    expect(codeOf(anonymous.answer)).toBe('UNAUTHENTICATED');

    const secret = new TextEncoder().encode(TEST_SECRET);
    const stale = await new SignJWT({ sub: alice.id })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 120)
      .sign(secret);
    const expired = await throughLane(() => post(app, known, bearer(stale)));
    expect(expired.lane).toBe('handed_over');
    expect(expired.answer.status).toBe(401);
    expect(JSON.parse(expired.answer.text).errors[0].extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'token_expired' });

    const badVariables = await throughLane(() => post(app, { query: NESTED, variables: { first: 'many' } }, bearer(alice.token)));
    expect(badVariables.lane).toBe('handed_over');
    expect(codeOf(badVariables.answer)).toBe('BAD_USER_INPUT');

    const costly = await throughLane(() => post(app, { query: NESTED, variables: { first: 100, contacts: 100 } }, bearer(alice.token)));
    expect(costly.lane).toBe('handed_over');
    expect(codeOf(costly.answer)).toBe('QUERY_TOO_COSTLY');

    const unsafe = await throughLane(() => post(app, { query: NESTED, variables: { first: 1, extra: 'a\u0000b' } }, bearer(alice.token)));
    expect(unsafe.lane).toBe('handed_over');
    expect(codeOf(unsafe.answer)).toBe('BAD_USER_INPUT');

    // Another customer's campaign by id: the statement finds none of the caller's, the resolvers say NOT_FOUND.
    const own = await post(app, { query: ONE, variables: { id: await firstCampaign(app, alice.token) } }, bearer(alice.token));
    expect(JSON.parse(own.text).data.campaign.name).toBeTypeOf('string');
    const others = await throughLane(() => post(app, { query: ONE, variables: { id: bobsCampaign } }, bearer(alice.token)));
    expect(others.lane).toBe('handed_over');
    expect(codeOf(others.answer)).toBe('NOT_FOUND');
    expect(others.answer.text).not.toContain("Bob's");
  });

  it("runs a statement it compiled before only for the same caller and variables, each answer the full path's", async () => {
    // A document of its own, so that its first request is the full path's; each reference answer comes
    // from a text of the same operation the lane does not know yet.
    const query = `${NESTED}${' '.repeat(40)}`;
    let n = 40;
    const ask = async (who: Customer, variables: Record<string, unknown>) => {
      const lean = await throughLane(() => post(app, { query, variables }, bearer(who.token)));
      n += 1;
      const full = await post(app, { query: `${NESTED}${' '.repeat(n)}`, variables }, bearer(who.token));
      expect(lean.answer.text).toBe(full.text);
      return { lane: lean.lane, text: lean.answer.text };
    };
    expect((await ask(alice, { first: 2, contacts: 1 })).lane).not.toBe('answered');
    const again = await ask(alice, { first: 2, contacts: 1 });
    expect(again.lane).toBe('answered');
    expect(JSON.parse(again.text).data.campaigns.edges).toHaveLength(2);
    // Another caller with the same variables reads their own rows, not the statement's first caller's.
    const bobs = await ask(bob, { first: 2, contacts: 1 });
    expect(bobs.lane).toBe('answered');
    expect(bobs.text).toContain("Bob's");
    expect(bobs.text).not.toContain('Second');
    // Other variables, the same caller: another page, and the first one again afterwards.
    for (const [first, edges] of [
      [1, 1],
      [2, 2],
      [1, 1],
    ] as const) {
      const page = await ask(alice, { first, contacts: 1 });
      expect(page.lane).toBe('answered');
      expect(JSON.parse(page.text).data.campaigns.edges).toHaveLength(edges);
    }
  });

  it('refuses a revoked API key', async () => {
    const created = await post(app, { query: CREATE_KEY, variables: { input: { name: 'lane', scope: 'read' } } }, bearer(alice.token));
    const { secret, apiKey } = JSON.parse(created.text).data.createApiKey as { secret: string; apiKey: { id: string } };
    const known = { query: NESTED, variables: { first: 1, contacts: 1 } };
    const before = await throughLane(() => post(app, known, bearer(secret)));
    expect(before.lane).toBe('answered');
    expect(JSON.parse(before.answer.text).data.campaigns.edges).toHaveLength(1);
    expect((await post(app, { query: REVOKE_KEY, variables: { id: apiKey.id } }, bearer(alice.token))).status).toBe(200);
    const after = await throughLane(() => post(app, known, bearer(secret)));
    expect(after.lane).toBe('handed_over');
    expect(after.answer.status).toBe(401);
    expect(codeOf(after.answer)).toBe('UNAUTHENTICATED');
  });

  it('leaves alone what the full path answers differently: an Idempotency-Key, another media type or body', async () => {
    const known = { query: NESTED, variables: { first: 2 } };
    for (const headers of [{ 'idempotency-key': randomUUID() } as Record<string, string>, { 'content-type': 'text/plain' }]) {
      const sent = await throughLane(() => post(app, known, { ...bearer(alice.token), ...headers }));
      expect(sent.lane).toBe('none');
    }
    const unknown = await throughLane(() => post(app, { ...known, unexpected: 1 }, bearer(alice.token)));
    expect(unknown.lane).toBe('handed_over');
    expect(unknown.answer.status).toBe(400);
  });
});

async function firstCampaign(to: TestApp, token: string): Promise<string> {
  const answer = await post(to, { query: '{ campaigns(first: 1) { edges { node { id } } } }' }, bearer(token));
  return JSON.parse(answer.text).data.campaigns.edges[0].node.id as string;
}

describe('the lean lane and the budgets', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({
      database: { ...app.db, close: async () => {} },
      rateLimits: { requests: { points: 4, durationSeconds: 600 } },
    });
  });
  afterAll(() => limited?.close());

  it('spends one request of the budget per request, refusal handed over with 429', async () => {
    const token = await limited.token(alice.id);
    const send = (query: string, variables: Record<string, unknown>) =>
      throughLane(() => post(limited, { query, variables }, bearer(token)));
    const own = await firstCampaign(limited, token);
    expect((await send(ONE, { id: own })).lane).toBe('handed_over');
    // Spent in the lane, handed over for the resolvers' NOT_FOUND: spent once, so the fourth is still allowed.
    const others = await send(ONE, { id: bobsCampaign });
    expect(others.lane).toBe('handed_over');
    expect(codeOf(others.answer)).toBe('NOT_FOUND');
    expect((await send(ONE, { id: own })).lane).toBe('answered');
    const refused = await send(ONE, { id: own });
    expect(refused.lane).toBe('handed_over');
    expect(refused.answer.status).toBe(429);
    expect(codeOf(refused.answer)).toBe('RATE_LIMITED');
    expect(refused.answer.headers.map(([name]) => name.toLowerCase())).toContain('retry-after');
  });
});

describe('the lean lane with trusted documents', () => {
  it('answers a trusted document by its hash, and still refuses a document sent as text or an unknown hash', async () => {
    const token = await trusted.token(alice.id);
    const byHash = { documentId: NESTED_ID, variables: { first: 2 } };
    const first = await throughLane(() => post(trusted, byHash, { ...bearer(token), 'x-request-id': 'trusted' }));
    const second = await throughLane(() => post(trusted, byHash, { ...bearer(token), 'x-request-id': 'trusted' }));
    expect(first.lane).toBe('none');
    expect(second.lane).toBe('answered');
    expect(second.answer).toEqual(first.answer);
    const asText = await throughLane(() => post(trusted, { query: NESTED, variables: { first: 2 } }, bearer(token)));
    expect(asText.lane).toBe('handed_over');
    expect(codeOf(asText.answer)).toBe('PERSISTED_QUERY_ONLY');
    const unknown = await throughLane(() => post(trusted, { documentId: 'sha256:00', variables: { first: 2 } }, bearer(token)));
    expect(unknown.lane).toBe('handed_over');
    expect(codeOf(unknown.answer)).toBe('PERSISTED_QUERY_NOT_IN_LIST');
  });
});
