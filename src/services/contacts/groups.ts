import { z } from 'zod';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { parseInput, uuid, type RawInput } from '../validation.js';
import { removeContacts } from './erasure.js';

export type GroupQuery = { include?: Prisma.ContactGroupInclude; select?: Prisma.ContactGroupSelect };
type Tx = Prisma.TransactionClient | PrismaClient;

/** Campaigns in these states may still dial their group, so it cannot go away under them. */
export const DIALING_STATES = ['scheduled', 'running', 'paused'] as const;

export function listGroups<Q extends GroupQuery & Pick<Prisma.ContactGroupFindManyArgs, 'take' | 'skip' | 'cursor'> = {}>(
  ctx: ServiceContext,
  query: Q = {} as Q,
): Promise<Prisma.ContactGroupGetPayload<Q>[]> {
  return ctx.db.contactGroup.findMany({
    ...query,
    where: { userId: ctx.user.id, archivedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  }) as Promise<Prisma.ContactGroupGetPayload<Q>[]>;
}

export function countGroups(ctx: ServiceContext): Promise<number> {
  return ctx.db.contactGroup.count({ where: { userId: ctx.user.id, archivedAt: null } });
}

export async function getGroup<Q extends GroupQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
  db: Tx = ctx.db,
): Promise<Prisma.ContactGroupGetPayload<Q>> {
  if (!uuid.safeParse(id).success) throw new NotFoundError('ContactGroup');
  const group = await db.contactGroup.findFirst({ ...query, where: { id, userId: ctx.user.id, archivedAt: null } });
  if (!group) throw new NotFoundError('ContactGroup');
  return group as Prisma.ContactGroupGetPayload<Q>;
}

export const updateGroupInput = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(10_000),
}).partial();

export async function updateGroup<Q extends GroupQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: RawInput<typeof updateGroupInput>,
  query: Q = {} as Q,
): Promise<Prisma.ContactGroupGetPayload<Q>> {
  await getGroup(ctx, id, { select: { id: true } });
  const input = parseInput(updateGroupInput, raw);
  return ctx.db.contactGroup.update({ ...query, where: { id }, data: input }) as unknown as Promise<
    Prisma.ContactGroupGetPayload<Q>
  >;
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
  const { removal, ...result } = await ctx.db.$transaction(async (tx) => {
    // Taken before the check so that a dispatch, which locks the group too, cannot slip in between.
    await tx.$queryRaw`SELECT id FROM contact_groups WHERE id = ${id}::uuid FOR UPDATE`;
    const busy = await tx.campaign.findFirst({
      where: { contactGroupId: id, status: { in: [...DIALING_STATES] } },
      select: { name: true, status: true },
    });
    if (busy) {
      throw new ConflictError(
        `This contact group is used by the ${busy.status} campaign "${busy.name}"; cancel or finish it first.`,
        'contact_group_in_use',
      );
    }
    const members = await tx.contact.findMany({ where: { groupId: id, erasedAt: null }, select: { id: true } });
    const removal = await removeContacts(tx, members.map((c) => c.id), now);
    const deletedCampaigns = await tx.$executeRaw`
      DELETE FROM campaigns k WHERE k.contact_group_id = ${id}::uuid
        AND NOT EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = k.id)
        AND NOT EXISTS (SELECT 1 FROM call_attempts WHERE campaign_id = k.id)
        AND NOT EXISTS (SELECT 1 FROM appointments WHERE campaign_id = k.id)
        AND NOT EXISTS (SELECT 1 FROM credit_transactions WHERE campaign_id = k.id)`;
    const [left] = await tx.$queryRaw<{ kept: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM campaigns WHERE contact_group_id = ${id}::uuid)
          OR EXISTS (SELECT 1 FROM contacts WHERE contact_group_id = ${id}::uuid) AS kept`;
    const kept = left!.kept;
    if (kept) await tx.contactGroup.update({ where: { id }, data: { archivedAt: now }, select: { id: true } });
    else await tx.contactGroup.delete({ where: { id }, select: { id: true } });
    return {
      removal,
      outcome: kept ? ('archived' as const) : ('deleted' as const),
      erasedContacts: removal.erased,
      deletedContacts: removal.deleted,
      deletedCampaigns,
    };
    // A large group's erasure rewrites its contacts and all their calls: more than Prisma's default 5 s.
  }, { timeout: 120_000 });
  for (const campaignId of removal.campaignIds) ctx.events.publish({ kind: 'campaign', campaignId });
  return result;
}
