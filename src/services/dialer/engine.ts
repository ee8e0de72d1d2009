import type { Logger } from 'pino';
import { callHoldCents, holdCalls } from '../billing/calls.js';
import { markListed } from '../contacts/do-not-call.js';
import type { ServiceEnv } from '../context.js';
import { applyResults, RowsLockedError, settleCampaign, type Applied, type Batch } from './ended-calls.js';
import { DEFAULT_DIALER_OPTIONS, type DialerOptions, type Wake } from './options.js';
import { claim, look, placeCalls, type Claim } from './placing.js';
import { putBackUnplaced } from './put-back.js';
import { attemptsOfLockedAccounts, markEnded, markRinging, type EndedMark, type PlacedCall } from './store/ended-calls.js';
import { nextDue } from './store/placing.js';
import { sweep } from './sweep.js';
import type { CallOutcome } from '../call-outcomes.js';
import type { CallResult, Telephony } from '../voice/providers/telephony.js';

// The dialer: claims contacts and places calls (tick: placing.ts), applies finished calls (report and
// flush: ended-calls.ts), and repairs what time breaks (sweep.ts); the rules they follow are the pure
// functions of decisions.ts, and their statements are in store/. Every rule that concurrency could
// break is decided inside a transaction that holds the campaign's row lock, or (the credit hold) by one
// conditional statement, so any number of workers may run ticks at once. Its hot path is plain SQL
// (env.sql), a few batched statements per tick and per batch of results: through Prisma the same work
// cost several times the CPU. This class keeps what one process knows between those steps.

/** How soon results that wait for a locked account are asked about again. */
const LOCKED_RETRY_MS = 250;

export class Dialer {
  /** Results to write, each with when it came in: when its call ended, as far as the dialer knows. */
  private pending: Reported[] = [];
  private placed: PlacedCall[] = [];
  /**
   * Customers whose accounts a batch of results found locked (RowsLockedError: a transaction that does
   * not end holds them). Their results are asked about before each batch and wait while still locked.
   */
  private locked = new Set<string>();
  /**
   * Calls this process placed and has not heard the end of, by attempt id: their campaigns, and when
   * their leases run out (a provider that reports to another process would otherwise leave them here).
   */
  private live = new Map<string, { campaignId: string; until: number }>();
  /**
   * Calls this process placed that have ended, by campaign, until their results are taken to be
   * written: no longer in flight, so their slots are free to this process's ticks at once. Every other
   * worker learns of them from ended_calls, written in batches (`marks`) a few milliseconds later.
   */
  private ended = new Map<string, Set<string>>();
  private marks: EndedMark[] = [];
  private flushing: Promise<void> | null = null;
  private marking: Promise<void> | null = null;
  /** The customer of each campaign this process has claimed calls for, for the order of its ticks (turns.ts). */
  private customers = new Map<string, string>();

  constructor(
    private readonly env: ServiceEnv,
    private readonly telephony: () => Telephony,
    private readonly wake: Wake,
    private readonly options: DialerOptions = DEFAULT_DIALER_OPTIONS,
    /** Told the outcome of each call whose result this process wrote (for the metrics). */
    private readonly onEnded: (outcome: CallOutcome) => void = () => {},
  ) {}

  /**
   * Claims as many due, callable contacts as the campaign has free slots (and the balance can pay
   * for), and places their calls. Returns how many calls it placed. `log`: the job's logger.
   */
  async tick(campaignId: string, log: Logger = this.env.log): Promise<number> {
    const now = this.env.clock.now();
    const estimate = callHoldCents(this.env.settings);
    const ended = [...(this.ended.get(campaignId) ?? [])];
    const looked = await look(this.env, this.options, campaignId, now, ended, estimate);
    if (looked === 'nothing_due') await this.wakeAtNextDue(campaignId);
    if (typeof looked === 'string') return 0;
    const claimed = await claim(this.env, this.options, campaignId, now, ended, looked, estimate);
    if (claimed.claim?.userId) this.learnCustomer(campaignId, claimed.claim.userId);
    if (claimed.changed || claimed.claim?.calls.length) this.announce(campaignId, claimed.claim?.calls.map((c) => c.id) ?? []);
    if (!claimed.claim || !(await this.hold(campaignId, claimed.claim, now, estimate))) return 0;
    await this.place(campaignId, claimed.claim, now, log);
    if (claimed.claim.more) this.wake(campaignId);
    else if (claimed.claim.wakeAt) this.wake(campaignId, claimed.claim.wakeAt);
    else if (claimed.claim.calls.length === 0) await this.wakeAtNextDue(campaignId);
    return claimed.claim.calls.length;
  }

  /** The customer a campaign belongs to, once this process has claimed calls for it. */
  customerOf(campaignId: string): string | undefined {
    return this.customers.get(campaignId);
  }

  private learnCustomer(campaignId: string, userId: string): void {
    // Forgotten now and then, so that a process that lives for months does not keep every campaign it saw.
    if (this.customers.size >= 10_000 && !this.customers.has(campaignId)) this.customers.clear();
    this.customers.set(campaignId, userId);
  }

  /**
   * Holds credit for the claimed calls. When the balance changed since the tick read it, these calls
   * did not happen, and the next tick reads it again (and pauses the campaign if nothing is left).
   */
  private async hold(campaignId: string, claim: Claim, now: Date, estimate: bigint): Promise<boolean> {
    const ids = claim.calls.map((c) => c.id);
    if (ids.length === 0 || (await holdCalls(this.env.sql, now, claim.userId!, ids, estimate))) return true;
    await this.putBackClaimed(campaignId, ids, now);
    return false;
  }

  /** Claimed calls that will not be placed go back to the queue, due at once, and the campaign ticks again. */
  private async putBackClaimed(campaignId: string, attemptIds: string[], dueAt: Date): Promise<void> {
    await putBackUnplaced(this.env, attemptIds, dueAt);
    this.announce(campaignId, []);
    this.wake(campaignId);
  }

  private async place(campaignId: string, claim: Claim, now: Date, log: Logger): Promise<void> {
    const until = now.getTime() + this.options.leaseSeconds * 1000;
    if (claim.calls.length === 0) return;
    // The lease, counted from the claim, must cover the whole call. A claim that reaches this point late
    // (this worker was cut off from the database or paused after claiming) is not placed once half of
    // it has gone: another worker's sweep may already have failed these attempts and given their numbers
    // to new ones. Nobody was called, so those still queued are put back as they were, their holds
    // released; those a sweep failed meanwhile stay failed.
    const late = this.env.clock.now().getTime() - now.getTime() > (this.options.leaseSeconds * 1000) / 2;
    if (late) {
      log.warn({ campaignId, calls: claim.calls.length }, 'claimed calls not placed, put back: too late for their lease');
      await this.putBackClaimed(
        campaignId,
        claim.calls.map((c) => c.id),
        this.env.clock.now(),
      );
      return;
    }
    for (const call of claim.calls) this.live.set(call.id, { campaignId, until });
    const calls = claim.calls.map((c) => ({
      attemptId: c.id,
      attemptNumber: c.attemptNumber,
      from: c.from,
      to: c.to,
      providerAgentId: c.providerAgentId,
      providerAgentVersion: c.providerAgentVersion,
      variables: c.variables,
      voicemailMessage: c.voicemailMessage,
    }));
    const { placed, later, retryAfterSeconds } = await placeCalls(
      this.env,
      this.telephony(),
      campaignId,
      calls,
      (result) => this.report(result),
      log,
    );
    if (later.length) {
      for (const id of later) this.live.delete(id);
      const dueAt = new Date(this.env.clock.now().getTime() + retryAfterSeconds * 1000);
      this.env.log.info({ campaignId, calls: later.length, retryAfterSeconds }, 'the provider asked to retry calls later');
      await putBackUnplaced(this.env, later, dueAt);
      this.wake(campaignId, dueAt);
    }
    if (placed.length) {
      // Written with the next batch of results, which for a short call includes its own: one write of
      // the attempt instead of two, and the next tick need not wait for it.
      this.placed.push(...placed);
      this.scheduleFlush();
    }
  }

  /**
   * Takes a finished call from the telephony adapter; results are applied in batches. `at`: when the
   * call ended, now unless known to be earlier (the sweep's call whose result was lost).
   */
  report(result: CallResult, at: Date = this.env.clock.now()): void {
    const campaignId = this.live.get(result.attemptId)?.campaignId;
    this.pending.push({ result, at, campaignId });
    if (campaignId) {
      this.live.delete(result.attemptId);
      let ended = this.ended.get(campaignId);
      if (!ended) this.ended.set(campaignId, (ended = new Set()));
      ended.add(result.attemptId);
      this.marks.push({ id: result.attemptId, at });
      this.scheduleMark();
      this.wake(campaignId, undefined, true);
    }
    this.scheduleFlush();
  }

  /** Tells every worker which calls ended here, long before a batch of results is written. */
  private scheduleMark(): void {
    if (this.marking) return;
    // A batch that fails is only logged: its calls stay in flight for other workers until written.
    this.marking = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => {
        const marks = this.marks;
        this.marks = [];
        return markEnded(this.env.sql, marks);
      })
      .catch((error: unknown) => this.env.log.warn({ err: error }, 'marking ended calls failed'))
      .finally(() => {
        this.marking = null;
        if (this.marks.length) this.scheduleMark();
      });
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    // A batch that fails to apply is logged and dropped: its calls' leases run out and the sweep
    // counts them as failed, so no slot or hold is lost.
    // Results that wait for a locked account are asked about again a little later, not in a loop.
    const waiting = this.pending.length > 0 && this.pending.every((r) => r.deferred);
    this.flushing = new Promise<void>((resolve) => (waiting ? setTimeout(resolve, LOCKED_RETRY_MS) : setImmediate(resolve)))
      .then(() => this.flush())
      .catch((error: unknown) => this.env.log.error({ err: error }, 'applying call results failed'))
      .finally(() => {
        this.flushing = null;
        if (this.pending.length || this.placed.length) this.scheduleFlush();
      });
  }

  /** Waits until every placed call and reported result has been written, those reported meanwhile too. */
  async settled(): Promise<void> {
    while (this.flushing || this.marking) await (this.flushing ?? this.marking);
  }

  /**
   * Waits until what was placed and reported before the call has been written: it is in the batch under
   * way or in the next one. Unlike settled(), it ends while results keep coming, as they always do on a
   * busy worker, whose sweep waited for a quiet moment that never came.
   */
  async written(): Promise<void> {
    for (let batch = 0; batch < 2 && (this.flushing || this.marking); batch += 1) await Promise.all([this.flushing, this.marking]);
  }

  /**
   * Writes the calls placed since the last batch, and applies the reported results: each attempt once,
   * whatever repeats or races with a lease expiry.
   */
  protected async flush(): Promise<void> {
    const { reported, placed } = this.takeBatch();
    const ended = new Set(reported.map((r) => r.result.attemptId));
    const ringing = [...placed.values()].filter((p) => !ended.has(p.id));
    if (ringing.length) {
      await markRinging(this.env.sql, ringing);
      for (const campaignId of new Set(ringing.map((c) => c.campaignId))) {
        this.announce(
          campaignId,
          ringing.filter((c) => c.campaignId === campaignId).map((c) => c.id),
        );
      }
    }
    if (reported.length === 0) return;
    // Results of customers whose accounts were locked last time are asked about first, without waiting:
    // those still locked wait for a later batch, so that the others' batch does not wait for them.
    let ready = reported;
    const suspects = reported.filter((r) => r.deferred || this.locked.has(this.customerOfResult(r)));
    if (suspects.length) {
      const locked = await this.deferLocked(suspects, placed);
      ready = reported.filter((r) => !locked.has(r.result.attemptId));
    }
    await this.apply(ready, placed);
  }

  /**
   * Applies results in one batch. When its rows stay locked (RowsLockedError), those whose accounts are
   * locked wait for a later batch and the rest are applied; when no account is locked (an attempt row
   * was), all of them wait.
   */
  private async apply(reported: Reported[], placed: Map<string, PlacedCall>): Promise<void> {
    if (reported.length === 0) return;
    let applied: Applied | null;
    const batch = batchOf(reported, placed);
    try {
      applied = await applyResults(this.env, batch, this.env.clock.now());
    } catch (error) {
      if (!(error instanceof RowsLockedError)) throw error;
      const locked = await this.deferLocked(reported, placed);
      if (locked.size === 0) this.defer(reported, placed);
      else
        await this.apply(
          reported.filter((r) => !locked.has(r.result.attemptId)),
          placed,
        );
      return;
    }
    // Their accounts were free: their customers' results go in the first batch again.
    for (const r of reported) {
      const customer = this.customerOfResult(r);
      if (this.locked.delete(customer)) this.env.log.info({ userId: customer }, 'results written again: their account is free');
    }
    if (applied) {
      // An attempt reported twice in one batch (a call's end, then its analysis) was written once, with the last.
      for (const f of applied.finished) this.onEnded(batch.results.get(f.id)!.outcome);
      await this.applied(applied);
    }
  }

  /** Puts back, for a later batch, the results whose owners' accounts are locked now; returns their attempt ids. */
  private async deferLocked(reported: Reported[], placed: Map<string, PlacedCall>): Promise<Set<string>> {
    const rows = await attemptsOfLockedAccounts(
      this.env.sql,
      reported.map((r) => r.result.attemptId),
    );
    for (const { userId } of rows) {
      if (this.locked.has(userId)) continue;
      this.locked.add(userId);
      this.env.log.warn({ userId }, 'results wait: their account is locked');
    }
    const ids = new Set(rows.map((r) => r.id));
    this.defer(
      reported.filter((r) => ids.has(r.result.attemptId)),
      placed,
    );
    return ids;
  }

  private defer(reported: Reported[], placed: Map<string, PlacedCall>): void {
    this.pending.push(...reported.map((r) => ({ ...r, deferred: true })));
    this.placed.push(...reported.flatMap((r) => placed.get(r.result.attemptId) ?? []));
  }

  private async applied(applied: Applied): Promise<void> {
    await markListed(this.env.sql, applied.blocked);
    for (const campaignId of applied.campaigns) {
      this.announce(
        campaignId,
        applied.finished.filter((f) => f.campaignId === campaignId).map((f) => f.id),
      );
      if (await settleCampaign(this.env, this.options, campaignId)) this.announce(campaignId, []);
      // Here only: this process freed these slots for its own ticks when it heard the calls end, and a
      // campaign with more free slots than a tick claims brings the other workers in from its tick.
      // Waking them on every batch cost each of them a tick that found nothing to do.
      this.wake(campaignId, undefined, true);
    }
  }

  /** The customer a result is of, when known here: that of the campaign this process placed its call for. */
  private customerOfResult(reported: Reported): string {
    return (reported.campaignId && this.customers.get(reported.campaignId)) ?? '';
  }

  /**
   * The results reported and the calls placed since the last batch. From here until the batch commits,
   * these calls' slots are free to ticks only through ended_calls (nearly always written by now; else
   * they count as in flight, on the safe side). A batch that fails leaves them unfinished until their
   * leases run out.
   */
  private takeBatch(): { reported: Reported[]; placed: Map<string, PlacedCall> } {
    const reported = this.pending;
    const placed = new Map(this.placed.map((p) => [p.id, p]));
    this.pending = [];
    this.placed = [];
    for (const {
      result: { attemptId },
    } of reported) {
      for (const [campaignId, ended] of this.ended) if (ended.delete(attemptId) && ended.size === 0) this.ended.delete(campaignId);
    }
    return { reported, placed };
  }

  /** Schedules the campaign's next tick for its earliest contact waiting for a later time, if any. */
  private async wakeAtNextDue(campaignId: string): Promise<void> {
    const next = await nextDue(this.env.sql, campaignId, this.env.clock.now());
    if (next) this.wake(campaignId, next);
  }

  /** See sweep.ts. Returns the running campaigns it woke. */
  async sweep(): Promise<string[]> {
    const now = this.env.clock.now();
    for (const [id, { until }] of this.live) if (until < now.getTime()) this.live.delete(id);
    return sweep(this.env, now, {
      report: (result, at) => this.report(result, at),
      written: () => this.written(),
      announce: (campaignId) => this.announce(campaignId, []),
      wake: (campaignId) => this.wake(campaignId),
    });
  }

  /** Live updates, after the change committed: these attempts were created or changed; none: the campaign did. */
  private announce(campaignId: string, attemptIds: string[]): void {
    this.env.events.publish(attemptIds.length ? { kind: 'attempts', campaignId, attemptIds } : { kind: 'campaign', campaignId });
  }
}

/** A result to write: when it came in, and its campaign when this process placed its call. */
interface Reported {
  result: CallResult;
  at: Date;
  campaignId?: string | undefined;
  /** It waited for its account's lock once already. */
  deferred?: boolean;
}

function batchOf(reported: Reported[], placed: Map<string, PlacedCall>): Batch {
  return {
    results: new Map(reported.map(({ result }) => [result.attemptId, result])),
    endedAt: new Map(reported.map(({ result, at }) => [result.attemptId, at])),
    placed,
  };
}
