import type { CreditAccount, Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { ServiceEnv } from '../context.js';
import { ValidationError } from '../errors.js';

// The one place credit balances change. Each change runs in a transaction that first locks the user's
// credit_accounts row (SELECT ... FOR UPDATE), so concurrent changes queue on that row instead of
// overwriting each other, and writes the ledger row that records the balances after it.

/** What ledger writes need. No caller identity: the dialer and payment webhooks act for the system. */
export type LedgerContext = ServiceEnv;

export type Balances = Pick<CreditAccount, 'balanceCents' | 'includedRemainingCents' | 'heldCents'>;

/**
 * Ceiling on purchased plus included credits (2^53 - 1 cents). Every balance, hold and amount stays
 * below it, so each is an exact number in JSON for any client, JavaScript included.
 */
export const MAX_CREDIT_CENTS = BigInt(Number.MAX_SAFE_INTEGER);

/** What calls may still spend: both balances minus what calls in flight hold, shown as 0 when below. */
export function effectiveCents(balances: Balances): bigint {
  const free = balances.balanceCents + balances.includedRemainingCents - balances.heldCents;
  return free > 0n ? free : 0n;
}

/**
 * A transaction for ledger writes. Writes to one account queue on its row lock, so a burst of call
 * settlements may wait longer than Prisma's defaults (2 s for a connection, 5 s in all) allow.
 */
export function ledgerTransaction<T>(db: PrismaClient, work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return db.$transaction(work, { maxWait: 15_000, timeout: 30_000 });
}

/** Creates the user's account (balances 0) on first use and locks it until the transaction ends. */
export async function lockAccount(tx: Prisma.TransactionClient, userId: string): Promise<Balances> {
  await tx.creditAccount.createMany({ data: [{ userId }], skipDuplicates: true });
  const [account] = await tx.$queryRaw<Balances[]>`
    SELECT balance_cents AS "balanceCents", included_remaining_cents AS "includedRemainingCents", held_cents AS "heldCents"
    FROM credit_accounts WHERE user_id = ${userId}::uuid FOR UPDATE`;
  return account!;
}

/** One ledger row to append, as signed changes to the two balances (and to what is held). */
export type Entry = Omit<
  Prisma.CreditTransactionUncheckedCreateInput,
  'id' | 'amountCents' | 'balanceAfterCents' | 'includedAfterCents' | 'createdAt'
> & {
  purchasedCents: bigint;
  includedCents: bigint;
  heldCents?: bigint;
  createdAt: Date;
};

export type TransactionQuery = { include?: Prisma.CreditTransactionInclude; select?: Prisma.CreditTransactionSelect };

/**
 * Applies an entry to the locked account and appends its ledger row. Callers check that no balance goes
 * below zero (the database's CHECK constraint refuses it too); this refuses credits above the ceiling.
 */
export async function appendEntry<Q extends TransactionQuery = {}>(
  tx: Prisma.TransactionClient,
  account: Balances,
  entry: Entry,
  query: Q = {} as Q,
): Promise<Prisma.CreditTransactionGetPayload<Q>> {
  const { purchasedCents, includedCents, heldCents = 0n, ...row } = entry;
  const balanceAfterCents = account.balanceCents + purchasedCents;
  const includedAfterCents = account.includedRemainingCents + includedCents;
  if (balanceAfterCents + includedAfterCents > MAX_CREDIT_CENTS) {
    throw ValidationError.field('amountCents', `This would take the credits above the largest balance, ${MAX_CREDIT_CENTS} cents.`);
  }
  // Increments rather than computed totals: even a missing lock could not lose an update.
  await tx.creditAccount.update({
    where: { userId: entry.userId },
    data: {
      balanceCents: { increment: purchasedCents },
      includedRemainingCents: { increment: includedCents },
      heldCents: { increment: heldCents },
    },
  });
  return tx.creditTransaction.create({
    ...query,
    data: { ...row, amountCents: purchasedCents + includedCents, balanceAfterCents, includedAfterCents },
  }) as unknown as Promise<Prisma.CreditTransactionGetPayload<Q>>;
}
