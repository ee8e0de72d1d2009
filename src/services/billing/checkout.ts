import type Stripe from 'stripe';
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { UnavailableError } from '../errors.js';
import { parseInput } from '../validation.js';
import { loadStripe } from './stripe-library.js';
import { CREDIT_CURRENCY } from './stripe.js';

// Buying credits: a Stripe Checkout Session for an amount the customer chooses. The session names the
// customer in `client_reference_id` and `metadata.user_id`; once paid, Stripe's signed
// `checkout.session.completed` credits what it says was paid (applyStripeEvent), once.

/** Where Stripe's API is and where Checkout sends the payer back; src/config.ts fills it from STRIPE_*. */
export interface CheckoutSettings {
  apiKey: string;
  /** `https://api.stripe.com`, or a local stand-in speaking Stripe's protocol. */
  apiBaseUrl: string;
  successUrl: string;
  cancelUrl: string;
}

/** Smallest top-up: below it card fees eat a noticeable share, and Stripe refuses charges under 50 cents. */
export const MIN_CHECKOUT_CENTS = 500;
/** Largest top-up through Checkout; more is arranged by invoice. */
export const MAX_CHECKOUT_CENTS = 1_000_000;

// Named as the one argument of GraphQL's createCreditCheckout, as setLowBalanceThreshold names `cents`.
const checkoutInput = z.object({
  amountCents: z.int().min(MIN_CHECKOUT_CENTS).max(MAX_CHECKOUT_CENTS),
});

export interface CreditCheckout {
  id: string;
  /** The Stripe-hosted page the payer opens. */
  url: string;
  amountCents: number;
  currency: string;
  expiresAt: Date;
}

/** One client per settings object: it keeps its connections open between requests. */
const clients = new WeakMap<CheckoutSettings, Stripe>();

async function clientOf(settings: CheckoutSettings): Promise<Stripe> {
  let client = clients.get(settings);
  if (!client) {
    const { default: Stripe } = await loadStripe();
    const base = new URL(settings.apiBaseUrl);
    const protocol = base.protocol === 'http:' ? 'http' : 'https';
    client = new Stripe(settings.apiKey, {
      host: base.hostname,
      port: Number(base.port || (protocol === 'http' ? 80 : 443)),
      protocol,
      maxNetworkRetries: 1,
      timeout: 10_000,
    });
    clients.set(settings, client);
  }
  return client;
}

/**
 * Opens a Checkout Session in which the caller pays `amountCents` (US dollars) for as many cents of
 * purchased credits. Refused with field errors outside MIN_CHECKOUT_CENTS..MAX_CHECKOUT_CENTS, and as
 * UNAVAILABLE when the server has no Stripe key or Stripe cannot be reached or refuses.
 */
export async function createCreditCheckout(ctx: ServiceContext, amountCents: unknown): Promise<CreditCheckout> {
  const input = parseInput(checkoutInput, { amountCents });
  const settings = ctx.settings.checkout;
  if (!settings) throw new UnavailableError('Buying credits is not configured on this server (STRIPE_API_KEY).');
  let session: Stripe.Checkout.Session;
  try {
    session = await (
      await clientOf(settings)
    ).checkout.sessions.create({
      mode: 'payment',
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: CREDIT_CURRENCY,
            unit_amount: input.amountCents,
            product_data: { name: 'Call credits' },
          },
        },
      ],
      client_reference_id: ctx.user.id,
      metadata: { user_id: ctx.user.id },
      payment_intent_data: { metadata: { user_id: ctx.user.id } },
      success_url: settings.successUrl,
      cancel_url: settings.cancelUrl,
    });
  } catch (error) {
    if (!(error instanceof (await loadStripe()).default.errors.StripeError)) throw error;
    ctx.log.error({ err: error, stripeRequestId: error.requestId }, 'stripe refused to create a checkout session');
    throw new UnavailableError('The payment provider could not open a checkout; try again later.');
  }
  if (!session.url) throw new UnavailableError('The payment provider opened a checkout without a payment page; try again later.');
  return {
    id: session.id,
    url: session.url,
    amountCents: session.amount_total ?? input.amountCents,
    currency: session.currency ?? CREDIT_CURRENCY,
    expiresAt: new Date(session.expires_at * 1000),
  };
}
