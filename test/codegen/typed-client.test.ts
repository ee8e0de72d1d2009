import { randomUUID } from 'node:crypto';
import type { ResultOf } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { graphql } from '../generated/gql/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createCampaign, customer } from '../support/campaigns.js';
import { createAgent } from '../support/fixtures.js';

// A consumer's view: an operation typed by graphql-codegen from the committed schema.graphql, run over
// HTTP against the real server. If the schema and the SDL drift apart, this stops type-checking.

const AgentsWithTemplates = graphql(`
  query AgentsWithTemplates($status: AgentStatus, $first: Int!) {
    agents(first: $first, status: $status) {
      totalCount
      edges {
        node {
          id
          name
          status
          template {
            templateKey
            name
          }
          phoneNumbers {
            number
            isPrimary
          }
        }
      }
    }
  }
`);

const CampaignLive = graphql(`
  subscription CampaignLive($id: UUID!) {
    campaignUpdated(id: $id) {
      id
      status
      progress {
        total
      }
    }
  }
`);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

it('runs a generated, typed operation through the real schema', async () => {
  const token = await app.token(randomUUID());
  await createAgent(app, token, { name: 'Typed' });

  const result = await app.gql<ResultOf<typeof AgentsWithTemplates>>(print(AgentsWithTemplates), { first: 10, status: 'active' }, token);
  expect(result.errors).toBeUndefined();
  const agents = result.data!.agents;
  const first = agents.edges[0]!.node;
  // These property accesses are checked by the TypeScript compiler against the generated types.
  const summary: { name: string; key: string; primary: boolean } = {
    name: first.name,
    key: first.template.templateKey,
    primary: first.phoneNumbers[0]!.isPrimary,
  };
  expect(agents.totalCount).toBe(1);
  expect(summary).toEqual({ name: 'Typed', key: 'appointment_setter', primary: true });
  expect(first.status).toBe('active');
});

it('subscribes with a generated, typed document through a standard client (graphql-sse, distinct connections)', async () => {
  const who = await customer(app);
  const { id } = await createCampaign(app, who);
  const client = createClient({ url: `${app.url}/graphql`, headers: { authorization: `Bearer ${who.token}` }, retryAttempts: 0 });
  const events = client.iterate<ResultOf<typeof CampaignLive>>({ query: print(CampaignLive), variables: { id } });
  try {
    const first = await events.next();
    // Checked by the compiler against the generated types, like the query above.
    const campaign: { id: string; status: string; progress: { total: number } } = first.value.data!.campaignUpdated;
    expect(campaign).toEqual({ id, status: 'draft', progress: { total: 0 } });

    await app.gql('mutation($id: UUID!) { cancelCampaign(id: $id) { id } }', { id }, who.token);
    expect((await events.next()).value.data!.campaignUpdated.status).toBe('cancelled');
  } finally {
    await events.return?.();
    client.dispose();
  }
});
