import { billableSeconds, callCostCents, endCalls } from '../billing/calls.js';
import { lockAccounts } from '../billing/ledger.js';
import { pauseForReason } from '../campaigns/states.js';
import { addToList, type ListedNumber } from '../contacts/do-not-call.js';
import type { ServiceEnv } from '../context.js';
import { uuidv7 } from '../ids.js';
import { statusOf } from '../call-outcomes.js';
import { bookingNote, campaignOutcome, costCorrections, endingOf, withInCallRequests } from './decisions.js';
import type { DialerOptions } from './options.js';
import { emitEvents } from '../webhooks/emit.js';
import { retryOnConflict } from './retry.js';
import {
  callBookings,
  campaignRecord,
  completeCampaign,
  correctCosts,
  lockCampaignRow,
  lockFinished,
  noteBookings,
  writeResults,
  type AttemptEnd,
  type CallBooking,
  type FinishedAttempt,
  type PlacedCall,
} from './store/ended-calls.js';
import type { CallResult } from '../voice/providers/telephony.js';
import { bookingEvents, callEvents } from './webhook-events.js';

// A batch of results, step by step: the dialer collects what was reported (report), the rules in
// decisions.ts decide each contact's next step (decide), and one transaction writes the batch and
// settles its calls' costs (apply); then each campaign touched is completed, or paused by its circuit
// breaker, if its record says so.

/** Results reported since the last batch, and the calls placed since then. */
export interface Batch {
  results: Map<string, CallResult>;
  /** When each result came in: when its call ended, as far as the dialer knows. */
  endedAt: Map<string, Date>;
  placed: Map<string, PlacedCall>;
}

/** What a batch changed: the campaigns it touched, the attempts it finished, and the numbers put on the do-not-call list. */
export interface Applied {
  campaigns: string[];
  finished: FinishedAttempt[];
  blocked: ListedNumber[];
}

/**
 * Applies the results in one transaction, each attempt once, whatever repeats or races with a lease
 * expiry: the attempts still unfinished are locked in id order, then their owners' accounts, the order
 * every dialer transaction takes them in. Null when every attempt was final already. Throws
 * RowsLockedError when a row stays locked for longer than RESULT_LOCK_WAIT_MS.
 */
export async function applyResults(env: ServiceEnv, batch: Batch, now: Date): Promise<Applied | null> {
  try {
    return await applyBatch(env, batch, now);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE) throw new RowsLockedError({ cause: error });
    throw error;
  }
}

/**
 * A batch's rows are locked by a transaction that does not end: a worker cut off from the database in
 * the middle of one holds them until PostgreSQL ends its session. Waiting would hold up every result
 * behind this batch, of every customer; the dialer writes the others first.
 */
export class RowsLockedError extends Error {
  constructor(options: ErrorOptions) {
    super('a batch of results could not lock its rows in time', options);
  }
}

/** Far longer than another batch or tick holds a row, far shorter than a stall. */
export const RESULT_LOCK_WAIT_MS = 1_000;
const LOCK_NOT_AVAILABLE = '55P03';

function applyBatch(env: ServiceEnv, batch: Batch, now: Date): Promise<Applied | null> {
  return retryOnConflict(() =>
    env.sql.transaction(
      async (tx) => {
        const finished = await lockFinished(tx, [...batch.results.keys()]);
        if (finished.length === 0) return null;
        const results = new Map(finished.map((f) => [f.id, withInCallRequests(batch.results.get(f.id)!, f)]));
        const endings = finished.map((f) => endingOf(f, results.get(f.id)!, now));
        const blocked = endings.flatMap((e) => (e.blocked ? [e.blocked] : []));
        // An appointment the call booked while under way is confirmed or annotated by what the analysis
        // says, never booked a second time.
        const said = endings.flatMap((e) => (e.appointment ? [e.appointment] : []));
        const bookings = said.length
          ? await callBookings(
              tx,
              said.map((a) => a.callAttemptId),
            )
          : new Map<string, CallBooking>();
        const appointments = said.filter((a) => !bookings.has(a.callAttemptId)).map((a) => ({ id: uuidv7(), ...a }));
        const notes = said.flatMap((a) => {
          const booking = bookings.get(a.callAttemptId);
          return booking
            ? [{ booking, note: bookingNote(booking, { scheduledAt: a.scheduledAt, notes: String(a.appointmentData.notes ?? '') }) }]
            : [];
        });
        // Everything but the money first: the accounts are locked last, for as short a time as can be.
        // An attempt's cost is what its call cost; where credits ran out and part of it was written off,
        // it is corrected to what was charged, under the lock.
        const rate = env.settings.callRateCentsPerMinute;
        const billed = new Map(
          finished.map((f) => {
            const result = results.get(f.id)!;
            return [f.id, billableSeconds(result)];
          }),
        );
        const prices = new Map(finished.map((f) => [f.id, callCostCents(billed.get(f.id)!, rate)]));
        await addToList(tx, blocked, 'Asked during a call', 'call');
        const ends = finished.map((f) => attemptEnd(f.id, results.get(f.id)!, batch, prices.get(f.id)!));
        await writeResults(
          tx,
          ends,
          endings.map((e) => e.contact),
          appointments,
          now,
        );
        const noted = await noteBookings(
          tx,
          notes.map((n) => n.note),
          now,
        );
        const confirmed = noted.filter((a) => notes.some((n) => n.booking.id === a.id && n.booking.status !== a.status));

        const accounts = await lockAccounts(
          tx,
          finished.map((f) => f.userId),
        );
        // Calls that connected and talked are charged for their talk time; every other hold is given back.
        const talked = finished.filter((f) => billed.get(f.id)! > 0);
        const charges = talked.map((f) => ({
          callAttemptId: f.id,
          campaignId: f.campaignId,
          userId: f.userId,
          durationSeconds: billed.get(f.id)!,
        }));
        const charged = await endCalls(
          tx,
          env,
          accounts,
          charges,
          finished.map((f) => f.id),
        );
        const corrections = costCorrections(prices, charged);
        if (corrections.length) await correctCosts(tx, corrections);
        const costs = new Map([...prices, ...corrections.map((c) => [c.id, c.costCents] as const)]);
        await emitEvents(tx, [...callEvents(finished, endings, results, batch.endedAt, costs, appointments), ...bookingEvents(confirmed)]);
        return { campaigns: [...new Set(finished.map((f) => f.campaignId))], finished, blocked };
      },
      { lockTimeoutMs: RESULT_LOCK_WAIT_MS },
    ),
  );
}

function attemptEnd(id: string, r: CallResult, batch: Batch, costCents: bigint): AttemptEnd {
  const placed = batch.placed.get(id);
  return {
    id,
    status: statusOf(r.outcome),
    outcome: r.outcome,
    callbackAt: r.callbackAt ?? null,
    durationSeconds: r.durationSeconds,
    summary: r.summary ?? null,
    sentiment: r.sentiment ?? null,
    disconnectReason: r.disconnectReason ?? null,
    recordingUrl: r.recordingUrl ?? null,
    transcript: r.transcript ?? null,
    analysis: r.analysis ?? null,
    costCents,
    providerCallId: placed?.providerCallId ?? null,
    startedAt: placed?.at ?? null,
    endedAt: batch.endedAt.get(id)!,
  };
}

/** Completes a running campaign left with nothing to do by a change outside a batch of results. */
export function completeIfDone(env: ServiceEnv, campaignId: string): Promise<boolean> {
  // A breaker no record can trip (it would need more failed calls than there are): only completion applies.
  return settleCampaign(env, { breakerWindow: 1, breakerThreshold: Infinity }, campaignId);
}

/**
 * Completes a campaign with nothing left to do, or trips its circuit breaker; true when it changed.
 * Read without a lock first: most batches change neither, and the campaign's lock is the ticks'.
 * Under the lock, the record is read again by a statement of its own, which sees what the lock's
 * previous holders committed.
 */
export async function settleCampaign(
  env: ServiceEnv,
  options: Pick<DialerOptions, 'breakerWindow' | 'breakerThreshold'>,
  campaignId: string,
): Promise<boolean> {
  if (!campaignOutcome(await campaignRecord(env.sql, campaignId, options.breakerWindow), options)) return false;
  const now = env.clock.now();
  return retryOnConflict(() =>
    env.sql.transaction(async (tx) => {
      await lockCampaignRow(tx, campaignId);
      const outcome = campaignOutcome(await campaignRecord(tx, campaignId, options.breakerWindow), options);
      if (outcome === 'completed') {
        await completeCampaign(tx, campaignId, now);
        return true;
      }
      return outcome === 'high_failure_rate' ? pauseForReason(tx, campaignId, outcome) : false;
    }),
  );
}
