import type { SqlSession, SqlTransaction } from '../../db/sql.js';
import { effectiveCents, moveMoney, noBalances, type Balances, type ClosedHold, type Entry, type LedgerContext } from './ledger.js';
import type { CallOutcome } from '../../generated/prisma/client.js';
import type { Settings } from '../settings.js';
import * as store from './store.js';

// How the dialer pays for calls, inside its own transactions: hold an estimate when calls start, settle
// the real cost when they end, release the holds of calls that fail. Every change to an account's
// balances or holds first locks its credit_accounts row (lockAccounts), so that concurrent changes queue
// on that row instead of overwriting each other; ending a call is idempotent per call attempt, so a
// repeated provider event cannot charge twice.

/**
 * The seconds of a call that are billed: its talk time with a person, or the length of a voicemail
 * message left; none for anything else (a machine or a screener hung up on, no answer, busy, failed),
 * whatever duration a provider reported for ringing or a failed connection.
 */
export function billableSeconds(result: { outcome: CallOutcome; durationSeconds: number; messageLeft?: boolean | undefined }): number {
  const billed = result.outcome === 'human' || (result.outcome === 'voicemail' && result.messageLeft === true);
  return billed ? result.durationSeconds : 0;
}

/** Billed per second, rounded up to a whole cent. */
export function callCostCents(durationSeconds: number, rateCentsPerMinute: number): bigint {
  return (BigInt(durationSeconds) * BigInt(rateCentsPerMinute) + 59n) / 60n;
}

/**
 * What one call holds from the balance while it is in flight: `callHoldMinutes` at the call rate. A
 * prepaid customer can afford the next call when the effective balance covers this much (callsAffordable).
 */
export function callHoldCents(settings: Pick<Settings, 'callHoldMinutes' | 'callRateCentsPerMinute'>): bigint {
  return callCostCents(settings.callHoldMinutes * 60, settings.callRateCentsPerMinute);
}

/**
 * What calling `contacts` people is expected to cost, for a dispatch preview: one call each of
 * `callHoldMinutes` (the length the dialer holds credits for) at the call rate. Retries are not
 * foreseen, and the call that reaches nobody costs nothing, so it is a ceiling for first attempts.
 */
export function expectedCallsCents(settings: Pick<Settings, 'callHoldMinutes' | 'callRateCentsPerMinute'>, contacts: number): bigint {
  return BigInt(contacts) * callHoldCents(settings);
}

/** Ended calls an average call length is taken over: the customer's latest. */
export const HISTORY_CALLS = 1_000;
/** Fewer ended calls than this say too little of a customer's calls: the estimate assumes the hold's length. */
export const HISTORY_MIN_CALLS = 20;

export interface CostEstimate {
  calls: number;
  /**
   * Billed seconds expected of each call: the customer's own average over their latest HISTORY_CALLS
   * ended calls (those that reached nobody count 0) once HISTORY_MIN_CALLS have ended, else the
   * `callHoldMinutes` the dialer holds for a call.
   */
  secondsPerCall: number;
  basis: 'history' | 'default';
  /** Ended calls the average was taken over (0 with the default). */
  historyCalls: number;
  rateCentsPerMinute: number;
  costCents: bigint;
  /** What calls may spend now, and whether it covers the estimate. */
  availableCents: bigint;
  covered: boolean;
}

/**
 * What calling `calls` people is expected to cost this customer: each call billed as callCostCents bills
 * it, for the seconds the customer's calls have lasted on average; beside what the balance may spend now.
 */
export async function estimateCallsCost(
  sql: SqlSession,
  settings: Pick<Settings, 'callHoldMinutes' | 'callRateCentsPerMinute'>,
  userId: string,
  calls: number,
): Promise<CostEstimate> {
  const [history, availableCents] = await Promise.all([store.callHistory(sql, userId, HISTORY_CALLS), spendableCents(sql, userId)]);
  const fromHistory = history.calls >= HISTORY_MIN_CALLS;
  const secondsPerCall = fromHistory ? Math.ceil(Number(history.billedSeconds) / history.calls) : settings.callHoldMinutes * 60;
  const costCents = BigInt(calls) * callCostCents(secondsPerCall, settings.callRateCentsPerMinute);
  return {
    calls,
    secondsPerCall,
    basis: fromHistory ? 'history' : 'default',
    historyCalls: fromHistory ? history.calls : 0,
    rateCentsPerMinute: settings.callRateCentsPerMinute,
    costCents,
    availableCents,
    covered: availableCents >= costCents,
  };
}

/**
 * How many calls' holds `spendableCents` covers: the one rule for "can this customer afford the next
 * call", asked by dispatch (at least one, or it is refused) and by the dialer (how many to claim, and
 * whether a campaign that could pay for none pauses). holdCalls writes the holds on the same condition.
 */
export function callsAffordable(spendableCents: bigint, holdCents: bigint): number {
  return spendableCents < holdCents ? 0 : Number(spendableCents / holdCents);
}

/**
 * Reserves `estimateCents` for each call attempt when the account's effective balance covers them all,
 * checked and changed in one statement: the account's row lock is taken here and held only until the
 * caller commits, so a caller may decide how many calls to try on an unlocked read of the balances.
 * Returns false, changing nothing, when the balance does not cover them. Attempts already finished (a
 * sweep failed them while this worker was cut off) get no hold.
 */
export async function holdCalls(
  tx: SqlSession,
  now: Date,
  userId: string,
  callAttemptIds: string[],
  estimateCents: bigint,
): Promise<boolean> {
  if (callAttemptIds.length === 0) return true;
  return store.holdCalls(tx, now, userId, callAttemptIds, estimateCents);
}

/** What calls may still spend now, read without a lock: a guide for how many to try, which holdCalls confirms. */
export async function spendableCents(sql: SqlSession, userId: string): Promise<bigint> {
  return effectiveCents((await store.readBalances(sql, userId)) ?? noBalances());
}

export interface CallEnd {
  callAttemptId: string;
  campaignId: string;
  userId: string;
  durationSeconds: number;
}

/**
 * Ends calls against accounts locked by lockAccounts: each of `charged` writes its one `call_charge`
 * (included credits first, then purchased ones, a shortfall written off; never more than its
 * campaign's spend cap leaves, the rest not charged) and closes its hold as settled; the holds of
 * `released` (attempt ids) are given back. Calls already settled are skipped, so
 * repeating an end changes nothing; a charge after a release still charges, since the call happened.
 * Returns the cost charged per call attempt.
 */
export async function endCalls(
  tx: SqlTransaction,
  ctx: LedgerContext,
  accounts: Map<string, Balances>,
  charged: CallEnd[],
  released: string[],
): Promise<Map<string, bigint>> {
  const holds = await store.holdsOf(tx, [...charged.map((c) => c.callAttemptId), ...released]);
  // Campaigns with a spend cap: what each may still be charged, under the lock of its spend row.
  const rooms = await store.lockCapRooms(tx, [...new Set(charged.map((c) => c.campaignId))]);
  const holdOf = new Map(holds.map((h) => [h.call_attempt_id, h]));
  const rate = ctx.settings.callRateCentsPerMinute;
  const charges: Entry[] = [];
  const settled: ClosedHold[] = [];
  const settling = new Set<string>();

  for (const call of charged) {
    const hold = holdOf.get(call.callAttemptId);
    if (!hold || hold.user_id !== call.userId || hold.status === 'settled' || settling.has(call.callAttemptId)) continue;
    settling.add(call.callAttemptId);
    settled.push({ callAttemptId: call.callAttemptId, userId: call.userId, heldCents: hold.status === 'held' ? hold.amount_cents : 0n });
    const cost = callCostCents(call.durationSeconds, rate);
    const room = rooms.get(call.campaignId);
    // Never a cent over a campaign's cap: what a call costs beyond it is not charged.
    const spendCents = room === undefined || cost <= room ? cost : room;
    if (room !== undefined) rooms.set(call.campaignId, room - spendCents);
    charges.push({
      userId: call.userId,
      kind: 'call_charge',
      spendCents,
      description:
        spendCents < cost
          ? `Call of ${call.durationSeconds} s at ${rate} cents/min, ${cost - spendCents} cents over the campaign's spend cap not charged`
          : `Call of ${call.durationSeconds} s at ${rate} cents/min`,
      campaignId: call.campaignId,
      callAttemptId: call.callAttemptId,
    });
  }
  const releasing = [...new Set(released)].flatMap((id) => {
    const hold = holdOf.get(id);
    return hold?.status === 'held' && !settling.has(id) ? [{ callAttemptId: id, userId: hold.user_id, heldCents: hold.amount_cents }] : [];
  });

  const posted = await moveMoney(tx, ctx.clock, accounts, charges, { settled, released: releasing });
  const costs = new Map<string, bigint>();
  const spent = new Map<string, bigint>();
  const campaignOf = new Map(charged.map((c) => [c.callAttemptId, c.campaignId]));
  for (const charge of posted) {
    if (charge.unbilledCents > 0n) {
      ctx.log.warn(
        { callAttemptId: charge.callAttemptId, unbilledCents: String(charge.unbilledCents) },
        'call cost more than the credits left',
      );
    }
    costs.set(charge.callAttemptId!, -charge.amountCents);
    const campaignId = campaignOf.get(charge.callAttemptId!)!;
    spent.set(campaignId, (spent.get(campaignId) ?? 0n) - charge.amountCents);
  }
  await store.addSpend(tx, spent);
  return costs;
}
