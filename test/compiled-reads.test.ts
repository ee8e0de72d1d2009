import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlReadPaths } from '../src/ops/metrics.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, importGroup, type Customer } from './support/campaigns.js';

// Compiled reads: a query the schema can say as one SQL statement is answered by it, byte for byte as
// the resolvers answer it. Two apps serve one database, one with compiled reads and one without; every
// query here is sent to both and the bodies compared as text, and the path each took is checked.

let compiled: TestApp;
let resolvers: TestApp;
let alice: Customer;
let bob: Customer;

// Names that test JSON escaping, quotes and text that SQL would mistake for syntax.
const TRICKY = [
  { 'First Name': 'Zoë', 'Last Name': 'O\'Brien "the \\ one"', Phone: '+14155550101' },
  { 'First Name': 'Line\nbreak\ttab\u0001', 'Last Name': '', Phone: '+14155550102' },
  { 'First Name': '😀 emoji', 'Last Name': '</script>', Phone: '+14155550103' },
  { 'First Name': '', 'Last Name': 'Only last', Phone: 'not a number' },
  { 'First Name': "'); DROP TABLE contacts; --", 'Last Name': '$1', Phone: '+14155550105' },
];

beforeAll(async () => {
  compiled = await startTestApp();
  resolvers = await startTestApp({ compiledReads: false, database: { ...compiled.db, close: async () => {} } });
  alice = await customer(compiled, { contacts: 3 });
  bob = await customer(compiled, { contacts: 2 });
  const tricky = await importGroup(compiled, alice.token, TRICKY, 'Tricky "group" \\ ünïcode');
  await createCampaign(compiled, alice, { name: 'First' });
  await createCampaign(compiled, alice, { name: 'Second "quoted"', contact_group_id: tricky, started_at: '2031-05-06T07:08:09.123Z' });
  await createCampaign(compiled, alice, { name: 'Third', contact_group_id: tricky });
  await createCampaign(compiled, bob, { name: 'Bob only' });
  // An erased contact is gone for its user: the compiled filter must drop it as the resolvers do.
  const [erased] = await compiled.prisma.contact.findMany({ where: { groupId: tricky }, orderBy: { createdAt: 'asc' }, take: 1 });
  await compiled.prisma.contact.update({ where: { id: erased!.id }, data: { erasedAt: new Date() } });
});
afterAll(async () => {
  await resolvers?.close();
  await compiled?.close();
});

async function compiledCount(): Promise<number> {
  return (await graphqlReadPaths.get()).values.find((v) => v.labels.path === 'compiled')?.value ?? 0;
}

/** Sends the query to both apps; returns the body (equal on both) and whether the compiled path answered. */
async function both(query: string, variables: Record<string, unknown> = {}, token = alice.token) {
  const body = { query, variables };
  const before = await compiledCount();
  const fast = await compiled.request('POST', '/graphql', { token, body });
  const wasCompiled = (await compiledCount()) > before;
  const slow = await resolvers.request('POST', '/graphql', { token, body });
  expect(fast.status).toBe(slow.status);
  expect(fast.text).toBe(slow.text);
  expect(fast.headers.get('content-type')).toBe(slow.headers.get('content-type'));
  return { json: fast.json, text: fast.text, wasCompiled };
}

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

describe('compiled reads answer as the resolvers do', () => {
  it('answers the nested query from one statement, byte for byte', async () => {
    const { json, wasCompiled } = await both(NESTED, { first: 25, contacts: 20 });
    expect(wasCompiled).toBe(true);
    expect(json.data.campaigns.edges.map((e: any) => e.node.name)).toEqual(['Third', 'Second "quoted"', 'First']);
    const contacts = json.data.campaigns.edges[0].node.contactGroup.contacts.edges.map((e: any) => e.node);
    expect(contacts).toHaveLength(TRICKY.length - 1);
    expect(contacts.map((c: any) => c.firstName)).toContain('😀 emoji');
  });

  it('covers every scalar form, aliases, fragments, directives, __typename, page info and counts', async () => {
    const query = /* GraphQL */ `
      fragment Group on ContactGroup {
        __typename
        id
        name
        total
        createdAt
        archivedAt
      }
      query Everything($withAgent: Boolean!, $skipCursor: Boolean!) {
        __typename
        list: campaigns(first: 2) {
          __typename
          totalCount
          pageInfo {
            __typename
            hasNextPage
            hasPreviousPage
            startCursor
            endCursor
          }
          edges {
            __typename
            cursor @skip(if: $skipCursor)
            node {
              __typename
              id
              status
              concurrentCalls
              maxRetryDays
              timezone
              pausedReason
              startedAt
              completedAt
              createdAt
              updatedAt
              renamed: name
              agent @include(if: $withAgent) {
                id
                name
                isActive
                status
                createdAt
              }
              contactGroup {
                ...Group
                ... on ContactGroup {
                  description
                }
                contacts(first: 2) {
                  totalCount
                  pageInfo {
                    hasNextPage
                    endCursor
                  }
                  edges {
                    cursor
                    node {
                      id
                      name
                      email
                      address
                      status
                      timezone
                      erasedAt
                      firstName
                    }
                  }
                }
              }
            }
          }
        }
        again: campaigns {
          totalCount
          edges {
            node {
              name
            }
          }
        }
      }
    `;
    for (const variables of [
      { withAgent: true, skipCursor: false },
      { withAgent: false, skipCursor: true },
    ]) {
      const { json, wasCompiled } = await both(query, variables);
      expect(wasCompiled).toBe(true);
      expect(json.data.list.totalCount).toBe(3);
      expect(json.data.list.pageInfo.hasNextPage).toBe(true);
    }
  });

  it('pages as Pothos does at the edges: nothing, one past the end, above the maximum, the default', async () => {
    for (const [first, contacts] of [
      [0, 0],
      [1, 1],
      [3, 4],
      [5000, 1],
      [1, 5000],
      [null, null],
    ]) {
      const { wasCompiled } = await both(NESTED, { first, contacts });
      expect(wasCompiled).toBe(true);
    }
  });

  it('passes filters through the service: statuses (duplicates too) and a relation filter', async () => {
    const query = `query($s: [CampaignStatus!], $status: ContactStatus) {
      campaigns(statuses: $s) { totalCount edges { node { name contactGroup { contacts(status: $status) { totalCount edges { node { status } } } } } } } }`;
    for (const variables of [
      { s: ['draft'] },
      { s: ['draft', 'draft'] },
      { s: [] },
      { s: ['running'], status: 'active' },
      { status: 'invalid' },
    ]) {
      expect((await both(query, variables)).wasCompiled).toBe(true);
    }
  });

  it("never shows another customer's rows", async () => {
    const { json, wasCompiled } = await both(NESTED, { first: 50, contacts: 50 }, bob.token);
    expect(wasCompiled).toBe(true);
    expect(json.data.campaigns.edges.map((e: any) => e.node.name)).toEqual(['Bob only']);
  });

  it("pages with cursors: every page of campaigns and of a group's contacts, as Pothos pages them", async () => {
    const query = `query($after: String, $contactsAfter: String) {
      campaigns(first: 1, after: $after) {
        totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        edges { cursor node { name contactGroup { contacts(first: 2, after: $contactsAfter) {
          pageInfo { hasNextPage hasPreviousPage endCursor } edges { cursor node { firstName } } } } } } } }`;
    const names: string[] = [];
    let after: string | null = null;
    do {
      const { json, wasCompiled } = await both(query, { after });
      expect(wasCompiled).toBe(true);
      names.push(...json.data.campaigns.edges.map((e: any) => e.node.name));
      after = json.data.campaigns.pageInfo.hasNextPage ? json.data.campaigns.pageInfo.endCursor : null;
    } while (after);
    expect(names).toEqual(['Third', 'Second "quoted"', 'First']);

    const { json } = await both(query, {});
    const contactsAfter = json.data.campaigns.edges[0].node.contactGroup.contacts.pageInfo.endCursor;
    expect((await both(query, { contactsAfter })).wasCompiled).toBe(true);
    // A cursor of another customer's row, or of no row, pages as Prisma pages it.
    const { json: bobs } = await both('{ campaigns { edges { cursor } } }', {}, bob.token);
    expect((await both(query, { after: bobs.data.campaigns.edges[0].cursor })).wasCompiled).toBe(true);
    const nowhere = Buffer.from('GPC:S:00000000-0000-7000-8000-000000000000').toString('base64');
    expect((await both(query, { after: nowhere })).wasCompiled).toBe(true);
  });

  it('reads only what a page asks for, in its order: no page info, cursors alone, page info alone', async () => {
    const { json } = await both('{ campaigns { edges { cursor } } }');
    const [first, second] = json.data.campaigns.edges.map((e: any) => e.cursor);
    for (const [query, variables] of [
      // After a cursor, with no page info: the rows past the cursor, no row read beyond the page.
      ['query($after: String) { campaigns(first: 1, after: $after) { edges { node { name } } } }', { after: first }],
      ['query($after: String) { campaigns(first: 5, after: $after) { edges { cursor node { name } } } }', { after: second }],
      ['{ campaigns(first: 2) { edges { cursor } pageInfo { endCursor } } }', {}],
      ['{ campaigns(first: 2) { pageInfo { hasNextPage startCursor } } }', {}],
      ['{ campaigns(first: 2) { pageInfo { hasPreviousPage } } }', {}],
      // As many rows as the page: hasNextPage false, and the last edge is the end cursor's.
      ['{ campaigns(first: 3) { pageInfo { hasNextPage endCursor } edges { cursor node { name } } } }', {}],
      ['{ campaigns(first: 2) { pageInfo { startCursor endCursor } edges { node { name } } } }', {}],
    ] as const) {
      const answer = await both(query, variables);
      expect(answer.wasCompiled).toBe(true);
    }
    const { json: page } = await both('{ campaigns(first: 3) { pageInfo { hasNextPage endCursor } edges { cursor node { name } } } }');
    expect(page.data.campaigns.pageInfo).toEqual({ hasNextPage: false, endCursor: page.data.campaigns.edges[2].cursor });
    expect(page.data.campaigns.edges.map((e: any) => e.node.name)).toEqual(['Third', 'Second "quoted"', 'First']);
  });

  it('answers the other declared lists: agents with their campaigns, contact groups', async () => {
    const agents = `{ agents(first: 5) { totalCount edges { cursor node { id name status isActive
      campaigns(first: 2) { totalCount pageInfo { hasNextPage } edges { node { name status } } } } } } }`;
    expect((await both(agents)).wasCompiled).toBe(true);
    const groups = `query($status: AgentStatus) { agents(status: $status) { totalCount edges { node { name } } }
      contactGroups { totalCount edges { node { name total contacts(first: 1) { totalCount edges { node { lastName } } } } } } }`;
    for (const status of [null, 'active', 'archived']) expect((await both(groups, { status })).wasCompiled).toBe(true);
  });

  it('answers one campaign, agent, group or contact by id, and leaves a missing one to the resolvers', async () => {
    const { json } = await both('{ campaigns(first: 1) { edges { node { id agentId contactGroupId } } } }');
    const { id, agentId, contactGroupId } = json.data.campaigns.edges[0].node;
    const query = `query($id: UUID!, $agent: UUID!, $group: UUID!) {
      campaign(id: $id) { name status contactGroup { name contacts(first: 3) { edges { node { id firstName } } } } }
      agent(id: $agent) { name campaigns(first: 1) { totalCount } }
      contactGroup(id: $group) { name total } }`;
    const found = await both(query, { id, agent: agentId, group: contactGroupId });
    expect(found.wasCompiled).toBe(true);
    const contact = found.json.data.campaign.contactGroup.contacts.edges[0].node.id;
    expect(
      (await both('query($id: UUID!) { contact(id: $id) { id firstName lastName group { name } } }', { id: contact })).wasCompiled,
    ).toBe(true);
    // Bob's campaign is not Alice's: the resolvers answer their NOT_FOUND, on both apps alike.
    const { json: bobs } = await both('{ campaigns { edges { node { id } } } }', {}, bob.token);
    const missing = await both(query, { id: bobs.data.campaigns.edges[0].node.id, agent: agentId, group: contactGroupId });
    expect(missing.wasCompiled).toBe(false);
    expect(missing.json.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('leaves to the resolvers what it cannot say, with the same answer', async () => {
    for (const [query, variables] of [
      ['{ campaigns(last: 1) { edges { node { name } } } }', {}],
      ['{ campaigns { edges { node { name progress { total } } } } }', {}],
      ['{ campaigns { edges { node { callingHours { start } fieldMappings } } } }', {}],
      ['{ contactGroups { edges { node { contacts(search: "zo") { edges { node { firstName } } } } } } }', {}],
      ['{ campaigns(first: -1) { totalCount } }', {}],
      ['query($after: String) { campaigns(first: 1, after: $after) { totalCount } }', { after: 'not a cursor' }],
      [
        'query($after: String) { campaigns(first: 1, after: $after) { edges { cursor } } }',
        { after: Buffer.from('GPC:S:not-a-uuid').toString('base64') },
      ],
      ['mutation { __typename }', {}],
    ] as const) {
      expect((await both(query, variables)).wasCompiled).toBe(false);
    }
  });

  it('answers errors the same way: unauthenticated, invalid variables', async () => {
    expect((await both(NESTED, { first: 1 }, '')).wasCompiled).toBe(false);
    expect((await both(NESTED, { first: 'many' })).wasCompiled).toBe(false);
  });
});
