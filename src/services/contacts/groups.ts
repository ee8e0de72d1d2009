import { z } from 'zod';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { parseInput, uuid, type RawInput } from '../validation.js';

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
    where: { userId: ctx.user.id },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  }) as Promise<Prisma.ContactGroupGetPayload<Q>[]>;
}

export function countGroups(ctx: ServiceContext): Promise<number> {
  return ctx.db.contactGroup.count({ where: { userId: ctx.user.id } });
}

export async function getGroup<Q extends GroupQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
  db: Tx = ctx.db,
): Promise<Prisma.ContactGroupGetPayload<Q>> {
  if (!uuid.safeParse(id).success) throw new NotFoundError('ContactGroup');
  const group = await db.contactGroup.findFirst({ ...query, where: { id, userId: ctx.user.id } });
  if (!group) throw new NotFoundError('ContactGroup');
  return group as Prisma.ContactGroupGetPayload<Q>;
}

/** Recounts the contacts of the groups inside the caller's transaction, so totals never drift. */
export async function refreshTotals(db: Tx, groupIds: string[]): Promise<void> {
  for (const id of new Set(groupIds)) {
    await db.$executeRaw`UPDATE contact_groups SET total = (SELECT count(*) FROM contacts WHERE contact_group_id = ${id}::uuid), updated_at = now() WHERE id = ${id}::uuid`;
  }
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

/**
 * Deletes a group with its contacts. Refused (409) while a campaign that may still dial uses it; drafts
 * and finished campaigns on the group go with it, since they have nobody left to call.
 */
export async function deleteGroup(ctx: ServiceContext, id: string): Promise<void> {
  await getGroup(ctx, id, { select: { id: true } });
  await ctx.db.$transaction(async (tx) => {
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
    await tx.campaign.deleteMany({ where: { contactGroupId: id } });
    await tx.contactGroup.delete({ where: { id } });
  });
}
