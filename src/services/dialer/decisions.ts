import { callsAffordable } from '../billing/calls.js';
import { readScheduleConfig } from '../calling-rules/schedule.js';
import { fillPlaceholders } from '../placeholders.js';
import type { PausedReason } from '../campaigns/states.js';
import type { ListedNumber } from '../contacts/do-not-call.js';
import { readData } from '../contacts/fields.js';
import type { DialerOptions } from './options.js';
import { statusOf } from '../call-outcomes.js';
import { decide, policyOf } from '../calling-rules/retry-policy.js';
import type { BookingNote, CallBooking, CampaignRecord, ContactStep, FinishedAttempt, NewAppointment } from './store/ended-calls.js';
import type { Candidate, TickAgent, TickCampaign } from './store/placing.js';
import { CallRefused, type CallResult, type PlaceCall } from '../voice/providers/telephony.js';
import { gate, type BlockReason, type GateCampaign } from '../calling-rules/gate.js';
import type { CallHistory } from '../calling-rules/caps.js';
import { regionalRulesApply } from '../campaigns/exemptions.js';
import { countCall, pickCallerId, poolOpensAt, type PoolNumber } from './caller-id.js';
import { localDate, nextOpening, windowOf } from '../calling-rules/window.js';
import { staleCopies, staleDetail } from '../calling-rules/registries.js';

// The dialer's rules, as functions of what was read: no database, no clock, no randomness. The dialer
// reads, asks these, and writes what they answer.

/**
 * Slots are taken by the calls in flight. Calls that ended here and wait to be written leave theirs
 * free, up to a campaign's worth: a backlog of results to write beyond that holds the ticks back.
 */
export function freeSlots(concurrentCalls: number, inFlight: number, live: number): number {
  return Math.min(concurrentCalls - live, 2 * concurrentCalls - inFlight);
}

/**
 * Why a solicitation campaign cannot call now: a national registry's copy in force is older than the law
 * allows (naming each such registry and its age); null when it can.
 */
export function registryRefusal(campaign: Pick<TickCampaign, 'purpose' | 'registryCopies'>, now: Date): string | null {
  if (campaign.purpose !== 'solicitation') return null;
  const stale = staleCopies(campaign.registryCopies, now);
  return stale.length ? staleDetail(stale) : null;
}

/** Why a campaign's agent cannot call: archived, or without a number to call from; null when it can. */
export function agentRefusal(agent: Pick<TickAgent, 'active' | 'fromNumber'>): PausedReason | null {
  if (!agent.active) return 'agent_archived';
  return agent.fromNumber ? null : 'agent_has_no_phone_number';
}

/** A call a compliance rule stopped, to be recorded with its reason. */
export interface Block {
  contactId: string;
  reason: BlockReason;
  detail: string;
  /** When the contact is due again; null when it is done. */
  until: Date | null;
}

/** What a tick does with the contacts it looked at, under the campaign's lock. */
export interface ClaimPlan {
  /** Done for good: the contact cannot be called (its status, the do-not-call list or a national registry, or a consent it lacks or revoked). */
  uncallable: { id: string; outcome: 'do_not_call' | 'invalid' | 'consent_missing' }[];
  /** The calls a rule stopped, done or waiting. */
  blocks: Block[];
  /** Outside their calling window now: due again when it opens. */
  waiting: { id: string; nextAttemptAt: Date }[];
  /** To call now, each from its caller ID. */
  chosen: (Candidate & { from: string })[];
  /** The exemption the calls go out under, with the regional rules off; null: the rules applied. */
  exemptionId: string | null;
  /** Contacts could be called now but every number of the agent's pool is at a limit: when one frees. */
  poolOpensAt: Date | null;
  /** Contacts could be called now, but the campaign's spend cap leaves room for none of them. */
  capped: boolean;
  /** Contacts could be called now, but the balance read before the lock pays for none of them. */
  unpaid: boolean;
  /** There is more to do now: the look was spent on contacts it could not call, or more slots are free than a tick takes. */
  more: boolean;
}

export interface ClaimLimits {
  now: Date;
  /** How many contacts the tick looked at (the read before the lock found that many slots free). */
  looked: number;
  /** How many calls the balance pays for, as read before the lock. */
  affordable: number;
  /** How many more calls the campaign's spend cap leaves room for (callsUnderCap). */
  underCap: number;
  callsPerTick: number;
  /** The agent's numbers when its calls choose among them (counted as the tick picks), else null: all go out from `from`. */
  pool: PoolNumber[] | null;
  from: string;
  /** The customer's recent calls to the numbers whose frequency caps apply (read under their locks), by number. */
  histories: ReadonlyMap<string, CallHistory>;
}

/**
 * How many more calls a campaign's spend cap leaves room for: every call in flight, and every new one,
 * may cost what it holds (`estimate`). Infinity without a cap. The charges themselves never go over the
 * cap (billing/calls.ts): this keeps calls from starting that could only be charged in part.
 */
export function callsUnderCap(capCents: bigint | null, spentCents: bigint, inFlight: number, estimate: bigint): number {
  if (capCents === null) return Infinity;
  const room = capCents - spentCents - BigInt(inFlight) * estimate;
  return room < estimate ? 0 : Number(room / estimate);
}

/**
 * Sorts the contacts a tick looked at: each is checked again right before dialing (it may have changed
 * since it was enrolled), and passes the compliance gate (consent, the campaign's calling window and the
 * regional rules, in the callee's local time). Null when every slot is taken: the calls in flight wake
 * the campaign when they end.
 */
export function planClaim(
  campaign: TickCampaign,
  agent: Pick<TickAgent, 'inFlight' | 'live'>,
  candidates: Candidate[],
  limits: ClaimLimits,
): ClaimPlan | null {
  const free = freeSlots(campaign.concurrentCalls, agent.inFlight, agent.live);
  if (free <= 0) return null;
  const slots = Math.min(free, limits.callsPerTick);
  const rules = gateRules(campaign);
  const plan: ClaimPlan = {
    uncallable: [],
    blocks: [],
    waiting: [],
    chosen: [],
    exemptionId: rules.regionalRules ? null : campaign.exemptionId,
    poolOpensAt: null,
    capped: false,
    unpaid: false,
    more: false,
  };
  const ready: Candidate[] = [];
  for (const candidate of candidates) {
    const history = candidate.phoneNumber ? limits.histories.get(candidate.phoneNumber) : undefined;
    const judged = judge(limits.now, rules, { ...candidate, ...(history && { history }) });
    const block = judged.block && { contactId: candidate.contactId, ...judged.block };
    if (judged.kind === 'uncallable') plan.uncallable.push({ id: candidate.id, outcome: judged.outcome });
    else if (judged.kind === 'later') plan.waiting.push({ id: candidate.id, nextAttemptAt: judged.until });
    else if (ready.length < slots) ready.push(candidate);
    if (block) plan.blocks.push(block);
  }
  plan.capped = ready.length > 0 && limits.underCap <= 0;
  const paid = ready.slice(0, Math.max(0, Math.min(limits.affordable, limits.underCap)));
  plan.unpaid = !plan.capped && paid.length === 0 && ready.length > 0;
  plan.chosen = withCallerIds(paid, limits);
  if (plan.chosen.length < paid.length) plan.poolOpensAt = poolOpensAt(limits.pool!, limits.now);
  const taken = plan.chosen.length;
  plan.more =
    taken > 0 && taken === paid.length && ((candidates.length === limits.looked && taken < slots) || (taken === slots && free > slots));
  return plan;
}

/** The campaign as the gate reads it, from its row. */
export function gateRules(
  campaign: Pick<
    TickCampaign,
    'timezone' | 'callingHours' | 'activeDays' | 'requiredConsent' | 'regionalRules' | 'exemptionId' | 'purpose'
  >,
): GateCampaign {
  const { timezone, requiredConsent, purpose } = campaign;
  // Off only under an exemption in force (campaigns/exemptions.ts).
  const regionalRules = regionalRulesApply(campaign.regionalRules, campaign.exemptionId !== null);
  return { timezone, requiredConsent, regionalRules, purpose, window: windowOf(campaign.callingHours, campaign.activeDays) };
}

/** What may be judged of a contact due for a call: the candidate's fields the gate and the checks before it read. */
export type Judged = Pick<Candidate, 'status' | 'phoneNumber' | 'timezone' | 'region' | 'consents'> &
  Partial<Pick<Candidate, 'revocations' | 'registry' | 'lastAbandonedAt'>>;

/** A contact's verdict right before dialing, with the block to record (its reason, detail and until). */
export type Judgement =
  | { kind: 'uncallable'; outcome: 'do_not_call' | 'invalid' | 'consent_missing'; block: Omit<Block, 'contactId'> | null }
  | { kind: 'later'; until: Date; block: Omit<Block, 'contactId'> | null }
  | { kind: 'call'; block: null };

/**
 * One contact, checked again right before dialing: its status (invalid, or on the do-not-call list), then
 * the compliance gate. The dialer's tick and the dispatch preview both judge contacts through this.
 */
export function judge(now: Date, rules: GateCampaign, candidate: Judged & { history?: CallHistory }): Judgement {
  if (candidate.status !== 'active' || !candidate.phoneNumber) {
    if (candidate.status !== 'do_not_call') return { kind: 'uncallable', outcome: 'invalid', block: null };
    return { kind: 'uncallable', outcome: 'do_not_call', block: { reason: 'do_not_call', detail: '', until: null } };
  }
  const verdict = gate(now, rules, { ...candidate, phoneNumber: candidate.phoneNumber });
  if (verdict.kind === 'blocked') {
    // A number on a national registry is, for this campaign, a number not to call; a revoked consent ends
    // the contact's part as a missing one does. The reason of the block tells them apart.
    const outcome = verdict.reason === 'registry' ? 'do_not_call' : 'consent_missing';
    return { kind: 'uncallable', outcome, block: { reason: verdict.reason, detail: verdict.detail, until: null } };
  }
  if (verdict.kind === 'later') {
    const block = verdict.reason ? { reason: verdict.reason, detail: verdict.detail, until: verdict.until } : null;
    return { kind: 'later', until: verdict.until, block };
  }
  return { kind: 'call', block: null };
}

/** Each call's caller ID: the pool's pick for it, until no number is free; without a pool, the agent's number. */
function withCallerIds(paid: Candidate[], limits: ClaimLimits): (Candidate & { from: string })[] {
  if (!limits.pool) return paid.map((c) => ({ ...c, from: limits.from }));
  const chosen: (Candidate & { from: string })[] = [];
  for (const candidate of paid) {
    const number = pickCallerId(limits.pool, candidate.phoneNumber!, limits.now);
    if (!number) break;
    countCall(number, limits.now);
    chosen.push({ ...candidate, from: number.number });
  }
  return chosen;
}

/**
 * When a tick could pay for no call, on one read of the balance and the calls in flight: `retry` when
 * the balance covers one after all (it was read before calls ended), `pause` when it does not and the
 * campaign has no call in flight whose end could give credits back, else `wait` for those calls to end.
 */
export function creditVerdict(spendable: bigint, inFlight: number, estimate: bigint): 'retry' | 'pause' | 'wait' {
  if (callsAffordable(spendable, estimate) > 0) return 'retry';
  return inFlight === 0 ? 'pause' : 'wait';
}

/** The message the campaign's voicemail policy leaves, as written; null when it leaves none. Read once per tick. */
export function voicemailTemplateOf(scheduleConfig: unknown): string | null {
  const policy = readScheduleConfig(scheduleConfig).voicemail;
  return policy?.action === 'leave_message' && policy.message ? policy.message : null;
}

/** The message to leave for one contact: its `{{field}}`s filled from the contact's variables (an unknown one left empty). */
export function voicemailMessageOf(template: string | null, variables: Record<string, string>): string | null {
  return template === null ? null : fillPlaceholders(template, variables);
}

/** Contact fields for the agent's prompt. */
export function variablesOf(stored: unknown): Record<string, string> {
  const data = readData(stored);
  const out: Record<string, string> = { ...data.custom_fields };
  for (const key of ['first_name', 'last_name', 'email', 'address'] as const) if (data[key]) out[key] = data[key]!;
  return out;
}

/** What a call carries to its agent: the contact's fields with the campaign's transfer number, and the message to leave. */
export function callVariables(
  contactData: unknown,
  transferNumber: string | null,
  voicemailTemplate: string | null,
): Pick<PlaceCall, 'variables' | 'voicemailMessage'> {
  const variables = variablesOf(contactData);
  return {
    // The agent's transfer_call dials {{transfer_number}}: the campaign names it, per call.
    variables: transferNumber ? { ...variables, transfer_number: transferNumber } : variables,
    voicemailMessage: voicemailMessageOf(voicemailTemplate, variables),
  };
}

/**
 * What a provider's refusal to start a call means: `retry_later` puts the call back, due after the
 * given seconds; any other refusal or error is the call's result, failed.
 */
export function refusalOutcome(attemptId: string, error: unknown): { retryAfterSeconds: number } | { result: CallResult } {
  if (error instanceof CallRefused && error.reason === 'retry_later') return { retryAfterSeconds: error.retryAfterSeconds };
  return {
    result:
      error instanceof CallRefused
        ? { attemptId, outcome: 'invalid_number', durationSeconds: 0, disconnectReason: 'invalid_destination' }
        : { attemptId, outcome: 'failed', durationSeconds: 0, disconnectReason: 'provider_error' },
  };
}

/** What a finished call means: its contact's next step, a number to put on the do-not-call list, an appointment to book (without its id). */
export interface Ending {
  contact: ContactStep;
  blocked: ListedNumber | null;
  appointment: Omit<NewAppointment, 'id'> | null;
}

/**
 * A callee who asked not to be called again, or a number that cannot be dialed, is done; one who asked to
 * be called back at a time is due then (at the next moment the campaign's window allows, and the gate
 * checks the rest at the dial), whatever the retry policy would say; otherwise the campaign's retry policy
 * decides, counting the attempts of the contact's local day.
 */
export function endingOf(f: FinishedAttempt, result: CallResult, now: Date): Ending {
  const zone = f.contactTimezone ?? f.campaignTimezone;
  const status = statusOf(result.outcome);
  const done = (outcome: string): ContactStep => ({
    id: f.enrolmentId,
    state: 'done',
    outcome,
    nextAttemptAt: null,
    lastStatus: status,
  });
  let contact: ContactStep;
  if (result.doNotCall) contact = done('do_not_call');
  else if (result.outcome === 'invalid_number') contact = done('invalid');
  else if (result.callbackAt) {
    const asked = result.callbackAt > now ? result.callbackAt : now;
    contact = {
      id: f.enrolmentId,
      state: 'pending',
      outcome: null,
      nextAttemptAt: nextOpening(asked, zone, windowOf(f.callingHours, f.activeDays)),
      readyAt: asked,
      lastStatus: status,
      callbackAt: asked,
    };
  } else {
    const today = localDate(now, zone);
    const history = {
      attempts: f.attempts,
      attemptsToday: f.attemptTimes.filter((t) => localDate(new Date(t), zone) === today).length,
      sameOutcome: 1 + f.earlierOutcomes.filter((o) => o === result.outcome).length,
      firstAttemptAt: new Date(f.firstAttemptAt),
    };
    const decision = decide(
      result.outcome,
      history,
      policyOf(f.scheduleConfig, f.maxRetryDays),
      now,
      zone,
      windowOf(f.callingHours, f.activeDays),
    );
    contact =
      'retryAt' in decision
        ? {
            id: f.enrolmentId,
            state: 'pending',
            outcome: null,
            nextAttemptAt: decision.retryAt,
            readyAt: decision.readyAt,
            lastStatus: status,
          }
        : done(decision.outcome);
  }
  return {
    contact,
    blocked: result.doNotCall ? { userId: f.userId, phoneNumber: f.phoneNumber } : null,
    appointment: result.appointment
      ? {
          userId: f.userId,
          contactId: f.contactId,
          campaignId: f.campaignId,
          callAttemptId: f.id,
          scheduledAt: result.appointment.scheduledAt,
          timezone: zone,
          contactSnapshot: contactSnapshot(f.contactData, f.phoneNumber),
          appointmentData: { source_call_id: f.id, notes: result.appointment.notes },
        }
      : null,
  };
}

/**
 * A call's result with what the callee asked for during the call through an in-call tool: an opt-out,
 * and a callback, which wins over one the analysis read from the conversation (the tool checked its time
 * against the calling rules while the callee could still choose another).
 */
export function withInCallRequests(result: CallResult, f: Pick<FinishedAttempt, 'callbackAt' | 'optedOutAt'>): CallResult {
  if (!f.optedOutAt && !f.callbackAt) return result;
  return {
    ...result,
    doNotCall: result.doNotCall || f.optedOutAt !== null || undefined,
    callbackAt: f.callbackAt ? new Date(f.callbackAt) : result.callbackAt,
  };
}

/**
 * What a call's analysis makes of the appointment the call booked while under way: the same time confirms
 * a scheduled one; another time changes nothing but is kept beside it, for the customer to look at. The
 * analysis never books a second appointment for the call.
 */
export function bookingNote(booking: CallBooking, said: { scheduledAt: Date; notes: string }): BookingNote {
  const agrees = new Date(booking.scheduledAt).getTime() === said.scheduledAt.getTime();
  return {
    id: booking.id,
    status: agrees && booking.status === 'scheduled' ? 'confirmed' : booking.status,
    analysis: { scheduled_at: said.scheduledAt, notes: said.notes, agrees },
  };
}

/** The contact as an appointment keeps it. */
export function contactSnapshot(stored: unknown, phoneNumber: string): Record<string, string> {
  const data = readData(stored);
  return { first_name: data.first_name ?? '', last_name: data.last_name ?? '', email: data.email ?? '', phone_number: phoneNumber };
}

/** Attempts whose cost, written as their price, differs from what was charged (credits ran out and part was written off). */
export function costCorrections(prices: Map<string, bigint>, charged: Map<string, bigint>): { id: string; costCents: bigint }[] {
  return [...prices].filter(([id, price]) => (charged.get(id) ?? 0n) !== price).map(([id]) => ({ id, costCents: charged.get(id) ?? 0n }));
}

/**
 * After results: a running campaign with every contact done is completed; one whose last calls (a
 * full breaker window of them) failed at least at the threshold is paused. Null: nothing changes.
 */
export function campaignOutcome(
  record: CampaignRecord | undefined,
  options: Pick<DialerOptions, 'breakerWindow' | 'breakerThreshold'>,
): 'completed' | 'high_failure_rate' | null {
  if (record?.status !== 'running') return null;
  if (!record.open) return 'completed';
  const tripped = record.recent >= options.breakerWindow && record.failed >= options.breakerThreshold * record.recent;
  return tripped ? 'high_failure_rate' : null;
}
