import type { Logger } from 'pino';
import { callsAffordable, spendableCents } from '../billing/calls.js';
import { pauseForReason } from '../campaigns/states.js';
import type { ServiceEnv } from '../context.js';
import { uuidv7 } from '../ids.js';
import {
  agentRefusal,
  callsUnderCap,
  creditVerdict,
  freeSlots,
  planClaim,
  refusalOutcome,
  callVariables,
  registryRefusal,
  voicemailTemplateOf,
} from './decisions.js';
import type { DialerOptions } from './options.js';
import { retryOnConflict } from './retry.js';
import { RECALL_HOURS, REGIONAL_CONSENT_KINDS } from '../calling-rules/regional-hours.js';
import {
  campaignLoad,
  claimCalls,
  creditCheck,
  lockCallHistories,
  lockCampaignForTick,
  readCandidates,
  setAside,
  type Candidate,
  type DraftCall,
  type TickCampaign,
} from './store/placing.js';
import { endCooldowns, lockPool, restNumber } from './store/caller-id.js';
import { needsRest, type PoolNumber } from './caller-id.js';
import { CAP_LOOKBACK_MS } from '../calling-rules/caps.js';
import { cappedNumbers } from '../calling-rules/gate.js';
import { regionalRulesApply } from '../campaigns/exemptions.js';
import { emitEvents } from '../webhooks/emit.js';
import { RULES_VERSION } from '../calling-rules/regional-hours.js';
import type { SqlTransaction } from '../../db/sql.js';
import type { PlacedCall } from './store/ended-calls.js';
import type { CallResult, PlaceCall, Telephony } from '../voice/providers/telephony.js';

// A tick, step by step: look at the campaign without its lock, claim contacts under it (the rules in
// decisions.ts decide which), then place their calls. While a tick holds the campaign's lock, every
// other tick of the campaign waits: so the claim sends three statements and its commit (one more when
// contacts are set aside, two when a frequency cap applies to one), and between them only checks
// calling windows.

/** What a tick may try, read before the campaign's lock. */
export interface Look {
  /** How many contacts to look at: the slots found free, at most a tick's worth. */
  looked: number;
  /** How many calls the balance pays for. */
  affordable: number;
}

/**
 * Most wake-ups of a busy campaign find every slot taken or nothing due: that is read without its lock.
 * A read that missed a slot freed meanwhile is followed by that change's own wake-up. `ended`: this
 * process's ended calls not yet marked; `estimate`: what each call holds.
 */
export async function look(
  env: ServiceEnv,
  options: DialerOptions,
  campaignId: string,
  now: Date,
  ended: string[],
  estimate: bigint,
): Promise<Look | 'idle' | 'nothing_due'> {
  const load = await campaignLoad(env.sql, campaignId, now, ended);
  const looked = load ? Math.min(freeSlots(load.concurrentCalls, load.inFlight, load.live), options.callsPerTick) : 0;
  if (!load || looked <= 0) return 'idle';
  if (!load.due) return 'nothing_due';
  // How many calls the balance pays for is read without the account's lock, which the holds take
  // after the claim commits: the account is shared by all the user's campaigns and by every batch of
  // results, and waiting for it would keep the campaign's other ticks waiting too.
  return { looked, affordable: callsAffordable(await spendableCents(env.sql, load.userId), estimate) };
}

/** The calls a tick claimed, with what placing them needs. */
export interface Claim {
  calls: DraftCall[];
  userId?: string;
  /** There is more to do now: the campaign gets another tick at once. */
  more: boolean;
  /** Every caller ID is at a limit: the campaign is due again when one frees. */
  wakeAt?: Date | null;
}

/**
 * The agent's numbers, locked, with their recent calls. A number whose answer rate fell below its
 * threshold is rested here, under its lock, and the customer told.
 */
async function callerIdPool(tx: SqlTransaction, campaign: TickCampaign, now: Date): Promise<PoolNumber[]> {
  const pool = await lockPool(tx, campaign.agentId, now);
  for (const number of pool.filter((n) => needsRest(n, now))) {
    const until = new Date(now.getTime() + number.restHours * 3_600_000);
    await restNumber(tx, number.id, until);
    number.restedUntil = until;
    const answered = number.windowOutcomes.filter((o) => o === 'human').length;
    await emitEvents(tx, [
      {
        type: 'phone_number.rested',
        userId: campaign.userId,
        data: {
          phone_number_id: number.id,
          number: number.number,
          answer_rate: answered / number.windowOutcomes.length,
          threshold: number.restBelowAnswerRate!,
          window_calls: number.windowOutcomes.length,
          rested_until: until.toISOString(),
        },
      },
    ]);
  }
  return pool;
}

/**
 * The recent calls to the candidates' numbers whose frequency caps apply, read under the numbers' locks
 * (held until the claim commits): none read, and no lock taken, when no cap applies.
 */
async function cappedHistories(tx: SqlTransaction, campaign: TickCampaign, candidates: Candidate[], now: Date) {
  const rules = { regionalRules: regionalRulesApply(campaign.regionalRules, campaign.exemptionId !== null) };
  const numbers = cappedNumbers(rules, candidates);
  if (numbers.length === 0) return new Map();
  return lockCallHistories(tx, campaign.userId, numbers, new Date(now.getTime() - CAP_LOOKBACK_MS), campaign.callSubject);
}

/**
 * Under the campaign's lock: claims what planClaim chooses, sets aside the contacts it cannot call, and
 * pauses the campaign when its agent or its balance cannot call. `changed`: the campaign paused, or
 * contacts were found uncallable (its status or progress changed). A null claim: nothing more to do now.
 */
export async function claim(
  env: ServiceEnv,
  options: DialerOptions,
  campaignId: string,
  now: Date,
  ended: string[],
  look: Look,
  estimate: bigint,
): Promise<{ claim: Claim | null; changed: boolean }> {
  return retryOnConflict(() =>
    env.sql.transaction(async (tx) => {
      const campaign = await lockCampaignForTick(tx, campaignId, now);
      if (campaign?.status !== 'running') return { claim: null, changed: false };
      // A registry copy too old to rely on stops solicitation until it is refreshed and the campaign dispatched again.
      if (registryRefusal(campaign, now)) return { claim: null, changed: await pauseForReason(tx, campaignId, 'registry_stale') };
      // As many contacts are looked at as the read before the lock found slots free: a few more may
      // have freed since, and the wake-up that freed them brings a tick of its own.
      const consentKinds = [...new Set([...campaign.requiredConsent, ...REGIONAL_CONSENT_KINDS])];
      const { agent, candidates } = await readCandidates(tx, campaignId, ended, now, look.looked, consentKinds, {
        lookUpRegistries: campaign.purpose === 'solicitation' && campaign.registryCopies.length > 0,
        recallHours: RECALL_HOURS,
      });
      const refusal = agentRefusal(agent);
      if (refusal) return { claim: null, changed: await pauseForReason(tx, campaignId, refusal) };
      const underCap = callsUnderCap(campaign.spendCapCents, agent.spentCents, agent.inFlight, estimate);
      const pool = agent.pooled && candidates.length ? await callerIdPool(tx, campaign, now) : null;
      const histories = await cappedHistories(tx, campaign, candidates, now);
      const limits = { now, ...look, underCap, callsPerTick: options.callsPerTick, pool, from: agent.fromNumber!, histories };
      const plan = planClaim(campaign, agent, candidates, limits);
      if (!plan) return { claim: null, changed: false };
      if (plan.uncallable.length || plan.waiting.length) await setAside(tx, { campaignId, userId: campaign.userId }, plan, now);
      const changed = plan.uncallable.length > 0;
      if (plan.capped) {
        // No room under the cap: the calls in flight may end for less than they hold, and wake the
        // campaign; with none in flight, nothing more can be called.
        const paused = agent.inFlight === 0 && (await pauseForReason(tx, campaignId, 'spend_cap_reached'));
        return { claim: null, changed: changed || paused };
      }
      if (plan.unpaid) {
        // The balance was read before the lock, and calls may have ended since: whether a call can be
        // paid is decided again on one consistent read of the balance, the holds and the calls in flight.
        const credit = await creditCheck(tx, campaignId, campaign.userId);
        const verdict = creditVerdict(credit.spendable, credit.inFlight, estimate);
        const paused = verdict === 'pause' && (await pauseForReason(tx, campaignId, 'insufficient_credits'));
        return { claim: verdict === 'retry' ? { calls: [], more: true } : null, changed: changed || paused };
      }
      if (plan.chosen.length === 0) return { claim: { calls: [], more: false, wakeAt: plan.poolOpensAt }, changed };
      const voicemail = voicemailTemplateOf(campaign.scheduleConfig);
      const calls = plan.chosen.map((c) => {
        return {
          id: uuidv7(),
          contactId: c.contactId,
          attemptNumber: c.attempts + 1,
          to: c.phoneNumber!,
          from: c.from,
          ...(c.variant
            ? { agentId: c.variant.agentId, agentVersion: c.variant.agentVersion, providerAgentId: c.variant.providerAgentId }
            : { agentId: agent.agentId, agentVersion: agent.agentVersion, providerAgentId: agent.providerAgentId }),
          providerAgentVersion: c.variant ? c.variant.providerVersion : agent.providerVersion,
          ...callVariables(c.data, campaign.transferNumber, voicemail),
          exemptionId: plan.exemptionId,
        };
      });
      // Under the numbers' locks, with the calls that start their new runs.
      if (pool)
        await endCooldowns(
          tx,
          pool.filter((n) => n.cooldownEnded).map((n) => n.id),
          now,
        );
      const leaseUntil = new Date(now.getTime() + options.leaseSeconds * 1000);
      const record = { requiredConsent: campaign.requiredConsent, rulesVersion: RULES_VERSION };
      const taken = await claimCalls(tx, { campaignId, userId: campaign.userId, leaseUntil, now, ...record }, calls);
      const claim = {
        calls: calls.filter((c) => taken.has(c.id)),
        userId: campaign.userId,
        more: plan.more,
        wakeAt: plan.poolOpensAt,
      };
      return { claim, changed };
    }),
  );
}

/** What the provider made of the calls: placed, or to be tried again after `retryAfterSeconds`. Other refusals were reported as failed calls. */
export interface Placing {
  placed: PlacedCall[];
  later: string[];
  retryAfterSeconds: number;
}

/** Asks the provider for each call, all at once. */
export async function placeCalls(
  env: ServiceEnv,
  telephony: Telephony,
  campaignId: string,
  calls: PlaceCall[],
  report: (result: CallResult) => void,
  log: Logger,
): Promise<Placing> {
  const placing: Placing = { placed: [], later: [], retryAfterSeconds: 0 };
  await Promise.all(
    calls.map(async (call) => {
      try {
        const { providerCallId } = await telephony.placeCall(call);
        placing.placed.push({ id: call.attemptId, campaignId, providerCallId, at: env.clock.now() });
      } catch (error) {
        const outcome = refusalOutcome(call.attemptId, error);
        if ('retryAfterSeconds' in outcome) {
          placing.later.push(call.attemptId);
          placing.retryAfterSeconds = Math.max(placing.retryAfterSeconds, outcome.retryAfterSeconds);
          return;
        }
        log.warn({ err: error, attemptId: call.attemptId }, 'the provider refused a call');
        report(outcome.result);
      }
    }),
  );
  return placing;
}
