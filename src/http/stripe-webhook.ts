import type { Context } from 'hono';
import { readRawBody } from './body.js';
import { errorResponse, json } from './errors.js';
import { applyStripeEvent, verifyStripeEvent } from '../services/billing/stripe.js';
import type { LedgerContext } from '../services/billing/ledger.js';
import { scopeOf } from './request-scope.js';

export interface StripeWebhookDeps extends LedgerContext {
  maxBodyBytes: number;
  secret: string | undefined;
}

/**
 * POST /webhooks/stripe: no bearer token, the signature is the credential. Answers 200 for every event
 * it verified (applied, repeated, of no interest, or a payment that can never be credited), 400 for a
 * bad signature or a payment whose user is missing or unknown, so that Stripe shows and retries those.
 */
export function stripeWebhook(deps: StripeWebhookDeps) {
  return async (c: Context): Promise<Response> => {
    const log = scopeOf(c).log.child({ webhook: 'stripe' });
    // 503 rather than 404 so that Stripe keeps retrying until the secret is configured.
    if (!deps.secret) return json(503, { detail: 'Stripe webhooks are not configured (STRIPE_WEBHOOK_SECRET).' });
    try {
      const payload = await readRawBody(c.req.raw, deps.maxBodyBytes);
      const event = await verifyStripeEvent(payload, c.req.header('stripe-signature'), deps.secret, deps.clock.now());
      const result = await applyStripeEvent({ ...deps, log }, event);
      log.info({ eventId: event.id, type: event.type, result }, 'stripe event received');
      return json(200, { received: true, result });
    } catch (error) {
      return errorResponse(error, log);
    }
  };
}
