import type { Logger } from 'pino';
import type { SqlSession } from '../../db/sql.js';
import type { CallStatus } from '../../generated/prisma/client.js';
import { callCostCents, endCalls, holdCalls, lockAccounts, spendableCents } from '../billing/calls.js';
import { addToList, markListed, type ListedNumber } from '../contacts/do-not-call.js';
import { readData } from '../contacts/fields.js';
import { startCampaign } from '../campaigns/start.js';
import { pauseForReason, type PausedReason } from '../campaigns/states.js';
import type { ServiceEnv } from '../context.js';
import { ConflictError } from '../errors.js';
import { uuidv7 } from '../ids.js';
import { retryOnConflict } from './retry.js';
import { decide, policyOf } from './policy.js';
import { readPendingResult } from './pending-result.js';
import { putBackUnplaced } from './put-back.js';
import { CallRefused, type CallResult, type PlaceCall, type Telephony } from './telephony.js';
import { isOpen, localDate, nextOpening, windowOf } from './window.js';

// The dialer: claims contacts and places calls (tick), applies finished calls (report/flush), and
// repairs what time breaks (sweep). Every rule that concurrency could break is decided inside a
// transaction that holds the campaign's row lock, or (the credit hold) by one conditional statement, so
// any number of workers may run ticks at once.
// Its hot path is plain SQL (env.sql), a few batched statements per tick and per batch of results:
// through Prisma the same work cost several times the CPU.

export interface DialerOptions {
  /** How long a call may hold its slot without reporting back before it counts as failed. */
  leaseSeconds: number;
  /** Minutes of call time held from the balance for each call in flight. */
  holdMinutes: number;
  /** The circuit breaker looks at this many most recent finished calls of a campaign... */
  breakerWindow: number;
  /** ...and pauses it when at least this share of them failed. */
  breakerThreshold: number;
  /**
   * The most calls one tick claims. A busy campaign's free slots are then taken by several ticks, which
   * the workers sharing it run side by side, instead of all by whichever tick comes first.
   */
  callsPerTick: number;
}

export const DEFAULT_DIALER_OPTIONS: DialerOptions = { leaseSeconds: 300, holdMinutes: 5, breakerWindow: 20, breakerThreshold: 0.8, callsPerTick: 50 };

/**
 * Asks for a tick of the campaign now, or at `at`; `hereOnly`: in this process, since what it frees
 * (a slot only this process knows to be free) is no use to others.
 */
export type Wake = (campaignId: string, at?: Date, hereOnly?: boolean) => void;

const UNFINISHED: CallStatus[] = ['queued', 'ringing', 'in_progress'];

interface CampaignRow {
  user_id: string;
  status: string;
  concurrent_calls: number;
  timezone: string;
  calling_hours: unknown;
  active_days: unknown;
}

interface AgentRow {
  agent_active: boolean;
  provider_agent_id: string | null;
  from_number: string | null;
  /** Calls whose results are not written yet... */
  in_flight: number;
  /** ...and those of them not known here to have ended. */
  live: number;
}

/** A finished call's attempt, locked, with what deciding its contact's next step needs. */
interface FinishedRow {
  id: string;
  user_id: string;
  campaign_id: string;
  contact_id: string;
  cc_id: string;
  attempts: number;
  first_attempt_at: Date;
  contact_timezone: string | null;
  phone_number: string;
  contact_data: unknown;
  campaign_timezone: string;
  calling_hours: unknown;
  active_days: unknown;
  schedule_config: unknown;
  max_retry_days: number;
  attempt_times: Date[];
}

interface Candidate {
  id: string;
  contact_id: string;
  attempts: number;
  phone_number: string | null;
  status: 'active' | 'invalid' | 'do_not_call';
  timezone: string | null;
  data: unknown;
}

/** A call the provider accepted, whose id and start are written with the next batch of results. */
interface PlacedCall {
  id: string;
  campaignId: string;
  providerCallId: string;
  at: Date;
}

export class Dialer {
  /** Results to write, each with when it came in: when its call ended, as far as the dialer knows. */
  private pending: { result: CallResult; at: Date }[] = [];
  private placed: PlacedCall[] = [];
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
  private marks: string[] = [];
  private flushing: Promise<void> | null = null;
  private marking: Promise<void> | null = null;

  constructor(
    private readonly env: ServiceEnv,
    private readonly telephony: () => Telephony,
    private readonly wake: Wake,
    private readonly options: DialerOptions = DEFAULT_DIALER_OPTIONS,
  ) {}

  /**
   * Claims as many due, callable contacts as the campaign has free slots (and the balance can pay
   * for), and places their calls. Returns how many calls it placed. `log`: the job's logger.
   */
  async tick(campaignId: string, log: Logger = this.env.log): Promise<number> {
    const now = this.env.clock.now();
    const estimate = BigInt(this.options.holdMinutes * this.env.settings.callRateCentsPerMinute);
    // Most wake-ups of a busy campaign find every slot taken or nothing due: that is read without its
    // lock. A read that missed a slot freed meanwhile is followed by that change's own wake-up.
    const ended = [...(this.ended.get(campaignId) ?? [])];
    const [idle] = await this.env.sql.query<{ user_id: string; concurrent_calls: number; in_flight: number; live: number; due: boolean }>(
      `SELECT k.user_id, k.concurrent_calls, f.in_flight, f.live,
              EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = k.id AND state = 'pending' AND next_attempt_at <= $2) AS due
       FROM campaigns k, LATERAL (${inFlight('$3')}) f
       WHERE k.id = $1::uuid AND k.status = 'running'`,
      [campaignId, now, ended],
    );
    const looked = idle ? Math.min(freeSlots(idle.concurrent_calls, idle.in_flight, idle.live), this.options.callsPerTick) : 0;
    if (!idle || looked <= 0) return 0;
    if (!idle.due) {
      await this.wakeAtNextDue(campaignId);
      return 0;
    }
    // How many calls the balance pays for is read without the account's lock, which the holds take
    // after the claim commits: the account is shared by all the user's campaigns and by every batch of
    // results, and waiting for it would keep the campaign's other ticks waiting too.
    const affordable = Number((await spendableCents(this.env.sql, idle.user_id)) / estimate);
    // The campaign paused, or contacts were found uncallable: its status or progress changed.
    let changed = false;
    // While this holds the campaign's lock, every other tick of the campaign waits: so it sends three
    // statements and its commit (one more when contacts are set aside), and between them only checks
    // calling windows.
    const claim = await retryOnConflict(() => this.env.sql.transaction(async (tx) => {
      const [campaign] = await tx.query<CampaignRow>(
        `SELECT user_id, status::text, concurrent_calls, timezone, calling_hours, active_days FROM campaigns WHERE id = $1::uuid FOR NO KEY UPDATE`,
        [campaignId],
      );
      if (campaign?.status !== 'running') return null;
      // Read after the campaign's lock is held (a statement of its own, so that it sees what the ticks
      // before this one committed): no other tick can add a call until this one commits.
      // A person is their number: a contact whose number has a call in flight, from any group or
      // campaign of the user, is left for later. That read cannot see the claims of ticks of other
      // campaigns still under way, so the claim below inserts its attempts against a unique index of
      // the numbers in flight and leaves out any number another tick took meanwhile.
      // A number on the do-not-call list is skipped even before its contacts are marked. Locked
      // contact rows are skipped, so a tick never waits on a contact.
      // As many contacts are looked at as the read above found slots free: a few more may have freed
      // since, and the wake-up that freed them brings a tick of its own.
      const rows = await tx.query<AgentRow & Partial<Candidate>>(
        `WITH candidates AS (
           SELECT cc.id, cc.contact_id, cc.attempts, c.phone_number,
                  CASE WHEN d.id IS NULL THEN c.status::text ELSE 'do_not_call' END AS status, c.timezone, c.data, cc.next_attempt_at
           FROM campaign_contacts cc JOIN contacts c ON c.id = cc.contact_id
           LEFT JOIN do_not_call_entries d ON d.user_id = c.user_id AND d.phone_number = c.phone_number
           WHERE cc.campaign_id = $1::uuid AND cc.state = 'pending' AND cc.next_attempt_at <= $3
             AND NOT EXISTS (SELECT 1 FROM call_attempts o WHERE o.user_id = c.user_id AND o.to_number = c.phone_number
                             AND o.status IN ('queued', 'ringing', 'in_progress'))
           ORDER BY cc.next_attempt_at
           LIMIT $4
           FOR NO KEY UPDATE OF cc, c SKIP LOCKED
         )
         SELECT a.is_active AS agent_active, a.provider_agent_id, p.number AS from_number, f.in_flight, f.live,
                n.id, n.contact_id, n.attempts, n.phone_number, n.status, n.timezone, n.data
         FROM campaigns k JOIN agents a ON a.id = k.agent_id LEFT JOIN phone_numbers p ON p.id = a.phone_number_id
              CROSS JOIN LATERAL (${inFlight('$2')}) f
              LEFT JOIN candidates n ON true
         WHERE k.id = $1::uuid
         ORDER BY n.next_attempt_at`,
        [campaignId, ended, now, looked],
      );
      const { agent_active, provider_agent_id, from_number, in_flight, live } = rows[0]!;
      if (!agent_active || !from_number) {
        changed = await pauseForReason(tx, campaignId, agent_active ? 'agent_has_no_phone_number' : 'agent_archived');
        return null;
      }
      const free = freeSlots(campaign.concurrent_calls, in_flight, live);
      // Every slot is taken: the calls in flight wake the campaign when they end.
      if (free <= 0) return null;
      const slots = Math.min(free, this.options.callsPerTick);
      const candidates = rows.filter((row): row is AgentRow & Candidate => row.id != null);

      const window = windowOf(campaign.calling_hours, campaign.active_days);
      const uncallable: { id: string; outcome: string }[] = [];
      const waiting: { id: string; next_attempt_at: Date }[] = [];
      const ready: Candidate[] = [];
      for (const candidate of candidates) {
        // Checked again right before dialing: the contact may have changed since it was enrolled.
        if (candidate.status !== 'active' || !candidate.phone_number) {
          uncallable.push({ id: candidate.id, outcome: candidate.status === 'do_not_call' ? 'do_not_call' : 'invalid' });
          continue;
        }
        const zone = candidate.timezone ?? campaign.timezone;
        if (!isOpen(now, zone, window)) waiting.push({ id: candidate.id, next_attempt_at: nextOpening(now, zone, window) });
        else if (ready.length < slots) ready.push(candidate);
      }
      if (uncallable.length || waiting.length) {
        await setAside(tx, uncallable, waiting, now);
        if (uncallable.length) changed = true;
      }

      const chosen = ready.slice(0, Math.max(0, affordable));
      if (chosen.length === 0 && ready.length > 0) {
        // The balance was read before the lock, and calls may have ended since: whether a call can be
        // paid is decided again on one consistent read of the balance, the holds and the calls in flight.
        const verdict = await creditVerdict(tx, campaignId, campaign.user_id, estimate);
        if (verdict === 'pause') changed = await pauseForReason(tx, campaignId, 'insufficient_credits');
        return verdict === 'retry' ? { calls: [], more: true } : null;
      }
      if (chosen.length === 0) return { calls: [], more: false };

      const leaseUntil = new Date(now.getTime() + this.options.leaseSeconds * 1000);
      const drafts = chosen.map((c) => ({
        id: uuidv7(),
        contactId: c.contact_id,
        attemptNumber: c.attempts + 1,
        to: c.phone_number!,
        variables: variablesOf(c.data),
      }));
      // A number another tick put in flight since the read above is not inserted (ON CONFLICT on the
      // index of numbers in flight), and its contact stays as it was, due again once that call ends.
      // Inserted in number order, so that two ticks inserting the same numbers wait on them in one order.
      const inserted = await tx.query<{ id: string }>(
        `WITH attempts AS (
           INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, to_number, from_number, lease_expires_at, created_at, updated_at)
           SELECT r.id, $2::uuid, $3::uuid, r.contact_id, r.attempt_number, 'queued', r.to_number, $4, $5, $6, $6
           FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, contact_id uuid, attempt_number int, to_number text)
           ORDER BY r.to_number
           ON CONFLICT (user_id, to_number) WHERE status IN ('queued', 'ringing', 'in_progress') DO NOTHING
           RETURNING id, contact_id
         )
         UPDATE campaign_contacts SET state = 'dialing', attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, $6),
           last_attempt_at = $6, lease_expires_at = $5, updated_at = $6
         FROM attempts WHERE campaign_contacts.campaign_id = $3::uuid AND campaign_contacts.contact_id = attempts.contact_id
         RETURNING attempts.id`,
        [
          JSON.stringify(drafts.map((c) => ({ id: c.id, contact_id: c.contactId, attempt_number: c.attemptNumber, to_number: c.to }))),
          campaign.user_id,
          campaignId,
          from_number,
          leaseUntil,
          now,
        ],
      );
      const taken = new Set(inserted.map((row) => row.id));
      const calls = drafts.filter((c) => taken.has(c.id));
      // There is more to do now when this tick spent its look on contacts it could not call, or took
      // as many calls as a tick may while more slots are free.
      return {
        calls,
        userId: campaign.user_id,
        from: from_number,
        providerAgentId: provider_agent_id,
        more: (candidates.length === looked && chosen.length < slots) || (chosen.length === slots && free > slots),
      };
    }));
    if (changed || claim?.calls.length) this.announce(campaignId, claim?.calls.map((c) => c.id) ?? []);
    if (!claim) return 0;
    if (claim.calls.length && !(await holdCalls(this.env.sql, now, claim.userId!, claim.calls.map((c) => c.id), estimate))) {
      // The balance changed since the tick read it: these calls did not happen, and the next tick
      // reads it again (and pauses the campaign if nothing is left).
      await putBackUnplaced(this.env, claim.calls.map((c) => c.id), now);
      this.announce(campaignId, []);
      this.wake(campaignId);
      return 0;
    }

    const until = now.getTime() + this.options.leaseSeconds * 1000;
    for (const call of claim.calls) this.live.set(call.id, { campaignId, until });
    await this.place(campaignId, claim.calls.map((c) => ({ attemptId: c.id, attemptNumber: c.attemptNumber, from: claim.from!, to: c.to, providerAgentId: claim.providerAgentId ?? null, variables: c.variables })), log);
    if (claim.more) this.wake(campaignId);
    else if (claim.calls.length === 0) await this.wakeAtNextDue(campaignId);
    return claim.calls.length;
  }

  private async place(campaignId: string, calls: PlaceCall[], log: Logger): Promise<void> {
    if (calls.length === 0) return;
    const telephony = this.telephony();
    const placed: PlacedCall[] = [];
    const later: string[] = [];
    let retryAfterSeconds = 0;
    await Promise.all(
      calls.map(async (call) => {
        try {
          const { providerCallId } = await telephony.placeCall(call);
          placed.push({ id: call.attemptId, campaignId, providerCallId, at: this.env.clock.now() });
        } catch (error) {
          if (error instanceof CallRefused && error.reason === 'retry_later') {
            later.push(call.attemptId);
            retryAfterSeconds = Math.max(retryAfterSeconds, error.retryAfterSeconds);
            return;
          }
          log.warn({ err: error, attemptId: call.attemptId }, 'the provider refused a call');
          this.report(
            error instanceof CallRefused
              ? { attemptId: call.attemptId, status: 'failed', durationSeconds: 0, disconnectReason: 'invalid_destination', invalidDestination: true }
              : { attemptId: call.attemptId, status: 'failed', durationSeconds: 0, disconnectReason: 'provider_error' },
          );
        }
      }),
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

  /** Takes a finished call from the telephony adapter; results are applied in batches. */
  report(result: CallResult): void {
    this.pending.push({ result, at: this.env.clock.now() });
    const campaignId = this.live.get(result.attemptId)?.campaignId;
    if (campaignId) {
      this.live.delete(result.attemptId);
      let ended = this.ended.get(campaignId);
      if (!ended) this.ended.set(campaignId, (ended = new Set()));
      ended.add(result.attemptId);
      this.marks.push(result.attemptId);
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
        const ids = this.marks;
        this.marks = [];
        return this.env.sql.query('INSERT INTO ended_calls (attempt_id) SELECT unnest($1::uuid[]) ON CONFLICT DO NOTHING', [ids]);
      })
      .then(() => undefined)
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
    this.flushing = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.flush())
      .catch((error: unknown) => this.env.log.error({ err: error }, 'applying call results failed'))
      .finally(() => {
        this.flushing = null;
        if (this.pending.length || this.placed.length) this.scheduleFlush();
      });
  }

  /** Waits until every placed call and reported result has been written. */
  async settled(): Promise<void> {
    while (this.flushing || this.marking) await (this.flushing ?? this.marking);
  }

  /**
   * Writes the calls placed since the last batch, and applies the reported results: each attempt once,
   * whatever repeats or races with a lease expiry.
   */
  async flush(): Promise<void> {
    const batch = this.pending;
    const placed = new Map(this.placed.map((p) => [p.id, p]));
    this.pending = [];
    this.placed = [];
    // From here until the batch commits, these calls' slots are free to ticks only through ended_calls
    // (nearly always written by now; else they count as in flight, on the safe side). A batch that fails
    // leaves them unfinished until their leases run out.
    for (const { result: { attemptId } } of batch) {
      for (const [campaignId, ended] of this.ended) if (ended.delete(attemptId) && ended.size === 0) this.ended.delete(campaignId);
    }
    const results = new Map(batch.map(({ result }) => [result.attemptId, result]));
    const endedAt = new Map(batch.map(({ result, at }) => [result.attemptId, at]));
    await this.markRinging([...placed.values()].filter((p) => !results.has(p.id)));
    if (results.size === 0) return;
    const now = this.env.clock.now();
    const touched = await retryOnConflict(() => this.env.sql.transaction(async (tx) => {
      // The attempts still unfinished, locked in id order, then their owners' accounts: the order every
      // dialer transaction takes them in.
      const finished = await tx.query<FinishedRow>(
        `SELECT a.id, a.user_id, a.campaign_id, a.contact_id, cc.id AS cc_id, cc.attempts, cc.first_attempt_at,
                c.timezone AS contact_timezone, c.phone_number, c.data AS contact_data,
                k.timezone AS campaign_timezone, k.calling_hours, k.active_days, k.schedule_config, k.max_retry_days,
                (SELECT array_agg(p.created_at) FROM call_attempts p WHERE p.campaign_id = a.campaign_id AND p.contact_id = a.contact_id) AS attempt_times
         FROM call_attempts a
         JOIN campaign_contacts cc ON cc.campaign_id = a.campaign_id AND cc.contact_id = a.contact_id
         JOIN contacts c ON c.id = a.contact_id
         JOIN campaigns k ON k.id = a.campaign_id
         WHERE a.id = ANY($1::uuid[]) AND a.status IN ('queued', 'ringing', 'in_progress')
         ORDER BY a.id
         FOR NO KEY UPDATE OF a`,
        [[...results.keys()]],
      );
      if (finished.length === 0) return null;

      const contacts: { id: string; state: string; outcome: string | null; next_attempt_at: Date | null; ready_at?: Date; last_status: string }[] = [];
      const blocked: ListedNumber[] = [];
      const appointments: Record<string, unknown>[] = [];
      for (const f of finished) {
        const result = results.get(f.id)!;
        const zone = f.contact_timezone ?? f.campaign_timezone;
        if (result.doNotCall) {
          blocked.push({ userId: f.user_id, phoneNumber: f.phone_number });
          contacts.push({ id: f.cc_id, state: 'done', outcome: 'do_not_call', next_attempt_at: null, last_status: result.status });
        } else if (result.invalidDestination) {
          contacts.push({ id: f.cc_id, state: 'done', outcome: 'invalid', next_attempt_at: null, last_status: result.status });
        } else {
          const today = localDate(now, zone);
          const decision = decide(
            result.status,
            {
              attempts: f.attempts,
              attemptsToday: f.attempt_times.filter((t) => localDate(new Date(t), zone) === today).length,
              firstAttemptAt: new Date(f.first_attempt_at),
            },
            policyOf(f.schedule_config, f.max_retry_days),
            now,
            zone,
            windowOf(f.calling_hours, f.active_days),
          );
          contacts.push(
            'retryAt' in decision
              ? { id: f.cc_id, state: 'pending', outcome: null, next_attempt_at: decision.retryAt, ready_at: decision.readyAt, last_status: result.status }
              : { id: f.cc_id, state: 'done', outcome: decision.outcome, next_attempt_at: null, last_status: result.status },
          );
        }
        if (result.appointment) {
          appointments.push({
            id: uuidv7(),
            user_id: f.user_id,
            contact_id: f.contact_id,
            campaign_id: f.campaign_id,
            call_attempt_id: f.id,
            scheduled_at: result.appointment.scheduledAt,
            timezone: zone,
            contact_snapshot: snapshot(f.contact_data, f.phone_number),
            appointment_data: { source_call_id: f.id, notes: result.appointment.notes },
          });
        }
      }
      // Everything but the money first: the accounts are locked last, for as short a time as can be.
      // An attempt's cost is what its call cost; where credits ran out and part of it was written off,
      // it is corrected to what was charged, under the lock.
      const rate = this.env.settings.callRateCentsPerMinute;
      const priceOf = (id: string) => callCostCents(results.get(id)!.durationSeconds, rate);
      await addToList(tx, blocked, 'Asked during a call', 'call');
      await tx.query(
        `WITH attempts AS (
           UPDATE call_attempts SET status = r.status::"CallStatus", duration_seconds = r.duration_seconds, summary = r.summary,
             sentiment = coalesce(r.sentiment, 'unknown')::"Sentiment", disconnect_reason = r.disconnect_reason,
             recording_url = r.recording_url, transcript = r.transcript, analysis = coalesce(r.analysis, '{}'::jsonb),
             cost_cents = r.cost_cents, ended_at = r.ended_at, lease_expires_at = NULL, pending_result = NULL, updated_at = $4,
             provider_call_id = coalesce(call_attempts.provider_call_id, r.provider_call_id), started_at = coalesce(call_attempts.started_at, r.started_at)
           FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, status text, duration_seconds int, summary text, sentiment text, disconnect_reason text,
                                                  recording_url text, transcript text, analysis jsonb, cost_cents bigint,
                                                  provider_call_id text, started_at timestamptz, ended_at timestamptz)
           WHERE call_attempts.id = r.id
         ), appointments AS (
           INSERT INTO appointments (id, user_id, contact_id, campaign_id, call_attempt_id, status, scheduled_at, timezone, contact_snapshot, appointment_data, created_at, updated_at)
           SELECT r.id, r.user_id, r.contact_id, r.campaign_id, r.call_attempt_id, 'scheduled', r.scheduled_at, r.timezone, r.contact_snapshot, r.appointment_data, $4, $4
           FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, user_id uuid, contact_id uuid, campaign_id uuid, call_attempt_id uuid, scheduled_at timestamptz,
                                                  timezone text, contact_snapshot jsonb, appointment_data jsonb)
         )
         UPDATE campaign_contacts SET state = r.state::"DialState", outcome = r.outcome, next_attempt_at = r.next_attempt_at,
           ready_at = r.ready_at, last_status = r.last_status, lease_expires_at = NULL, updated_at = $4
         FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, state text, outcome text, next_attempt_at timestamptz, ready_at timestamptz, last_status text)
         WHERE campaign_contacts.id = r.id`,
        [
          JSON.stringify(
            finished.map(({ id }) => {
              const r = results.get(id)!;
              return {
                id,
                status: r.status,
                duration_seconds: r.durationSeconds,
                summary: r.summary ?? null,
                sentiment: r.sentiment ?? null,
                disconnect_reason: r.disconnectReason ?? null,
                recording_url: r.recordingUrl ?? null,
                transcript: r.transcript ?? null,
                analysis: r.analysis ?? null,
                cost_cents: String(priceOf(id)),
                provider_call_id: placed.get(id)?.providerCallId ?? null,
                started_at: placed.get(id)?.at ?? null,
                ended_at: endedAt.get(id),
              };
            }),
          ),
          JSON.stringify(contacts),
          JSON.stringify(appointments),
          now,
        ],
      );

      const accounts = await lockAccounts(tx, finished.map((f) => f.user_id));
      // Calls that talked are charged; every other hold is given back.
      const talked = finished.filter((f) => results.get(f.id)!.durationSeconds > 0);
      const charged = await endCalls(
        tx,
        this.env,
        accounts,
        talked.map((f) => ({ callAttemptId: f.id, campaignId: f.campaign_id, userId: f.user_id, durationSeconds: results.get(f.id)!.durationSeconds })),
        finished.map((f) => f.id),
      );
      const corrections = finished.filter((f) => (charged.get(f.id) ?? 0n) !== priceOf(f.id));
      if (corrections.length) {
        await tx.query(
          `UPDATE call_attempts SET cost_cents = r.cost_cents FROM unnest($1::uuid[], $2::bigint[]) AS r(id, cost_cents) WHERE call_attempts.id = r.id`,
          [corrections.map((f) => f.id), corrections.map((f) => String(charged.get(f.id) ?? 0n))],
        );
      }
      return { campaigns: [...new Set(finished.map((f) => f.campaign_id))], finished, blocked };
    }));
    if (!touched) return;
    await markListed(this.env.sql, touched.blocked);
    for (const campaignId of touched.campaigns) {
      this.announce(campaignId, touched.finished.filter((f) => f.campaign_id === campaignId).map((f) => f.id));
      await this.afterResults(campaignId);
      this.wake(campaignId);
    }
  }

  /** Calls under way: their provider's call id, their start, and `ringing` unless a result came first. */
  private async markRinging(calls: PlacedCall[]): Promise<void> {
    if (calls.length === 0) return;
    // Rows are locked in id order, as result batches lock them, so the two cannot deadlock.
    await this.env.sql.query(
      `UPDATE call_attempts a SET provider_call_id = r.provider_call_id, started_at = coalesce(a.started_at, r.started_at), updated_at = now(),
         status = CASE WHEN a.status = 'queued' THEN 'ringing'::"CallStatus" ELSE a.status END
       FROM (SELECT id FROM call_attempts WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE) l,
            unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS r(id, provider_call_id, started_at)
       WHERE a.id = l.id AND a.id = r.id`,
      [calls.map((c) => c.id), calls.map((c) => c.providerCallId), calls.map((c) => c.at)],
    );
    for (const campaignId of new Set(calls.map((c) => c.campaignId))) {
      this.announce(campaignId, calls.filter((c) => c.campaignId === campaignId).map((c) => c.id));
    }
  }

  /** Completes a campaign with nothing left to do, or trips its circuit breaker. */
  private async afterResults(campaignId: string): Promise<void> {
    // Read without a lock first: most batches change neither, and the campaign's lock is the ticks'.
    // Under the lock, the verdict is read again by a statement of its own, which sees what the
    // lock's previous holders committed.
    const verdict = async (session: SqlSession) => {
      const [row] = await session.query<{ status: string; open: boolean; recent: number; failed: number }>(
        `SELECT k.status::text,
                EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = k.id AND state <> 'done') AS open,
                r.recent, r.failed
         FROM campaigns k,
              LATERAL (SELECT count(*)::int AS recent, count(*) FILTER (WHERE status = 'failed')::int AS failed
                       FROM (SELECT status FROM call_attempts
                             WHERE campaign_id = k.id AND status NOT IN ('queued', 'ringing', 'in_progress')
                             ORDER BY created_at DESC, id DESC LIMIT $2) last) r
         WHERE k.id = $1::uuid`,
        [campaignId, this.options.breakerWindow],
      );
      if (row?.status !== 'running') return null;
      if (!row.open) return 'completed' as const;
      const tripped = row.recent >= this.options.breakerWindow && row.failed >= this.options.breakerThreshold * row.recent;
      return tripped ? ('high_failure_rate' as const) : null;
    };
    if (!(await verdict(this.env.sql))) return;
    const now = this.env.clock.now();
    const changed = await retryOnConflict(() => this.env.sql.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM campaigns WHERE id = $1::uuid FOR NO KEY UPDATE', [campaignId]);
      const outcome = await verdict(tx);
      if (outcome === 'completed') {
        await tx.query(
          `UPDATE campaigns SET status = 'completed', completed_at = $2, paused_reason = NULL, updated_at = now() WHERE id = $1::uuid`,
          [campaignId, now],
        );
        return true;
      }
      return outcome === 'high_failure_rate' ? pauseForReason(tx, campaignId, outcome) : false;
    }));
    if (changed) this.announce(campaignId, []);
  }

  /** Schedules the campaign's next tick for its earliest contact waiting for a later time, if any. */
  private async wakeAtNextDue(campaignId: string): Promise<void> {
    const [next] = await this.env.sql.query<{ next_attempt_at: Date }>(
      `SELECT next_attempt_at FROM campaign_contacts WHERE campaign_id = $1::uuid AND state = 'pending' AND next_attempt_at > $2
       ORDER BY next_attempt_at LIMIT 1`,
      [campaignId, this.env.clock.now()],
    );
    if (next) this.wake(campaignId, next.next_attempt_at);
  }

  /**
   * What time alone changes: calls whose lease ran out get the result their provider left for them, or
   * else count as failed (either way their slot comes back), scheduled campaigns whose start has come
   * begin, cancelled campaigns close their waiting contacts, and every running campaign gets a tick.
   * Returns the running campaigns it woke.
   */
  async sweep(): Promise<string[]> {
    const now = this.env.clock.now();
    for (const [id, { until }] of this.live) if (until < now.getTime()) this.live.delete(id);
    await this.env.sql.query(
      `DELETE FROM ended_calls e WHERE NOT EXISTS (
         SELECT 1 FROM call_attempts a WHERE a.id = e.attempt_id AND a.status IN ('queued', 'ringing', 'in_progress'))`,
    );
    const expired = await this.env.db.callAttempt.findMany({
      where: { status: { in: UNFINISHED }, leaseExpiresAt: { lt: now } },
      select: { id: true, pendingResult: true },
      take: 5_000,
    });
    for (const { id, pendingResult } of expired) {
      this.report(pendingResult ? readPendingResult(pendingResult) : { attemptId: id, status: 'failed', durationSeconds: 0, disconnectReason: 'no_report' });
    }
    await this.settled();
    const closed = await this.env.db.$queryRaw<{ campaign_id: string }[]>`
      UPDATE campaign_contacts SET state = 'done', outcome = 'cancelled', next_attempt_at = NULL, updated_at = ${now}
      WHERE state = 'pending' AND campaign_id IN (SELECT id FROM campaigns WHERE status = 'cancelled')
      RETURNING campaign_id`;
    for (const campaignId of new Set(closed.map((c) => c.campaign_id))) this.announce(campaignId, []);
    const starting = await this.env.db.campaign.findMany({ where: { status: 'scheduled', startedAt: { lte: now } }, select: { id: true } });
    for (const { id } of starting) await this.startScheduled(id, now);
    const running = await this.env.db.campaign.findMany({ where: { status: 'running' }, select: { id: true } });
    for (const { id } of running) this.wake(id);
    return running.map((c) => c.id);
  }

  /** A scheduled campaign whose time has come starts; one that cannot is paused with the reason. */
  private async startScheduled(campaignId: string, now: Date): Promise<void> {
    try {
      await retryOnConflict(() => this.env.sql.transaction((tx) => startCampaign(tx, campaignId, now)));
    } catch (error) {
      if (!(error instanceof ConflictError) || !isPausedReason(error.reason)) throw error;
      const reason = error.reason;
      await pauseForReason(this.env.sql, campaignId, reason);
    }
    this.announce(campaignId, []);
  }

  /** Live updates, after the change committed: these attempts were created or changed; none: the campaign did. */
  private announce(campaignId: string, attemptIds: string[]): void {
    this.env.events.publish(attemptIds.length ? { kind: 'attempts', campaignId, attemptIds } : { kind: 'campaign', campaignId });
  }
}

/**
 * Counts campaign k's calls whose results are not written yet (an attempt is unfinished exactly while
 * its contact is dialing: both change in one statement), and those of them not known to have ended:
 * neither in ended_calls nor among the parameter `ended` (uuid[], this process's not marked yet).
 */
const inFlight = (ended: string) => `SELECT count(*)::int AS in_flight,
    (count(*) FILTER (WHERE e.attempt_id IS NULL AND a.id <> ALL(${ended}::uuid[])))::int AS live
  FROM call_attempts a LEFT JOIN ended_calls e ON e.attempt_id = a.id
  WHERE a.campaign_id = k.id AND a.status IN ('queued', 'ringing', 'in_progress')`;

/**
 * Slots are taken by the calls in flight. Calls that ended here and wait to be written leave theirs
 * free, up to a campaign's worth: a backlog of results to write beyond that holds the ticks back.
 */
function freeSlots(concurrentCalls: number, inFlight: number, live: number): number {
  return Math.min(concurrentCalls - live, 2 * concurrentCalls - inFlight);
}

/**
 * When a tick could pay for no call: `retry` when the balance covers one after all (it was read before
 * calls ended), `pause` when it does not and the campaign has no call in flight whose end could give
 * credits back, else `wait` for those calls to end. One statement, so both figures are of one moment: a
 * batch of results that ends calls and releases their holds commits all of it at once.
 */
async function creditVerdict(tx: SqlSession, campaignId: string, userId: string, estimate: bigint): Promise<'retry' | 'pause' | 'wait'> {
  const [row] = await tx.query<{ spendable: string; in_flight: number }>(
    `SELECT coalesce((SELECT balance_cents + included_remaining_cents - held_cents FROM credit_accounts WHERE user_id = $2::uuid), 0)::text AS spendable,
            (SELECT count(*)::int FROM call_attempts
             WHERE campaign_id = $1::uuid AND status IN ('queued', 'ringing', 'in_progress')) AS in_flight`,
    [campaignId, userId],
  );
  if (BigInt(row!.spendable) >= estimate) return 'retry';
  return row!.in_flight === 0 ? 'pause' : 'wait';
}

/** Contacts a tick cannot call: done for good (uncallable), or due again when their window opens (waiting). */
async function setAside(
  tx: SqlSession,
  uncallable: { id: string; outcome: string }[],
  waiting: { id: string; next_attempt_at: Date }[],
  now: Date,
): Promise<void> {
  await tx.query(
    `WITH done AS (
       UPDATE campaign_contacts SET state = 'done', outcome = r.outcome, next_attempt_at = NULL, updated_at = $3
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, outcome text) WHERE campaign_contacts.id = r.id
     )
     UPDATE campaign_contacts SET next_attempt_at = r.next_attempt_at, updated_at = $3
     FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, next_attempt_at timestamptz) WHERE campaign_contacts.id = r.id`,
    [JSON.stringify(uncallable), JSON.stringify(waiting), now],
  );
}

function variablesOf(stored: unknown): Record<string, string> {
  const data = readData(stored);
  const out: Record<string, string> = { ...data.custom_fields };
  for (const key of ['first_name', 'last_name', 'email', 'address'] as const) if (data[key]) out[key] = data[key]!;
  return out;
}

function snapshot(stored: unknown, phoneNumber: string): Record<string, string> {
  const data = readData(stored);
  return {
    first_name: data.first_name ?? '',
    last_name: data.last_name ?? '',
    email: data.email ?? '',
    phone_number: phoneNumber,
  };
}

const STARTUP_REFUSALS: PausedReason[] = ['agent_inactive', 'agent_has_no_phone_number', 'no_callable_contacts'];
const isPausedReason = (reason: string | undefined): reason is PausedReason => STARTUP_REFUSALS.includes(reason as PausedReason);
