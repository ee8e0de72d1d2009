import { CreditTransactionKind as Kinds } from '../../generated/prisma/enums.js';
import * as checkout from '../../services/billing/checkout.js';
import * as credits from '../../services/billing/credits.js';
import { GRANT_KINDS, grantCredits } from '../../services/billing/grants.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';

export const CreditTransactionKind = builder.enumType(Kinds, { name: 'CreditTransactionKind' });
export const CreditGrantKind = builder.enumType('CreditGrantKind', { values: GRANT_KINDS });

export const CreditBalance = builder.objectRef<credits.CreditBalance>('CreditBalance').implement({
  description: 'Credits in cents. Calls spend included credits first, then purchased ones.',
  fields: (t) => ({
    balanceCents: t.expose('balanceCents', { type: 'BigInt', description: 'Purchased credits.' }),
    includedRemainingCents: t.expose('includedRemainingCents', { type: 'BigInt', description: 'Plan credits left.' }),
    heldCents: t.expose('heldCents', { type: 'BigInt', description: 'Held for calls in flight.' }),
    effectiveBalanceCents: t.expose('effectiveBalanceCents', {
      type: 'BigInt',
      description: 'What calls may still spend: both balances minus what is held (never below 0).',
    }),
    lowBalanceThresholdCents: t.field({
      type: 'BigInt',
      nullable: true,
      description: 'Below this, purchased and included credits together send a `credits.low` webhook event; null: no alert.',
      resolve: (_balance, _args, ctx) => credits.getLowBalanceThreshold(ctx.service),
    }),
  }),
});

export const Receipt = builder.objectRef<credits.Receipt>('Receipt').implement({
  description: 'Payment documents of a top-up.',
  fields: (t) => ({
    url: t.exposeString('url', { description: 'The receipt when there is one, else the invoice.' }),
    receiptUrl: t.exposeString('receiptUrl', { nullable: true }),
    invoiceUrl: t.exposeString('invoiceUrl', { nullable: true }),
  }),
});

export const CreditTransaction = builder.prismaObject('CreditTransaction', {
  description: 'One entry of the append-only credit ledger.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    kind: t.expose('kind', { type: CreditTransactionKind }),
    amountCents: t.expose('amountCents', { type: 'BigInt', description: 'Signed change to purchased plus included credits.' }),
    balanceAfterCents: t.expose('balanceAfterCents', { type: 'BigInt', description: 'Purchased credits after this entry.' }),
    includedAfterCents: t.expose('includedAfterCents', { type: 'BigInt', description: 'Included credits after this entry.' }),
    description: t.exposeString('description'),
    campaignId: t.expose('campaignId', { type: 'UUID', nullable: true }),
    callAttemptId: t.expose('callAttemptId', { type: 'UUID', nullable: true }),
    campaign: t.relation('campaign', { nullable: true }),
    receipt: t.field({
      type: Receipt,
      nullable: true,
      description: 'Null when the entry has neither a receipt nor an invoice.',
      select: { receiptUrl: true, invoiceUrl: true },
      resolve: (transaction) => credits.receiptOf(transaction),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryFields((t) => ({
  creditBalance: t.field({
    type: CreditBalance,
    authScopes: { authenticated: true },
    resolve: (_root, _args, ctx) => credits.getBalance(ctx.service),
  }),
  creditTransactions: t.prismaConnection({
    type: 'CreditTransaction',
    description: 'The caller’s credit ledger, newest first.',
    cursor: 'id',
    authScopes: { authenticated: true },
    args: {
      kinds: t.arg({ type: [CreditTransactionKind], description: 'Only entries of these kinds.' }),
      from: t.arg({ type: 'DateTime', description: 'Only entries created at or after this time.' }),
      to: t.arg({ type: 'DateTime', description: 'Only entries created before this time.' }),
    },
    totalCount: (_parent, args, ctx) => credits.countTransactions(ctx.service, args),
    resolve: (query, _root, args, ctx) => credits.listTransactions(ctx.service, args, query),
  }),
  creditTransaction: t.prismaField({
    type: 'CreditTransaction',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => credits.getTransaction(ctx.service, args.id, query),
  }),
}));

const GrantCreditsInput = builder.inputType('GrantCreditsInput', {
  fields: (t) => ({
    userId: t.field({ type: 'UUID', required: true }),
    kind: t.field({ type: CreditGrantKind, required: true }),
    amountCents: t.field({
      type: 'BigInt',
      required: true,
      description: 'Positive; an adjustment may be negative, but not below the purchased balance.',
    }),
    description: t.string(),
  }),
});

builder.mutationFields((t) => ({
  grantCredits: t.prismaField({
    type: 'CreditTransaction',
    description: 'Administrators: credit a user by hand (a top-up paid elsewhere, plan credits, a correction).',
    authScopes: { admin: true },
    args: { input: t.arg({ type: GrantCreditsInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => grantCredits(ctx.service, input, query)),
  }),
}));

builder.mutationFields((t) => ({
  setLowCreditThreshold: t.field({
    type: CreditBalance,
    description:
      'Sets the level below which your credits send a `credits.low` webhook event, once each time they fall from at or above it to below it; null clears it.',
    authScopes: { authenticated: true },
    args: { cents: t.arg({ type: 'BigInt' }) },
    resolve: async (_root, args, ctx) => {
      await credits.setLowBalanceThreshold(ctx.service, args.cents ?? null);
      return credits.getBalance(ctx.service);
    },
  }),
}));

const CreditCheckout = builder.objectRef<checkout.CreditCheckout>('CreditCheckout').implement({
  description: 'A Stripe Checkout page where the customer pays for credits; paid, they land on the balance as a `top_up`.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'The Checkout Session id (`cs_...`), also the top-up’s payment id.' }),
    url: t.exposeString('url', { description: 'The payment page to send the customer to.' }),
    amountCents: t.exposeInt('amountCents', { description: 'What the customer pays, and the credits it buys.' }),
    currency: t.exposeString('currency'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'After this the page no longer takes payment.' }),
  }),
});

builder.mutationFields((t) => ({
  createCreditCheckout: t.field({
    type: CreditCheckout,
    description: `Opens a Stripe Checkout page to buy credits: one cent of credit per cent paid, from ${checkout.MIN_CHECKOUT_CENTS} to ${checkout.MAX_CHECKOUT_CENTS} cents (US dollars). Credited when Stripe reports the payment (POST /webhooks/stripe). UNAVAILABLE when the server has no Stripe key or Stripe fails.`,
    authScopes: { authenticated: true },
    args: { amountCents: t.arg.int({ required: true }) },
    resolve: (_root, args, ctx) => checkout.createCreditCheckout(ctx.service, args.amountCents),
  }),
}));
