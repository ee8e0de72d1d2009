import { randomUUID } from 'node:crypto';
import type { AgentSpec, Inspection, Provisioned, ProviderIds, VoiceProvider } from '../../provider.js';

// The simulator's voice provider: nothing to reach, so provisioning completes at once, through the same
// job and states as with a real provider, with an id of its own and a version per change.

export class SimulatedVoiceProvider implements VoiceProvider {
  readonly name = 'simulated';

  async provision(spec: AgentSpec, known: ProviderIds, learned: (ids: ProviderIds) => Promise<void>): Promise<Provisioned> {
    const agentId = known.agentId ?? `sim_agent_${randomUUID().replace(/-/g, '')}`;
    if (!known.agentId) await learned({ llmId: null, agentId });
    // The simulator publishes our version as its own.
    return { llmId: null, agentId, version: spec.version, modifiedAt: 0 };
  }

  async remove(): Promise<void> {}

  async inspect(): Promise<Inspection> {
    return { present: true, modifiedAt: 0 };
  }
}
