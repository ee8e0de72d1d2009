import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v1Routes } from '../src/rest/routes/index.js';
import { INSTANT_RANGE_MESSAGE, LONE_SURROGATE_MESSAGE, MAX_INPUT_DEPTH, TOO_DEEP_MESSAGE } from '../src/services/input-safety.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, type Customer } from './support/campaigns.js';
import { fingerprint } from './support/fingerprint.js';

/** GET queries and multipart uploads carry it, as browsers must (CSRF prevention). */
const CSRF = { 'x-graphql-yoga-csrf': '1' };

// Input that once made the server answer 500 (found by fuzzing a production build): each is now a 4xx
// that changes nothing, and the server keeps answering.

let app: TestApp;
let alice: Customer;
let campaignId: string;

beforeAll(async () => {
  app = await startTestApp({ introspection: false });
  alice = await customer(app);
  campaignId = (await createCampaign(app, alice)).id;
});
afterAll(() => app.close());

/** `[[[ ... ]]]`, `depth` lists deep. */
const deepList = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
/** `{"a":{"a": ... 1}}`, `depth` objects deep, as a value. */
const deepObject = (depth: number): unknown => JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));

const bodyRoutes = v1Routes.filter((route) => route.body);
const pathOf = (path: string) => `/api/v1${path.replace('{id}', randomUUID())}`;

/** Runs `send`, which must be refused, and checks that no table changed and the server still answers. */
async function refused<T>(send: () => Promise<T>): Promise<T> {
  const before = await fingerprint(app.sql);
  const result = await send();
  expect(await fingerprint(app.sql)).toEqual(before);
  expect((await app.request('GET', '/healthz')).status).toBe(200);
  return result;
}

const gqlRaw = (body: string, contentType = 'application/json') =>
  app.request('POST', '/graphql', { token: alice.token, raw: body, headers: { 'content-type': contentType } });

describe('JSON nested too deep', () => {
  it(`is refused on every v1 body endpoint, whichever parser reads it`, async () => {
    for (const route of bodyRoutes) {
      // A run of 16+ digits sends the body through the lossless parser, which recurses.
      for (const body of [`{"x":${deepList(10_000)}}`, `{"n":12345678901234567,"x":${deepList(10_000)}}`]) {
        const res = await refused(() =>
          app.request(route.method, pathOf(route.path), { token: alice.token, raw: body, headers: { 'content-type': 'application/json' } }),
        );
        expect([route.operationId, res.status, res.json]).toEqual([route.operationId, 400, { non_field_errors: [TOO_DEEP_MESSAGE] }]);
      }
    }
  });

  it(`allows ${MAX_INPUT_DEPTH} levels, counting the body, and refuses one more in a stored JSON field`, async () => {
    const body = (insights: unknown) => ({
      name: 'Deep',
      agent_id: alice.agent.id,
      contact_group_id: alice.groupId,
      call_insights: insights,
    });
    const ok = await app.request('POST', '/api/v1/contacts/contacts/', { token: alice.token, body: body(deepObject(MAX_INPUT_DEPTH - 1)) });
    expect(ok.status).toBe(201);
    // Brackets inside strings, escaped quotes included, are text, not nesting.
    const text = `\\"${'['.repeat(100)}"\\${'{'.repeat(100)}`;
    const quoted = await app.request('POST', '/api/v1/contacts/contacts/', {
      token: alice.token,
      body: { ...body({ note: text }), description: text },
    });
    expect([quoted.status, quoted.json.description]).toEqual([201, text]);
    for (const depth of [MAX_INPUT_DEPTH, 3_000]) {
      const res = await refused(() =>
        app.request('POST', '/api/v1/contacts/contacts/', { token: alice.token, body: body(deepObject(depth)) }),
      );
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ non_field_errors: [TOO_DEEP_MESSAGE] });
    }
  });

  it('is refused in JSON text of a form field (field_mappings, call_insights)', async () => {
    const deep = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
    const fields = { name: 'Deep', agent_id: alice.agent.id, contact_group_id: alice.groupId };
    for (const field of ['field_mappings', 'call_insights']) {
      const form = new URLSearchParams({ ...fields, [field]: deep });
      const urlencoded = await refused(() => app.request('POST', '/api/v1/contacts/contacts/', { token: alice.token, raw: form }));
      expect([urlencoded.status, urlencoded.json]).toEqual([400, { [field]: [TOO_DEEP_MESSAGE] }]);
      const multipart = new FormData();
      for (const [key, value] of form) multipart.set(key, value);
      const res = await refused(() => app.request('POST', '/api/v1/contacts/contacts/', { token: alice.token, raw: multipart }));
      expect([res.status, res.json]).toEqual([400, { [field]: [TOO_DEEP_MESSAGE] }]);
    }
  });

  it('is refused in any GraphQL variable, used or not, in extensions, and in a JSON literal', async () => {
    const query = 'query($unused: JSON) { creditBalance { heldCents } }';
    const inVariable = await refused(() => gqlRaw(`{"query":${JSON.stringify(query)},"variables":{"unused":${deepList(10_000)}}}`));
    expect([inVariable.status, inVariable.json.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
    const inExtensions = await refused(() => gqlRaw(`{"query":${JSON.stringify(query)},"extensions":{"x":${deepList(10_000)}}}`));
    expect([inExtensions.status, inExtensions.json.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);

    const get = await refused(() =>
      app.request('GET', `/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(`{"unused":${deepList(1_000)}}`)}`, {
        token: alice.token,
        headers: CSRF,
      }),
    );
    expect([get.status, get.json.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);

    const multipart = new FormData();
    multipart.set('operations', `{"query":${JSON.stringify(query)},"variables":{"unused":${deepList(10_000)}}}`);
    const upload = await refused(() => app.request('POST', '/graphql', { token: alice.token, raw: multipart, headers: CSRF }));
    expect([upload.status, upload.json.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);

    const literal = `{a:`.repeat(40) + '1' + '}'.repeat(40);
    const inline = await refused(() =>
      app.gql(
        `mutation($id: UUID!) { updateCampaign(id: $id, input: { callInsights: ${literal} }) { id } }`,
        { id: campaignId },
        alice.token,
      ),
    );
    expect(inline.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(inline.errors![0]!.message).toContain(TOO_DEEP_MESSAGE);
  });
});

describe('GraphQL documents nested too deep', () => {
  it('are refused before the recursive parser reads them, whatever nests: lists, objects or selections', async () => {
    const documents = [
      `mutation { updateCampaign(id: "${randomUUID()}", input: { callInsights: { a: ${'['.repeat(10_000)}${']'.repeat(10_000)} } }) { id } }`,
      `query { campaigns(statuses: ${'['.repeat(1_500)}${']'.repeat(1_500)}) { totalCount } }`,
      `query { creditBalance ${'{ a '.repeat(10_000)}${'}'.repeat(10_000)} }`,
      `query { creditBalance { heldCents } } # "\n${'['.repeat(10_000)}`,
    ];
    for (const query of documents) {
      const res = await refused(() => app.request('POST', '/graphql', { token: alice.token, body: { query } }));
      expect([res.status, res.json.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
    }
  });

  it('and brackets in strings, block strings and comments do not count', async () => {
    const brackets = '['.repeat(100);
    const commented = await app.gql(
      `query {\n # ${brackets}\n creditBalance { heldCents } # "${brackets}\n campaigns(first: 1) { totalCount }\n}`,
      {},
      alice.token,
    );
    expect(commented.errors).toBeUndefined();
    const literal = await app.gql(
      `mutation { addDoNotCall(input: { phoneNumber: "+14155550177", reason: "${brackets}" }) { reason } }`,
      {},
      alice.token,
    );
    expect(literal.data.addDoNotCall.reason).toBe(brackets);
    const block = await app.gql(
      `mutation { addDoNotCall(input: { phoneNumber: "+14155550178", reason: """${brackets} \\""" ${brackets}""" }) { reason } }`,
      {},
      alice.token,
    );
    expect(block.errors).toBeUndefined();
  });
});

describe('multipart/form-data without a boundary', () => {
  it('is a 400 on every v1 body endpoint', async () => {
    for (const route of bodyRoutes) {
      for (const raw of ['', 'x', '--x\r\n']) {
        const res = await refused(() =>
          app.request(route.method, pathOf(route.path), { token: alice.token, raw, headers: { 'content-type': 'multipart/form-data' } }),
        );
        if (raw === '') continue;
        expect([route.operationId, res.status, res.json]).toEqual([
          route.operationId,
          400,
          { detail: 'Multipart form parse error - Invalid boundary in multipart: None' },
        ]);
      }
    }
  });

  it('and a multipart body that does not match its boundary is a 400 too', async () => {
    const res = await refused(() =>
      app.request('POST', '/api/v1/contacts/import/', {
        token: alice.token,
        raw: 'no parts',
        headers: { 'content-type': 'multipart/form-data; boundary=abc' },
      }),
    );
    expect(res.status).toBe(400);
    expect(res.json.detail).toMatch(/^Multipart form parse error - /);
  });
});

describe('lone UTF-16 surrogates', () => {
  const patch = (body: string) =>
    app.request('PATCH', `/api/v1/contacts/groups/${alice.groupId}/`, {
      token: alice.token,
      raw: body,
      headers: { 'content-type': 'application/json' },
    });

  it('are refused by v1 PATCH group, in a value, a key or the number', async () => {
    for (const [body, field] of [
      ['{"phone_number":"+14155550100","data":{"first_name":"x\\ud800"}}', 'data.first_name'],
      ['{"phone_number":"+14155550100","data":{"x\\udc00":"y"}}', 'data.x\udc00'],
      ['{"phone_number":"+1415555\\ud800"}', 'phone_number'],
    ] as const) {
      const res = await refused(() => patch(body));
      expect([res.status, res.json]).toEqual([400, { [field]: [LONE_SURROGATE_MESSAGE] }]);
    }
  });

  it('are refused in selected_contact_fields of a new campaign', async () => {
    const res = await refused(() =>
      app.request('POST', '/api/v1/contacts/contacts/', {
        token: alice.token,
        body: { name: 'S', agent_id: alice.agent.id, contact_group_id: alice.groupId, selected_contact_fields: ['ok', 'x\ud800'] },
      }),
    );
    expect([res.status, res.json]).toEqual([400, { 'selected_contact_fields.1': [LONE_SURROGATE_MESSAGE] }]);
  });

  it('are refused by upsertContact and in any GraphQL variable', async () => {
    const upsert = await refused(() =>
      app.gql(
        'mutation($g: UUID!, $i: UpsertContactInput!) { upsertContact(groupId: $g, input: $i) { id } }',
        { g: alice.groupId, i: { phoneNumber: '+14155550100', data: { notes: 'x\udbff' } } },
        alice.token,
      ),
    );
    expect(upsert.status).toBe(400);
    expect(upsert.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors: { 'i.data.notes': [LONE_SURROGATE_MESSAGE] } });
  });

  it('are refused by the GraphQL lexer in document string literals, escaped or not', async () => {
    for (const literal of ['"\ud800"', '"\\ud800"', '"""\ud800"""', '"\\u{D800}"']) {
      const res = await refused(() =>
        app.gql(`mutation { addDoNotCall(input: { phoneNumber: "+14155550100", reason: ${literal} }) { id } }`, {}, alice.token),
      );
      expect(res.errors![0]!.extensions!.code).toBe('GRAPHQL_PARSE_FAILED');
    }
  });

  it('and an escaped NUL in a document string literal is refused like one in a variable', async () => {
    const res = await refused(() =>
      app.gql('mutation { addDoNotCall(input: { phoneNumber: "+14155550100", reason: "a\\u0000b" }) { id } }', {}, alice.token),
    );
    expect(res.errors![0]!).toMatchObject({ message: 'Null characters are not allowed.', extensions: { code: 'BAD_USER_INPUT' } });
  });
});

describe('GraphQL requests that are not what their transport says', () => {
  it('a query that is not a string is a 400', async () => {
    for (const query of ['123', '{"a":1}', '["{ creditBalance { heldCents } }"]', 'true']) {
      const res = await refused(() => gqlRaw(`{"query":${query}}`));
      expect(res.status).toBe(400);
      expect(res.json.errors[0].extensions.code).toBe('BAD_REQUEST');
    }
  });

  it('variables or extensions that are not JSON are a 400 over GET; a urlencoded body is refused before it is read', async () => {
    const query = encodeURIComponent('{ creditBalance { heldCents } }');
    for (const param of ['variables', 'extensions']) {
      const get = await refused(() =>
        app.request('GET', `/graphql?query=${query}&${param}=notjson`, { token: alice.token, headers: CSRF }),
      );
      expect([get.status, get.json.errors[0].extensions.code]).toEqual([400, 'BAD_REQUEST']);
      const form = await refused(() => gqlRaw(`query=${query}&${param}=%7B`, 'application/x-www-form-urlencoded'));
      expect([form.status, form.json.errors[0].extensions.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    }
  });

  const IMPORT = 'mutation($input: ImportContactsInput!) { importContacts(input: $input) { success } }';
  const upload = (map: string, part: string | Blob) => {
    const form = new FormData();
    form.set('operations', JSON.stringify({ query: IMPORT, variables: { input: { groupName: 'Upload', file: null } } }));
    form.set('map', map);
    form.set('0', part);
    return app.request('POST', '/graphql', { token: alice.token, raw: form, headers: CSRF });
  };

  it('a multipart map that is not an object of lists of paths is a 400', async () => {
    for (const map of ['{"0":5}', '{"0":[5]}', '{"0":"variables.input.file"}', '[5]', '7', 'null', '"x"', '{']) {
      const res = await refused(() => upload(map, new Blob(['Phone\n+14155550100\n'])));
      expect([map, res.status]).toEqual([map, 400]);
    }
  });

  it('a plain value where importContacts expects a file is BAD_USER_INPUT', async () => {
    const part = await refused(() => upload('{"0":["variables.input.file"]}', 'Phone\n+14155550100\n'));
    expect(part.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    for (const file of ['Phone\n+14155550100\n', 5, { size: 0 }, ['x']]) {
      const res = await refused(() => app.gql(IMPORT, { input: { groupName: 'Plain', file } }, alice.token));
      expect(res.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    }
    const literal = await refused(() =>
      app.gql('mutation { importContacts(input: { groupName: "L", file: "x" }) { success } }', {}, alice.token),
    );
    expect(literal.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
  });
});

describe('date-times PostgreSQL cannot store', () => {
  const FILTERS = [
    'query($from: DateTime, $to: DateTime) { callAttempts(from: $from, to: $to) { totalCount } }',
    'query($from: DateTime, $to: DateTime) { appointments(from: $from, to: $to) { totalCount } }',
    'query($from: DateTime, $to: DateTime) { creditTransactions(from: $from, to: $to) { totalCount } }',
    'query($id: UUID!, $from: DateTime, $to: DateTime) { campaign(id: $id) { attempts(from: $from, to: $to) { totalCount } } }',
  ];
  const OUTSIDE = ['0000-01-01T00:00:00Z', '0000-12-31T23:59:59.999Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-00:01'];

  it('are refused in from and to of every filter, as variables and inline', async () => {
    for (const query of FILTERS) {
      for (const value of OUTSIDE) {
        for (const name of ['from', 'to']) {
          const res = await refused(() => app.gql(query, { id: campaignId, [name]: value }, alice.token));
          expect([query, value, res.errors?.[0]?.extensions?.code]).toEqual([query, value, 'BAD_USER_INPUT']);
          expect(res.errors![0]!.message).toContain(INSTANT_RANGE_MESSAGE);
          // GraphQL ignores commas, so the declaration can simply go.
          const inlined = query.replace(`${name}: $${name}`, `${name}: ${JSON.stringify(value)}`).replace(`$${name}: DateTime`, '');
          const inline = await refused(() => app.gql(inlined, { id: campaignId }, alice.token));
          expect(inline.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        }
      }
    }
    const edges = await app.gql(FILTERS[0]!, { from: '0001-01-01T00:00:00Z', to: '9999-12-31T23:59:59.999Z' }, alice.token);
    expect(edges.errors).toBeUndefined();
  });

  it('are refused as a planned start (v1 started_at, GraphQL startedAt) and as an appointment time', async () => {
    const v1 = await refused(() =>
      app.request('POST', '/api/v1/contacts/contacts/', {
        token: alice.token,
        body: { name: 'Far', agent_id: alice.agent.id, contact_group_id: alice.groupId, started_at: '9999-12-31T23:59:59-23:59' },
      }),
    );
    expect([v1.status, v1.json]).toEqual([400, { started_at: [INSTANT_RANGE_MESSAGE] }]);
    const graphql = await refused(() =>
      app.gql(
        'mutation($id: UUID!, $at: DateTime) { updateCampaign(id: $id, input: { startedAt: $at }) { id } }',
        { id: campaignId, at: '9999-12-31T23:59:59-23:59' },
        alice.token,
      ),
    );
    expect(graphql.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    const appointment = await refused(() =>
      app.gql(
        'mutation($id: UUID!) { updateAppointment(id: $id, input: { scheduledAt: "9999-12-31T23:59:59-12:00" }) { id } }',
        { id: randomUUID() },
        alice.token,
      ),
    );
    expect(appointment.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
  });
});

describe('list arguments beyond PostgreSQL bind parameters', () => {
  const many = <T>(values: T[]) => Array.from({ length: 40_000 }, (_, i) => values[i % values.length]!);

  it('filter by each value once, whatever the length of the list', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['query($v: [CampaignStatus!]) { campaigns(statuses: $v) { totalCount } }', { v: many(['draft', 'running']) }],
      ['query($v: [CallStatus!]) { callAttempts(statuses: $v) { totalCount } }', { v: many(['completed', 'busy']) }],
      ['query($v: [Sentiment!]) { callAttempts(sentiments: $v) { totalCount } }', { v: many(['positive']) }],
      ['query($v: [CreditTransactionKind!]) { creditTransactions(kinds: $v) { totalCount } }', { v: many(['top_up']) }],
      ['query($v: [String!]) { appointments(statuses: $v) { totalCount } }', { v: many(['scheduled', 'cancelled']) }],
      [
        'query($id: UUID!, $v: [CallStatus!]) { campaign(id: $id) { attempts(statuses: $v) { totalCount } } }',
        { id: campaignId, v: many(['failed']) },
      ],
    ];
    for (const [query, variables] of cases) {
      const res = await app.gql(query, variables, alice.token);
      expect([query, res.errors]).toEqual([query, undefined]);
    }
    const campaigns = await app.gql(
      'query($v: [CampaignStatus!]) { campaigns(statuses: $v) { totalCount } }',
      { v: many(['draft']) },
      alice.token,
    );
    expect(campaigns.data.campaigns.totalCount).toBeGreaterThan(0);
  });
});

describe("a new user's first requests in parallel", () => {
  it('all succeed, on v1 and on GraphQL', async () => {
    for (const surface of ['v1', 'graphql'] as const) {
      const token = await app.token(randomUUID());
      const responses = await Promise.all(
        Array.from({ length: 100 }, () =>
          surface === 'v1'
            ? app.request('GET', '/api/v1/billing/credits/', { token })
            : app.request('POST', '/graphql', { token, body: { query: '{ creditBalance { heldCents } }' } }),
        ),
      );
      expect([surface, responses.map((res) => res.status).filter((status) => status !== 200)]).toEqual([surface, []]);
      if (surface === 'graphql') expect(responses.filter((res) => res.json.errors)).toEqual([]);
    }
  });
});
