import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { ServiceEnv } from '../../../context.js';
import { ValidationError } from '../../../errors.js';
import { refuseDeepJsonText, refuseUnsafeInput } from '../../../input-safety.js';
import { parseInput } from '../../../validation.js';
import { pendingResultJson } from '../../../dialer/pending-result.js';
import { attemptIdOf, callResultOf, retellCall } from './calls.js';
import { lockEventAttempt, markStarted, recordDelivery, storeResult } from '../../../dialer/store/call-events.js';
import { isUnfinished } from '../../../call-outcomes.js';
import type { CallResult } from '../telephony.js';

// Retell's webhooks: call_started, call_ended and call_analyzed, each carrying the call object. A
// delivery is verified, recorded once (source `retell`, key `call_id:event`) in the same transaction
// that stores what it says on the attempt, and then handed to the dialer, which applies results through
// its one report path. What was stored survives the process: the dialers' sweep applies it when the
// attempt's lease runs out.

export interface RetellWebhookSettings {
  /** The Retell API key that signs webhooks (the one with the webhook badge). */
  key: string;
  /** Largest accepted distance between the signature's timestamp and our clock. */
  toleranceSeconds: number;
  /** How long an ended call that connected waits for its call_analyzed before its end is applied alone. */
  analysisWaitSeconds: number;
}

export const retellEvent = z.object({ event: z.string().min(1).max(64), call: retellCall });
export type RetellEvent = z.output<typeof retellEvent>;

export type RetellEventOutcome = 'applied' | 'duplicate' | 'ignored';

const SIGNATURE = /^v=(\d{1,16}),d=([0-9a-f]{64})$/i;

/** A missing, malformed, wrong or stale `X-Retell-Signature`. */
export class RetellSignatureError extends ValidationError {
  constructor(message: string) {
    super({ 'x-retell-signature': [message] });
  }
}

/**
 * Checks Retell's `X-Retell-Signature` (`v=<unix ms>,d=<hex HMAC-SHA256 of the raw body followed by the
 * timestamp>`, keyed with the webhook key) and returns the body it signs, parsed with `schema`. A bad
 * signature is a RetellSignatureError; a signed body that `schema` refuses, a ValidationError.
 */
export function verifiedRetellBody<S extends z.ZodType>(
  payload: Uint8Array,
  signature: string | undefined,
  settings: RetellWebhookSettings,
  now: Date,
  schema: S,
): z.output<S> {
  const match = SIGNATURE.exec(signature?.trim() ?? '');
  if (!match) throw new RetellSignatureError('Missing or malformed signature.');
  const [, timestamp, digest] = match as unknown as [string, string, string];
  if (Math.abs(now.getTime() - Number(timestamp)) > settings.toleranceSeconds * 1000) {
    throw new RetellSignatureError(`Timestamp outside the tolerance of ${settings.toleranceSeconds} seconds.`);
  }
  const expected = createHmac('sha256', settings.key).update(payload).update(timestamp).digest();
  if (!timingSafeEqual(expected, Buffer.from(digest, 'hex'))) throw new RetellSignatureError('Signature does not match the body.');
  // A signed body is still input: text no column can store (NUL, a lone surrogate) or JSON nested too
  // deep is refused like anywhere else, before the parser or the database sees it.
  const text = Buffer.from(payload).toString('utf8');
  refuseDeepJsonText(text);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw ValidationError.field('body', 'Not JSON.');
  }
  refuseUnsafeInput(body);
  return parseInput(schema, body);
}

/** A verified webhook delivery: see verifiedRetellBody. */
export function verifiedRetellEvent(
  payload: Uint8Array,
  signature: string | undefined,
  settings: RetellWebhookSettings,
  now: Date,
): RetellEvent {
  return verifiedRetellBody(payload, signature, settings, now, retellEvent);
}

const HANDLED = new Set(['call_started', 'call_ended', 'call_analyzed']);

/**
 * Applies a verified event once. `ignored`: an event type we do not use, a call that is not ours, an
 * attempt already final, or an end that its analysis already delivered; nothing changes, except that
 * a delivery for one of our calls is recorded so that its repeats are duplicates.
 */
export async function acceptRetellEvent(env: ServiceEnv, event: RetellEvent, settings: RetellWebhookSettings): Promise<RetellEventOutcome> {
  if (!HANDLED.has(event.event)) return 'ignored';
  const { call } = event;
  const attemptId = attemptIdOf(call);
  const now = env.clock.now();
  const { outcome, due, started } = await env.sql.transaction(
    async (tx): Promise<{ outcome: RetellEventOutcome; due?: CallResult; started?: { campaignId: string; attemptId: string } }> => {
      const attempt = await lockEventAttempt(tx, attemptId, call.call_id);
      if (!attempt || (attempt.providerCallId !== null && attempt.providerCallId !== call.call_id)) return { outcome: 'ignored' };
      if (!(await recordDelivery(tx, 'retell', `${call.call_id}:${event.event}`))) return { outcome: 'duplicate' };
      if (!isUnfinished(attempt.status)) return { outcome: 'ignored' };

      if (event.event === 'call_started') {
        if (attempt.hasResult) return { outcome: 'ignored' };
        await markStarted(tx, attempt.id, call.call_id, now);
        return { outcome: 'applied', started: { campaignId: attempt.campaignId, attemptId: attempt.id } };
      }
      // call_analyzed carries the whole call, so an end arriving after it has nothing to add.
      if (event.event === 'call_ended' && attempt.hasResult) return { outcome: 'ignored' };
      const result = callResultOf(attempt.id, call);
      // A call that connected is analysed by Retell: its end waits (up to the analysis wait) for that.
      const waits = event.event === 'call_ended' && result.durationSeconds > 0 && settings.analysisWaitSeconds > 0;
      const applyAt = waits ? new Date(now.getTime() + settings.analysisWaitSeconds * 1000) : now;
      await storeResult(tx, attempt.id, call.call_id, pendingResultJson(result), applyAt);
      return waits ? { outcome: 'applied' } : { outcome: 'applied', due: result };
    },
  );
  if (due) env.dialer.report(due);
  if (started) env.events.publish({ kind: 'attempts', campaignId: started.campaignId, attemptIds: [started.attemptId] });
  return outcome;
}
