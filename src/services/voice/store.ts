import { statement, type SqlSession } from '../../db/sql.js';
import type { ProvisioningState } from '../../generated/prisma/client.js';
import type { Provisioned, ProviderIds } from './provider.js';

// The voice domain's statements: the provisioning columns of agents (state, the provider's ids and
// versions, drift), the read of what provisioning sends, and the secrets the domain signs with. The agent's own fields are the agents
// domain's; this module only reads them.

/** An agent as provisioning reads it: its fields, its template's runtime defaults, its numbers. */
export interface AgentToProvision {
  id: string;
  userId: string;
  name: string;
  isActive: boolean;
  version: number;
  provisioningState: ProvisioningState;
  responseEngineType: string;
  llmWebsocketUrl: string | null;
  systemPrompt: string;
  agentConfig: Record<string, unknown>;
  agentProfile: Record<string, unknown>;
  llmRuntimeOverrides: Record<string, unknown>;
  llmRuntimeDefaults: Record<string, unknown>;
  providerAgentId: string | null;
  providerLlmId: string | null;
  /** The agent's numbers, primary first (E.164). */
  numbers: string[];
}

const agentStatement = statement<AgentToProvision>(
  'voice.agent_to_provision',
  `SELECT a.id, a.user_id AS "userId", a.name, a.is_active AS "isActive", a.version, a.provisioning_state AS "provisioningState",
          a.response_engine_type AS "responseEngineType", a.llm_websocket_url AS "llmWebsocketUrl", a.system_prompt AS "systemPrompt",
          a.agent_config AS "agentConfig", a.agent_profile AS "agentProfile", a.llm_runtime_overrides AS "llmRuntimeOverrides",
          t.llm_runtime_defaults AS "llmRuntimeDefaults", a.provider_agent_id AS "providerAgentId", a.provider_llm_id AS "providerLlmId",
          ARRAY(SELECT p.number FROM phone_numbers p WHERE p.agent_id = a.id ORDER BY p.is_primary DESC, p.created_at, p.id) AS numbers
   FROM agents a JOIN agent_templates t ON t.id = a.template_id WHERE a.id = $1::uuid`,
);

export async function agentToProvision(sql: SqlSession, id: string): Promise<AgentToProvision | undefined> {
  return (await sql.run(agentStatement, [id]))[0];
}

// Stored the moment the provider names them, each in a statement of its own, so that a try cut off
// after the provider made something finds its id next time.
const learnedStatement = statement(
  'voice.learned_ids',
  'UPDATE agents SET provider_llm_id = $2, provider_agent_id = $3 WHERE id = $1::uuid',
);

export async function storeProviderIds(sql: SqlSession, id: string, ids: ProviderIds): Promise<void> {
  await sql.run(learnedStatement, [id, ids.llmId, ids.agentId]);
}

// The provider holds `version` now, whatever came since; the agent is ready only if nothing did (an
// edit meanwhile has its own job queued, and calls use this version until that one is done).
const readyStatement = statement(
  'voice.ready',
  `UPDATE agents SET provider_llm_id = $3, provider_agent_id = $4, provider_version = $5::int, provisioned_version = $2::int,
          provider_modified_at = $6::bigint, provisioning_state = CASE WHEN version = $2::int THEN 'ready' ELSE provisioning_state END,
          provisioning_error = CASE WHEN version = $2::int THEN NULL ELSE provisioning_error END, provisioning_updated_at = now()
   WHERE id = $1::uuid`,
);

export async function markReady(sql: SqlSession, id: string, version: number, provisioned: Provisioned): Promise<void> {
  await sql.run(readyStatement, [id, version, provisioned.llmId, provisioned.agentId, provisioned.version, provisioned.modifiedAt]);
}

// An archived agent is gone from the provider: nothing of it is left to name.
const removedStatement = statement(
  'voice.removed',
  `UPDATE agents SET provider_llm_id = NULL, provider_agent_id = NULL, provider_version = NULL, provisioned_version = NULL,
          provider_modified_at = NULL, provisioning_state = 'ready', provisioning_error = NULL, provisioning_updated_at = now()
   WHERE id = $1::uuid AND version = $2::int`,
);

export async function markRemoved(sql: SqlSession, id: string, version: number): Promise<void> {
  await sql.run(removedStatement, [id, version]);
}

const failedStatement = statement(
  'voice.failed',
  `UPDATE agents SET provisioning_state = 'failed', provisioning_error = $3, provisioning_updated_at = now()
   WHERE id = $1::uuid AND version = $2::int`,
);

export async function markFailed(sql: SqlSession, id: string, version: number, error: string): Promise<void> {
  await sql.run(failedStatement, [id, version, error]);
}

// Queued again: the relay gives it a new job, even for a version it queued before.
const retryStatement = statement<{ id: string }>(
  'voice.retry',
  `UPDATE agents SET provisioning_state = 'pending', provisioning_error = NULL, provisioning_queued_version = NULL, provisioning_updated_at = now()
   WHERE id = $1::uuid AND user_id = $2::uuid AND provisioning_state = 'failed' RETURNING id`,
);

/** Puts a failed agent's provisioning back on the queue; false when it had not failed. */
export async function retry(sql: SqlSession, userId: string, id: string): Promise<boolean> {
  return (await sql.run(retryStatement, [id, userId])).length > 0;
}

// The outbox: pending agents whose version has no job yet. Marked in the transaction that queues their
// jobs, so each version is queued once whichever process relays it.
const takeUnqueuedStatement = statement<{ agentId: string; version: number }>(
  'voice.take_unqueued',
  `UPDATE agents SET provisioning_queued_version = version
   WHERE id IN (SELECT id FROM agents WHERE provisioning_state = 'pending' AND provisioning_queued_version IS DISTINCT FROM version
                ORDER BY provisioning_updated_at LIMIT $1::int FOR UPDATE SKIP LOCKED)
   RETURNING id AS "agentId", version`,
);

export function takeUnqueued(tx: SqlSession, limit: number): Promise<{ agentId: string; version: number }[]> {
  return tx.run(takeUnqueuedStatement, [limit]);
}

const provisionedStatement = statement<{ id: string; userId: string; providerAgentId: string; modifiedAt: string | null }>(
  'voice.provisioned',
  `SELECT id, user_id AS "userId", provider_agent_id AS "providerAgentId", provider_modified_at::text AS "modifiedAt"
   FROM agents WHERE is_active AND provisioning_state = 'ready' AND provider_agent_id IS NOT NULL ORDER BY id`,
);

/** Active agents the provider holds as they are here: what the drift sweep compares. */
export async function provisionedAgents(sql: SqlSession) {
  return (await sql.run(provisionedStatement, [])).map((row) => ({
    ...row,
    modifiedAt: row.modifiedAt === null ? null : Number(row.modifiedAt),
  }));
}

// Drift found: recorded, and the agent provisioned again as it is here (a deleted agent made anew).
const driftStatement = statement<{ id: string }>(
  'voice.drift',
  `UPDATE agents SET provider_drift = $3, provider_drift_at = now(), provisioning_state = 'pending', provisioning_queued_version = NULL,
          provider_agent_id = CASE WHEN $4::boolean THEN NULL ELSE provider_agent_id END, provisioning_updated_at = now()
   WHERE id = $1::uuid AND provider_agent_id = $2 AND provisioning_state = 'ready' RETURNING id`,
);

/** Records drift of an agent still as the sweep read it; false when it changed meanwhile (nothing done). */
export async function recordDrift(sql: SqlSession, id: string, providerAgentId: string, drift: string, deleted: boolean): Promise<boolean> {
  return (await sql.run(driftStatement, [id, providerAgentId, drift, deleted])).length > 0;
}

const insertSecretStatement = statement(
  'voice.insert_signing_secret',
  'INSERT INTO signing_keys (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
);
const readSecretStatement = statement<{ secret: Uint8Array }>('voice.signing_secret', 'SELECT secret FROM signing_keys WHERE name = $1');

/**
 * The secret named `name` (the built-in agent's socket URLs, the voice runtime's tokens), made from
 * `candidate` when there is none yet; every instance reads the same.
 */
export async function signingSecret(sql: SqlSession, name: string, candidate: Buffer): Promise<Buffer> {
  await sql.run(insertSecretStatement, [name, candidate]);
  const [row] = await sql.run(readSecretStatement, [name]);
  return Buffer.from(row!.secret);
}
