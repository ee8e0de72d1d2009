import type { CallStatus, Prisma, Sentiment } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ValidationError } from '../errors.js';
import { distinct } from '../validation.js';
import { ownedOrNotFound } from '../owned.js';
import { DEEP_OFFSET, deepPageKeys } from '../offset-pages.js';
import { RECORD_RETENTION_YEARS } from './records.js';
import * as store from './store.js';

// Call history: the dial attempts the dialer recorded, read by their owner only.

export { NEWEST_FIRST, type CallAttemptQuery } from './store.js';

export interface CallAttemptFilter {
  campaign_id?: string | null | undefined;
  contact_id?: string | null | undefined;
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
    ...(filter.campaign_id ? { campaignId: filter.campaign_id } : {}),
    ...(filter.contact_id ? { contactId: filter.contact_id } : {}),
    ...(filter.statuses ? { status: { in: distinct(filter.statuses) } } : {}),
    ...(filter.sentiments ? { sentiment: { in: distinct(filter.sentiments) } } : {}),
    ...(filter.from || filter.to
      ? { createdAt: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lt: filter.to } : {}) } }
      : {}),
  };
}

/** The caller's call attempts across campaigns, newest first; `query` carries paging and relations. */
export async function listCallAttempts<
  Q extends store.CallAttemptQuery & Pick<Prisma.CallAttemptFindManyArgs, 'take' | 'skip' | 'cursor'> = {},
>(ctx: ServiceContext, filter: CallAttemptFilter, query: Q = {} as Q): Promise<Prisma.CallAttemptGetPayload<Q>[]> {
  const where = callAttemptFilterWhere(filter);
  const { skip = 0, take, cursor, ...relations } = query;
  // A status or a sentiment changes as a call goes on, so a list filtered by them gains and loses rows
  // anywhere: no remembered key holds there (docs/decisions.md).
  if (skip < DEEP_OFFSET || cursor || take === undefined || filter.statuses || filter.sentiments) {
    return store.findCallAttempts(ctx, where, query);
  }
  const scope = {
    campaignId: filter.campaign_id ?? undefined,
    contactId: filter.contact_id ?? undefined,
    from: filter.from ?? undefined,
    to: filter.to ?? undefined,
  };
  const keys = await deepPageKeys(
    ctx,
    {
      name: `${ctx.user.id}:call-history:${JSON.stringify(scope)}`,
      ...store.callHistoryList(ctx, scope),
      keptSince: recordsKeptSince(ctx.clock.now()),
    },
    skip,
    take,
  );
  return store.findCallAttemptsByIds(
    ctx,
    keys.map((key) => key.id),
    relations,
  ) as Promise<Prisma.CallAttemptGetPayload<Q>[]>;
}

export function countCallAttempts(ctx: ServiceContext, filter: CallAttemptFilter): Promise<number> {
  return store.countCallAttempts(ctx, callAttemptFilterWhere(filter));
}

export function getCallAttempt<Q extends store.CallAttemptQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.CallAttemptGetPayload<Q>> {
  return ownedOrNotFound('CallAttempt', id, (id) => store.findCallAttempt(ctx, id, query));
}

/**
 * The oldest calls that cannot be dropped before a remembered page is forgotten: months go whole once past
 * the records' years (src/jobs/retention.ts), and a call's id, which places it in its month, is made with
 * its dial time; a day of margin.
 */
function recordsKeptSince(now: Date): Date {
  const since = new Date(now);
  since.setUTCFullYear(since.getUTCFullYear() - RECORD_RETENTION_YEARS);
  return new Date(since.getTime() + 24 * 60 * 60 * 1000);
}

/** How many rows an export reads at a time: its memory stays that of one batch, whatever the total. */
export const EXPORT_BATCH = 1_000;

/**
 * Every call attempt matching `filter`, newest first, in batches read one after the other by cursor
 * (a batch is read when the previous one has been taken), for exports of any size.
 */
export async function* callAttemptBatches<Q extends store.CallAttemptQuery = {}>(
  ctx: ServiceContext,
  filter: CallAttemptFilter,
  query: Q = {} as Q,
): AsyncGenerator<Prisma.CallAttemptGetPayload<Q>[]> {
  let after: string | undefined;
  for (;;) {
    const batch = (await listCallAttempts(ctx, filter, {
      ...query,
      take: EXPORT_BATCH,
      ...(after ? { cursor: { id: after }, skip: 1 } : {}),
    })) as (Prisma.CallAttemptGetPayload<Q> & { id: string })[];
    if (batch.length > 0) yield batch;
    if (batch.length < EXPORT_BATCH) return;
    after = batch.at(-1)!.id;
  }
}
