import { z } from 'zod';
import type { Sentiment } from '../../../../generated/prisma/client.js';
import { jsonObject } from '../../../validation.js';
import type { CallOutcome } from '../../../call-outcomes.js';
import type { CallResult } from '../telephony.js';

// Retell's call object (as its webhooks carry it) and what it means for our attempt. Only the fields the
// dialer uses are read; everything else Retell adds is ignored.

export const retellCall = z.object({
  call_id: z.string().min(1).max(128),
  call_status: z.string().nullish(),
  disconnection_reason: z.string().nullish(),
  duration_ms: z.number().min(0).nullish(),
  start_timestamp: z.number().nullish(),
  end_timestamp: z.number().nullish(),
  transcript: z.string().nullish(),
  recording_url: z.string().nullish(),
  metadata: z.unknown().optional(),
  call_analysis: z
    .looseObject({
      call_summary: z.string().nullish(),
      user_sentiment: z.string().nullish(),
      call_successful: z.boolean().nullish(),
      in_voicemail: z.boolean().nullish(),
      custom_analysis_data: jsonObject.nullish(),
    })
    .nullish(),
});
export type RetellCall = z.output<typeof retellCall>;

/**
 * Retell's disconnection reasons that are not a failure. Every other reason (dial_failed, telephony and
 * SIP errors, marked_as_spam, scam_detected, payment and concurrency limits, error_*) is a failed call;
 * a reason Retell adds later falls back on call_status.
 */
const OUTCOME_OF_REASON: Record<string, CallOutcome> = {
  dial_no_answer: 'no_answer',
  dial_busy: 'busy',
  // A declined call is a busy signal to the caller: the person may take a later one.
  user_declined: 'busy',
  invalid_destination: 'invalid_number',
  voicemail_reached: 'voicemail',
  ivr_reached: 'ivr',
  user_hangup: 'human',
  agent_hangup: 'human',
  call_transfer: 'human',
  transfer_bridged: 'human',
  transfer_cancelled: 'human',
  inactivity: 'human',
  max_duration_reached: 'human',
  manual_stopped: 'human',
  call_take_over: 'human',
};

const FAILED_REASONS = new Set([
  'dial_failed',
  'telephony_provider_permission_denied',
  'telephony_provider_unavailable',
  'sip_routing_error',
  'marked_as_spam',
  'scam_detected',
  'no_valid_payment',
  'concurrency_limit_reached',
  'no_concurrency_fallback',
  'registered_call_timeout',
]);

const SENTIMENTS: Record<string, Sentiment> = { Positive: 'positive', Neutral: 'neutral', Negative: 'negative', Unknown: 'unknown' };

/** An explicit offset is required: a bare local time would be read in whatever zone the server runs in. */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/** Our attempt id, put in the call's metadata when it was created. */
export function attemptIdOf(call: RetellCall): string | null {
  const id = (call.metadata as { attempt_id?: unknown } | null | undefined)?.attempt_id;
  return typeof id === 'string' && z.guid().safeParse(id).success ? id.toLowerCase() : null;
}

/**
 * The result of a call as far as `call` tells it: the end alone (call_ended) or the end with the
 * analysis (call_analyzed). See docs/decisions.md (Retell) for the conventions of custom analysis data.
 */
export function callResultOf(attemptId: string, call: RetellCall): CallResult {
  const analysis = call.call_analysis ?? undefined;
  const custom = analysis?.custom_analysis_data ?? {};
  const reason = call.disconnection_reason ?? '';
  const outcome = outcomeOf(call, custom);
  const connected = call.call_status !== 'not_connected';
  const appointmentAt = appointmentTime(custom.appointment_time);
  const callbackAt = appointmentTime(custom.callback_time);
  return {
    attemptId,
    outcome,
    durationSeconds: connected ? durationSeconds(call) : 0,
    messageLeft: outcome === 'voicemail' ? leavesMessage(call) : undefined,
    summary: analysis?.call_summary ?? undefined,
    sentiment: analysis?.user_sentiment ? SENTIMENTS[analysis.user_sentiment] : undefined,
    disconnectReason: reason || undefined,
    recordingUrl: call.recording_url ?? undefined,
    transcript: call.transcript ?? undefined,
    doNotCall: custom.do_not_call === true || custom.do_not_call === 'true' || undefined,
    callbackAt: callbackAt ?? undefined,
    appointment: appointmentAt
      ? {
          scheduledAt: appointmentAt,
          notes: typeof custom.appointment_notes === 'string' ? custom.appointment_notes : (analysis?.call_summary ?? ''),
        }
      : undefined,
    analysis,
  };
}

/**
 * Retell flags voicemail in the analysis, and has no reason of its own for a call screener: the agent's
 * custom analysis reports one as `call_screened` (docs/decisions.md, Retell).
 */
function outcomeOf(call: RetellCall, custom: Record<string, unknown>): CallOutcome {
  const reason = call.disconnection_reason ?? '';
  const known = OUTCOME_OF_REASON[reason] ?? (FAILED_REASONS.has(reason) || reason.startsWith('error_') ? 'failed' : undefined);
  const outcome = known ?? (call.call_status === 'ended' ? 'human' : 'failed');
  if (outcome !== 'human') return outcome;
  if (call.call_analysis?.in_voicemail) return 'voicemail';
  return custom.call_screened === true || custom.call_screened === 'true' ? 'call_screening' : 'human';
}

/** Whether the call was asked to leave a message on voicemail: the dialer says so in the call's metadata. */
function leavesMessage(call: RetellCall): boolean {
  return (call.metadata as { leave_voicemail?: unknown } | null | undefined)?.leave_voicemail === true;
}

/** Whole seconds, a started second counting as one (as calls are billed). */
function durationSeconds(call: RetellCall): number {
  const ms = call.duration_ms ?? (call.start_timestamp && call.end_timestamp ? call.end_timestamp - call.start_timestamp : 0);
  return Math.max(0, Math.ceil(ms / 1000));
}

function appointmentTime(value: unknown): Date | null {
  if (typeof value !== 'string' || !ISO_WITH_OFFSET.test(value.trim())) return null;
  const at = new Date(value.trim());
  return Number.isNaN(at.getTime()) ? null : at;
}
