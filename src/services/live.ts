import { getCampaign } from './campaigns/campaigns.js';
import { changesAfter } from './campaigns/history.js';
import { ChangeFeed } from './change-feed.js';
import type { ServiceContext } from './context.js';

// What GraphQL subscriptions stream: ids of the caller's rows that changed, which the subscription then
// reads with the caller's tenancy check. Listening starts only after the campaign proved the caller's.

/** A subscription reads what changed at most this often (see ChangeFeed). */
export const LIVE_INTERVAL_MS = 250;

/**
 * The campaign's id at once (its current state: nothing between a query and the subscription is lost),
 * then after each change of its status or progress, at most once per LIVE_INTERVAL_MS. An unknown or
 * another user's campaign is a NotFoundError. Resolves once listening.
 */
export async function watchCampaign(ctx: ServiceContext, campaignId: string): Promise<AsyncIterableIterator<string>> {
  await getCampaign(ctx, campaignId, { select: { id: true } });
  const feed = new ChangeFeed(LIVE_INTERVAL_MS);
  feed.add([campaignId]);
  feed.onClose(await ctx.events.listen(campaignId, () => feed.add([campaignId])));
  return feed;
}

/**
 * Ids of the campaign's call attempts as they are created and change (placed, finished); one that
 * changes twice before it is read is read once, in its latest state. An unknown or another user's
 * campaign is a NotFoundError. Resolves once listening.
 */
export async function watchCallAttempts(ctx: ServiceContext, campaignId: string): Promise<AsyncIterableIterator<string>> {
  await getCampaign(ctx, campaignId, { select: { id: true } });
  const feed = new ChangeFeed(LIVE_INTERVAL_MS);
  feed.onClose(
    await ctx.events.listen(campaignId, (event) => {
      if (event.kind === 'attempts') feed.add(event.attemptIds);
    }),
  );
  return feed;
}

/**
 * Ids of the campaign's history entries as they are written, oldest first (the history's own order):
 * each change of the campaign is announced on the bus, and the feed reads what came after the last entry
 * it sent. An unknown or another user's campaign is a NotFoundError. Resolves once listening.
 */
export async function watchCampaignChanges(ctx: ServiceContext, campaignId: string): Promise<AsyncIterableIterator<string>> {
  const seen = await changesAfter(ctx, campaignId, null);
  let last = seen.at(-1)?.seq ?? null;
  const feed = new ChangeFeed(LIVE_INTERVAL_MS);
  // A busy campaign announces many changes a second, few of them in its history: one read per interval
  // at most, one at a time, so that no entry is sent twice.
  let reading = Promise.resolve();
  let due: NodeJS.Timeout | undefined;
  const read = () => {
    due = undefined;
    reading = reading
      .then(async () => {
        const fresh = await changesAfter(ctx, campaignId, last);
        if (fresh.length === 0) return;
        last = fresh.at(-1)!.seq;
        feed.add(fresh.map((c) => c.id));
      })
      .catch((error: unknown) => ctx.log.warn({ err: error, campaignId }, 'reading the campaign history failed'));
  };
  const stop = await ctx.events.listen(campaignId, (event) => {
    if (event.kind === 'campaign' && !due) due = setTimeout(read, LIVE_INTERVAL_MS);
  });
  feed.onClose(() => {
    clearTimeout(due);
    stop();
  });
  return feed;
}
