import type { Sentiment } from '../../../generated/prisma/client.js';
import type { CallOutcome } from '../../call-outcomes.js';

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
  /** The provider's version of that agent the call is made with (its latest published when provisioned). */
  providerAgentVersion: number | null;
  /** Contact fields for the agent's prompt. */
  variables: Record<string, string>;
  /** The message to leave when a voicemail answers (the campaign's voicemail policy), or null to hang up. */
  voicemailMessage: string | null;
}

/**
 * The dynamic variables an agent hears on a call: the contact's fields (and the campaign's transfer
 * number), and the message to leave, for the agent's voicemail setting to say, when there is one.
 */
export function dynamicVariables(call: Pick<PlaceCall, 'variables' | 'voicemailMessage'>): Record<string, string> {
  return call.voicemailMessage === null ? call.variables : { ...call.variables, voicemail_message: call.voicemailMessage };
}

export interface CallResult {
  attemptId: string;
  /** What the call met; `invalid_number` makes the contact done (outcome `invalid`), never retried. */
  outcome: CallOutcome;
  /** Seconds from answer to hang-up: ringing is not part of it. */
  durationSeconds: number;
  /** On voicemail: whether the agent left a message (only then is the call billed). */
  messageLeft?: boolean | undefined;
  summary?: string | undefined;
  sentiment?: Sentiment | undefined;
  disconnectReason?: string | undefined;
  recordingUrl?: string | undefined;
  transcript?: string | undefined;
  /** The callee asked never to be called again. */
  doNotCall?: boolean | undefined;
  /** The callee asked to be called back at this moment. */
  callbackAt?: Date | undefined;
  /** An appointment the call booked. */
  appointment?: { scheduledAt: Date; notes: string } | undefined;
  analysis?: Record<string, unknown> | undefined;
}

/**
 * The provider refused to start a call, for a reason the dialer treats apart from other errors (which
 * count as a failed call). `retry_later`: it is busy (rate or concurrency limit), so the call is put
 * back as if never tried, due again after `retryAfterSeconds`. `invalid_destination`: the number cannot
 * be called, so the contact is done.
 */
export class CallRefused extends Error {
  constructor(
    message: string,
    readonly reason: 'retry_later' | 'invalid_destination',
    readonly retryAfterSeconds = 0,
  ) {
    super(message);
    this.name = 'CallRefused';
  }
}

export interface Telephony {
  /** Starts a call; resolves with the provider's call id, or rejects (CallRefused, or any error) if it could not. */
  placeCall(call: PlaceCall): Promise<{ providerCallId: string }>;
  /** On shutdown, once no more calls are placed: reports what the adapter alone holds. */
  stop(): void;
}

export type ReportResult = (result: CallResult) => void;
