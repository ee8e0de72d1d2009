import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { actFor } from './actor.js';
import { getCampaign } from './campaigns.js';
import { lockCampaign, pauseForReason, refusal } from './states.js';
import { cancelRows, type CampaignQuery } from './store.js';

// The user's pause and cancel. Starting and resuming go through dispatch.ts, which checks more.

/** running -> paused (`user_requested`). Pausing a paused campaign keeps it as it is, reason included. */
export async function pauseCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  await getCampaign(ctx, id, { select: { id: true } });
  const paused = await ctx.sql.transaction(async (tx) => {
    await actFor(tx, ctx);
    const campaign = await lockCampaign(tx, id);
    if (campaign.status === 'paused') return false;
    if (campaign.status !== 'running') throw refusal(campaign.status, 'Only a running campaign can be paused.');
    return pauseForReason(tx, id, 'user_requested');
  });
  if (paused) ctx.events.publish({ kind: 'campaign', campaignId: id });
  return getCampaign(ctx, id, query);
}

/**
 * Any state that is not final -> cancelled. Contacts still waiting for a call are done with the outcome
 * `cancelled`; calls in flight end on their own and the dialer records them, but retries nobody.
 */
export async function cancelCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  await getCampaign(ctx, id, { select: { id: true } });
  const cancelled = await ctx.sql.transaction(async (tx) => {
    await actFor(tx, ctx);
    const campaign = await lockCampaign(tx, id);
    if (campaign.status === 'cancelled') return false;
    if (campaign.status === 'completed') throw refusal(campaign.status, 'A finished campaign cannot be cancelled.');
    await cancelRows(tx, id);
    return true;
  });
  if (cancelled) ctx.events.publish({ kind: 'campaign', campaignId: id });
  return getCampaign(ctx, id, query);
}
