import { z } from 'zod';
import type { PlaceCall } from '../telephony.js';

// The two URLs a Twilio call is given: the voice URL, which Twilio asks for TwiML once the call is
// answered (and the machine detection is done), and the status callback. Each carries in its query what
// our webhooks need to know about the call; Twilio signs the URL with its query, so what comes back
// there is what we put in.

export const TWILIO_VOICE_PATH = '/webhooks/twilio/voice';
export const TWILIO_STATUS_PATH = '/webhooks/twilio/status';

/** `https://calls.example.com` (no trailing slash) + path + query, as Twilio will request it. */
function ourUrl(publicBaseUrl: string, path: string, query: Record<string, string | null>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== null) params.append(name, value);
  return `${publicBaseUrl}${path}?${params.toString()}`;
}

/** Where Twilio gets the call's TwiML: the attempt (whose agent a person is connected to), and the message to leave, if any. */
export function voiceUrl(publicBaseUrl: string, call: PlaceCall): string {
  return ourUrl(publicBaseUrl, TWILIO_VOICE_PATH, {
    attempt_id: call.attemptId,
    voicemail_message: call.voicemailMessage,
  });
}

/** Where Twilio reports the call's progress: the attempt, and whether a message is to be left. */
export function statusUrl(publicBaseUrl: string, call: PlaceCall): string {
  return ourUrl(publicBaseUrl, TWILIO_STATUS_PATH, {
    attempt_id: call.attemptId,
    leave_voicemail: call.voicemailMessage === null ? null : 'true',
  });
}

/** A rendered message: the campaign's (up to 1,000 characters) with the contact's fields filled in. */
const MESSAGE_MAX = 8_000;

const attemptId = z.guid().transform((id) => id.toLowerCase());

/** The voice URL's query, read back. */
export const voiceQuery = z.object({
  attempt_id: attemptId,
  voicemail_message: z.string().min(1).max(MESSAGE_MAX).optional(),
});
export type VoiceQuery = z.output<typeof voiceQuery>;

/** The status callback's query, read back; a call placed without our query finds its attempt by CallSid. */
export const statusQuery = z.object({
  attempt_id: attemptId.optional(),
  leave_voicemail: z.literal('true').optional(),
});
export type StatusQuery = z.output<typeof statusQuery>;
