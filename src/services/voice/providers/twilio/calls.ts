import { z } from 'zod';
import type { CallOutcome } from '../../../call-outcomes.js';
import type { CallResult } from '../telephony.js';

// Twilio's reports on a call (the form parameters of its status callbacks and of its request for the
// voice URL) and what they mean for our attempt. Only the parameters the dialer uses are read;
// everything else Twilio sends is ignored.

const digits = (max: number) => z.string().regex(new RegExp(`^\\d{1,${max}}$`), { error: 'A valid integer is required.' });

export const twilioCall = z.object({
  CallSid: z.string().regex(/^CA[0-9a-f]{32}$/i, { error: 'Must be a Twilio call SID (CA and 32 hex digits).' }),
  CallStatus: z.string().min(1).max(32),
  /** Seconds from answer to hang-up, on the report of a completed call. */
  CallDuration: digits(9).optional(),
  /** The machine detection's verdict: human, machine_start, machine_end_beep, ..., fax, unknown. */
  AnsweredBy: z.string().min(1).max(32).optional(),
  SipResponseCode: digits(3).optional(),
  ErrorCode: digits(6).optional(),
});
export type TwilioCall = z.output<typeof twilioCall>;

/** Statuses after which nothing more happens to the call. */
const FINAL_STATUSES = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);

/** The call was answered (`answered` is the event's name; the status it reports is `in-progress`). */
export const isStarted = (status: string) => status === 'in-progress' || status === 'answered';
export const isFinal = (status: string) => FINAL_STATUSES.has(status);

/** What the machine detection says answered. Anything else (`unknown`, nothing, a value Twilio adds later) is taken for a person. */
export type Answerer = 'human' | 'machine_at_beep' | 'machine' | 'fax';

export function answererOf(answeredBy: string | undefined): Answerer {
  if (answeredBy?.startsWith('machine_end_')) return 'machine_at_beep';
  if (answeredBy === 'machine_start') return 'machine';
  if (answeredBy === 'fax') return 'fax';
  return 'human';
}

/**
 * SIP answers and Twilio error codes that say the number cannot be called: 404 Not Found, 410 Gone,
 * 484 Address Incomplete, 604 Does Not Exist Anywhere; 13223 and 13224 (invalid phone number), 21211
 * (invalid 'To' number).
 */
const INVALID_SIP = new Set(['404', '410', '484', '604']);
const INVALID_ERRORS = new Set(['13223', '13224', '21211']);

/**
 * The result of a call from the report of its final status. `leaveVoicemail`: the call was told to leave
 * a message on a voicemail, which the voice URL then did once the machine detection heard the greeting end.
 */
export function callResultOf(attemptId: string, call: TwilioCall, leaveVoicemail: boolean): CallResult {
  const answerer = answererOf(call.AnsweredBy);
  const outcome = outcomeOf(call, answerer);
  return {
    attemptId,
    outcome,
    // Only an answered call has a duration: ringing is never billed.
    durationSeconds: call.CallStatus === 'completed' ? Number(call.CallDuration ?? 0) : 0,
    messageLeft: outcome === 'voicemail' ? leaveVoicemail && answerer === 'machine_at_beep' : undefined,
    disconnectReason: reasonOf(call),
  };
}

function outcomeOf(call: TwilioCall, answerer: Answerer): CallOutcome {
  switch (call.CallStatus) {
    case 'completed':
      if (answerer === 'fax') return 'failed';
      return answerer === 'human' ? 'human' : 'voicemail';
    case 'busy':
      return 'busy';
    case 'no-answer':
      return 'no_answer';
    case 'failed':
      return INVALID_SIP.has(call.SipResponseCode ?? '') || INVALID_ERRORS.has(call.ErrorCode ?? '') ? 'invalid_number' : 'failed';
    default:
      // canceled, and a final status Twilio adds later.
      return 'failed';
  }
}

/** Twilio's words for how the call ended: its status, what answered a completed one, or the code a failed one gave. */
function reasonOf(call: TwilioCall): string {
  if (call.CallStatus === 'completed') return call.AnsweredBy && answererOf(call.AnsweredBy) !== 'human' ? call.AnsweredBy : 'completed';
  if (call.CallStatus === 'failed' && call.SipResponseCode) return `sip_${call.SipResponseCode}`;
  if (call.CallStatus === 'failed' && call.ErrorCode) return `error_${call.ErrorCode}`;
  return call.CallStatus.replaceAll('-', '_');
}
