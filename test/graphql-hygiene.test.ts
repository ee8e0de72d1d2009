import { readFile } from 'node:fs/promises';
import { GraphQLBoolean, GraphQLError, GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertRootFieldsDeclareAuthorization } from '../src/schema/authorization.js';
import { maskGraphQLError } from '../src/schema/errors.js';
import { buildSchema, printSchemaSDL } from '../src/schema/index.js';
import { NotFoundError, ValidationError } from '../src/services/errors.js';
import { webhookEventsDocument } from '../src/services/webhooks/events.js';
import { startTestApp, type TestApp } from './support/app.js';
import { subscribe } from './support/sse.js';

describe('schema.graphql', () => {
  it('is the schema the code builds (run npm run schema:print after a change)', async () => {
    const committed = await readFile(new URL('../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printSchemaSDL());
  });

  it("and docs/webhooks/events.json holds the webhook events' schemas the code sends (npm run schema:print)", async () => {
    const committed = await readFile(new URL('../docs/webhooks/events.json', import.meta.url), 'utf8');
    expect(committed).toBe(webhookEventsDocument());
  });
});

describe('authorization is declared on every root field', () => {
  it('holds for the real schema', () => {
    expect(() => assertRootFieldsDeclareAuthorization(buildSchema())).not.toThrow();
  });

  it('fails closed when a root field declares none', () => {
    const declared = { pothosOptions: { authScopes: { authenticated: true } } };
    const schema = new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: {
          guarded: { type: GraphQLString, extensions: declared },
          forgotten: { type: GraphQLString },
        },
      }),
      mutation: new GraphQLObjectType({
        name: 'Mutation',
        fields: { alsoForgotten: { type: GraphQLBoolean, extensions: { pothosOptions: {} } } },
      }),
    });
    expect(() => assertRootFieldsDeclareAuthorization(schema)).toThrow(/Query\.forgotten, Mutation\.alsoForgotten/);
  });
});

describe('error masking', () => {
  const log = pino({ level: 'silent' });
  const mask = maskGraphQLError(log);
  const wrap = (original: Error) => new GraphQLError(original.message, { originalError: original, path: ['agent'] });

  it('turns service errors into extensions.code', () => {
    const notFound = mask(wrap(new NotFoundError())) as GraphQLError;
    expect(notFound.extensions).toEqual({ code: 'NOT_FOUND' });
    const invalid = mask(wrap(ValidationError.field('name', 'This field is required.'))) as GraphQLError;
    expect(invalid.extensions).toEqual({ code: 'BAD_USER_INPUT', fieldErrors: { name: ['This field is required.'] } });
  });

  it('masks anything unexpected', () => {
    const masked = mask(wrap(new Error('password=hunter2 at db.internal'))) as GraphQLError;
    expect(masked.message).toBe('Unexpected error.');
    expect(masked.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR' });
    expect(masked.path).toEqual(['agent']);
  });
});

describe('over HTTP', () => {
  let app: TestApp;
  let locked: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    locked = await startTestApp({ introspection: false });
  });
  afterAll(async () => {
    await app.close();
    await locked.close();
  });

  it('accepts an ordinary nested query', async () => {
    const result = await app.gql(
      '{ agents(first: 1) { edges { node { template { id } campaigns(first: 1) { edges { node { id } } } } } } }',
      {},
      await app.token(),
    );
    expect(result.errors).toBeUndefined();
  });

  it('refuses too many aliases', async () => {
    const aliases = Array.from({ length: 25 }, (_, i) => `t${i}: agentTemplates { id }`).join(' ');
    const result = await app.gql(`{ ${aliases} }`, {}, await app.token());
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.message).toMatch(/alias/i);
    expect(result.errors?.[0]?.message).toBe('This operation uses 25 aliases, above the limit of 20: split it into several operations.');
    expect(result.errors?.[0]?.extensions?.code).toBe('TOO_MANY_ALIASES');
  });

  it('refuses an operation over the cost limit with a message that says what to change, and a code', async () => {
    // Pages multiply: 100 agents, each with a page of 100 campaigns.
    const document = '{ agents(first: 100) { edges { node { id campaigns(first: 100) { edges { node { id name status } } } } } } }';
    const result = await app.gql(document, {}, await app.token());
    expect(result.data ?? null).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COSTLY');
    expect(result.errors?.[0]?.message).toBe(
      'This operation could answer 50401 values, above the limit of 25000: ask for smaller pages (first, last, limit) or fewer fields, or split it into several operations.',
    );
  });

  it('counts page sizes given in variables as those written in the document', async () => {
    const document =
      'query($n: Int) { agents(first: $n) { edges { node { id campaigns(first: $n) { edges { node { id name status } } } } } } }';
    const refused = await app.gql(document, { n: 100 }, await app.token());
    expect(refused.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COSTLY');
    expect((await app.gql(document, { n: 50 }, await app.token())).errors).toBeUndefined();
  });

  it('lets a sensible nested page through: 50 campaigns with 50 contacts each', async () => {
    const document = `{ campaigns(first: 50) { edges { node { id name agent { name }
      contactGroup { name contacts(first: 50) { edges { node { id firstName lastName phoneNumber } } } } } } } }`;
    expect((await app.gql(document, {}, await app.token())).errors).toBeUndefined();
  });

  it('refuses a query with too many tokens', async () => {
    const fields = Array.from({ length: 2500 }, () => 'id').join(' ');
    const result = await app.gql(`{ agentTemplates { ${fields} } }`, {}, await app.token());
    expect(result.errors?.[0]?.message).toMatch(/token/i);
  });

  it('refuses a query over the depth limit', async () => {
    let selection = 'id';
    for (let i = 0; i < 6; i += 1) selection = `campaigns(first: 1) { edges { node { ${selection} } } }`;
    const result = await app.gql(`{ agents(first: 1) { edges { node { ${selection} } } } }`, {}, await app.token());
    expect(result.errors?.[0]?.message).toMatch(/depth/i);
    expect(result.errors?.[0]?.message).toMatch(/^This operation's depth, \d+, is above the limit of 10: select fewer nested fields\.$/);
    expect(result.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_DEEP');
  });

  it('answers introspection when enabled and refuses it when switched off', async () => {
    const query = '{ __schema { queryType { name } } }';
    expect((await app.gql(query, {}, await app.token())).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    const refused = await locked.gql(query, {}, await locked.token());
    expect(refused.data ?? null).toBeNull();
    expect(refused.errors?.[0]?.message).toMatch(/introspection/i);
  });

  it('with introspection off, suggests nothing and names nothing of the schema the client did not send', async () => {
    const token = await locked.token();
    const cases: [string, Record<string, unknown>, string[]][] = [
      ['{ campaigns(statuses: [runing]) { totalCount } }', {}, ['Value "runing" does not exist in [hidden] enum.']],
      ['{ campaigns { totalCont } }', {}, ['Cannot query field "totalCont" on type [hidden].']],
      ['{ campaigns(statuss: [running]) { totalCount } }', {}, ['Unknown argument "statuss" on field [hidden].']],
      ['{ campaigns }', {}, ['Field "campaigns" of type [hidden] must have a selection of subfields.']],
      ['{ campaign { id } }', {}, ['Field "campaign" argument "id" of type [hidden] is required, but it was not provided.']],
      ['query ($s: [CampaignStatu!]) { campaigns(statuses: $s) { totalCount } }', {}, ['Unknown type "CampaignStatu".']],
      [
        'query ($id: String!) { campaign(id: $id) { id } }',
        {},
        ['Variable "$id" of type "String!" used in position expecting type [hidden].'],
      ],
      [
        'query ($s: [CampaignStatus!]) { campaigns(statuses: $s) { totalCount } }',
        { s: ['runing'] },
        ['Variable "$s" got invalid value "runing" at "s[0]"; Value "runing" does not exist in "CampaignStatus" enum.'],
      ],
      [
        'mutation ($input: CreateCampaignInput!) { createCampaign(input: $input) { id } }',
        { input: { nme: 'x', agentId: '5eed0000-0000-4000-8000-00000000000a' } },
        [
          'Variable "$input" got invalid value { nme: "x", agentId: "5eed0000-0000-4000-8000-00000000000a" }; Field [hidden] of required type [hidden] was not provided.',
          'Variable "$input" got invalid value { nme: "x", agentId: "5eed0000-0000-4000-8000-00000000000a" }; Field [hidden] of required type "String!" was not provided.',
          'Variable "$input" got invalid value { nme: "x", agentId: "5eed0000-0000-4000-8000-00000000000a" }; Field "nme" is not defined by type "CreateCampaignInput".',
        ],
      ],
    ];
    for (const [query, variables, messages] of cases) {
      const result = await locked.gql(query, variables, token);
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.map((e) => e.message)).toEqual(messages);
    }
  });

  it("with introspection off, suggests nothing in a subscription's variable errors either", async () => {
    const query = 'subscription ($id: UUID!, $s: [CallStatus!]) { campaignUpdated(id: $id) { attempts(statuses: $s) { totalCount } } }';
    const subscription = await subscribe(
      locked.url,
      query,
      { id: '5eed0000-0000-4000-8000-00000000000b', s: ['bussy'] },
      await locked.token(),
    );
    await subscription.ended;
    expect(subscription.results.flatMap((r) => r.errors ?? []).map((e) => e.message)).toEqual([
      'Variable "$s" got invalid value "bussy" at "s[0]"; Value "bussy" does not exist in "CallStatus" enum.',
    ]);
  });

  it('with introspection on, keeps the suggestions that help a developer', async () => {
    const result = await app.gql('{ campaigns(statuses: [runing]) { totalCount } }', {}, await app.token());
    expect(result.errors?.[0]?.message).toBe(
      'Value "runing" does not exist in "CampaignStatus" enum. Did you mean the enum value "running"?',
    );
  });

  it('serves GraphiQL with every asset from this server, so it loads with no network', async () => {
    const page = await app.request('GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('GraphiQL');
    const external = [...page.text.matchAll(/<(?:script|link)[^>]+(?:src|href)="(https?:)?\/\/[^"]*"/g)];
    expect(external).toEqual([]);
  });
});
