import type { ServiceEnv } from '../context.js';

/**
 * What the rest of the service needs from provisioning: a nudge once an agent's change has committed,
 * so that its job starts at once instead of at the next relay. Without provisioning in the process (an
 * API process with DIALER=off) it is a no-op: the processes that run it find pending agents on their own.
 */
export interface VoiceControl {
  queued(agentId: string): Promise<void>;
}

export const idleVoice: VoiceControl = { queued: async () => {} };

/** After a change that left the agent pending has committed: this process's provisioning takes it up now, if it runs one. */
export async function provisioningQueued(env: ServiceEnv, agentId: string): Promise<void> {
  await env.voice.queued(agentId).catch((error: unknown) => env.log.warn({ err: error, agentId }, 'could not start provisioning at once'));
}
