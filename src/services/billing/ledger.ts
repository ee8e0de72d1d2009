import type { SqlTransaction } from '../../db/sql.js';
import type { CreditAccount, CreditTransactionKind, Prisma } from '../../generated/prisma/client.js';
import type { Clock, ServiceEnv } from '../context.js';
import { ValidationError } from '../errors.js';
import { uuidv7 } from '../ids.js';
import * as store from './store.js';

// The one place credit balances change: moveMoney. Grants, Stripe payments and the dialer's call
// settlements all run it, in an SQL transaction that has locked the accounts it changes (lockAccounts,
// SELECT ... FOR UPDATE), so that concurrent changes queue on each account's row instead of overwriting
// each other. Each change writes the ledger row that records the balances after it.

/** What ledger writes need. No caller identity: the dialer and payment webhooks act for the system. */
export type LedgerContext = ServiceEnv;

export type Balances = Pick<CreditAccount, 'balanceCents' | 'includedRemainingCents' | 'heldCents'>;

export type TransactionQuery = { include?: Prisma.CreditTransactionInclude; select?: Prisma.CreditTransactionSelect };

/**
 * Ceiling on purchased plus included credits (2^53 - 1 cents). Every balance, hold and amount stays
 * below it, so each is an exact number in JSON for any client, JavaScript included.
 */
export const MAX_CREDIT_CENTS = BigInt(Number.MAX_SAFE_INTEGER);

/** The balances of a user without an account: nothing (a new object, which a move may change). */
export const noBalances = (): Balances => ({ balanceCents: 0n, includedRemainingCents: 0n, heldCents: 0n });

/** What calls may still spend: both balances minus what calls in flight hold, shown as 0 when below. */
export function effectiveCents(balances: Balances): bigint {
  const free = balances.balanceCents + balances.includedRemainingCents - balances.heldCents;
  return free > 0n ? free : 0n;
}

/**
 * Locks the credit accounts of these users (in user id order) until the transaction ends, and reads
 * their balances. A user without an account has nothing: zero balances, and no row to lock, since
 * nothing can be held or charged against it.
 */
export async function lockAccounts(tx: SqlTransaction, userIds: string[]): Promise<Map<string, Balances>> {
  const rows = await store.lockAccountRows(tx, [...new Set(userIds)]);
  const accounts = new Map<string, Balances>(rows.map(({ user_id, ...balances }) => [user_id, balances]));
  for (const userId of userIds) if (!accounts.has(userId)) accounts.set(userId, noBalances());
  return accounts;
}

/** Creates the user's account (balances 0) on first use, and locks it as lockAccounts does. */
export async function openAccount(tx: SqlTransaction, clock: Clock, userId: string): Promise<Map<string, Balances>> {
  await store.createAccount(tx, userId, clock.now());
  return lockAccounts(tx, [userId]);
}

interface EntryFacts {
  userId: string;
  kind: CreditTransactionKind;
  description: string;
  campaignId?: string | null;
  callAttemptId?: string | null;
  receiptUrl?: string | null;
  invoiceUrl?: string | null;
  /** The payment provider's id for the payment (unique in the ledger). */
  externalId?: string | null;
}

/**
 * One ledger row to append: signed changes to the two balances, or an amount to spend, taken from
 * included credits first, then purchased ones; what neither covers is written off (balances never go
 * below zero), and the description says so.
 */
export type Entry = EntryFacts & ({ purchasedCents: bigint; includedCents: bigint } | { spendCents: bigint });

/** A hold a move closes, and what of it was still held (given back to the account). */
export interface ClosedHold {
  callAttemptId: string;
  userId: string;
  heldCents: bigint;
}

/** An entry as appended. */
export interface Posted {
  id: string;
  callAttemptId: string | null;
  /** Signed change to purchased plus included credits. */
  amountCents: bigint;
  /** What a spend could not take (0 unless credits ran out). */
  unbilledCents: bigint;
}

/**
 * Moves money on accounts locked by lockAccounts (whose balances, in `accounts`, change with it): applies
 * the entries in order, each recording the balances after it in its ledger row, and closes holds, those
 * `settled` by the entries and those `released` back to the account. Written in one statement however
 * many entries and accounts there are, at the clock's time read under the locks, so that newest-first
 * is the order entries were applied in. Refuses (ValidationError on `amountCents`) to take the purchased
 * or included balance below zero or their sum above MAX_CREDIT_CENTS.
 */
export async function moveMoney(
  tx: SqlTransaction,
  clock: Clock,
  accounts: Map<string, Balances>,
  entries: Entry[],
  holds: { settled?: ClosedHold[]; released?: ClosedHold[] } = {},
): Promise<Posted[]> {
  const { settled = [], released = [] } = holds;
  if (entries.length === 0 && settled.length === 0 && released.length === 0) return [];
  const changes = new Map<string, { purchased: bigint; included: bigint; released: bigint }>();
  const changeOf = (userId: string) => {
    let change = changes.get(userId);
    if (!change) changes.set(userId, (change = { purchased: 0n, included: 0n, released: 0n }));
    return change;
  };
  const accountOf = (userId: string) => {
    const account = accounts.get(userId);
    if (!account) throw new Error(`The credit account of user ${userId} is not locked.`);
    return account;
  };

  const rows: store.LedgerRow[] = [];
  const posted: Posted[] = [];
  for (const entry of entries) {
    const account = accountOf(entry.userId);
    const { purchasedCents, includedCents, unbilledCents } =
      'spendCents' in entry ? spend(account, entry.spendCents) : { ...entry, unbilledCents: 0n };
    const balanceAfterCents = account.balanceCents + purchasedCents;
    const includedAfterCents = account.includedRemainingCents + includedCents;
    if (balanceAfterCents < 0n) {
      throw ValidationError.field('amountCents', `This would take the purchased balance below zero; it is ${account.balanceCents} cents.`);
    }
    if (includedAfterCents < 0n) {
      throw ValidationError.field(
        'amountCents',
        `This would take the included credits below zero; they are ${account.includedRemainingCents} cents.`,
      );
    }
    if (balanceAfterCents + includedAfterCents > MAX_CREDIT_CENTS) {
      throw ValidationError.field('amountCents', `This would take the credits above the largest balance, ${MAX_CREDIT_CENTS} cents.`);
    }
    account.balanceCents = balanceAfterCents;
    account.includedRemainingCents = includedAfterCents;
    const change = changeOf(entry.userId);
    change.purchased += purchasedCents;
    change.included += includedCents;
    const id = uuidv7();
    const amountCents = purchasedCents + includedCents;
    rows.push({
      id,
      user_id: entry.userId,
      kind: entry.kind,
      amount_cents: String(amountCents),
      balance_after_cents: String(balanceAfterCents),
      included_after_cents: String(includedAfterCents),
      description: unbilledCents > 0n ? `${entry.description}; ${unbilledCents} cents not charged (credits ran out)` : entry.description,
      campaign_id: entry.campaignId,
      call_attempt_id: entry.callAttemptId,
      receipt_url: entry.receiptUrl,
      invoice_url: entry.invoiceUrl,
      external_id: entry.externalId,
    });
    posted.push({ id, callAttemptId: entry.callAttemptId ?? null, amountCents, unbilledCents });
  }
  for (const hold of [...settled, ...released]) {
    accountOf(hold.userId).heldCents -= hold.heldCents;
    changeOf(hold.userId).released += hold.heldCents;
  }

  const written = await store.writeMove(
    tx,
    clock.now(),
    rows,
    [...changes].map(([userId, c]) => ({
      user_id: userId,
      purchased: String(c.purchased),
      included: String(c.included),
      released: String(c.released),
    })),
    settled.map((h) => h.callAttemptId),
    released.map((h) => h.callAttemptId),
  );
  // An account that was not there to change would leave the ledger and the balances apart.
  if (written.length !== changes.size) throw new Error('A credit account to change does not exist.');
  return posted;
}

/** Included credits first, then purchased ones; the rest is unbilled. */
function spend(account: Balances, cents: bigint) {
  const fromIncluded = min(cents, account.includedRemainingCents);
  const fromPurchased = min(cents - fromIncluded, account.balanceCents);
  return { includedCents: -fromIncluded, purchasedCents: -fromPurchased, unbilledCents: cents - fromIncluded - fromPurchased };
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
