import { randomUUID } from 'node:crypto';
import type { ResultOf } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { graphql } from '../generated/gql/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
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
          template { templateKey name }
          phoneNumbers { number isPrimary }
        }
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
