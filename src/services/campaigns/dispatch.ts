import { DateTime } from 'luxon';
import { z } from 'zod';
import type { SqlSession } from '../../db/sql.js';
import type { Campaign, CampaignStatus, Prisma } from '../../generated/prisma/client.js';
import { callCostCents, spendableCents } from '../billing/calls.js';
import type { ServiceContext } from '../context.js';
import { ConflictError } from '../errors.js';
import { parseInput, type RawInput } from '../validation.js';
import { actFor } from './actor.js';
import { callingBeginsAt } from './calling-begins.js';
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
  /** What happens next, in a sentence. */
  detail: string;
}

/**
 * Starts or resumes a draft, scheduled or paused campaign; a draft (or scheduled campaign) whose
 * `started_at` is still ahead becomes (stays) `scheduled` instead. A running campaign is a success that
 * changes nothing. Refusals are ConflictErrors: `campaign_completed`, `campaign_cancelled`,
 * `insufficient_credits`, `agent_inactive`, `agent_has_no_phone_number`, `agent_not_ready`, `no_callable_contacts`.
 */
export async function dispatchCampaign(ctx: ServiceContext, id: string, raw: DispatchInput): Promise<DispatchResult> {
  await getCampaign(ctx, id, { select: { id: true } });
  const { triggeredBy } = parseInput(dispatchInput, raw);
  const status = await advance(ctx, id, STARTABLE_STATUSES, 'It cannot be dispatched again.');
  const campaign = await getCampaign(ctx, id);
  const beginsAt = await callingBeginsAt(ctx, campaign);
  ctx.log.info({ campaignId: id, triggeredBy, status, callingBeginsAt: beginsAt }, 'campaign dispatched');
  const scheduled = status === 'scheduled';
  return {
    campaignId: id,
    triggeredBy,
    status,
    scheduled,
    callingBeginsAt: beginsAt,
    detail: dispatchDetail(campaign, scheduled, beginsAt, ctx.clock.now()),
  };
}

/** A wait under a minute is "now": the dialer's next tick. */
const NOW_MS = 60_000;

function dispatchDetail(campaign: Campaign, scheduled: boolean, beginsAt: Date | null, now: Date): string {
  const first = scheduled ? 'The campaign will start at its started_at.' : 'The campaign is running.';
  const start = scheduled ? campaign.startedAt : now;
  if (!beginsAt || !start || beginsAt.getTime() - start.getTime() < NOW_MS) return first;
  const local = DateTime.fromJSDate(beginsAt, { zone: campaign.timezone }).toFormat('ccc d LLL yyyy HH:mm');
  return `${first} Calling begins at ${local} ${campaign.timezone} (${beginsAt.toISOString()}): its calling hours and the callees' local calling rules allow no call before then.`;
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

async function advance(ctx: ServiceContext, id: string, from: readonly CampaignStatus[], rule: string): Promise<DispatchResult['status']> {
  const now = ctx.clock.now();
  const { status, started, changed } = await ctx.sql.transaction(async (tx) => {
    await actFor(tx, ctx);
    const campaign = await lockForStart(tx, id);
    if (campaign.status === 'running') return { status: 'running' as const, started: false, changed: false };
    if (!from.includes(campaign.status)) throw refusal(campaign.status, rule);
    await assertCanPay(ctx, tx, campaign);
    if (startsLater(campaign, now)) {
      await assertCanCall(tx, campaign);
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
  return status;
}

/** A draft or scheduled campaign whose planned start is still ahead. */
function startsLater(campaign: Campaign, now: Date): boolean {
  return campaign.status !== 'paused' && campaign.startedAt !== null && campaign.startedAt > now;
}

/** The balance must pay at least one minute at the configured rate, or nothing would be called. */
async function assertCanPay(ctx: ServiceContext, tx: SqlSession, campaign: Campaign): Promise<void> {
  const available = await spendableCents(tx, campaign.userId);
  const minute = callCostCents(60, ctx.settings.callRateCentsPerMinute);
  if (available < minute) {
    throw new ConflictError(
      `Insufficient credits: one minute of calling costs ${minute} cents and ${available} cents are available.`,
      'insufficient_credits',
    );
  }
}
