import type { CallStatus, Sentiment } from '../../generated/prisma/client.js';

// Telephony is a port: the dialer asks an adapter to place a call, and the adapter reports back, later,
// through `report` (from its own timers, or from a provider's webhooks).

export interface PlaceCall {
  attemptId: string;
  /** 1 for the first call to this contact in the campaign, 2 for its first retry, ... */
  attemptNumber: number;
  from: string;
  to: string;
  /** The provider's id of the agent, when registered there. */
  providerAgentId: string | null;
  /** Contact fields for the agent's prompt. */
  variables: Record<string, string>;
}

export interface CallResult {
  attemptId: string;
  status: Extract<CallStatus, 'completed' | 'no_answer' | 'busy' | 'failed' | 'voicemail'>;
  durationSeconds: number;
  summary?: string | undefined;
  sentiment?: Sentiment | undefined;
  disconnectReason?: string | undefined;
  recordingUrl?: string | undefined;
  transcript?: string | undefined;
  /** The callee asked never to be called again. */
  doNotCall?: boolean | undefined;
  /** An appointment the call booked. */
  appointment?: { scheduledAt: Date; notes: string } | undefined;
  analysis?: Record<string, unknown> | undefined;
}

export interface Telephony {
  /** Starts a call; resolves with the provider's call id, or rejects if the provider refused it. */
  placeCall(call: PlaceCall): Promise<{ providerCallId: string }>;
  /** On shutdown, once no more calls are placed: reports what the adapter alone holds. */
  stop(): void;
}

export type ReportResult = (result: CallResult) => void;
