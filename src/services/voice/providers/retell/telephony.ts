import type Retell from 'retell-sdk';
import { APIError } from 'retell-sdk';
import { messageOf, retellClient, type RetellClientOptions } from './client.js';
import { CallRefused, dynamicVariables, type PlaceCall, type Telephony } from '../telephony.js';

// The Retell adapter: places calls through Retell's create-phone-call API, with the official SDK.
// Results come back later on Retell's webhooks (see callbacks.ts), which find the attempt by the
// `attempt_id` put in the call's metadata here.

export type RetellOptions = RetellClientOptions;

/** When a 429 names no Retry-After, the refused call is tried again after this long. */
const DEFAULT_RETRY_AFTER_SECONDS = 15;

export class RetellTelephony implements Telephony {
  private readonly client: Retell;

  constructor(options: RetellOptions) {
    this.client = retellClient(options);
  }

  async placeCall(call: PlaceCall): Promise<{ providerCallId: string }> {
    try {
      const created = await this.client.call.createPhoneCall({
        from_number: call.from,
        to_number: call.to,
        // Without one, Retell uses the outbound agent bound to the from number. With one, the version
        // provisioning published, so that an edit reaches calls once it is published there.
        ...(call.providerAgentId ? { override_agent_id: call.providerAgentId } : {}),
        ...(call.providerAgentId && call.providerAgentVersion !== null ? { override_agent_version: call.providerAgentVersion } : {}),
        // The agent's voicemail setting may say {{voicemail_message}}; leave_voicemail tells the result apart.
        retell_llm_dynamic_variables: dynamicVariables(call),
        metadata: call.voicemailMessage === null ? { attempt_id: call.attemptId } : { attempt_id: call.attemptId, leave_voicemail: true },
      });
      if (created.call_id) return { providerCallId: created.call_id };
      throw new Error('Retell answered create-phone-call without a call_id');
    } catch (error) {
      throw refusal(error);
    }
  }

  /** Nothing to hand over: calls go on at Retell, and their webhooks reach whichever instance is up. */
  stop(): void {}
}

/**
 * What a refused create-phone-call means. 429 (rate limited, or the account's concurrency is used up):
 * try again later. 400 or 422 about the callee's number: that number cannot be called. Anything else
 * (our key, our payment, our from number, Retell's outage, a timeout) is a failed call, which the retry
 * policy and the campaign's circuit breaker handle.
 */
function refusal(error: unknown): Error {
  if (!(error instanceof APIError) || error.status === undefined) return error as Error;
  const message = messageOf(error);
  const text = `Retell answered ${error.status} to create-phone-call${message ? `: ${message}` : ''}`;
  if (error.status === 429) {
    const header = Number(error.headers?.get('retry-after'));
    return new CallRefused(text, 'retry_later', Number.isFinite(header) && header > 0 ? Math.ceil(header) : DEFAULT_RETRY_AFTER_SECONDS);
  }
  if ((error.status === 400 || error.status === 422) && /to_number|destination/i.test(message)) {
    return new CallRefused(text, 'invalid_destination');
  }
  return new Error(text);
}
