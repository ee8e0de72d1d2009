import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  for (const [name, body] of variants) {
    it(`and so is ${name}`, async () => expectFirstProblems(await refused(JSON.stringify(body()))));
  }

  it('a value of the right shape still runs', async () => {
    const res = await app.gql(ADD_DO_NOT_CALL, { i: { phoneNumber: '+1 415 555 0199' } }, alice.token);
    expect(res.errors).toBeUndefined();
  });
});
