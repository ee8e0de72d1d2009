import type { ServiceContext } from '../context.js';
import { getCampaign } from './campaigns.js';
import { ownedOrNotFound } from '../owned.js';
import * as store from './store.js';

// A campaign's history: every change of its settings or status, newest first, with who made it
// (actor.ts). A trigger writes the entries, whatever code path changed the row.

/** The campaign's changes after `afterSeq` (all when null), oldest first; NotFound unless it is the caller's. */
export async function changesAfter(ctx: ServiceContext, campaignId: string, afterSeq: bigint | null) {
  await getCampaign(ctx, campaignId, { select: { id: true } });
  return store.findChangesAfter(ctx.db, campaignId, afterSeq);
}

/** One of the caller's campaigns' history entries, as a surface selects it. */
export function getCampaignChange<Q extends store.CampaignChangeQuery>(ctx: ServiceContext, id: string, query: Q) {
  return ownedOrNotFound('CampaignChange', id, (id) => store.findChange(ctx.db, ctx.user.id, id, query));
}
