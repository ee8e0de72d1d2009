import type { ServiceEnv } from '../../context.js';
import { AuthenticationError, NotFoundError } from '../../errors.js';
import { callVariables, voicemailTemplateOf } from '../../dialer/decisions.js';
import { isUnfinished } from '../../call-outcomes.js';
import { beginMessage, calleeRegion } from '../brain/begin-message.js';
import { dynamicVariables } from '../providers/telephony.js';
import { specOf } from '../provisioning.js';
import { agentToProvision, signingSecret } from '../store.js';
import { IN_CALL_TOOLS, type InCallToolDefinition } from '../tools/definitions.js';
import { runtimeCall, type RuntimeCall } from './store.js';
import { readRuntimeToken, runtimeToken, RUNTIME_TOKEN_MINUTES } from './token.js';
import { cachedSecret } from '../../signing-secrets.js';

// A voice runtime outside this service (the one a Twilio call's media stream goes to) holds the
// conversation; we hold the agent. When a person answers, the stream is given a token for that call
// (streamGrant); with it the runtime fetches what the agent is on this call (runtimeConfig): its
// prompt and begin message (with the AI disclosure where the callee's region requires it), model and
// voice settings, the in-call tools' schemas and the contact's dynamic variables, as a Retell call gets
// them. Nothing else can be read with it, and nothing once the call is over.

const SECRET_NAME = 'voice-runtime';

const secretOf = cachedSecret((sql, fresh) => signingSecret(sql, SECRET_NAME, fresh));

const inFlight = (call: RuntimeCall) => isUnfinished(call.status) && !call.ended;

export interface StreamGrant {
  token: string;
  agentId: string;
  agentVersion: number;
  expiresAt: Date;
}

/**
 * The token for the media stream of a call just answered, bound to its attempt and the agent and
 * version it uses, expiring RUNTIME_TOKEN_MINUTES after the call was placed. None for a call that is
 * not ours (another provider call id), is over, or has no agent recorded: there is nothing to connect.
 */
export async function streamGrant(env: ServiceEnv, attemptId: string, providerCallId: string): Promise<StreamGrant | undefined> {
  const call = await runtimeCall(env.sql, attemptId);
  if (!call || !inFlight(call) || call.agentId === null || call.agentVersion === null) return undefined;
  if (call.providerCallId !== null && call.providerCallId !== providerCallId) return undefined;
  const expiresAt = new Date(call.placedAt.getTime() + RUNTIME_TOKEN_MINUTES * 60_000);
  const grant = { attemptId: call.id, agentId: call.agentId, agentVersion: call.agentVersion, expiresAt };
  return { ...grant, token: runtimeToken(await secretOf(env.sql), grant) };
}

export interface RuntimeConfig {
  attempt_id: string;
  expires_at: string;
  agent: {
    id: string;
    name: string;
    /** The version the call uses. */
    version: number;
    /** The version whose settings are below: the agent as it is now (no earlier version's settings are kept). */
    settings_version: number;
  };
  prompt: {
    system_prompt: string;
    begin_message: string;
    ai_disclosure: { required: boolean; region: string | null; rule: string | null; source: string | null };
  };
  model: { model: string | null; temperature: number | null };
  voice: { voice_id: string | null; language: string | null; voice_speed: number | null; interruption_sensitivity: number | null };
  tools: readonly InCallToolDefinition[];
  dynamic_variables: Record<string, string>;
}

/**
 * The configuration a token opens. No token: `missing`; one we did not sign, expired, or of a call that
 * is over: `invalid` (both 401). A call or agent that is gone, or an agent not the call's owner's: 404.
 */
export async function runtimeConfig(env: ServiceEnv, token: string | undefined): Promise<RuntimeConfig> {
  if (!token) throw new AuthenticationError('missing');
  const now = env.clock.now();
  const grant = readRuntimeToken(await secretOf(env.sql), token, now);
  if (!grant) throw new AuthenticationError('invalid');
  const call = await runtimeCall(env.sql, grant.attemptId);
  if (!call || call.agentId !== grant.agentId) throw new NotFoundError('Call');
  if (!inFlight(call)) throw new AuthenticationError('invalid');
  const agent = await agentToProvision(env.sql, grant.agentId);
  if (!agent || agent.userId !== call.userId) throw new NotFoundError('Agent');
  const spec = specOf(agent);
  const begin = beginMessage(agent.agentProfile, calleeRegion(call.contactRegion, call.toNumber), now);
  const variables = callVariables(call.contactData, call.transferNumber ?? spec.transferNumber, voicemailTemplateOf(call.scheduleConfig));
  return {
    attempt_id: call.id,
    expires_at: grant.expiresAt.toISOString(),
    agent: { id: agent.id, name: agent.name, version: grant.agentVersion, settings_version: agent.version },
    prompt: {
      system_prompt: spec.prompt,
      begin_message: begin.text,
      ai_disclosure: {
        required: begin.disclosure.required,
        region: begin.region,
        rule: begin.disclosure.rule?.name ?? null,
        source: begin.disclosure.rule?.source ?? null,
      },
    },
    model: { model: spec.model, temperature: spec.temperature },
    voice: {
      voice_id: spec.voiceId,
      language: spec.language,
      voice_speed: spec.voiceSpeed,
      interruption_sensitivity: spec.interruptionSensitivity,
    },
    tools: IN_CALL_TOOLS,
    dynamic_variables: dynamicVariables(variables),
  };
}
