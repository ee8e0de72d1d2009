import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProvisioning, type ProvisioningRuntime } from '../src/jobs/provisioning.js';
import { systemClock } from '../src/services/context.js';
import { BRAIN_ENGINE } from '../src/services/voice/brain/conversation.js';
import { loadSocketSecret, socketToken } from '../src/services/voice/brain/socket-url.js';
import { startTestApp, type TestApp } from './support/app.js';
import { dialerEnv } from './support/dialer.js';
import { FakeRetell } from './support/fake-retell.js';
import { nextPhoneNumber } from './support/fixtures.js';
import { waitFor } from './support/wait.js';

// An agent whose template names the built-in brain, provisioned at Retell (a local fake of its API) as
// in production: Retell is given our LLM socket as the agent's custom LLM, signed for that agent.

const API_KEY = 'key_test_retell_api_0123456789';
const PUBLIC = 'https://calls.example.com';

let app: TestApp;
let fake: FakeRetell;
let runtime: ProvisioningRuntime;

beforeAll(async () => {
  fake = await new FakeRetell({
    apiKey: API_KEY,
    webhookKey: 'key_test_retell_webhook_0123456789',
    script: () => ({ kind: 'silent' }),
  }).start();
  app = await startTestApp({ voice: { queued: (id) => runtime.control.queued(id) } });
  runtime = await startProvisioning(dialerEnv(app, systemClock), app.db, {
    voice: { provider: 'retell', baseUrl: fake.url, apiKey: API_KEY, timeoutSeconds: 1, publicBaseUrl: PUBLIC },
    relayMs: 200,
    retryLimit: 2,
    retryDelaySeconds: 1,
    jobExpireSeconds: 60,
    driftSweepSeconds: 86_400,
  });
}, 60_000);

afterAll(async () => {
  await runtime?.stop();
  await fake?.close();
  await app?.close();
});

describe('an agent answered by the built-in brain', () => {
  it('is provisioned at Retell as a custom LLM whose URL is our socket, signed for the agent, with no Retell LLM', async () => {
    const admin = await app.token(randomUUID(), 'admin');
    const template = await app.gql(
      `mutation ($input: CreateAgentTemplateInput!) { createAgentTemplate(input: $input) { id responseEngineType } }`,
      {
        input: {
          templateKey: 'private_setter',
          name: 'Private appointment setter',
          systemPromptTemplate: 'You are {{ agent_name }}. Book a visit.',
          placeholderSchema: { type: 'object', properties: { agent_name: { type: 'string' } }, required: ['agent_name'] },
          responseEngineType: BRAIN_ENGINE,
        },
      },
      admin,
    );
    expect(template.errors).toBeUndefined();
    const token = await app.token();
    const created = await app.gql(
      `mutation ($input: CreateAgentInput!) { createAgent(input: $input) { id } }`,
      {
        input: {
          templateId: template.data.createAgentTemplate.id,
          name: 'On-premises agent',
          phoneNumber: nextPhoneNumber(),
          variables: { agent_name: 'Sam' },
        },
      },
      token,
    );
    expect(created.errors).toBeUndefined();
    const agentId = created.data.createAgent.id as string;

    const row = await waitFor(
      async () => {
        const agent = await app.prisma.agent.findUniqueOrThrow({ where: { id: agentId } });
        return agent.provisioningState === 'pending' ? undefined : agent;
      },
      30_000,
      'provisioning to settle',
    );
    expect(row).toMatchObject({
      provisioningState: 'ready',
      provisioningError: null,
      responseEngineType: BRAIN_ENGINE,
      providerLlmId: null,
    });
    const signed = socketToken(await loadSocketSecret(app.sql), agentId);
    expect(fake.agents.get(row.providerAgentId!)![0]).toMatchObject({
      agent_name: `callflow:${agentId}`,
      response_engine: { type: 'custom-llm', llm_websocket_url: `wss://calls.example.com/voice/retell/llm/${signed}` },
      is_published: true,
    });
    expect([...fake.llms.values()].some((l) => l.default_dynamic_variables?.callflow_agent_id === agentId)).toBe(false);
  });
});
