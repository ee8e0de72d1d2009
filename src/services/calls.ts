import type { CallStatus, Prisma, Sentiment } from '../generated/prisma/client.js';
import type { ServiceContext } from './context.js';
import { NotFoundError, ValidationError } from './errors.js';
import { distinct, uuid } from './validation.js';

// Call history: the dial attempts the dialer recorded, read by their owner only.

export type CallAttemptQuery = { include?: Prisma.CallAttemptInclude; select?: Prisma.CallAttemptSelect };

export interface CallAttemptFilter {
  campaignId?: string | null | undefined;
  contactId?: string | null | undefined;
  statuses?: CallStatus[] | null | undefined;
  sentiments?: Sentiment[] | null | undefined;
  /** Dialed at or after (inclusive). */
  from?: Date | null | undefined;
  /** Dialed before (exclusive). */
  to?: Date | null | undefined;
}

/** The filter alone, for reads that reach attempts through a campaign the caller already owns. */
export function callAttemptFilterWhere(filter: CallAttemptFilter): Prisma.CallAttemptWhereInput {
  if (filter.from && filter.to && filter.from > filter.to) throw ValidationError.field('to', 'Must not be earlier than from.');
  return {
    ...(filter.campaignId ? { campaignId: filter.campaignId } : {}),
    ...(filter.contactId ? { contactId: filter.contactId } : {}),
    ...(filter.statuses ? { status: { in: distinct(filter.statuses) } } : {}),
    ...(filter.sentiments ? { sentiment: { in: distinct(filter.sentiments) } } : {}),
    ...(filter.from || filter.to
      ? { createdAt: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lt: filter.to } : {}) } }
      : {}),
  };
}

/** Newest first: the order of call history on both surfaces. */
export const NEWEST_FIRST = [{ createdAt: 'desc' }, { id: 'desc' }] satisfies Prisma.CallAttemptOrderByWithRelationInput[];

/** The caller's call attempts across campaigns, newest first; `query` carries paging and relations. */
export function listCallAttempts<Q extends CallAttemptQuery & Pick<Prisma.CallAttemptFindManyArgs, 'take' | 'skip' | 'cursor'> = {}>(
  ctx: ServiceContext,
  filter: CallAttemptFilter,
  query: Q = {} as Q,
): Promise<Prisma.CallAttemptGetPayload<Q>[]> {
  return ctx.db.callAttempt.findMany({
    ...query,
    where: { ...callAttemptFilterWhere(filter), userId: ctx.user.id },
    orderBy: NEWEST_FIRST,
  }) as Promise<Prisma.CallAttemptGetPayload<Q>[]>;
}

export function countCallAttempts(ctx: ServiceContext, filter: CallAttemptFilter): Promise<number> {
  return ctx.db.callAttempt.count({ where: { ...callAttemptFilterWhere(filter), userId: ctx.user.id } });
}

export async function getCallAttempt<Q extends CallAttemptQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.CallAttemptGetPayload<Q>> {
  if (!uuid.safeParse(id).success) throw new NotFoundError('CallAttempt');
  const attempt = await ctx.db.callAttempt.findFirst({ ...query, where: { id, userId: ctx.user.id } });
  if (!attempt) throw new NotFoundError('CallAttempt');
  return attempt as Prisma.CallAttemptGetPayload<Q>;
}
