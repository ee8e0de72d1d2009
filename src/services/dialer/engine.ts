import type { Logger } from 'pino';
import type { CallStatus, Prisma } from '../../generated/prisma/client.js';
import { holdCallsWithin, releaseHoldsWithin, settleCallsWithin } from '../billing/calls.js';
import { effectiveCents, lockAccount, type Balances } from '../billing/ledger.js';
import { putOnList } from '../contacts/do-not-call.js';
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
// transaction that holds the campaign's row lock, so any number of workers may run ticks at once.

export interface DialerOptions {
  /** How long a call may hold its slot without reporting back before it counts as failed. */
  leaseSeconds: number;
  /** Minutes of call time held from the balance for each call in flight. */
  holdMinutes: number;
  /** The circuit breaker looks at this many most recent finished calls of a campaign... */
  breakerWindow: number;
  /** ...and pauses it when at least this share of them failed. */
  breakerThreshold: number;
}

export const DEFAULT_DIALER_OPTIONS: DialerOptions = { leaseSeconds: 300, holdMinutes: 5, breakerWindow: 20, breakerThreshold: 0.8 };

/** Asks for a tick of the campaign now, or at `at`. */
export type Wake = (campaignId: string, at?: Date) => void;

/** Dialer transactions queue on a campaign's and an account's row locks, longer than Prisma's 2 s / 5 s allow. */
const TRANSACTION_OPTIONS = { maxWait: 15_000, timeout: 30_000 };

const FINISHED: CallStatus[] = ['completed', 'no_answer', 'busy', 'failed', 'voicemail', 'canceled'];
const UNFINISHED: CallStatus[] = ['queued', 'ringing', 'in_progress'];

interface CampaignRow {
  id: string;
  user_id: string;
  agent_id: string;
  status: string;
  concurrent_calls: number;
  timezone: string;
  calling_hours: unknown;
  active_days: unknown;
  started_at: Date | null;
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

export class Dialer {
  private pending: CallResult[] = [];
  private flushing: Promise<void> | null = null;

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
    // The campaign paused, or contacts were found uncallable: its status or progress changed.
    let changed = false;
    const claim = await retryOnConflict(() => this.env.db.$transaction(
      async (tx) => {
        const [campaign] = await tx.$queryRaw<CampaignRow[]>`
          SELECT id, user_id, agent_id, status, concurrent_calls, timezone, calling_hours, active_days, started_at
          FROM campaigns WHERE id = ${campaignId}::uuid FOR UPDATE`;
        if (campaign?.status !== 'running') return null;

        const agent = await tx.agent.findUniqueOrThrow({
          where: { id: campaign.agent_id },
          select: { isActive: true, providerAgentId: true, primaryPhoneNumber: { select: { number: true } } },
        });
        if (!agent.isActive || !agent.primaryPhoneNumber) {
          changed = await pauseForReason(tx, campaignId, agent.isActive ? 'agent_has_no_phone_number' : 'agent_archived');
          return null;
        }
        const [{ in_flight } = { in_flight: 0 }] = await tx.$queryRaw<{ in_flight: number }[]>`
          SELECT count(*)::int AS in_flight FROM campaign_contacts WHERE campaign_id = ${campaignId}::uuid AND state = 'dialing'`;
        const slots = campaign.concurrent_calls - in_flight;
        // Every slot is taken: the calls in flight wake the campaign when they end.
        if (slots <= 0) return null;

        // Locking the contact rows (skipping those another tick holds) and checking that no other
        // campaign is dialing them makes "never two calls at once to one person" hold across campaigns.
        // A number on the do-not-call list is skipped even before its contacts are marked. Skipping
        // locked rows means a tick never waits on a contact, so the lock order of every dialer
        // transaction (campaign, then account; result batches: account only) cannot deadlock.
        const limit = slots * 3;
        const candidates = await tx.$queryRaw<Candidate[]>`
          SELECT cc.id, cc.contact_id, cc.attempts, c.phone_number,
                 CASE WHEN d.id IS NULL THEN c.status::text ELSE 'do_not_call' END AS status, c.timezone, c.data
          FROM campaign_contacts cc JOIN contacts c ON c.id = cc.contact_id
          LEFT JOIN do_not_call_entries d ON d.user_id = c.user_id AND d.phone_number = c.phone_number
          WHERE cc.campaign_id = ${campaignId}::uuid AND cc.state = 'pending' AND cc.next_attempt_at <= ${now}
            AND NOT EXISTS (SELECT 1 FROM campaign_contacts o WHERE o.contact_id = cc.contact_id AND o.state = 'dialing')
          ORDER BY cc.next_attempt_at
          LIMIT ${limit}
          FOR UPDATE OF cc, c SKIP LOCKED`;

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
        if (uncallable.length) {
          await finishContacts(tx, uncallable);
          changed = true;
        }
        if (waiting.length) await deferContacts(tx, waiting);

        const account = await lockAccount(tx, campaign.user_id);
        const affordable = Number(effectiveCents(account) / estimate);
        const chosen = ready.slice(0, Math.max(0, affordable));
        if (chosen.length < ready.length && chosen.length === 0 && in_flight === 0) {
          changed = await pauseForReason(tx, campaignId, 'insufficient_credits');
          return null;
        }
        if (chosen.length === 0) return { calls: [], more: false };

        const leaseUntil = new Date(now.getTime() + this.options.leaseSeconds * 1000);
        const from = agent.primaryPhoneNumber.number;
        const calls = chosen.map((c) => ({
          id: uuidv7(),
          campaignContactId: c.id,
          contactId: c.contact_id,
          attemptNumber: c.attempts + 1,
          to: c.phone_number!,
          variables: variablesOf(c.data),
        }));
        await tx.$executeRaw`
          INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, to_number, from_number, lease_expires_at, created_at, updated_at)
          SELECT r.id, ${campaign.user_id}::uuid, ${campaignId}::uuid, r.contact_id, r.attempt_number, 'queued', r.to_number, ${from}, ${leaseUntil}, ${now}, ${now}
          FROM jsonb_to_recordset(${JSON.stringify(calls.map((c) => ({ id: c.id, contact_id: c.contactId, attempt_number: c.attemptNumber, to_number: c.to })))}::jsonb)
            AS r(id uuid, contact_id uuid, attempt_number int, to_number text)`;
        await tx.$executeRaw`
          UPDATE campaign_contacts SET state = 'dialing', attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, ${now}),
            last_attempt_at = ${now}, lease_expires_at = ${leaseUntil}, updated_at = ${now}
          WHERE id IN (SELECT (jsonb_array_elements_text(${JSON.stringify(calls.map((c) => c.campaignContactId))}::jsonb))::uuid)`;
        await holdCallsWithin(tx, this.env, account, campaign.user_id, calls.map((c) => c.id), estimate);
        // Only when this tick spent its look on contacts it could not call is there more to do now.
        return { calls, from, providerAgentId: agent.providerAgentId, more: candidates.length === limit && chosen.length < slots };
      },
      TRANSACTION_OPTIONS,
    ));
    if (changed || claim?.calls.length) this.announce(campaignId, claim?.calls.map((c) => c.id) ?? []);
    if (!claim) return 0;

    await this.place(campaignId, claim.calls.map((c) => ({ attemptId: c.id, attemptNumber: c.attemptNumber, from: claim.from!, to: c.to, providerAgentId: claim.providerAgentId ?? null, variables: c.variables })), log);
    if (claim.calls.length) this.announce(campaignId, claim.calls.map((c) => c.id));
    if (claim.more) this.wake(campaignId);
    else if (claim.calls.length === 0) await this.wakeAtNextDue(campaignId);
    return claim.calls.length;
  }

  private async place(campaignId: string, calls: PlaceCall[], log: Logger): Promise<void> {
    if (calls.length === 0) return;
    const telephony = this.telephony();
    const placed: { id: string; provider_call_id: string }[] = [];
    const later: string[] = [];
    let retryAfterSeconds = 0;
    await Promise.all(
      calls.map(async (call) => {
        try {
          const { providerCallId } = await telephony.placeCall(call);
          placed.push({ id: call.attemptId, provider_call_id: providerCallId });
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
      const dueAt = new Date(this.env.clock.now().getTime() + retryAfterSeconds * 1000);
      this.env.log.info({ campaignId, calls: later.length, retryAfterSeconds }, 'the provider asked to retry calls later');
      await putBackUnplaced(this.env, later, dueAt);
      this.wake(campaignId, dueAt);
    }
    if (placed.length) {
      await this.env.db.$executeRaw`
        UPDATE call_attempts SET provider_call_id = r.provider_call_id, status = 'ringing', started_at = now(), updated_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(placed)}::jsonb) AS r(id uuid, provider_call_id text)
        WHERE call_attempts.id = r.id AND call_attempts.status = 'queued'`;
    }
  }

  /** Takes a finished call from the telephony adapter; results are applied in batches. */
  report(result: CallResult): void {
    this.pending.push(result);
    this.scheduleFlush();
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
        if (this.pending.length) this.scheduleFlush();
      });
  }

  /** Waits until every reported result has been applied. */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Applies the reported results: each attempt once, whatever repeats or races with a lease expiry. */
  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const now = this.env.clock.now();
    const touched = await retryOnConflict(() => this.env.db.$transaction(
      async (tx) => {
        const results = new Map(batch.map((r) => [r.attemptId, r]));
        const owners = await tx.$queryRaw<{ user_id: string }[]>`
          SELECT DISTINCT user_id FROM call_attempts
          WHERE id IN (SELECT (jsonb_array_elements_text(${JSON.stringify([...results.keys()])}::jsonb))::uuid) ORDER BY user_id`;
        const accounts = new Map<string, Balances>();
        for (const { user_id } of owners) accounts.set(user_id, await lockAccount(tx, user_id));
        const finished = await tx.$queryRaw<{ id: string; user_id: string; campaign_id: string; contact_id: string }[]>`
          UPDATE call_attempts SET status = r.status::"CallStatus", duration_seconds = r.duration_seconds, summary = r.summary,
            sentiment = coalesce(r.sentiment, 'unknown')::"Sentiment", disconnect_reason = r.disconnect_reason,
            recording_url = r.recording_url, transcript = r.transcript, analysis = coalesce(r.analysis, '{}'::jsonb),
            ended_at = ${now}, lease_expires_at = NULL, pending_result = NULL, updated_at = ${now}
          FROM jsonb_to_recordset(${JSON.stringify(
            [...results.values()].map((r) => ({
              id: r.attemptId,
              status: r.status,
              duration_seconds: r.durationSeconds,
              summary: r.summary ?? null,
              sentiment: r.sentiment ?? null,
              disconnect_reason: r.disconnectReason ?? null,
              recording_url: r.recordingUrl ?? null,
              transcript: r.transcript ?? null,
              analysis: r.analysis ?? null,
            })),
          )}::jsonb) AS r(id uuid, status text, duration_seconds int, summary text, sentiment text, disconnect_reason text,
                          recording_url text, transcript text, analysis jsonb)
          WHERE call_attempts.id = r.id AND call_attempts.status IN ('queued', 'ringing', 'in_progress')
          RETURNING call_attempts.id, call_attempts.user_id, call_attempts.campaign_id, call_attempts.contact_id`;
        if (finished.length === 0) return null;

        const contexts = await tx.$queryRaw<
          {
            id: string; cc_id: string; attempts: number; first_attempt_at: Date; contact_timezone: string | null; phone_number: string;
            contact_data: unknown; campaign_timezone: string; calling_hours: unknown; active_days: unknown; schedule_config: unknown;
            max_retry_days: number; attempt_times: Date[];
          }[]
        >`
          SELECT a.id, cc.id AS cc_id, cc.attempts, cc.first_attempt_at, c.timezone AS contact_timezone, c.phone_number, c.data AS contact_data,
                 k.timezone AS campaign_timezone, k.calling_hours, k.active_days, k.schedule_config, k.max_retry_days,
                 (SELECT array_agg(p.created_at) FROM call_attempts p WHERE p.campaign_id = a.campaign_id AND p.contact_id = a.contact_id) AS attempt_times
          FROM call_attempts a
          JOIN campaign_contacts cc ON cc.campaign_id = a.campaign_id AND cc.contact_id = a.contact_id
          JOIN contacts c ON c.id = a.contact_id
          JOIN campaigns k ON k.id = a.campaign_id
          WHERE a.id IN (SELECT (jsonb_array_elements_text(${JSON.stringify(finished.map((f) => f.id))}::jsonb))::uuid)`;
        const contextOf = new Map(contexts.map((c) => [c.id, c]));

        const costs = new Map<string, bigint>();
        for (const [userId, account] of accounts) {
          const mine = finished.filter((f) => f.user_id === userId);
          if (mine.length === 0) continue;
          const talked = mine.filter((f) => results.get(f.id)!.durationSeconds > 0);
          const charged = await settleCallsWithin(
            tx,
            this.env,
            account,
            userId,
            talked.map((f) => ({ callAttemptId: f.id, campaignId: f.campaign_id, durationSeconds: results.get(f.id)!.durationSeconds })),
          );
          for (const [id, cost] of charged) costs.set(id, cost);
          await releaseHoldsWithin(tx, this.env, account, userId, mine.filter((f) => !charged.has(f.id)).map((f) => f.id));
        }
        if (costs.size) {
          await tx.$executeRaw`
            UPDATE call_attempts SET cost_cents = r.cost FROM jsonb_to_recordset(${JSON.stringify(
              [...costs].map(([id, cost]) => ({ id, cost: Number(cost) })),
            )}::jsonb) AS r(id uuid, cost bigint) WHERE call_attempts.id = r.id`;
        }

        const updates: { id: string; state: string; outcome: string | null; next_attempt_at: Date | null; last_status: string }[] = [];
        const blocked: { userId: string; phoneNumber: string }[] = [];
        const appointments: Prisma.AppointmentCreateManyInput[] = [];
        for (const f of finished) {
          const result = results.get(f.id)!;
          const ctx = contextOf.get(f.id)!;
          const zone = ctx.contact_timezone ?? ctx.campaign_timezone;
          if (result.doNotCall) {
            await tx.doNotCallEntry.upsert({
              where: { userId_phoneNumber: { userId: f.user_id, phoneNumber: ctx.phone_number } },
              create: { userId: f.user_id, phoneNumber: ctx.phone_number, reason: 'Asked during a call', source: 'call' },
              update: {},
            });
            blocked.push({ userId: f.user_id, phoneNumber: ctx.phone_number });
            updates.push({ id: ctx.cc_id, state: 'done', outcome: 'do_not_call', next_attempt_at: null, last_status: result.status });
          } else if (result.invalidDestination) {
            updates.push({ id: ctx.cc_id, state: 'done', outcome: 'invalid', next_attempt_at: null, last_status: result.status });
          } else {
            const today = localDate(now, zone);
            const decision = decide(
              result.status,
              {
                attempts: ctx.attempts,
                attemptsToday: ctx.attempt_times.filter((t) => localDate(new Date(t), zone) === today).length,
                firstAttemptAt: new Date(ctx.first_attempt_at),
              },
              policyOf(ctx.schedule_config, ctx.max_retry_days),
              now,
              zone,
              windowOf(ctx.calling_hours, ctx.active_days),
            );
            updates.push(
              'retryAt' in decision
                ? { id: ctx.cc_id, state: 'pending', outcome: null, next_attempt_at: decision.retryAt, last_status: result.status }
                : { id: ctx.cc_id, state: 'done', outcome: decision.outcome, next_attempt_at: null, last_status: result.status },
            );
          }
          if (result.appointment) {
            appointments.push({
              userId: f.user_id,
              contactId: f.contact_id,
              campaignId: f.campaign_id,
              callAttemptId: f.id,
              scheduledAt: result.appointment.scheduledAt,
              timezone: zone,
              contactSnapshot: snapshot(ctx.contact_data, ctx.phone_number),
              appointmentData: { source_call_id: f.id, notes: result.appointment.notes },
            });
          }
        }
        await tx.$executeRaw`
          UPDATE campaign_contacts SET state = r.state::"DialState", outcome = r.outcome, next_attempt_at = r.next_attempt_at,
            last_status = r.last_status, lease_expires_at = NULL, updated_at = ${now}
          FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb)
            AS r(id uuid, state text, outcome text, next_attempt_at timestamptz, last_status text)
          WHERE campaign_contacts.id = r.id`;
        if (appointments.length) await tx.appointment.createMany({ data: appointments });
        return { campaigns: [...new Set(finished.map((f) => f.campaign_id))], finished, blocked };
      },
      TRANSACTION_OPTIONS,
    ));
    if (!touched) return;
    // Marking the number's contacts in every group waits for no dialer lock once the list entry is in
    // (ticks skip listed numbers), so it runs after the batch, outside its transaction.
    for (const { userId, phoneNumber } of touched.blocked) {
      await this.env.db.$transaction((tx) => putOnList(tx, userId, phoneNumber, 'Asked during a call', 'call'));
    }
    for (const campaignId of touched.campaigns) {
      this.announce(campaignId, touched.finished.filter((f) => f.campaign_id === campaignId).map((f) => f.id));
      await this.afterResults(campaignId);
      this.wake(campaignId);
    }
  }

  /** Completes a campaign with nothing left to do, or trips its circuit breaker. */
  private async afterResults(campaignId: string): Promise<void> {
    const now = this.env.clock.now();
    const changed = await retryOnConflict(() => this.env.db.$transaction(async (tx) => {
      const [campaign] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM campaigns WHERE id = ${campaignId}::uuid FOR UPDATE`;
      if (campaign?.status !== 'running') return false;
      const [{ open } = { open: false }] = await tx.$queryRaw<{ open: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = ${campaignId}::uuid AND state <> 'done') AS open`;
      if (!open) {
        await tx.campaign.update({ where: { id: campaignId }, data: { status: 'completed', completedAt: now, pausedReason: null } });
        return true;
      }
      const recent = await tx.callAttempt.findMany({
        where: { campaignId, status: { in: FINISHED } },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: this.options.breakerWindow,
        select: { status: true },
      });
      const failed = recent.filter((a) => a.status === 'failed').length;
      if (recent.length >= this.options.breakerWindow && failed >= this.options.breakerThreshold * recent.length) {
        return pauseForReason(tx, campaignId, 'high_failure_rate');
      }
      return false;
    }, TRANSACTION_OPTIONS));
    if (changed) this.announce(campaignId, []);
  }

  /** Schedules the campaign's next tick for its earliest contact waiting for a later time, if any. */
  private async wakeAtNextDue(campaignId: string): Promise<void> {
    const next = await this.env.db.campaignContact.findFirst({
      where: { campaignId, state: 'pending', nextAttemptAt: { gt: this.env.clock.now() } },
      orderBy: { nextAttemptAt: 'asc' },
      select: { nextAttemptAt: true },
    });
    if (next?.nextAttemptAt) this.wake(campaignId, next.nextAttemptAt);
  }

  /**
   * What time alone changes: calls whose lease ran out get the result their provider left for them, or
   * else count as failed (either way their slot comes back), scheduled campaigns whose start has come
   * begin, cancelled campaigns close their waiting contacts, and every running campaign gets a tick.
   * Returns the running campaigns it woke.
   */
  async sweep(): Promise<string[]> {
    const now = this.env.clock.now();
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
      await retryOnConflict(() => this.env.db.$transaction((tx) => startCampaign(tx, campaignId, now), TRANSACTION_OPTIONS));
    } catch (error) {
      if (!(error instanceof ConflictError) || !isPausedReason(error.reason)) throw error;
      const reason = error.reason;
      await this.env.db.$transaction((tx) => pauseForReason(tx, campaignId, reason));
    }
    this.announce(campaignId, []);
  }

  /** Live updates, after the change committed: these attempts were created or changed; none: the campaign did. */
  private announce(campaignId: string, attemptIds: string[]): void {
    this.env.events.publish(attemptIds.length ? { kind: 'attempts', campaignId, attemptIds } : { kind: 'campaign', campaignId });
  }
}

async function finishContacts(tx: Prisma.TransactionClient, rows: { id: string; outcome: string }[]): Promise<void> {
  await tx.$executeRaw`
    UPDATE campaign_contacts SET state = 'done', outcome = r.outcome, next_attempt_at = NULL, updated_at = now()
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(id uuid, outcome text) WHERE campaign_contacts.id = r.id`;
}

async function deferContacts(tx: Prisma.TransactionClient, rows: { id: string; next_attempt_at: Date }[]): Promise<void> {
  await tx.$executeRaw`
    UPDATE campaign_contacts SET next_attempt_at = r.next_attempt_at, updated_at = now()
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(id uuid, next_attempt_at timestamptz) WHERE campaign_contacts.id = r.id`;
}

function variablesOf(stored: unknown): Record<string, string> {
  const data = readData(stored);
  const out: Record<string, string> = { ...data.custom_fields };
  for (const key of ['first_name', 'last_name', 'email', 'address'] as const) if (data[key]) out[key] = data[key]!;
  return out;
}

function snapshot(stored: unknown, phoneNumber: string): Prisma.InputJsonObject {
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
