import { z } from 'zod';
import { loadStripe } from './stripe-library.js';
import { NON_FIELD, ValidationError } from '../errors.js';
import { jsonObject, parseInput, uuid } from '../validation.js';
import { moveMoney, openAccount, type LedgerContext } from './ledger.js';
import { userExists } from '../users/store.js';
import * as store from './store.js';

// Top-ups paid through Stripe. A payment names the user it is for in `metadata.user_id` (of the Checkout
// Session, or of the invoice); credits are US-dollar cents.

/** The currency of every credit account. */
export const CREDIT_CURRENCY = 'usd';

/** Largest distance, either way, between a signature's timestamp and our clock (Stripe's default). */
const TOLERANCE_SECONDS = 300;

const stripeId = z.string().regex(/^\w{1,255}$/, { error: 'Must be a Stripe id.' });
const metadata = jsonObject.nullish();

/** What every event carries. A signed body without it was not written by Stripe. */
const eventSchema = z.looseObject({ id: stripeId, type: z.string(), data: z.looseObject({ object: jsonObject }) });

export type StripeEvent = z.output<typeof eventSchema>;

const eventAbout = <S extends z.ZodType>(object: S) => z.looseObject({ data: z.looseObject({ object }) });

// Only the fields that are stored are checked here; amount and currency are judged in applyStripeEvent.
const checkoutSessionEvent = eventAbout(z.looseObject({ id: stripeId, metadata }));
const invoiceEvent = eventAbout(
  z.looseObject({
    id: stripeId,
    metadata,
    number: z
      .string()
      .regex(/^[\x20-\x7e]{1,255}$/, { error: 'Must be an invoice number.' })
      .nullish(),
    hosted_invoice_url: z
      .string()
      .regex(/^https:\/\/[\x21-\x7e]{1,2000}$/, { error: 'Must be an https link.' })
      .nullish(),
  }),
);

/**
 * Verifies the `Stripe-Signature` header over the body exactly as received, and reads the event. Stripe's
 * library refuses only timestamps too far in the past; one far ahead is refused here, or a delivery
 * signed in advance could be replayed for as long as its timestamp is ahead of our clock.
 */
export async function verifyStripeEvent(
  payload: Uint8Array,
  signature: string | undefined,
  secret: string,
  now: Date,
): Promise<StripeEvent> {
  const { default: Stripe } = await loadStripe();
  let event: unknown;
  try {
    event = Stripe.webhooks.constructEvent(payload, signature ?? '', secret, TOLERANCE_SECONDS, undefined, now.getTime());
  } catch (error) {
    if (error instanceof SyntaxError) throw ValidationError.field(NON_FIELD, `JSON parse error - ${error.message}`);
    throw ValidationError.field('stripe-signature', (error as Error).message);
  }
  // Written so that a timestamp that is not a number is refused too.
  if (!(signedAt(signature!) <= now.getTime() / 1000 + TOLERANCE_SECONDS)) {
    throw ValidationError.field('stripe-signature', 'Timestamp outside the tolerance zone');
  }
  return parseInput(eventSchema, event);
}

/** The header's `t=`, read as Stripe's library reads it when it checks the signature (the last one counts). */
function signedAt(header: string): number {
  const stamp = header
    .split(',')
    .map((item) => item.split('='))
    .filter(([key]) => key === 't')
    .at(-1);
  return parseInt(stamp?.[1] ?? '', 10);
}

interface Payment {
  metadata: Record<string, unknown> | null | undefined;
  /** As the event gives it: credited only when it is a positive whole number of cents. */
  amount: unknown;
  currency: unknown;
  externalId: string;
  invoiceUrl: string | null;
  description: string;
}

/**
 * The payment an event reports, or null when it reports none to credit. A Checkout Session that created
 * an invoice (subscriptions, or invoice creation turned on) is left to that invoice's `invoice.paid`, so
 * each payment is credited from exactly one event, the one that carries its invoice link.
 */
function paymentOf(event: StripeEvent): Payment | null {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = parseInput(checkoutSessionEvent, event).data.object;
      if (session.payment_status !== 'paid' || session.invoice) return null;
      return {
        metadata: session.metadata,
        amount: session.amount_total,
        currency: session.currency,
        externalId: session.id,
        invoiceUrl: null,
        description: 'Credit top-up (Stripe Checkout)',
      };
    }
    case 'invoice.paid': {
      const invoice = parseInput(invoiceEvent, event).data.object;
      return {
        metadata: invoice.metadata,
        amount: invoice.amount_paid,
        currency: invoice.currency,
        externalId: invoice.id,
        invoiceUrl: invoice.hosted_invoice_url ?? null,
        description: `Credit top-up (Stripe invoice ${invoice.number ?? invoice.id})`,
      };
    }
    default:
      return null;
  }
}

/** Cents as Stripe writes them: a JSON integer. A string, a fraction or a negative is no amount to credit. */
function isPositiveCents(amount: unknown): amount is number {
  return typeof amount === 'number' && Number.isSafeInteger(amount) && amount > 0;
}

export type StripeEventOutcome = 'applied' | 'duplicate' | 'ignored';

/**
 * Credits a paid payment as a `top_up`, once: the event id is recorded with the credit in one
 * transaction, and the payment's id is unique in the ledger, so a repeated or concurrent delivery (or a
 * second event about the same payment) changes nothing. The payment is looked for once its account is
 * locked: a concurrent credit of it has then committed, and the look, a statement of its own, sees it.
 *
 * A payment whose amount or currency can never be credited is acknowledged as `ignored` with a warning,
 * since a redelivery would say the same forever. One whose user is missing or unknown is refused with
 * field errors, recording nothing, so Stripe shows the failure and a redelivery after the fix succeeds.
 */
export async function applyStripeEvent(ctx: LedgerContext, event: StripeEvent): Promise<StripeEventOutcome> {
  const payment = paymentOf(event);
  if (!payment) return 'ignored';
  const { amount, currency } = payment;
  const ignore = (reason: string) => {
    ctx.log.warn(
      { eventId: event.id, type: event.type, paymentId: payment.externalId, amount, currency },
      `stripe payment ignored: ${reason}`,
    );
    return 'ignored' as const;
  };
  if (!isPositiveCents(amount)) return ignore('the amount is not a positive whole number of cents');
  if (currency !== CREDIT_CURRENCY) return ignore(`the currency is not ${CREDIT_CURRENCY}`);
  const userId = uuid.safeParse(payment.metadata?.user_id);
  if (!userId.success) throw ValidationError.field('data.object.metadata.user_id', 'Must be the UUID of the user to credit.');
  const user = userId.data.toLowerCase();
  if (!(await userExists(ctx.db, user))) throw ValidationError.field('data.object.metadata.user_id', 'No user has this id.');

  return ctx.sql.transaction(async (tx) => {
    if (!(await store.claimDelivery(tx, 'stripe', event.id))) return 'duplicate';
    const accounts = await openAccount(tx, ctx.clock, user);
    if (await store.paymentCredited(tx, payment.externalId)) return 'duplicate';
    await moveMoney(tx, ctx.clock, accounts, [
      {
        userId: user,
        kind: 'top_up',
        purchasedCents: BigInt(amount),
        includedCents: 0n,
        description: payment.description,
        invoiceUrl: payment.invoiceUrl,
        externalId: payment.externalId,
      },
    ]);
    return 'applied';
  });
}
