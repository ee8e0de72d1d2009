import { CallRefused, type PlaceCall, type Telephony } from '../telephony.js';
import { statusUrl, voiceUrl } from './urls.js';

// The Twilio adapter: places calls through Twilio's Calls API with answering-machine detection. Twilio
// then asks our voice URL what to do once the call is answered, and reports the call's progress to our
// status callback (see callbacks.ts); both find the attempt by the `attempt_id` in their query.

export interface TwilioOptions {
  /** https://api.twilio.com, or a stand-in speaking the same protocol. */
  baseUrl: string;
  accountSid: string;
  authToken: string;
  /** The URL Twilio reaches this service at, without a trailing slash. */
  publicBaseUrl: string;
  /** How long one create-call request may take. */
  timeoutSeconds: number;
}

/** When a 429 names no Retry-After, the refused call is tried again after this long. */
const DEFAULT_RETRY_AFTER_SECONDS = 15;

/** Longest call Twilio lets go on (its default is four hours): the dialer's lease must outlast it. */
export const TWILIO_TIME_LIMIT_SECONDS = 3_600;

const STATUS_EVENTS = ['initiated', 'ringing', 'answered', 'completed'];

/** Twilio's error codes for a 'To' number that is not valid (21211, 21217) or cannot be reached (21214). */
const INVALID_TO = new Set([21211, 21214, 21217]);
const TOO_MANY_REQUESTS = 20429;

export class TwilioTelephony implements Telephony {
  constructor(private readonly options: TwilioOptions) {}

  async placeCall(call: PlaceCall): Promise<{ providerCallId: string }> {
    const { accountSid, authToken, publicBaseUrl } = this.options;
    const form = new URLSearchParams({
      To: call.to,
      From: call.from,
      Url: voiceUrl(publicBaseUrl, call),
      StatusCallback: statusUrl(publicBaseUrl, call),
      StatusCallbackMethod: 'POST',
      // Synchronous detection that waits for a voicemail's greeting to end: the voice URL is asked for
      // TwiML once it is known who answered, in time to leave a message after the beep.
      MachineDetection: 'DetectMessageEnd',
      TimeLimit: String(TWILIO_TIME_LIMIT_SECONDS),
    });
    for (const event of STATUS_EVENTS) form.append('StatusCallbackEvent', event);
    const response = await fetch(new URL(`/2010-04-01/Accounts/${accountSid}/Calls.json`, this.options.baseUrl), {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form.toString(),
      signal: AbortSignal.timeout(this.options.timeoutSeconds * 1000),
    });
    const body = (await response.json().catch(() => null)) as { sid?: unknown; code?: unknown; message?: unknown } | null;
    if (response.ok && typeof body?.sid === 'string' && body.sid) return { providerCallId: body.sid };
    throw refusal(response, typeof body?.code === 'number' ? body.code : null, typeof body?.message === 'string' ? body.message : '');
  }

  /** Nothing to hand over: calls go on at Twilio, and its callbacks reach whichever instance is up. */
  stop(): void {}
}

/**
 * What a refused create-call means. 429, or Twilio's error 20429 (too many requests): try again later.
 * 21211, 21214 or 21217 (the 'To' number is not valid or cannot be reached): that number cannot be
 * called. Anything else (our credentials, our from number, geographic permissions, Twilio's outage) is a
 * failed call, which the retry policy and the campaign's circuit breaker handle.
 */
function refusal(response: Response, code: number | null, message: string): Error {
  const text = `Twilio answered ${response.status} to create-call${code ? ` (error ${code})` : ''}${message ? `: ${message}` : ''}`;
  if (response.status === 429 || code === TOO_MANY_REQUESTS) {
    const header = Number(response.headers.get('retry-after'));
    return new CallRefused(text, 'retry_later', Number.isFinite(header) && header > 0 ? Math.ceil(header) : DEFAULT_RETRY_AFTER_SECONDS);
  }
  if (code !== null && INVALID_TO.has(code)) return new CallRefused(text, 'invalid_destination');
  return new Error(text);
}
