import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER } from '../src/services/idempotency/idempotency.js';
import { startTestApp, type TestApp } from './support/app.js';
import { seedResults, type Results } from './support/results.js';
import { subscribe } from './support/sse.js';

// @defer and @stream over real HTTP: the parts arrive in order, streamed, and put together they are the
// answer of the same query without the directives.

const REPORT = /* GraphQL */ `
  query CampaignReport($id: UUID!) {
    campaign(id: $id) {
      id
      name
      status
      ... @defer(label: "report") {
        report(limit: 10) {
          totalContactOutcomes
          metrics {
            calls {
              total
              completed
            }
            successRate
            totalCostCents
          }
          contactOutcomes {
            contactName
            outcome
            attempts
          }
        }
      }
    }
  }
`;

const ATTEMPTS = /* GraphQL */ `
  query CampaignAttempts($id: UUID!) {
    campaign(id: $id) {
      id
      attempts(first: 50) {
        totalCount
        edges @stream(initialCount: 2) {
          cursor
          node {
            id
            status
            attemptNumber
            costCents
          }
        }
      }
    }
  }
`;

const withoutDirectives = (query: string) => query.replace(/ @(defer|stream)\([^)]*\)/g, '');

type Payload = {
  data?: any;
  errors?: unknown[];
  hasNext?: boolean;
  incremental?: { data?: any; items?: unknown[]; path: (string | number)[]; label?: string }[];
};

/** The answer the parts make: each deferred fragment merged at its path, each streamed item put at its index. */
function assemble(payloads: Payload[]): unknown {
  const [initial, ...rest] = payloads;
  const data = structuredClone(initial!.data);
  const at = (path: (string | number)[]) => path.reduce((value, key) => value[key], data);
  for (const part of rest.flatMap((payload) => payload.incremental ?? [])) {
    if (part.items) {
      const index = part.path.at(-1) as number;
      (at(part.path.slice(0, -1)) as unknown[]).splice(index, part.items.length, ...part.items);
    } else {
      deepMerge(at(part.path), part.data);
    }
  }
  return { data };
}

function deepMerge(target: any, source: any): void {
  for (const [key, value] of Object.entries(source)) {
    if (value && typeof value === 'object' && !Array.isArray(value) && target[key]) deepMerge(target[key], value);
    else target[key] = value;
  }
}

/** The JSON payloads of a multipart/mixed answer, as yoga writes them: a part per payload, `---` between. */
function multipartPayloads(body: string): Payload[] {
  return body
    .split('\r\n---')
    .map((part) => part.slice(part.indexOf('\r\n\r\n') + 4).trim())
    .filter((json) => json.startsWith('{'))
    .map((json) => JSON.parse(json) as Payload);
}

let app: TestApp;
let results: Results;
let token: string;
beforeAll(async () => {
  app = await startTestApp();
  const userId = randomUUID();
  token = await app.token(userId);
  results = await seedResults(app, userId);
});
afterAll(() => app.close());

async function multipart(query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { accept: 'multipart/mixed', 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { response, payloads: multipartPayloads(await response.text()) };
}

describe('@defer', () => {
  it('sends the campaign first and its report after, over multipart/mixed, streamed', async () => {
    const variables = { id: results.spring.campaign.id };
    const whole = await app.gql(withoutDirectives(REPORT), variables, token);
    expect(whole.errors).toBeUndefined();

    const { response, payloads } = await multipart(REPORT, variables);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    // Written part by part as they are ready, not held and sent with a length.
    expect(response.headers.get('content-length')).toBeNull();
    expect(payloads[0]).toEqual({
      data: { campaign: { id: variables.id, name: 'Spring recall', status: whole.data.campaign.status } },
      hasNext: true,
    });
    expect(payloads.at(-1)!.hasNext).toBe(false);
    expect(payloads.flatMap((p) => p.incremental ?? []).map((part) => [part.label, part.path])).toEqual([['report', ['campaign']]]);
    expect(assemble(payloads)).toEqual({ data: whole.data });
  });

  it('sends the same parts over text/event-stream', async () => {
    const variables = { id: results.spring.campaign.id };
    const whole = await app.gql(withoutDirectives(REPORT), variables, token);
    const live = await subscribe(app.url, REPORT, variables, token);
    await live.ended;
    expect(live.completed).toBe(true);
    const payloads = live.results.map(({ status: _status, ...payload }) => payload as Payload);
    expect(payloads[0]!.data.campaign).not.toHaveProperty('report');
    expect(payloads[0]!.hasNext).toBe(true);
    expect(assemble(payloads)).toEqual({ data: whole.data });
  });

  it('is answered 406 to a client that accepts only JSON', async () => {
    const response = await app.request('POST', '/graphql', {
      token,
      headers: { accept: 'application/json' },
      body: { query: REPORT, variables: { id: results.spring.campaign.id } },
    });
    expect(response.status).toBe(406);
  });
});

describe('@stream', () => {
  it("sends a connection's first two edges, then the rest as they come", async () => {
    const variables = { id: results.spring.campaign.id };
    const whole = await app.gql(withoutDirectives(ATTEMPTS), variables, token);
    expect(whole.errors).toBeUndefined();
    expect(whole.data.campaign.attempts.edges.length).toBeGreaterThan(2);

    const { payloads } = await multipart(ATTEMPTS, variables);
    expect(payloads[0]!.data.campaign.attempts.edges).toHaveLength(2);
    expect(payloads.length).toBeGreaterThan(1);
    expect(payloads.flatMap((p) => p.incremental ?? []).every((part) => part.items && part.path.length === 4)).toBe(true);
    expect(assemble(payloads)).toEqual({ data: whole.data });
  });
});

describe('beside the other plugins', () => {
  it('counts deferred fields against the cost limit', async () => {
    const costly = /* GraphQL */ `
      query ($id: UUID!) {
        campaign(id: $id) {
          ... @defer {
            attempts(first: 100) {
              edges {
                node {
                  contact {
                    dialBlocks(first: 100) {
                      edges {
                        node {
                          __typename
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    `;
    const { response, payloads } = await multipart(costly, { id: results.spring.campaign.id });
    // Refused before it runs, as an operation over the depth or alias limit is.
    expect(response.status).toBe(400);
    expect(payloads).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'QUERY_TOO_COSTLY' } })] }]);
  });

  it('refuses @defer in a mutation sent with an Idempotency-Key, and streams a query sent with one, unkept', async () => {
    const mutation = /* GraphQL */ `
      mutation ($id: UUID!) {
        pauseCampaign(id: $id) {
          id
          ... @defer {
            status
          }
        }
      }
    `;
    const id = results.spring.campaign.id;
    const before = (await app.gql('query ($id: UUID!) { campaign(id: $id) { status } }', { id }, token)).data.campaign.status;
    const refused = await multipart(mutation, { id }, { [IDEMPOTENCY_HEADER]: randomUUID() });
    expect(refused.response.status).toBe(400);
    expect(refused.payloads).toEqual([
      {
        errors: [
          {
            message: 'A mutation sent with an Idempotency-Key is answered whole: remove @defer and @stream.',
            extensions: { code: 'BAD_REQUEST' },
          },
        ],
      },
    ]);
    expect((await app.gql('query ($id: UUID!) { campaign(id: $id) { status } }', { id }, token)).data.campaign.status).toBe(before);

    const key = randomUUID();
    for (let repeat = 0; repeat < 2; repeat += 1) {
      const { response, payloads } = await multipart(REPORT, { id: results.spring.campaign.id }, { [IDEMPOTENCY_HEADER]: key });
      expect(response.headers.get(REPLAYED_HEADER)).toBeNull();
      expect(payloads.at(-1)!.hasNext).toBe(false);
    }
  });
});
