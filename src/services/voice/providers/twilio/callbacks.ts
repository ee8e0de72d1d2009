import type { z } from 'zod';
import type { ServiceEnv } from '../../../context.js';
import { NON_FIELD, UnsupportedMediaTypeError, ValidationError } from '../../../errors.js';
import { refuseUnsafeInput } from '../../../input-safety.js';
import { parseInput } from '../../../validation.js';
import { pendingResultJson } from '../../../dialer/pending-result.js';
import { lockEventAttempt, markStarted, recordDelivery, storeResult } from '../../../dialer/store/call-events.js';
import { isUnfinished } from '../../../call-outcomes.js';
import type { CallResult } from '../telephony.js';
import { answererOf, callResultOf, isFinal, isStarted, twilioCall, type TwilioCall } from './calls.js';
import { streamGrant } from '../../runtime/config.js';
import { verifyTwilioSignature, type FormParam } from './signature.js';
import { twimlFor } from './twiml.js';
import type { StatusQuery, VoiceQuery } from './urls.js';

// Twilio's requests to us: the voice URL, answered with TwiML, and the status callbacks. A request is
// verified (its signature covers our URL, query included, and its form), then a status is recorded
// once (source `twilio`, key `CallSid:CallStatus`) in the same transaction that stores what it says on
// the attempt, and a final one is handed to the dialer, which applies results through its one report
// path. What was stored survives the process: the dialers' sweep applies it if the hand-over is lost.

export interface TwilioWebhookSettings {
  /** The account's auth token, which signs Twilio's requests. */
  authToken: string;
  /** The URL Twilio reaches this service at (PUBLIC_BASE_URL), without a trailing slash. */
  publicBaseUrl: string;
  /** wss:// URL of the voice agent runtime that a person who answers is connected to. */
  agentStreamUrl: string;
}

export interface TwilioRequest<Q> {
  call: TwilioCall;
  query: Q;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Checks `X-Twilio-Signature` over `PUBLIC_BASE_URL + path + search` and the form body, and returns the
 * call and our query it signs. Anything but a form, a missing or wrong signature, or signed parameters
 * that are not what Twilio sends (text no column can store, a repeated or overlong value, no CallSid)
 * is a ValidationError (or a 415), and nothing is read further.
 */
export function verifiedTwilioRequest<Q extends z.ZodType>(
  settings: TwilioWebhookSettings,
  request: { path: string; search: string; contentType: string | undefined; body: Uint8Array; signature: string | undefined },
  querySchema: Q,
): TwilioRequest<z.output<Q>> {
  const mediaType = (request.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/x-www-form-urlencoded') throw new UnsupportedMediaTypeError(mediaType || 'none');
  let text: string;
  try {
    text = utf8.decode(request.body);
  } catch {
    throw ValidationError.field(NON_FIELD, 'The body is not UTF-8.');
  }
  const form = [...new URLSearchParams(text)] as FormParam[];
  verifyTwilioSignature(settings.authToken, `${settings.publicBaseUrl}${request.path}${request.search}`, form, request.signature);
  // Signed parameters are still input: text no column can store (NUL, a lone surrogate) is refused.
  const fields = asObject(form);
  const query = asObject([...new URLSearchParams(request.search)]);
  refuseUnsafeInput(fields);
  refuseUnsafeInput(query);
  return { call: parseInput(twilioCall, fields), query: parseInput(querySchema, query) };
}

/** A repeated name becomes a list, which no field we read accepts. */
function asObject(params: readonly FormParam[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of params) {
    const seen = out[name];
    out[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return out;
}

/** The TwiML that answers Twilio's request for the voice URL; a person gets the call's agent and a token for its configuration. */
export async function answerTwilioCall(
  env: ServiceEnv,
  request: TwilioRequest<VoiceQuery>,
  settings: TwilioWebhookSettings,
): Promise<string> {
  const { call, query } = request;
  const grant = answererOf(call.AnsweredBy) === 'human' ? await streamGrant(env, query.attempt_id, call.CallSid) : undefined;
  if (answererOf(call.AnsweredBy) === 'human' && !grant) {
    env.log.warn({ attemptId: query.attempt_id, callSid: call.CallSid }, 'twilio call answered for no call in flight; hung up');
  }
  return twimlFor(call.AnsweredBy, query, settings.agentStreamUrl, grant);
}

export type TwilioStatusOutcome = 'applied' | 'duplicate' | 'ignored';

/**
 * Applies a verified status callback once. `ignored`: a status we do not use (queued, initiated,
 * ringing), a call that is not ours, an attempt already final or already holding a result; nothing
 * changes, except that a delivery for one of our calls is recorded so that its repeats are duplicates.
 */
export async function acceptTwilioStatus(env: ServiceEnv, request: TwilioRequest<StatusQuery>): Promise<TwilioStatusOutcome> {
  const { call, query } = request;
  const started = isStarted(call.CallStatus);
  if (!started && !isFinal(call.CallStatus)) return 'ignored';
  const now = env.clock.now();
  const { outcome, due, announce } = await env.sql.transaction(
    async (tx): Promise<{ outcome: TwilioStatusOutcome; due?: CallResult; announce?: { campaignId: string; attemptId: string } }> => {
      const attempt = await lockEventAttempt(tx, query.attempt_id ?? null, call.CallSid);
      if (!attempt || (attempt.providerCallId !== null && attempt.providerCallId !== call.CallSid)) return { outcome: 'ignored' };
      if (!(await recordDelivery(tx, 'twilio', `${call.CallSid}:${call.CallStatus}`))) return { outcome: 'duplicate' };
      if (!isUnfinished(attempt.status) || attempt.hasResult) return { outcome: 'ignored' };
      if (started) {
        await markStarted(tx, attempt.id, call.CallSid, now);
        return { outcome: 'applied', announce: { campaignId: attempt.campaignId, attemptId: attempt.id } };
      }
      const result = callResultOf(attempt.id, call, query.leave_voicemail === 'true');
      await storeResult(tx, attempt.id, call.CallSid, pendingResultJson(result), now);
      return { outcome: 'applied', due: result };
    },
  );
  if (due) env.dialer.report(due);
  if (announce) env.events.publish({ kind: 'attempts', campaignId: announce.campaignId, attemptIds: [announce.attemptId] });
  return outcome;
}
