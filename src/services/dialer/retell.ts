import { CallRefused, type PlaceCall, type Telephony } from './telephony.js';

// The Retell adapter: places calls through Retell's create-phone-call API. Results come back later on
// Retell's webhooks (see retell-webhooks.ts), which find the attempt by the `attempt_id` put in the
// call's metadata here.

export interface RetellOptions {
  /** https://api.retellai.com, or a stand-in speaking the same protocol. */
  baseUrl: string;
  apiKey: string;
  /** How long one create-phone-call request may take. */
  timeoutSeconds: number;
}

/** When a 429 names no Retry-After, the refused call is tried again after this long. */
const DEFAULT_RETRY_AFTER_SECONDS = 15;

export class RetellTelephony implements Telephony {
  constructor(private readonly options: RetellOptions) {}

  async placeCall(call: PlaceCall): Promise<{ providerCallId: string }> {
    const response = await fetch(new URL('/v2/create-phone-call', this.options.baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        from_number: call.from,
        to_number: call.to,
        // Without one, Retell uses the outbound agent bound to the from number.
        ...(call.providerAgentId ? { override_agent_id: call.providerAgentId } : {}),
        // The agent's voicemail setting may say {{voicemail_message}}; leave_voicemail tells the result apart.
        retell_llm_dynamic_variables:
          call.voicemailMessage === null ? call.variables : { ...call.variables, voicemail_message: call.voicemailMessage },
        metadata: call.voicemailMessage === null ? { attempt_id: call.attemptId } : { attempt_id: call.attemptId, leave_voicemail: true },
      }),
      signal: AbortSignal.timeout(this.options.timeoutSeconds * 1000),
    });
    const body = (await response.json().catch(() => null)) as { call_id?: unknown; message?: unknown } | null;
    if (response.ok && typeof body?.call_id === 'string' && body.call_id) return { providerCallId: body.call_id };
    throw refusal(response, typeof body?.message === 'string' ? body.message : '');
  }

  /** Nothing to hand over: calls go on at Retell, and their webhooks reach whichever instance is up. */
  stop(): void {}
}

/**
 * What a refused create-phone-call means. 429 (rate limited, or the account's concurrency is used up):
 * try again later. 400 or 422 about the callee's number: that number cannot be called. Anything else
 * (our key, our payment, our from number, Retell's outage) is a failed call, which the retry policy and
 * the campaign's circuit breaker handle.
 */
function refusal(response: Response, message: string): Error {
  const text = `Retell answered ${response.status} to create-phone-call${message ? `: ${message}` : ''}`;
  if (response.status === 429) {
    const header = Number(response.headers.get('retry-after'));
    return new CallRefused(text, 'retry_later', Number.isFinite(header) && header > 0 ? Math.ceil(header) : DEFAULT_RETRY_AFTER_SECONDS);
  }
  if ((response.status === 400 || response.status === 422) && /to_number|destination/i.test(message)) {
    return new CallRefused(text, 'invalid_destination');
  }
  return new Error(text);
}
