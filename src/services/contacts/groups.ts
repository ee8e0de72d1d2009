import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { parseInput, type RawInput } from '../validation.js';
import { removeContacts } from './erasure.js';
import { ownedOrNotFound } from '../owned.js';
import * as store from './store.js';

export type GroupQuery = store.GroupQuery;

/** Campaigns in these states may still dial their group, so it cannot go away under them. */
export const DIALING_STATES = ['scheduled', 'running', 'paused'] as const;

export function listGroups<Q extends GroupQuery & store.GroupPage = {}>(ctx: ServiceContext, query: Q = {} as Q) {
  return store.findGroups(ctx.db, ctx.user.id, query);
}

/** The filter and order of the caller's group list, for reads that compile it into their own statement. */
export function groupListQuery(ctx: ServiceContext) {
  return store.groupList(ctx.user.id);
}

/** The filter of one of the caller's groups, for reads that compile it into their own statement. */
export function groupItemQuery(ctx: ServiceContext, id: string) {
  return store.groupItem(ctx.user.id, id);
}

export function countGroups(ctx: ServiceContext): Promise<number> {
  return store.countGroups(ctx.db, ctx.user.id);
}

/** One of the user's groups; an archived group is gone for its user. */
export function getGroup<Q extends GroupQuery = {}>(ctx: ServiceContext, id: string, query: Q = {} as Q) {
  return ownedOrNotFound('ContactGroup', id, (id) => store.findGroup(ctx.db, ctx.user.id, id, query));
}

export const updateGroupInput = z
  .object({
    name: z.string().trim().min(1).max(255),
    description: z.string().max(10_000),
  })
  .partial();

export async function updateGroup<Q extends GroupQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: RawInput<typeof updateGroupInput>,
  query: Q = {} as Q,
) {
  await getGroup(ctx, id, { select: { id: true } });
  const input = parseInput(updateGroupInput, raw);
  return store.updateGroup(ctx.db, id, input, query);
}

/** What deleting a group did: `deleted` when nothing kept it, `archived` when campaigns keep its history. */
export interface GroupRemoval {
  outcome: 'deleted' | 'archived';
  erasedContacts: number;
  deletedContacts: number;
  /** Campaigns on the group that never started: with nothing to call and no history, they go with it. */
  deletedCampaigns: number;
}

/**
 * Deletes a group. Refused (409) while a campaign that may still dial uses it. Its contacts are removed
 * as people are (erased where history names them, else deleted), and campaigns on it that never started
 * go with it. A group that started campaigns still name, or that keeps erased contacts for the history of
 * any campaign, is archived instead of deleted: gone from every list and lookup, nothing in it callable.
 */
export async function deleteGroup(ctx: ServiceContext, id: string): Promise<GroupRemoval> {
  await getGroup(ctx, id, { select: { id: true } });
  const now = ctx.clock.now();
  const { removal, ...result } = await ctx.sql.transaction(async (tx) => {
    // Taken before the check so that a dispatch, which locks the group too, cannot slip in between.
    if (!(await store.lockGroup(tx, id))) throw new NotFoundError('ContactGroup');
    const busy = await store.campaignInStates(tx, id, DIALING_STATES);
    if (busy) {
      throw new ConflictError(
        `This contact group is used by the ${busy.status} campaign "${busy.name}"; cancel or finish it first.`,
        'contact_group_in_use',
      );
    }
    const removal = await removeContacts(tx, await store.liveMemberIds(tx, id), now);
    const deletedCampaigns = await store.deleteUnstartedCampaigns(tx, id);
    const kept = await store.groupStillNamed(tx, id);
    if (kept) await store.archiveGroup(tx, id, now);
    else await store.deleteGroupRow(tx, id);
    return {
      removal,
      outcome: kept ? ('archived' as const) : ('deleted' as const),
      erasedContacts: removal.erased,
      deletedContacts: removal.deleted,
      deletedCampaigns,
    };
  });
  for (const campaignId of removal.campaignIds) ctx.events.publish({ kind: 'campaign', campaignId });
  return result;
}
