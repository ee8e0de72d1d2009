import { Kind, parse, type DocumentNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchema } from '../src/schema/index.js';
import { MAX_COST, operationCost } from '../src/schema/server/cost.js';
import { MAX_VARIABLE_ERRORS } from '../src/schema/server/variables.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, type Customer } from './support/campaigns.js';
import { fingerprint } from './support/fingerprint.js';

// Requests whose cost grew faster than their size (found by a security review of a production build):
// variables with thousands of unknown input fields, where each problem's message showed the whole value
// and every problem was reported (3,200 fields took 13.6 s, 10,000 never answered), and fragments spread
// hundreds of times on several levels, costed path by path (3 levels of 300 spreads: 27 million paths,
// 12-17 s). Each is now refused after work that grows with its size; the largest variants here, under
// the 1 MiB body limit, would have taken the old code tens of minutes.

const BODY_LIMIT = 1024 * 1024;
const TOO_MANY = 'Too many errors processing variables, error limit reached. Execution aborted.';
/** The GraphQL over HTTP media type, to which a request error is a 4xx (application/json is answered 200). */
const GRAPHQL_RESPONSE = { accept: 'application/graphql-response+json' };

let app: TestApp;
let alice: Customer;
let campaignId: string;

beforeAll(async () => {
  app = await startTestApp({ introspection: false, maxBodyBytes: BODY_LIMIT });
  alice = await customer(app);
  campaignId = (await createCampaign(app, alice)).id;
});
afterAll(() => app.close());

/** Sends `body` to /graphql with /healthz asked beside it: both answer, and no table changes. */
async function refused(body: string) {
  expect(body.length).toBeLessThanOrEqual(BODY_LIMIT);
  const before = await fingerprint(app.sql);
  const [res, health] = await Promise.all([
    app.request('POST', '/graphql', {
      token: alice.token,
      raw: body,
      headers: { 'content-type': 'application/json', ...GRAPHQL_RESPONSE },
    }),
    app.request('GET', '/healthz'),
  ]);
  expect(health.status).toBe(200);
  expect(await fingerprint(app.sql)).toEqual(before);
  return res as { status: number; json: { data?: unknown; errors: { message: string; extensions: { code: string } }[] } };
}

/** `count` fields no input type has, about 12 bytes each. */
const unknownFields = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${String(i).padStart(6, '0')}`, 0]));

const ADD_DO_NOT_CALL = 'mutation($i: AddDoNotCallInput!) { addDoNotCall(input: $i) { id } }';

/** Refused with the first few problems and graphql-js's line saying it stopped, each BAD_USER_INPUT. */
function expectFirstProblems(res: Awaited<ReturnType<typeof refused>>) {
  expect(res.status).toBe(400);
  expect(res.json.data ?? null).toBeNull();
  expect(res.json.errors).toHaveLength(MAX_VARIABLE_ERRORS + 1);
  expect(res.json.errors.at(-1)!.message).toBe(TOO_MANY);
  for (const error of res.json.errors) expect(error.extensions.code).toBe('BAD_USER_INPUT');
}

describe('variables with thousands of problems', () => {
  it('3,200 and 10,000 unknown fields in one input are refused with the first few, BAD_USER_INPUT', async () => {
    for (const count of [3_200, 10_000]) {
      const res = await refused(JSON.stringify({ query: ADD_DO_NOT_CALL, variables: { i: unknownFields(count) } }));
      expectFirstProblems(res);
      expect(res.json.errors[0]!.message).toMatch(/^Variable "\$i" got invalid value \{ k000000: 0, /);
    }
  });

  // Variants up to the body limit, each its own request.
  const variants: [string, () => Record<string, unknown>][] = [
    ['85,000 unknown fields in one input (1 MiB)', () => ({ query: ADD_DO_NOT_CALL, variables: { i: unknownFields(85_000) } })],
    [
      '85,000 unknown fields in an input nested in another',
      () => ({
        query: 'mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { id } }',
        variables: { i: { name: 'Deep', agentId: alice.agent.id, contactGroupId: alice.groupId, callingHours: unknownFields(85_000) } },
      }),
    ],
    [
      'a list of 1,000 inputs of 80 unknown fields each',
      () => ({
        query: 'mutation($id: UUID!, $i: SetCampaignVariantsInput!) { setCampaignVariants(id: $id, input: $i) { id } }',
        variables: { id: campaignId, i: { variants: Array.from({ length: 1_000 }, () => unknownFields(80)) } },
      }),
    ],
    [
      'a list of 90,000 values no enum has',
      () => ({
        query: 'query($s: [CampaignStatus!]) { campaigns(statuses: $s) { totalCount } }',
        variables: { s: Array.from({ length: 90_000 }, () => 'nope') },
      }),
    ],
  ];
  // A bound a busy machine cannot miss: each answer is five messages showing the 1 MiB value, about a
  // second of CPU here; the old code, one message per unknown field, did not answer 6,400 in a minute.
  for (const [name, body] of variants) {
    it(`and so is ${name}`, async () => expectFirstProblems(await refused(JSON.stringify(body()))), 120_000);
  }

  it('a value of the right shape still runs', async () => {
    const res = await app.gql(ADD_DO_NOT_CALL, { i: { phoneNumber: '+1 415 555 0199' } }, alice.token);
    expect(res.errors).toBeUndefined();
  });
});

/** `levels` levels of fragments on Query, each spreading the next `width` times; the last selects `leaf`. */
function fanOut(levels: number, width: number, leaf = 'creditBalance { heldCents }'): string {
  const spreads = (level: number) => Array.from({ length: width }, () => `...F${level}`).join(' ');
  const parts = [`query { ${spreads(1)} }`];
  for (let level = 1; level < levels; level += 1) parts.push(`fragment F${level} on Query { ${spreads(level + 1)} }`);
  parts.push(`fragment F${levels} on Query { ${leaf} }`);
  return parts.join('\n');
}

describe('fragments spread hundreds of times on several levels', () => {
  const tooCostly = (res: Awaited<ReturnType<typeof refused>>) => {
    expect(res.status).toBe(400);
    expect(res.json.errors).toHaveLength(1);
    expect(res.json.errors[0]!.extensions.code).toBe('QUERY_TOO_COSTLY');
    return res.json.errors[0]!.message;
  };

  it('3 levels of 300 spreads are refused as too costly', async () => {
    expect(tooCostly(await refused(JSON.stringify({ query: fanOut(3, 300) })))).toMatch(
      new RegExp(`^This operation could answer at least \\d+ values, above the limit of ${MAX_COST}: `),
    );
  });

  it('and so are wider and nested variants: 4 levels of 220 (2.3 billion paths), 300 x 300 x 300 inside a page', async () => {
    const spreads = (name: string) => Array.from({ length: 300 }, () => `...${name}`).join(' ');
    const nested = [
      `query { campaigns(first: 100) { edges { node { ${spreads('C1')} } } } }`,
      `fragment C1 on Campaign { ${spreads('C2')} }`,
      `fragment C2 on Campaign { ${spreads('C3')} }`,
      'fragment C3 on Campaign { id }',
    ].join('\n');
    for (const query of [fanOut(4, 220), nested]) tooCostly(await refused(JSON.stringify({ query })));
  });

  it('costs each fragment once, however often it is spread, and counts what path by path counted', () => {
    const schema = buildSchema();
    let reads = 0;
    /** The document with each fragment's selections counted as they are read. */
    const counting = (document: DocumentNode): DocumentNode => ({
      ...document,
      definitions: document.definitions.map((definition) =>
        definition.kind === Kind.FRAGMENT_DEFINITION
          ? Object.defineProperty({ ...definition }, 'selectionSet', {
              get: () => {
                reads += 1;
                return definition.selectionSet;
              },
            })
          : definition,
      ),
    });
    // 27,000 paths of 2 values each: path by path, the last fragment's selections were read 27,000 times.
    const over = operationCost(schema, counting(parse(fanOut(3, 30))), undefined, {});
    expect(reads).toBe(3);
    expect(over!.values).toBeGreaterThan(MAX_COST);
    expect(over!.whole).toBe(false);

    reads = 0;
    expect(operationCost(schema, counting(parse(fanOut(3, 5))), undefined, {})).toEqual({ values: 5 ** 3 * 2, whole: true });
    expect(reads).toBe(3);
  });

  it('a few spreads under the limit still run', async () => {
    const res = await app.gql(fanOut(3, 5), {}, alice.token);
    expect(res.errors).toBeUndefined();
    expect(res.data.creditBalance.heldCents).toBe(0);
  });
});
