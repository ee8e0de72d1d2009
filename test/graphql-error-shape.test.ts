import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

// One error convention on /graphql (docs/decisions.md, "One GraphQL error shape"): every error carries
// `extensions.code`; a request that did not run answers 4xx with `errors` and no `data`; one that ran
// answers 200 with `data` beside its field errors. The same on both media types a client may accept.

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp();
  token = await app.token();
});
afterAll(() => app.close());

const MEDIA_TYPES = ['application/json', 'application/graphql-response+json'] as const;

async function post(accept: string, body: string, bearer: string | null = token) {
  const res = await app.request('POST', '/graphql', {
    token: bearer,
    raw: body,
    headers: { 'content-type': 'application/json', accept },
  });
  return { status: res.status, contentType: res.headers.get('content-type'), body: res.json };
}

const REQUEST_ERRORS = [
  { kind: 'a parse error', body: { query: '{ creditBalance {' }, status: 400, code: 'GRAPHQL_PARSE_FAILED' },
  { kind: 'a validation failure', body: { query: '{ creditBalanc { heldCents } }' }, status: 400, code: 'GRAPHQL_VALIDATION_FAILED' },
  {
    kind: 'a wrongly typed variable',
    body: { query: 'mutation($a: Int!) { createCreditCheckout(amountCents: $a) { id } }', variables: { a: 'ten' } },
    status: 400,
    code: 'BAD_USER_INPUT',
  },
  { kind: 'a missing query', body: { variables: {} }, status: 400, code: 'BAD_REQUEST' },
  {
    kind: 'an unknown operation name',
    body: { query: 'query A { creditBalance { heldCents } }', operationName: 'B' },
    status: 400,
    code: 'OPERATION_RESOLUTION_FAILURE',
  },
  { kind: 'a body that is not JSON', raw: '{"query": ', status: 400, code: 'BAD_REQUEST' },
];

describe.each(MEDIA_TYPES)('accepting %s', (accept) => {
  it.each(REQUEST_ERRORS)('answers $kind with $status, $code and no data', async ({ body, raw, status, code }) => {
    const res = await post(accept, raw ?? JSON.stringify(body));
    expect(res.status).toBe(status);
    expect(res.contentType).toBe(`${accept}; charset=utf-8`);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors.length).toBeGreaterThan(0);
    expect(res.body.errors.map((e: any) => e.extensions?.code)).toEqual(res.body.errors.map(() => code));
  });

  it('answers a missing or bad token with 401 UNAUTHENTICATED and no data', async () => {
    for (const bearer of [null, 'not-a-token']) {
      const res = await post(accept, JSON.stringify({ query: '{ creditBalance { heldCents } }' }), bearer);
      expect(res.status).toBe(401);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
  });

  it('answers a service field error with 200, data beside it and the field errors in extensions', async () => {
    const res = await post(
      accept,
      JSON.stringify({
        query: 'mutation { createCreditCheckout(amountCents: 1) { id } }',
      }),
    );
    expect(res.status).toBe(200);
    expect(res.contentType).toBe(`${accept}; charset=utf-8`);
    expect(res.body).toEqual({
      data: null,
      errors: [
        {
          message: 'Invalid input. amountCents: Ensure this value is greater than or equal to 500.',
          locations: [{ line: 1, column: 12 }],
          path: ['createCreditCheckout'],
          extensions: { code: 'BAD_USER_INPUT', fieldErrors: { amountCents: ['Ensure this value is greater than or equal to 500.'] } },
        },
      ],
    });
  });

  it('answers a field that failed among others with 200 and the others’ data', async () => {
    const res = await post(
      accept,
      JSON.stringify({ query: '{ creditBalance { heldCents } campaign(id: "00000000-0000-4000-8000-000000000000") { id } }' }),
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ creditBalance: { heldCents: 0 }, campaign: null });
    expect(res.body.errors ?? []).toEqual(
      (res.body.errors ?? []).map(() => expect.objectContaining({ extensions: expect.objectContaining({ code: expect.any(String) }) })),
    );
  });
});
