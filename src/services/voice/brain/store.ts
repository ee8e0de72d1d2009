import { statement, type SqlSession } from '../../../db/sql.js';
import { IN_FLIGHT_SQL } from '../../call-outcomes.js';

// The statements of the built-in brain: the call a socket is for, with what the brain says and runs on
// (its agent, the callee's region), and the transcript kept on the call. The secret socket URLs are
// signed with is the voice store's.

/** A call Retell opened an LLM socket for, with the agent on it (the contact's A/B variant's, else the campaign's). */
export interface BrainCall {
  id: string;
  userId: string;
  status: string;
  /** Its end was reported already (the result waits on the attempt): the call is over. */
  ended: boolean;
  toNumber: string | null;
  /** What the brain kept of the conversation so far; null until its begin message. */
  transcript: string | null;
  contactRegion: string | null;
  agentId: string;
  responseEngineType: string;
  systemPrompt: string;
  agentProfile: Record<string, unknown>;
  /** The template's runtime defaults under the agent's overrides (model, temperature). */
  llmRuntime: Record<string, unknown>;
}

const callStatement = statement<BrainCall>(
  'brain.call',
  `SELECT a.id, a.user_id AS "userId", a.status::text, a.pending_result IS NOT NULL AS ended, a.to_number AS "toNumber", a.transcript,
          c.data->>'region' AS "contactRegion",
          ag.id AS "agentId", ag.response_engine_type AS "responseEngineType", ag.system_prompt AS "systemPrompt",
          ag.agent_profile AS "agentProfile", t.llm_runtime_defaults || ag.llm_runtime_overrides AS "llmRuntime"
   FROM call_attempts a
   JOIN contacts c ON c.id = a.contact_id
   JOIN campaigns k ON k.id = a.campaign_id
   LEFT JOIN campaign_contacts cc ON cc.campaign_id = a.campaign_id AND cc.contact_id = a.contact_id
   LEFT JOIN campaign_variants v ON v.id = cc.variant_id
   JOIN agents ag ON ag.id = coalesce(v.agent_id, k.agent_id)
   JOIN agent_templates t ON t.id = ag.template_id
   WHERE a.provider_call_id = $1`,
);

/** The call Retell names `providerCallId`, if it is ours. */
export async function brainCall(sql: SqlSession, providerCallId: string): Promise<BrainCall | undefined> {
  return (await sql.run(callStatement, [providerCallId]))[0];
}

// Only while the call is under way: the provider's own transcript, which its end brings, is the last word.
const transcriptStatement = statement(
  'brain.transcript',
  `UPDATE call_attempts SET transcript = $2, updated_at = $3
   WHERE id = $1::uuid AND status IN ${IN_FLIGHT_SQL} AND pending_result IS NULL`,
);

export async function saveTranscript(sql: SqlSession, attemptId: string, transcript: string, now: Date): Promise<void> {
  await sql.run(transcriptStatement, [attemptId, transcript, now]);
}
