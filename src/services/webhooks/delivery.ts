import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS } from '@opentelemetry/semantic-conventions';
import type { SqlSession } from '../../db/sql.js';
import type { ServiceEnv } from '../context.js';
import { inJobSpan, tracingOn } from '../../ops/tracing.js';
import { retryOnConflict } from '../dialer/retry.js';
import { send, type SendOutcome } from './send.js';
import type { WebhookEventType } from './events.js';
import { signatureHeaders } from './signing.js';
import * as store from './store.js';

// Delivering one event to one endpoint, attempt by attempt. Each attempt is a job (src/jobs/webhooks.ts);
// after a failed one, the next is queued in the transaction that records it, at an exponentially growing
// delay, until the delivery has been retried for the whole retry window; then it is given up
// (dead-lettered: `failed` in the log, where replay sends it again). An endpoint that answers 410 Gone
// is disabled at once; one at which every attempt has failed for `disableAfterMs` is disabled too; both
// with a `webhook_endpoint.disabled` event to the customer's other endpoints.

export interface DeliveryOptions {
  /** How long a receiver may take to answer. */
  timeoutMs: number;
  /** The delay before the first retry; each later one doubles it... */
  retryBaseMs: number;
  /** ...up to this. */
  retryMaxDelayMs: number;
  /** Retries go on until at least this long after the delivery was made. */
  retryWindowMs: number;
  /** An endpoint whose every attempt failed for this long is disabled. */
  disableAfterMs: number;
}

const HOUR = 3_600_000;

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = {
  timeoutMs: 10_000,
  retryBaseMs: 5_000,
  retryMaxDelayMs: 6 * HOUR,
  retryWindowMs: 24 * HOUR,
  disableAfterMs: 5 * 24 * HOUR,
};

/** What a delivery becomes after an attempt. */
export interface Verdict {
  state: 'succeeded' | 'pending' | 'failed';
  nextAttemptAt: Date | null;
  /** The endpoint's new failing-since (null: healthy). */
  failingSince: Date | null;
  disable: 'gone' | 'failing' | null;
}

/**
 * The rules, as a function of what happened: a 2xx succeeds; a 410 disables the endpoint; any other
 * failure is tried again after `base * 2^(attempt - 1)` (capped, with 20% jitter either way) when the
 * attempt began inside the retry window, and disables the endpoint once it has failed for too long.
 * The window is judged by when the attempt began, the time the log records for it, so that the last
 * attempt of a delivery given up always shows as made after the window, however long it took.
 */
export function verdictOf(
  outcome: SendOutcome,
  delivery: { attempts: number; createdAt: Date; failingSince: Date | null; attemptedAt: Date },
  options: DeliveryOptions,
  now: Date,
  random: () => number = Math.random,
): Verdict {
  if (outcome.error === null) return { state: 'succeeded', nextAttemptAt: null, failingSince: null, disable: null };
  const failingSince = delivery.failingSince ?? now;
  if (outcome.statusCode === 410) return { state: 'failed', nextAttemptAt: null, failingSince, disable: 'gone' };
  const disable = now.getTime() - failingSince.getTime() >= options.disableAfterMs ? 'failing' : null;
  if (disable || delivery.attemptedAt.getTime() - delivery.createdAt.getTime() >= options.retryWindowMs) {
    return { state: 'failed', nextAttemptAt: null, failingSince, disable };
  }
  const delay = Math.min(options.retryBaseMs * 2 ** Math.min(delivery.attempts - 1, 40), options.retryMaxDelayMs);
  const jittered = delay * (0.8 + 0.4 * random());
  return { state: 'pending', nextAttemptAt: new Date(now.getTime() + jittered), failingSince, disable: null };
}

/** Queues the next attempt of a delivery inside the transaction that records the last one. */
export type QueueAttempt = (tx: SqlSession, messageId: string, attempt: number, at: Date) => Promise<void>;

/**
 * Makes attempt number `attempt` of a delivery. A job that comes again after its attempt was recorded
 * (its worker died before the job was marked done) does nothing; one whose attempt was made but not
 * recorded makes it again: at least once. Resolves with the state the attempt left the delivery in, or
 * null when it recorded nothing.
 */
export async function attemptDelivery(
  env: ServiceEnv,
  options: DeliveryOptions,
  messageId: string,
  attempt: number,
  queueNext: QueueAttempt,
): Promise<Verdict['state'] | null> {
  const delivery = await store.readOutgoing(env.sql, messageId);
  if (!delivery || delivery.state !== 'pending' || delivery.attempts >= attempt) return null;
  if (!delivery.active) {
    return (await store.giveUp(env.sql, messageId, 'The endpoint is disabled or deleted.')) ? 'failed' : null;
  }
  const at = env.clock.now();
  const body = JSON.stringify(delivery.payload);
  const secrets = [delivery.secret];
  if (delivery.previousSecret && delivery.previousSecretExpiresAt && delivery.previousSecretExpiresAt > at) {
    secrets.push(delivery.previousSecret);
  }
  const outcome = await attemptSpan(delivery, attempt, () =>
    send(delivery.url, signatureHeaders(delivery.eventId, at, body, secrets), body, {
      timeoutMs: options.timeoutMs,
      allowPrivateAddresses: env.settings.webhooks.allowPrivateUrls,
    }),
  );
  return retryOnConflict(() =>
    env.sql.transaction(async (tx) => {
      const current = await store.lockOutgoing(tx, messageId);
      if (!current || current.state !== 'pending' || current.attempts >= attempt) return null;
      const now = env.clock.now();
      const verdict = verdictOf(
        outcome,
        { attempts: attempt, createdAt: current.createdAt, failingSince: current.failingSince, attemptedAt: at },
        options,
        now,
      );
      await store.recordAttempt(tx, messageId, {
        state: verdict.state,
        attempts: attempt,
        statusCode: outcome.statusCode,
        latencyMs: outcome.latencyMs,
        error: outcome.error,
        at,
        nextAttemptAt: verdict.nextAttemptAt,
      });
      await store.setFailingSince(tx, current.endpointId, verdict.failingSince);
      if (verdict.disable && (await store.disableEndpoint(tx, current.endpointId, verdict.disable))) {
        await store.emit(tx, [
          {
            type: 'webhook_endpoint.disabled',
            userId: current.userId,
            data: { endpoint_id: current.endpointId, url: current.url, reason: verdict.disable },
          },
        ]);
      }
      if (verdict.nextAttemptAt) await queueNext(tx, messageId, attempt + 1, verdict.nextAttemptAt);
      return verdict.state;
    }),
  );
}

/** The attempt as a client span: which endpoint, which event, and what the receiver answered. */
function attemptSpan(delivery: store.Outgoing, attempt: number, post: () => Promise<SendOutcome>): Promise<SendOutcome> {
  if (!tracingOn()) return post();
  const attributes = {
    'callflow.webhook.endpoint_id': delivery.endpointId,
    'callflow.webhook.event_type': (delivery.payload as { type: WebhookEventType }).type,
    'callflow.webhook.attempt': attempt,
    [ATTR_HTTP_REQUEST_METHOD]: 'POST',
    [ATTR_SERVER_ADDRESS]: new URL(delivery.url).hostname,
  };
  return inJobSpan(
    'webhook.deliver',
    attributes,
    async (span) => {
      const outcome = await post();
      if (outcome.statusCode !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.statusCode);
      span.setAttribute('callflow.webhook.outcome', outcome.error === null ? 'delivered' : 'failed');
      if (outcome.error !== null) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
      return outcome;
    },
    { kind: SpanKind.CLIENT },
  );
}
