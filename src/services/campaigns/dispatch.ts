import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { Campaign, CampaignStatus, Prisma } from '../../generated/prisma/client.js';
import { callHoldCents, callsAffordable, spendableCents } from '../billing/calls.js';
import type { ServiceContext } from '../context.js';
import { ConflictError } from '../errors.js';
import { localTime } from '../time-zones.js';
import { parseInput, type RawInput } from '../validation.js';
import { actFor } from './actor.js';
import { describeDays } from '../calling-rules/schedule.js';
import { firstCall, type FirstCall, type Wait } from './calling-begins.js';
import { getCampaign } from './campaigns.js';
import { assertCanCall, lockForStart, startCampaign, STARTABLE_STATUSES } from './start.js';
import { refusal } from './states.js';
import { markScheduled, type CampaignQuery } from './store.js';

// Dispatch starts a campaign now, schedules it for its future start, or resumes it; resume is the same
// step for paused campaigns only.

export const dispatchInput = z.object({
  /** Who or what asked (a person, a scheduler, an integration); echoed back and logged. */
  triggeredBy: z.string().trim().min(1).max(64).default('api'),
});
export type DispatchInput = RawInput<typeof dispatchInput>;

export interface DispatchResult {
  campaignId: string;
  triggeredBy: string;
  status: 'running' | 'scheduled';
  /** True when the campaign waits for its future `started_at` instead of calling now. */
  scheduled: boolean;
  /** When its first call is due (see calling-begins.ts); null when nobody is left to call. */
  callingBeginsAt: Date | null;
  /** The campaign was running before this dispatch, which changed nothing. */
  alreadyRunning: boolean;
  /** What happens next, and why the first call waits when it does. */
  detail: string;
}

/**
 * Starts or resumes a draft, scheduled or paused campaign; a draft (or scheduled campaign) whose
 * `started_at` is still ahead becomes (stays) `scheduled` instead. A running campaign is a success that
 * changes nothing. Refusals are ConflictErrors: `campaign_completed`, `campaign_cancelled`,
 * `insufficient_credits`, `agent_inactive`, `agent_has_no_phone_number`, `agent_not_ready`, `no_callable_contacts`,
 * `ai_disclosure_missing`.
 */
export async function dispatchCampaign(ctx: ServiceContext, id: string, raw: DispatchInput): Promise<DispatchResult> {
  await getCampaign(ctx, id, { select: { id: true } });
  const { triggeredBy } = parseInput(dispatchInput, raw);
  const { status, alreadyRunning } = await advance(ctx, id, STARTABLE_STATUSES, 'It cannot be dispatched again.');
  const campaign = await getCampaign(ctx, id);
  const first = await firstCall(ctx, campaign);
  const beginsAt = first?.at ?? null;
  ctx.log.info({ campaignId: id, triggeredBy, status, alreadyRunning, callingBeginsAt: beginsAt }, 'campaign dispatched');
  const scheduled = status === 'scheduled';
  return {
    campaignId: id,
    triggeredBy,
    status,
    scheduled,
    callingBeginsAt: beginsAt,
    alreadyRunning,
    detail: dispatchDetail(campaign, { scheduled, alreadyRunning }, first, ctx.clock.now()),
  };
}

/** A wait under a minute is "now": the dialer's next tick. */
const NOW_MS = 60_000;

function dispatchDetail(
  campaign: Campaign,
  { scheduled, alreadyRunning }: Pick<DispatchResult, 'scheduled' | 'alreadyRunning'>,
  first: FirstCall | null,
  now: Date,
): string {
  const state = scheduled
    ? 'The campaign will start at its started_at.'
    : alreadyRunning
      ? 'The campaign was already running; this dispatch changed nothing.'
      : 'The campaign is running.';
  const start = scheduled ? campaign.startedAt : now;
  if (!first || !start || first.at.getTime() - start.getTime() < NOW_MS) return state;
  const local = (at: Date) => `${localTime(at, campaign.timezone).toFormat('ccc d LLL yyyy HH:mm')} ${campaign.timezone}`;
  const why = first.waits.map((wait) => describeWait(wait, local)).join('; then ');
  // No reason only when the contact that waited was called or edited meanwhile: the time still stands.
  return `${state} Calling begins at ${local(first.at)} (${first.at.toISOString()})${why ? `: ${why}` : ''}.`;
}

const REGIONAL: Record<Extract<Wait, { kind: 'regional_rules' }>['reason'], string> = {
  regional_hours: 'the legal calling hours',
  regional_day: 'a day on which the law allows no calls',
  holiday: 'a public holiday',
  frequency_cap: 'the most calls the law allows to one person in a while',
  abandoned_recall: 'no call again so soon after an abandoned call',
};

/** One wait, as the clause of a sentence. */
function describeWait(wait: Wait, local: (at: Date) => string): string {
  switch (wait.kind) {
    case 'contact': {
      const { contact, until } = wait;
      const who = `contact ${contact.contactId} (${contact.phoneNumber})`;
      if (contact.callbackAt) return `${who} asked to be called back at ${local(contact.callbackAt)}`;
      if (contact.attempts > 0) {
        const last = contact.lastAttemptAt ? ` (at ${local(contact.lastAttemptAt)})` : '';
        return `the campaign's retry policy holds ${who} until ${local(until)}, after its attempt ${contact.attempts}${last}`;
      }
      return `${who} is not due before ${local(until)}`;
    }
    case 'calling_hours': {
      const { window, zone } = wait;
      return `the campaign's calling hours (${window.start}-${window.end}, ${describeDays(window.days)}, ${zone} time) allow no call before then`;
    }
    case 'regional_rules':
      return `the regional calling rules of ${wait.region} (${REGIONAL[wait.reason]}) allow no call before then`;
  }
}

/** paused -> running, with the checks of dispatch. Resuming a running campaign changes nothing. */
export async function resumeCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  await getCampaign(ctx, id, { select: { id: true } });
  await advance(ctx, id, ['paused'], 'Only a paused campaign can be resumed; dispatch starts the others.');
  return getCampaign(ctx, id, query);
}

async function advance(
  ctx: ServiceContext,
  id: string,
  from: readonly CampaignStatus[],
  rule: string,
): Promise<Pick<DispatchResult, 'status' | 'alreadyRunning'>> {
  const now = ctx.clock.now();
  const { status, started, changed } = await ctx.sql.transaction(async (tx) => {
    await actFor(tx, ctx);
    const campaign = await lockForStart(tx, id);
    if (campaign.status === 'running') return { status: 'running' as const, started: false, changed: false };
    if (!from.includes(campaign.status)) throw refusal(campaign.status, rule);
    await assertCanPay(ctx, tx, campaign);
    if (startsLater(campaign, now)) {
      await assertCanCall(tx, campaign, now);
      await markScheduled(tx, id);
      return { status: 'scheduled' as const, started: false, changed: campaign.status !== 'scheduled' };
    }
    await startCampaign(tx, id, now);
    return { status: 'running' as const, started: true, changed: true };
  });
  if (changed) ctx.events.publish({ kind: 'campaign', campaignId: id });
  // The dialer's sweep finds running campaigns anyway; the wake only saves waiting for it.
  if (started)
    await ctx.dialer
      .wake(id, { requestId: ctx.requestId })
      .catch((error) => ctx.log.warn({ err: error, campaignId: id }, 'could not wake the dialer'));
  return { status, alreadyRunning: status === 'running' && !started };
}

/** A draft or scheduled campaign whose planned start is still ahead. */
function startsLater(campaign: Campaign, now: Date): boolean {
  return campaign.status !== 'paused' && campaign.startedAt !== null && campaign.startedAt > now;
}

/**
 * The effective balance must cover what the dialer holds for one call (callsAffordable, the dialer's own
 * rule), or the campaign would start only to be paused at its first tick with nobody called.
 */
async function assertCanPay(ctx: ServiceContext, tx: SqlSession, campaign: Campaign): Promise<void> {
  const available = await spendableCents(tx, campaign.userId);
  const hold = callHoldCents(ctx.settings);
  if (callsAffordable(available, hold) === 0) {
    const { callHoldMinutes, callRateCentsPerMinute } = ctx.settings;
    throw new ConflictError(
      `Insufficient credits: dispatch needs ${hold} cents, what one call holds while it is in flight ` +
        `(${callHoldMinutes} minutes at ${callRateCentsPerMinute} cents/min), and ${available < 0n ? 0n : available} cents are available.`,
      'insufficient_credits',
    );
  }
}
