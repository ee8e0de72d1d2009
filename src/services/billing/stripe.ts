import Stripe from 'stripe';
import { ValidationError } from '../errors.js';
import { uuid } from '../validation.js';
import { appendEntry, ledgerTransaction, lockAccount, type LedgerContext } from './ledger.js';

// Top-ups paid through Stripe. A payment names the user it is for in `metadata.user_id` (of the Checkout
// Session, or of the invoice); credits are US-dollar cents.

/** Verifies the `Stripe-Signature` header over the body exactly as received. */
export function verifyStripeEvent(payload: Uint8Array, signature: string | undefined, secret: string): Stripe.Event {
  try {
    return Stripe.webhooks.constructEvent(payload, signature ?? '', secret);
  } catch (error) {
    throw ValidationError.field('stripe-signature', (error as Error).message);
  }
}

interface Payment {
  metadata: Stripe.Metadata | null;
  amountCents: number;
  currency: string | null;
  externalId: string;
  invoiceUrl: string | null;
  description: string;
}

/**
 * The payment an event reports, or null when it reports none to credit. A Checkout Session that created
 * an invoice (subscriptions, or invoice creation turned on) is left to that invoice's `invoice.paid`, so
 * each payment is credited from exactly one event, the one that carries its invoice link.
 */
function paymentOf(event: Stripe.Event): Payment | null {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object;
      if (session.payment_status !== 'paid' || session.invoice || !session.amount_total) return null;
      return {
        metadata: session.metadata,
        amountCents: session.amount_total,
        currency: session.currency,
        externalId: session.id,
        invoiceUrl: null,
        description: 'Credit top-up (Stripe Checkout)',
      };
    }
    case 'invoice.paid': {
      const invoice = event.data.object;
      if (!invoice.amount_paid) return null;
      return {
        metadata: invoice.metadata,
        amountCents: invoice.amount_paid,
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

export type StripeEventOutcome = 'applied' | 'duplicate' | 'ignored';

/**
 * Credits a paid payment as a `top_up`, once: the event id is recorded with the credit in one
 * transaction, and the payment's id is unique in the ledger, so a repeated or concurrent delivery (or a
 * second event about the same payment) changes nothing. A payment that cannot be credited (no user, or
 * another currency) is refused with field errors and nothing recorded, so Stripe shows the failure and
 * a redelivery after the fix succeeds.
 */
export async function applyStripeEvent(ctx: LedgerContext, event: Stripe.Event): Promise<StripeEventOutcome> {
  const payment = paymentOf(event);
  if (!payment) return 'ignored';
  const userId = payment.metadata?.user_id;
  if (!uuid.safeParse(userId).success) {
    throw ValidationError.field('data.object.metadata.user_id', 'Must be the UUID of the user to credit.');
  }
  if (payment.currency !== 'usd') {
    throw ValidationError.field('data.object.currency', 'Credits are sold in usd only.');
  }
  const user = await ctx.db.user.findUnique({ where: { id: userId!.toLowerCase() }, select: { id: true } });
  if (!user) throw ValidationError.field('data.object.metadata.user_id', 'No user has this id.');

  return ledgerTransaction(ctx.db, async (tx) => {
    const claimed = await tx.webhookDelivery.createMany({ data: [{ source: 'stripe', eventKey: event.id }], skipDuplicates: true });
    if (claimed.count === 0) return 'duplicate';
    const account = await lockAccount(tx, user.id);
    if (await tx.creditTransaction.findUnique({ where: { externalId: payment.externalId }, select: { id: true } })) return 'duplicate';
    await appendEntry(tx, account, {
      userId: user.id,
      kind: 'top_up',
      purchasedCents: BigInt(payment.amountCents),
      includedCents: 0n,
      description: payment.description,
      invoiceUrl: payment.invoiceUrl,
      externalId: payment.externalId,
      createdAt: ctx.clock.now(),
    });
    return 'applied';
  });
}
