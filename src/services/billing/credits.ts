import type { CreditTransaction, CreditTransactionKind, Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { DEEP_OFFSET, deepPageKeys } from '../offset-pages.js';
import { distinct, uuid } from '../validation.js';
import { effectiveCents, MAX_CREDIT_CENTS, noBalances, type Balances, type TransactionQuery } from './ledger.js';
import * as store from './store.js';

// What a customer reads of their credits: balances, the ledger, receipt links.

export type CreditBalance = Balances & { effectiveBalanceCents: bigint };

/** A user with no account yet has balances of 0; reading does not create one. */
export async function getBalance(ctx: ServiceContext): Promise<CreditBalance> {
  const account = (await store.readBalances(ctx.sql, ctx.user.id)) ?? noBalances();
  return { ...account, effectiveBalanceCents: effectiveCents(account) };
}

export interface TransactionFilter {
  kinds?: CreditTransactionKind[] | null | undefined;
  /** Inclusive. */
  from?: Date | null | undefined;
  /** Exclusive. */
  to?: Date | null | undefined;
}

function owned(ctx: ServiceContext, filter: TransactionFilter): Prisma.CreditTransactionWhereInput {
  if (filter.from && filter.to && filter.from > filter.to) throw ValidationError.field('to', 'Must not be earlier than from.');
  return {
    userId: ctx.user.id,
    ...(filter.kinds ? { kind: { in: distinct(filter.kinds) } } : {}),
    ...(filter.from || filter.to
      ? { createdAt: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lt: filter.to } : {}) } }
      : {}),
  };
}

/** The caller's ledger, newest first; `query` carries paging and the relations a caller wants joined. */
export async function listTransactions<
  Q extends TransactionQuery & Pick<Prisma.CreditTransactionFindManyArgs, 'take' | 'skip' | 'cursor'> = {},
>(ctx: ServiceContext, filter: TransactionFilter, query: Q = {} as Q): Promise<Prisma.CreditTransactionGetPayload<Q>[]> {
  const where = owned(ctx, filter);
  const { skip = 0, take, cursor, ...relations } = query;
  if (skip < DEEP_OFFSET || cursor || take === undefined || filter.kinds || filter.from || filter.to) {
    return store.findTransactions(ctx.db, where, query);
  }
  // The ledger is only appended to (no row is removed or moved), so a page of the whole of it continues
  // from the previous page's end (src/services/offset-pages.ts).
  const keys = await deepPageKeys(ctx, { name: `${ctx.user.id}:ledger`, reads: store.ledgerPages, values: [ctx.user.id] }, skip, take);
  return store.findTransactionsByIds(
    ctx.db,
    ctx.user.id,
    keys.map((key) => key.id),
    relations,
  ) as Promise<Prisma.CreditTransactionGetPayload<Q>[]>;
}

export function countTransactions(ctx: ServiceContext, filter: TransactionFilter): Promise<number> {
  return store.countTransactions(ctx.db, owned(ctx, filter));
}

export async function getTransaction<Q extends TransactionQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.CreditTransactionGetPayload<Q>> {
  if (!uuid.safeParse(id).success) throw new NotFoundError('CreditTransaction');
  const transaction = await store.findTransaction(ctx.db, ctx.user.id, id, query);
  if (!transaction) throw new NotFoundError('CreditTransaction');
  return transaction;
}

export interface Receipt {
  /** The receipt when there is one, else the invoice. */
  url: string;
  receiptUrl: string | null;
  invoiceUrl: string | null;
}

/** Null when the transaction has neither link (call charges, grants). */
export function receiptOf(transaction: Pick<CreditTransaction, 'receiptUrl' | 'invoiceUrl'>): Receipt | null {
  const url = transaction.receiptUrl ?? transaction.invoiceUrl;
  return url ? { url, receiptUrl: transaction.receiptUrl, invoiceUrl: transaction.invoiceUrl } : null;
}

/** A transaction without links has no receipt: 404, as for another user's transaction. */
export async function getReceipt(ctx: ServiceContext, id: string): Promise<Receipt> {
  const receipt = receiptOf(await getTransaction(ctx, id, { select: { receiptUrl: true, invoiceUrl: true } }));
  if (!receipt) throw new NotFoundError('Receipt');
  return receipt;
}

/** The level below which the customer's credits send a `credits.low` webhook event; null: none. */
export function getLowBalanceThreshold(ctx: ServiceContext): Promise<bigint | null> {
  return store.readLowBalanceThreshold(ctx.sql, ctx.user.id);
}

/**
 * Sets (or, with null, clears) the alert level: when purchased and included credits together fall from
 * at or above it to below it, a `credits.low` event goes to the customer's webhooks, once per crossing.
 */
export async function setLowBalanceThreshold(ctx: ServiceContext, cents: bigint | null): Promise<bigint | null> {
  if (cents !== null && (cents < 0n || cents > MAX_CREDIT_CENTS)) {
    throw ValidationError.field('cents', `Must be from 0 to ${MAX_CREDIT_CENTS}.`);
  }
  await ctx.sql.transaction(async (tx) => {
    const now = ctx.clock.now();
    await store.createAccount(tx, ctx.user.id, now);
    await store.setLowBalanceThreshold(tx, ctx.user.id, cents, now);
  });
  return cents;
}
