import type { InCallToolDefinition } from './tools/definitions.js';

// The voice provider is a port, as telephony is for the dialer: provisioning tells an adapter what the
// agent is now, and the adapter makes the provider hold exactly that (Retell, or the simulator).

/** What the provider's agent must be: everything provisioning sends, from our agent at one version. */
export interface AgentSpec {
  /** Our agent's id; the provider's agent is named after it, which is how a retry finds what a failed try made. */
  agentId: string;
  name: string;
  /** Our version this spec was made from. */
  version: number;
  prompt: string;
  beginMessage: string | null;
  model: string | null;
  temperature: number | null;
  /** Who answers: the provider's LLM with our prompt and tools, the customer's own LLM server, or ours. */
  engine:
    | { type: 'retell-llm'; tools: readonly InCallToolDefinition[] }
    | { type: 'custom-llm'; websocketUrl: string }
    /** Our own brain: the provider is given our LLM socket, its URL signed with this token. */
    | { type: 'builtin-llm'; socketToken: string };
  voiceId: string | null;
  language: string | null;
  voiceSpeed: number | null;
  /** 0 (never interrupted) to 1 (interrupted at once). */
  interruptionSensitivity: number | null;
  /** The agent's numbers (E.164): the provider's numbers whose outbound agent it becomes. */
  numbers: string[];
  /**
   * Where a transfer goes by default, when the agent has one; a campaign's transfer number replaces it
   * call by call (the dynamic variable `transfer_number`).
   */
  transferNumber: string | null;
}

/** The provider's ids we hold for an agent (null: not made yet, or not known to be). */
export interface ProviderIds {
  llmId: string | null;
  agentId: string | null;
}

export interface Provisioned {
  llmId: string | null;
  agentId: string;
  /** The provider's published version that calls name. */
  version: number;
  /** The provider's modification time of its agent after this, to tell its later changes. */
  modifiedAt: number;
}

/** What the drift sweep finds of an agent at the provider. */
export type Inspection = { present: false } | { present: true; modifiedAt: number };

export interface VoiceProvider {
  /** The simulator or a real provider, as the agent's provisioning shows it. */
  readonly name: string;
  /**
   * Makes the provider hold `spec`, creating what `known` does not name yet and publishing a new version.
   * `learned` is called with the ids as soon as each is known, before anything else is asked of the
   * provider, so that a try cut off afterwards never makes a second one.
   */
  provision(spec: AgentSpec, known: ProviderIds, learned: (ids: ProviderIds) => Promise<void>): Promise<Provisioned>;
  /** Detaches the agent from its numbers and deletes it and its LLM; what is already gone is fine. */
  remove(known: ProviderIds, numbers: string[]): Promise<void>;
  inspect(agentId: string): Promise<Inspection>;
}

/**
 * The provider refused or could not be reached. `transient` (rate limits, its 5xx, timeouts, network
 * errors): the job tries again later; otherwise the agent's provisioning fails with this message.
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
