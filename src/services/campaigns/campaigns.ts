import type { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { found, ValidationError, type FieldErrors } from '../errors.js';
import { uuidv7 } from '../ids.js';
import { parseInput, uuid } from '../validation.js';
import {
  createCampaignInput,
  updateCampaignInput,
  type CreateCampaignInput,
  type UpdateCampaignInput,
} from './inputs.js';
import { checkAgent, checkDescriptions, checkGroup } from './references.js';
import { EDITABLE_STATUSES, lockCampaign, refusal } from './states.js';
import {
  countCampaigns as countRows,
  findCampaign,
  findCampaigns,
  insertCampaign,
  ownerCountry,
  replanWaiting,
  updateCampaignRow,
  type CampaignColumns,
  type CampaignFilter,
  type CampaignPage,
  type CampaignQuery,
} from './store.js';

// Reading, creating and editing campaigns. State changes live in transitions.ts and dispatch.ts.

export type { CampaignFilter, CampaignQuery };

/** The caller's campaigns, newest first; `query` carries paging and the relations a caller wants joined. */
export function listCampaigns<Q extends CampaignQuery & CampaignPage = {}>(
  ctx: ServiceContext,
  filter: CampaignFilter,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>[]> {
  return findCampaigns(ctx, filter, query);
}

export function countCampaigns(ctx: ServiceContext, filter: CampaignFilter): Promise<number> {
  return countRows(ctx, filter);
}

export async function getCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  return found(uuid.safeParse(id).success ? await findCampaign(ctx, id, query) : null, 'Campaign');
}

type Editable = z.output<typeof updateCampaignInput>;

/** The stored columns of the given fields; absent ones stay as they are. */
function columns(input: Editable): CampaignColumns {
  return {
    name: input.name,
    description: input.description,
    agent_id: input.agentId,
    contact_group_id: input.contactGroupId,
    concurrent_calls: input.concurrentCalls,
    max_retry_days: input.maxRetryDays,
    calling_hours: input.callingHours,
    active_days: input.activeDays,
    schedule_config: input.scheduleConfig,
    field_mappings: input.fieldMappings,
    selected_contact_fields: input.selectedContactFields,
    timezone: input.timezone,
    call_insights: input.callInsights,
    post_call_analyzers: input.postCallAnalyzers,
    started_at: input.startedAt,
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

  const country = await ownerCountry(ctx);
  const id = uuidv7();
  await ctx.sql.transaction(async (tx) => {
    const agent = await checkAgent(tx, ctx.user.id, input.agentId, errors);
    const group = await checkGroup(tx, ctx.user.id, input.contactGroupId, errors);
    if (agent && group) checkDescriptions(input, agent, group, country, errors);
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    await insertCampaign(tx, { ...columns(input), id, user_id: ctx.user.id, status: input.status });
  });
  return getCampaign(ctx, id, query);
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

  await ctx.sql.transaction(async (tx) => {
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
    await updateCampaignRow(tx, id, columns(input));
  });
  ctx.events.publish({ kind: 'campaign', campaignId: id });
  return getCampaign(ctx, id, query);
}
