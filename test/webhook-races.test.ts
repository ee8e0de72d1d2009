import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ENDPOINTS } from '../src/services/webhooks/endpoints.js';
import { startTestApp, type TestApp } from './support/app.js';

// Requests that change one customer's webhook endpoints at the same moment, through GraphQL. On
// PostgreSQL each request runs on its own connection, so only the database can keep them apart, as it
// must between API processes. One round of a race may happen not to overlap, so each runs several.

const ROUNDS = 5;

const CREATE = `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { id } } }`;

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ settings: { webhooks: { allowPrivateUrls: true } } });
});
afterAll(() => app.close());

async function gqlData(query: string, variables: Record<string, unknown>, token: string) {
  const result = await app.gql(query, variables, token);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data;
}

async function createEndpoint(token: string, url: string): Promise<{ id: string; secret: string }> {
  const made = (await gqlData(CREATE, { input: { url } }, token)).createWebhookEndpoint;
  return { id: made.endpoint.id, secret: made.secret };
}

describe('webhook endpoints changed at the same moment', () => {
  it(`creating endpoints past the limit: exactly ${MAX_ENDPOINTS}, every other request refused with webhook_endpoint_limit`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const token = await app.token();
      for (let i = 0; i < MAX_ENDPOINTS - 4; i++) await createEndpoint(token, `https://example.com/hooks/${i}`);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => app.gql(CREATE, { input: { url: `https://example.com/raced/${i}` } }, token)),
      );
      expect(results.filter((r) => !r.errors)).toHaveLength(4);
      const refused = results.filter((r) => r.errors).map((r) => r.errors![0]!.extensions);
      expect(refused).toEqual(
        Array.from({ length: 4 }, () => expect.objectContaining({ code: 'CONFLICT', reason: 'webhook_endpoint_limit' })),
      );
      expect((await gqlData('{ webhookEndpoints { id } }', {}, token)).webhookEndpoints).toHaveLength(MAX_ENDPOINTS);
    }
  });
});
