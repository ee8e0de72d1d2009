import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProvisioning, type ProvisioningRuntime } from '../src/jobs/provisioning.js';
import { systemClock } from '../src/services/context.js';
import { RetellTelephony } from '../src/services/voice/providers/retell/telephony.js';
import { sweepDrift } from '../src/services/voice/provisioning.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createCampaign, customer, dispatch, type Customer } from './support/campaigns.js';
import { dialerEnv, ManualClock, manualDialer } from './support/dialer.js';
import { FakeRetell } from './support/fake-retell.js';
import { createAgent } from './support/fixtures.js';
import { ALWAYS_OPEN } from './support/live.js';
import { waitFor } from './support/wait.js';

// Agents provisioned at Retell, as in production: the app's changes go through the provisioning job
// engine (pg-boss) to a local fake of Retell's API, reached with retell-sdk. Failures are injected at
// the fake: 429, 5xx, timeouts, and answers lost after Retell acted.

const API_KEY = 'key_test_retell_api_0123456789';
const PUBLIC = 'https://calls.example.com';

const PROVISIONING = `fragment P on Agent { id version provisioning { state error providerAgentId providerVersion version drift updatedAt } }`;
const AGENT = `query ($id: UUID!) { agent(id: $id) { ...P } } ${PROVISIONING}`;
const UPDATE = `mutation ($id: UUID!, $input: UpdateAgentInput!) { updateAgent(id: $id, input: $input) { ...P systemPrompt } } ${PROVISIONING}`;
const RETRY = `mutation ($id: UUID!) { retryAgentProvisioning(id: $id) { ...P } } ${PROVISIONING}`;

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
    retryLimit: 5,
    retryDelaySeconds: 1,
    jobExpireSeconds: 60,
    // The tests sweep by hand.
    driftSweepSeconds: 86_400,
  });
}, 60_000);

afterAll(async () => {
  await runtime?.stop();
  await fake?.close();
  await app?.close();
});

async function provisioningOf(id: string, token: string) {
  const result = await app.gql(AGENT, { id }, token);
  expect(result.errors).toBeUndefined();
  return result.data.agent;
}

/** Waits until the agent's provisioning is no longer pending (at most `ms`), and returns the agent. */
async function settled(id: string, token: string, ms = 30_000) {
  return waitFor(
    async () => {
      const agent = await provisioningOf(id, token);
      return agent.provisioning.state === 'pending' ? undefined : agent;
    },
    ms,
    'provisioning to settle',
  );
}

const toolNames = (llm: Record<string, any>) => llm.general_tools.map((t: { name: string }) => t.name);

describe('an agent provisioned at Retell', () => {
  let who: Customer;
  let agentId: string;

  beforeAll(async () => {
    who = await customer(app, { contacts: 3, credits: 100_000 });
    agentId = who.agent.id;
  });

  it('is pending when made, then ready with one LLM and one published agent at Retell, bound to its number', async () => {
    const created = await provisioningOf(agentId, who.token);
    expect(['pending', 'ready']).toContain(created.provisioning.state);
    const ready = await settled(agentId, who.token);
    expect(ready.provisioning).toMatchObject({ state: 'ready', error: null, providerVersion: 0, version: 1 });
    expect(ready.version).toBe(1);

    const [llm, ...moreLlms] = [...fake.llms.values()].filter((l) => l.default_dynamic_variables?.callflow_agent_id === agentId);
    expect(moreLlms).toHaveLength(0);
    const row = await app.prisma.agent.findUniqueOrThrow({ where: { id: agentId } });
    expect(llm).toMatchObject({ general_prompt: row.systemPrompt, model: 'gpt-4.1-mini', model_temperature: 0.4 });
    expect(toolNames(llm!)).toEqual(['end_call', 'check_availability', 'book_appointment', 'add_to_do_not_call', 'schedule_callback']);
    for (const tool of llm!.general_tools.slice(1)) {
      expect(tool).toMatchObject({ type: 'custom', url: `${PUBLIC}/voice/retell/tools/${tool.name}`, parameters: { type: 'object' } });
    }

    const versions = fake.agents.get(ready.provisioning.providerAgentId)!;
    expect(versions[0]).toMatchObject({
      agent_name: `callflow:${agentId}`,
      response_engine: { type: 'retell-llm', llm_id: llm!.llm_id },
      voice_id: '11labs-Myra',
      language: 'en-US',
      webhook_url: `${PUBLIC}/webhooks/retell`,
      is_published: true,
    });
    expect(fake.phoneNumbers.get(who.agent.phoneNumbers[0]!.number)!.outbound_agents).toEqual([
      { agent_id: ready.provisioning.providerAgentId, agent_version: 0, weight: 1 },
    ]);
  });

  it('publishes a new version on an edit, in the same LLM and agent, with transfer_call once it has a number', async () => {
    const before = await settled(agentId, who.token);
    const agentsBefore = fake.agents.size;
    const llmsBefore = fake.llms.size;
    const edited = await app.gql(
      UPDATE,
      { id: agentId, input: { variables: { agent_name: 'Robin', company_name: 'Acme Dental' }, transferNumber: '(415) 555-0199' } },
      who.token,
    );
    expect(edited.errors).toBeUndefined();
    expect(edited.data.updateAgent.version).toBe(2);
    expect(edited.data.updateAgent.systemPrompt).toContain('You are Robin');
    const ready = await settled(agentId, who.token);
    expect(ready.provisioning).toMatchObject({
      state: 'ready',
      providerAgentId: before.provisioning.providerAgentId,
      providerVersion: 1,
      version: 2,
    });
    expect(fake.agents.size).toBe(agentsBefore);
    expect(fake.llms.size).toBe(llmsBefore);
    const llm = [...fake.llms.values()].find((l) => l.default_dynamic_variables?.callflow_agent_id === agentId)!;
    expect(llm.general_prompt).toContain('You are Robin');
    expect(toolNames(llm)).toContain('transfer_call');
    expect(fake.agents.get(ready.provisioning.providerAgentId)![1]).toMatchObject({ version: 1, is_published: true });
  });

  it('refuses a bad edit with field errors and changes nothing', async () => {
    const bad = await app.gql(UPDATE, { id: agentId, input: { variables: { agent_name: '' }, llmWebsocketUrl: 'http://x' } }, who.token);
    expect(bad.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    expect(Object.keys(bad.errors![0]!.extensions!.fieldErrors)).toContain('llmWebsocketUrl');
    expect((await provisioningOf(agentId, who.token)).version).toBe(2);
    const stranger = await app.gql(UPDATE, { id: agentId, input: { name: 'Mine' } }, await app.token());
    expect(stranger.errors![0]!.extensions!.code).toBe('NOT_FOUND');
  });

  it('places calls with override_agent_id and the published version, and records them on each attempt', async () => {
    const ready = await settled(agentId, who.token);
    const campaign = await createCampaign(app, who, { ...ALWAYS_OPEN, schedule_config: { max_attempts: 1 } });
    expect((await dispatch(app, who.token, campaign.id)).status).toBe(202);
    const run = manualDialer(
      dialerEnv(app, new ManualClock(new Date(Date.now() + 1000))),
      new RetellTelephony({ baseUrl: fake.url, apiKey: API_KEY, timeoutSeconds: 5 }),
    );
    const before = fake.calls.length;
    await run.run(campaign.id);
    const calls = fake.calls.slice(before);
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      expect(call.body).toMatchObject({ override_agent_id: ready.provisioning.providerAgentId, override_agent_version: 1 });
    }
    const attempts = await app.prisma.callAttempt.findMany({ where: { campaignId: campaign.id } });
    expect(attempts.map((a) => [a.agentId, a.agentVersion])).toEqual(attempts.map(() => [agentId, 2]));
  });

  it('is deleted at Retell, and its number unbound, when archived', async () => {
    const ready = await settled(agentId, who.token);
    const llmId = [...fake.llms.values()].find((l) => l.default_dynamic_variables?.callflow_agent_id === agentId)!.llm_id;
    expect((await app.request('DELETE', `/api/v1/agents/${agentId}/`, { token: who.token })).status).toBe(204);
    const gone = await waitFor(
      async () => {
        const agent = await provisioningOf(agentId, who.token);
        return agent.provisioning.state === 'ready' && agent.provisioning.providerAgentId === null ? agent : undefined;
      },
      30_000,
      'the archived agent to be removed',
    );
    expect(gone.version).toBe(3);
    expect(fake.agents.has(ready.provisioning.providerAgentId)).toBe(false);
    expect(fake.llms.has(llmId)).toBe(false);
    expect(fake.phoneNumbers.get(who.agent.phoneNumbers[0]!.number)!.outbound_agents).toEqual([]);
  });
});

describe('failures at Retell', () => {
  it('retries 429, 5xx, timeouts and answers lost after Retell acted, without a second LLM or agent', async () => {
    const token = await app.token();
    const from = fake.log.length;
    fake.inject('create-retell-llm', { kind: 'after', status: 500 });
    fake.inject('create-agent', { kind: 'status', status: 429 });
    fake.inject('create-agent', { kind: 'after', status: 502 });
    fake.inject('publish-agent-version', { kind: 'timeout', ms: 2_500 });
    const agent = await createAgent(app, token);
    // Four failed tries wait pg-boss's backoff, 1 s doubling with up to as much again at random: up to
    // 2 + 4 + 8 + 16 s, and the 2.5 s timeout, before the fifth. The bound leaves room above that.
    const ready = await settled(agent.id, token, 75_000);
    expect(ready.provisioning).toMatchObject({ state: 'ready', error: null, version: 1 });
    expect([...fake.llms.values()].filter((l) => l.default_dynamic_variables?.callflow_agent_id === agent.id)).toHaveLength(1);
    expect([...fake.agents.values()].filter((v) => v[0]!.agent_name === `callflow:${agent.id}`)).toHaveLength(1);
    const statuses = fake.log
      .slice(from)
      .filter((l) => /^(create-retell-llm|create-agent)/.test(l.operation))
      .map((l) => `${l.operation} ${l.status}`);
    expect(statuses).toEqual(['create-retell-llm 500', 'create-agent 429', 'create-agent 502']);
    // The timed-out publish did publish; the next try found version 0 frozen and published the draft after it.
    expect(ready.provisioning.providerVersion).toBeGreaterThanOrEqual(0);
  }, 120_000);

  it('fails on a refusal with the provider’s message, refuses dispatch with agent_not_ready, and is ready after a retry', async () => {
    fake.inject('create-agent', { kind: 'status', status: 422, message: 'voice_id 11labs-Myra is not a voice of this workspace' });
    const who = await customer(app, { contacts: 2, credits: 100_000 });
    const failed = await settled(who.agent.id, who.token);
    expect(failed.provisioning.state).toBe('failed');
    expect(failed.provisioning.error).toBe('Retell answered 422 to create-agent: voice_id 11labs-Myra is not a voice of this workspace');

    const campaign = await createCampaign(app, who, ALWAYS_OPEN);
    const refused = await dispatch(app, who.token, campaign.id);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('agent_not_ready');
    expect(refused.text).toContain('voice_id 11labs-Myra is not a voice');
    expect((await app.prisma.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).status).toBe('draft');

    const again = await app.gql(RETRY, { id: who.agent.id }, who.token);
    expect(again.errors).toBeUndefined();
    expect((await settled(who.agent.id, who.token)).provisioning.state).toBe('ready');
    const twice = await app.gql(RETRY, { id: who.agent.id }, who.token);
    expect(twice.errors![0]!.extensions!.code).toBe('CONFLICT');
    expect((await dispatch(app, who.token, campaign.id)).status).toBe(202);
  }, 60_000);

  it('is failed with Retell’s 400 for a model Retell does not offer, and ready once the agent names one it does', async () => {
    const who = await customer(app, { contacts: 1, credits: 100_000 });
    await settled(who.agent.id, who.token);
    const edited = await app.gql(UPDATE, { id: who.agent.id, input: { llmRuntimeOverrides: { model: 'gpt-4o-mini' } } }, who.token);
    expect(edited.errors).toBeUndefined();
    const failed = await settled(who.agent.id, who.token);
    expect(failed.provisioning.state).toBe('failed');
    expect(failed.provisioning.error).toMatch(/^Retell answered 400 to update-retell-llm: model must be one of: gpt-4\.1, /);
    const llm = () => [...fake.llms.values()].find((l) => l.default_dynamic_variables?.callflow_agent_id === who.agent.id)!;
    expect(llm().model).toBe('gpt-4.1-mini');

    await app.gql(UPDATE, { id: who.agent.id, input: { llmRuntimeOverrides: { model: 'claude-4.5-haiku' } } }, who.token);
    const ready = await settled(who.agent.id, who.token);
    expect(ready.provisioning).toMatchObject({ state: 'ready', error: null, version: 3 });
    expect(llm().model).toBe('claude-4.5-haiku');
  });

  it('gives up on passing errors after its last try, with the last error', async () => {
    fake.inject('create-retell-llm', { kind: 'status', status: 503, message: 'Service Unavailable' }, 6);
    const token = await app.token();
    const agent = await createAgent(app, token);
    const failed = await waitFor(
      async () => {
        const a = await provisioningOf(agent.id, token);
        return a.provisioning.state === 'failed' ? a : undefined;
      },
      90_000,
      'provisioning to give up',
    );
    expect(failed.provisioning.error).toBe('Retell answered 503 to create-retell-llm: Service Unavailable');
    expect(fake.log.filter((l) => l.operation === 'create-retell-llm' && l.status === 503)).toHaveLength(6);
  }, 120_000);
});

describe('A/B variants at Retell', () => {
  it('calls each contact with its variant’s provisioned agent and version', async () => {
    const who = await customer(app, { contacts: 40, credits: 1_000_000 });
    const second = await createAgent(app, who.token, { name: 'Challenger' });
    const control = await settled(who.agent.id, who.token);
    const challenger = await settled(second.id, who.token);
    const campaign = await createCampaign(app, who, { ...ALWAYS_OPEN, concurrent_calls: 50, schedule_config: { max_attempts: 1 } });
    const set = await app.gql(
      `mutation ($id: UUID!, $input: SetCampaignVariantsInput!) { setCampaignVariants(id: $id, input: $input) { variants { name } } }`,
      {
        id: campaign.id,
        input: {
          variants: [
            { agentId: who.agent.id, name: 'Control', weight: 50 },
            { agentId: second.id, name: 'Challenger', weight: 50 },
          ],
        },
      },
      who.token,
    );
    expect(set.errors).toBeUndefined();
    expect((await dispatch(app, who.token, campaign.id)).status).toBe(202);
    const before = fake.calls.length;
    await manualDialer(
      dialerEnv(app, new ManualClock(new Date(Date.now() + 1000))),
      new RetellTelephony({ baseUrl: fake.url, apiKey: API_KEY, timeoutSeconds: 5 }),
    ).run(campaign.id);
    const calls = fake.calls.slice(before);
    expect(calls).toHaveLength(40);
    const attempts = new Map((await app.prisma.callAttempt.findMany({ where: { campaignId: campaign.id } })).map((a) => [a.id, a]));
    const byAgent = { [who.agent.id]: control, [second.id]: challenger };
    for (const call of calls) {
      const attempt = attempts.get(call.body.metadata.attempt_id)!;
      const agent = byAgent[attempt.agentId!]!;
      expect(call.body).toMatchObject({
        override_agent_id: agent.provisioning.providerAgentId,
        override_agent_version: agent.provisioning.providerVersion,
      });
    }
    const used = new Set(calls.map((c) => c.body.override_agent_id));
    expect(used).toEqual(new Set([control.provisioning.providerAgentId, challenger.provisioning.providerAgentId]));
  }, 60_000);
});

describe('the drift sweep', () => {
  it('finds an agent deleted or changed in Retell’s dashboard, reports it, and puts ours back', async () => {
    const token = await app.token();
    const deleted = await createAgent(app, token);
    const changed = await createAgent(app, token);
    const d = await settled(deleted.id, token);
    const c = await settled(changed.id, token);
    fake.deleteInDashboard(d.provisioning.providerAgentId);
    fake.editInDashboard(c.provisioning.providerAgentId, { voice_id: 'someone-else' });

    // Other tests' agents share the database: only these two are looked at.
    const ours = (drift: { agentId: string }[]) => drift.map((x) => x.agentId).filter((id) => id === deleted.id || id === changed.id);
    const drift = await sweepDrift(dialerEnv(app, systemClock), runtime.provider);
    expect(ours(drift).sort()).toEqual([deleted.id, changed.id].sort());
    expect(ours(await sweepDrift(dialerEnv(app, systemClock), runtime.provider))).toEqual([]);

    const remade = await settled(deleted.id, token);
    expect(remade.provisioning.state).toBe('ready');
    expect(remade.provisioning.providerAgentId).not.toBe(d.provisioning.providerAgentId);
    expect(fake.agents.has(remade.provisioning.providerAgentId)).toBe(true);
    expect(remade.provisioning.drift).toContain('was deleted at retell');

    const restored = await settled(changed.id, token);
    expect(restored.provisioning).toMatchObject({ state: 'ready', providerAgentId: c.provisioning.providerAgentId });
    expect(restored.provisioning.providerVersion).toBeGreaterThan(c.provisioning.providerVersion);
    expect(restored.provisioning.drift).toContain('was changed at retell');
    expect(fake.agents.get(c.provisioning.providerAgentId)!.find((v) => v.version === restored.provisioning.providerVersion)).toMatchObject(
      {
        voice_id: '11labs-Myra',
        is_published: true,
      },
    );
  }, 60_000);
});

describe('the simulator', () => {
  it('provisions through the same job and states, with an id of its own and a version per change', async () => {
    let sim: ProvisioningRuntime | undefined;
    const simApp = await startTestApp({ voice: { queued: (id) => sim!.control.queued(id) } });
    try {
      sim = await startProvisioning(dialerEnv(simApp, systemClock), simApp.db, {
        voice: { provider: 'simulated' },
        relayMs: 200,
        retryLimit: 1,
        retryDelaySeconds: 1,
        jobExpireSeconds: 60,
        driftSweepSeconds: 86_400,
      });
      const token = await simApp.token();
      const agent = await createAgent(simApp, token);
      const state = async () => (await simApp.gql(AGENT, { id: agent.id }, token)).data.agent;
      expect(['pending', 'ready']).toContain((await state()).provisioning.state);
      const ready = await waitFor(async () => ((await state()).provisioning.state === 'ready' ? state() : undefined), 30_000);
      expect(ready.provisioning).toMatchObject({ providerAgentId: expect.stringMatching(/^sim_agent_/), providerVersion: 1, version: 1 });
      await simApp.gql(UPDATE, { id: agent.id, input: { name: 'Renamed' } }, token);
      const edited = await waitFor(async () => {
        const a = await state();
        return a.provisioning.state === 'ready' && a.provisioning.version === 2 ? a : undefined;
      }, 30_000);
      expect(edited.provisioning).toMatchObject({ providerAgentId: ready.provisioning.providerAgentId, providerVersion: 2 });
    } finally {
      await sim?.stop();
      await simApp.close();
    }
  }, 60_000);
});
