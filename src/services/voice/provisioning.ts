import type { SqlTransaction } from '../../db/sql.js';
import type { ServiceContext, ServiceEnv } from '../context.js';
import { ConflictError } from '../errors.js';
import { getAgent, type AgentQuery } from '../agents/agents.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { ProviderError, type AgentSpec, type VoiceProvider } from './provider.js';
import { provisioningQueued } from './control.js';
import * as store from './store.js';
import { SERVED_TOOLS } from './tools/definitions.js';
import { BRAIN_ENGINE } from './brain/conversation.js';
import { loadSocketSecret, socketToken } from './brain/socket-url.js';

// Provisioning: the agent a customer builds here lives at the voice provider too, in step with ours
// (docs/agents.md). Every change here (create, edit, archive, retry) leaves the agent `pending` at a
// new version; a job then makes the provider hold exactly the agent as it is now, and marks it `ready`
// or `failed`. The job reads the agent when it runs, so jobs of versions that came and went meanwhile
// coalesce into one, and a job whose agent is no longer pending has nothing to do.

/** One try of an agent's provisioning job. `final`: no try comes after it, so a passing error fails it too. */
export async function provisionAgent(env: ServiceEnv, provider: VoiceProvider, agentId: string, final: boolean): Promise<void> {
  const agent = await store.agentToProvision(env.sql, agentId);
  if (!agent || agent.provisioningState !== 'pending') return;
  const known = { llmId: agent.providerLlmId, agentId: agent.providerAgentId };
  try {
    if (!agent.isActive) {
      await provider.remove(known, agent.numbers);
      await store.markRemoved(env.sql, agent.id, agent.version);
      env.log.info({ agentId, provider: provider.name }, 'agent removed from the voice provider');
      return;
    }
    const brainToken = agent.responseEngineType === BRAIN_ENGINE ? socketToken(await loadSocketSecret(env.sql), agent.id) : null;
    const provisioned = await provider.provision(specOf(agent, brainToken), known, (ids) => store.storeProviderIds(env.sql, agent.id, ids));
    await store.markReady(env.sql, agent.id, agent.version, provisioned);
    env.log.info({ agentId, version: agent.version, providerVersion: provisioned.version, provider: provider.name }, 'agent provisioned');
  } catch (error) {
    const transient = !(error instanceof ProviderError) || error.transient;
    if (transient && !final) throw error;
    await store.markFailed(env.sql, agent.id, agent.version, (error as Error).message);
    env.log.warn({ err: error, agentId, provider: provider.name }, 'agent provisioning failed');
  }
}

/** What the provider is told of the agent: its prompt and tools, its template's runtime defaults under its overrides, its profile. */
export function specOf(agent: store.AgentToProvision, brainToken: string | null = null): AgentSpec {
  const runtime = { ...agent.llmRuntimeDefaults, ...agent.llmRuntimeOverrides };
  const profile = agent.agentProfile;
  const transferNumber = text(agent.agentConfig.transfer_number);
  return {
    agentId: agent.id,
    name: agent.name,
    version: agent.version,
    prompt: agent.systemPrompt,
    beginMessage: text(profile.begin_message),
    model: text(runtime.model),
    temperature: number(runtime.temperature),
    engine: brainToken
      ? { type: 'builtin-llm', socketToken: brainToken }
      : agent.responseEngineType === 'custom-llm' && agent.llmWebsocketUrl
        ? { type: 'custom-llm', websocketUrl: agent.llmWebsocketUrl }
        : { type: 'retell-llm', tools: SERVED_TOOLS },
    voiceId: text(profile.voice_id) ?? text(profile.voice),
    language: text(profile.language),
    voiceSpeed: number(profile.speaking_rate),
    interruptionSensitivity: number(profile.interruption_sensitivity),
    numbers: agent.numbers,
    transferNumber,
  };
}

const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value : null);
const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** Queues a failed agent's provisioning again; `provisioning_failed` is the only state it may be retried from. */
export async function retryProvisioning<Q extends AgentQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.AgentGetPayload<Q>> {
  const agent = await getAgent(ctx, id, { select: { provisioningState: true } });
  if (agent.provisioningState !== 'failed' || !(await store.retry(ctx.sql, ctx.user.id, id))) {
    throw new ConflictError(
      `The agent's provisioning is ${agent.provisioningState}, not failed; there is nothing to retry.`,
      'provisioning_not_failed',
    );
  }
  await provisioningQueued(ctx, id);
  return getAgent(ctx, id, query);
}

/** Moves every pending agent's new version onto the job queue; `queue` inserts their jobs in the given transaction. */
export async function queueProvisioning(
  env: ServiceEnv,
  queue: (tx: SqlTransaction, jobs: { agentId: string; version: number }[]) => Promise<void>,
): Promise<number> {
  return env.sql.transaction(async (tx) => {
    const taken = await store.takeUnqueued(tx, 500);
    if (taken.length) await queue(tx, taken);
    return taken.length;
  });
}

export interface Drift {
  agentId: string;
  userId: string;
  providerAgentId: string;
  drift: string;
}

/**
 * Compares every provisioned agent with what the provider holds: one deleted there is made again, one
 * changed there (its dashboard) is set back to ours as a new version. Each is recorded on the agent
 * (`provider_drift`), logged, and returned.
 */
export async function sweepDrift(env: ServiceEnv, provider: VoiceProvider): Promise<Drift[]> {
  const found: Drift[] = [];
  for (const agent of await store.provisionedAgents(env.sql)) {
    const seen = await provider.inspect(agent.providerAgentId);
    const drift = !seen.present
      ? `The agent ${agent.providerAgentId} was deleted at ${provider.name}; it is made again.`
      : agent.modifiedAt !== null && seen.modifiedAt > agent.modifiedAt
        ? `The agent ${agent.providerAgentId} was changed at ${provider.name}; it is set back to this agent's settings.`
        : null;
    if (!drift || !(await store.recordDrift(env.sql, agent.id, agent.providerAgentId, drift, !seen.present))) continue;
    found.push({ agentId: agent.id, userId: agent.userId, providerAgentId: agent.providerAgentId, drift });
    env.log.warn({ agentId: agent.id, providerAgentId: agent.providerAgentId, drift }, 'agent drifted at the voice provider');
    await provisioningQueued(env, agent.id);
  }
  return found;
}
