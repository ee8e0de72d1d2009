import type { z } from 'zod';
import type { CampaignStatus, Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { NotFoundError, ValidationError, type FieldErrors } from '../errors.js';
import { parseInput, uuid } from '../validation.js';
import {
  createCampaignInput,
  updateCampaignInput,
  type CreateCampaignInput,
  type UpdateCampaignInput,
} from './inputs.js';
import { replanWaiting } from '../dialer/replan.js';
import { checkAgent, checkDescriptions, checkGroup } from './references.js';
import { EDITABLE_STATUSES, lockCampaign, refusal } from './states.js';

// Reading, creating and editing campaigns. State changes live in transitions.ts and dispatch.ts.

export type CampaignQuery = { include?: Prisma.CampaignInclude; select?: Prisma.CampaignSelect };

export interface CampaignFilter {
  statuses?: CampaignStatus[] | null | undefined;
}

function owned(ctx: ServiceContext, filter: CampaignFilter = {}): Prisma.CampaignWhereInput {
  return { userId: ctx.user.id, ...(filter.statuses ? { status: { in: filter.statuses } } : {}) };
}

/** The caller's campaigns, newest first; `query` carries paging and the relations a caller wants joined. */
export function listCampaigns<Q extends CampaignQuery & Pick<Prisma.CampaignFindManyArgs, 'take' | 'skip' | 'cursor'> = {}>(
  ctx: ServiceContext,
  filter: CampaignFilter,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>[]> {
  return ctx.db.campaign.findMany({
    ...query,
    where: owned(ctx, filter),
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  }) as Promise<Prisma.CampaignGetPayload<Q>[]>;
}

export function countCampaigns(ctx: ServiceContext, filter: CampaignFilter): Promise<number> {
  return ctx.db.campaign.count({ where: owned(ctx, filter) });
}

export async function getCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  if (!uuid.safeParse(id).success) throw new NotFoundError('Campaign');
  const campaign = await ctx.db.campaign.findFirst({ ...query, where: { ...owned(ctx), id } });
  if (!campaign) throw new NotFoundError('Campaign');
  return campaign as Prisma.CampaignGetPayload<Q>;
}

type Editable = z.output<typeof updateCampaignInput>;

/** Prisma's data for the given fields; absent ones stay as they are. */
function columns(input: Editable): Prisma.CampaignUncheckedUpdateInput {
  const json = (value: unknown) => (value === undefined ? undefined : (value as Prisma.InputJsonValue));
  return {
    name: input.name,
    description: input.description,
    agentId: input.agentId,
    contactGroupId: input.contactGroupId,
    concurrentCalls: input.concurrentCalls,
    maxRetryDays: input.maxRetryDays,
    callingHours: json(input.callingHours),
    activeDays: json(input.activeDays),
    scheduleConfig: json(input.scheduleConfig),
    fieldMappings: json(input.fieldMappings),
    selectedContactFields: json(input.selectedContactFields),
    timezone: input.timezone,
    callInsights: json(input.callInsights),
    postCallAnalyzers: json(input.postCallAnalyzers),
    startedAt: input.startedAt,
  };
}

const FUTURE_MESSAGE = 'Must be in the future.';

/**
 * Creates a campaign, `draft` unless `scheduled` (which needs a future `startedAt`) is asked for, on one
 * of the user's active agents and one of the user's groups. Every check runs before the write.
 */
export async function createCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  raw: CreateCampaignInput,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  const input = parseInput(createCampaignInput, raw);
  const now = ctx.clock.now();
  const errors: FieldErrors = {};
  if (input.startedAt && input.startedAt <= now) errors.startedAt = [FUTURE_MESSAGE];
  if (input.status === 'scheduled' && !input.startedAt) errors.startedAt ??= ['A scheduled campaign needs a start time.'];

  const user = await ctx.db.user.findUniqueOrThrow({ where: { id: ctx.user.id }, select: { defaultCountry: true } });
  return ctx.db.$transaction(async (tx) => {
    const agent = await checkAgent(tx, ctx.user.id, input.agentId, errors);
    const group = await checkGroup(tx, ctx.user.id, input.contactGroupId, errors);
    if (agent && group) checkDescriptions(input, agent, group, user.defaultCountry, errors);
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    return tx.campaign.create({
      ...query,
      data: { ...columns(input), userId: ctx.user.id, status: input.status } as Prisma.CampaignUncheckedCreateInput,
    });
  }) as Promise<Prisma.CampaignGetPayload<Q>>;
}

/**
 * Edits a draft or paused campaign (409 otherwise). Once a campaign has started, its group and start
 * time are history: changing them is a field error. A new calling window (hours, days or zone) plans
 * the contacts waiting for the old one again.
 */
export async function updateCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: UpdateCampaignInput,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  await getCampaign(ctx, id, { select: { id: true } });
  const input = parseInput(updateCampaignInput, raw);
  const now = ctx.clock.now();

  const updated = await ctx.db.$transaction(async (tx) => {
    const campaign = await lockCampaign(tx, id);
    if (!EDITABLE_STATUSES.includes(campaign.status)) throw refusal(campaign.status, 'Only draft and paused campaigns can be edited.');
    const started = campaign.status === 'paused';
    const errors: FieldErrors = {};
    if (input.startedAt !== undefined) {
      if (started) errors.startedAt = ['The campaign has already started.'];
      else if (input.startedAt && input.startedAt <= now) errors.startedAt = [FUTURE_MESSAGE];
    }
    if (input.agentId !== undefined && input.agentId !== campaign.agentId) await checkAgent(tx, ctx.user.id, input.agentId, errors);
    if (input.contactGroupId !== undefined && input.contactGroupId !== campaign.contactGroupId) {
      if (started) errors.contactGroupId = ['The contact group cannot change once the campaign has started.'];
      else await checkGroup(tx, ctx.user.id, input.contactGroupId, errors);
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const windowChanged = input.callingHours !== undefined || input.activeDays !== undefined || input.timezone !== undefined;
    if (windowChanged) await replanWaiting(tx, id, now);
    return tx.campaign.update({ ...query, where: { id }, data: columns(input) });
  });
  ctx.events.publish({ kind: 'campaign', campaignId: id });
  return updated as Prisma.CampaignGetPayload<Q>;
}
