import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ValidationError, type FieldErrors } from '../errors.js';
import { uuidv7 } from '../ids.js';
import { ownedOrNotFound } from '../owned.js';
import { defaultCountryOf } from '../users/store.js';
import { parseInput } from '../validation.js';
import { checkRegionalRulesOff } from './exemptions.js';
import {
  createCampaignInput,
  fieldsSetAtCreation,
  updateCampaignInput,
  type CreateCampaignInput,
  type UpdateCampaignInput,
} from './inputs.js';
import { actFor } from './actor.js';
import { checkAgent, checkDescriptions, checkGroup, checkVariantAgents } from './references.js';
import { EDITABLE_STATUSES, lockCampaign, refusal } from './states.js';
import {
  campaignItem,
  campaignList,
  countCampaigns as countRows,
  findCampaign,
  findCampaigns,
  insertCampaign,
  replaceVariants,
  replanWaiting,
  settleCreatedEntry,
  updateCampaignRow,
  type CampaignFilter,
  type RedialColumns,
  type VariantSetting,
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

/** The filter and order of the caller's campaign list, for reads that compile it into their own statement. */
export function campaignListQuery(ctx: ServiceContext, filter: CampaignFilter) {
  return campaignList(ctx.user.id, filter);
}

/** The filter of one of the caller's campaigns, for reads that compile it into their own statement. */
export function campaignItemQuery(ctx: ServiceContext, id: string) {
  return campaignItem(ctx.user.id, id);
}

export function countCampaigns(ctx: ServiceContext, filter: CampaignFilter): Promise<number> {
  return countRows(ctx, filter);
}

export async function getCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.CampaignGetPayload<Q>> {
  return ownedOrNotFound('Campaign', id, (id) => findCampaign(ctx, id, query));
}

const FUTURE_MESSAGE = 'Must be in the future.';

/** What a campaign made from another (copies.ts) takes beside its settings. */
export interface CampaignOrigin {
  redial?: RedialColumns;
  /** The A/B split it carries over; each variant's agent is checked as setCampaignVariants checks it. */
  variants?: VariantSetting[];
}

/**
 * Creates a campaign, `draft` unless `scheduled` (which needs a future `startedAt`) is asked for, on one
 * of the user's active agents and one of the user's groups. Every check runs before the write. Its
 * history's first entry names the fields its creator set (fieldsSetAtCreation), and its split if any.
 */
export async function createCampaign<Q extends CampaignQuery = {}>(
  ctx: ServiceContext,
  raw: CreateCampaignInput,
  query: Q = {} as Q,
  origin: CampaignOrigin = {},
): Promise<Prisma.CampaignGetPayload<Q>> {
  const input = parseInput(createCampaignInput, raw);
  const now = ctx.clock.now();
  const errors: FieldErrors = {};
  if (input.started_at && input.started_at <= now) errors.started_at = [FUTURE_MESSAGE];
  if (input.status === 'scheduled' && !input.started_at) errors.started_at ??= ['A scheduled campaign needs a start time.'];

  const country = await defaultCountryOf(ctx.db, ctx.user.id);
  const id = uuidv7();
  await ctx.sql.transaction(async (tx) => {
    await actFor(tx, ctx);
    const agent = await checkAgent(tx, ctx.user.id, input.agent_id, errors);
    const group = await checkGroup(tx, ctx.user.id, input.contact_group_id, errors);
    if (agent && group) checkDescriptions(input, agent, group, country, errors);
    await checkRegionalRulesOff(tx, ctx.user.id, input.regional_rules, now, errors);
    const variants = origin.variants ?? [];
    await checkVariantAgents(tx, ctx.user.id, variants, errors);
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const { agent_name, agent_phone_number, contact_group_name, contact_group_total, status, ...columns } = input;
    await insertCampaign(tx, { ...columns, ...origin.redial, id, user_id: ctx.user.id, status });
    if (variants.length) {
      await replaceVariants(
        tx,
        id,
        variants.map((v) => ({ id: uuidv7(), agentId: v.agent_id, name: v.name, weight: v.weight })),
      );
    }
    await settleCreatedEntry(tx, id, fieldsSetAtCreation(input), variants.length ? { variants: { from: null, to: variants } } : {});
  });
  return getCampaign(ctx, id, query);
}

/**
 * Edits a draft, paused or running campaign (409 otherwise). Once a campaign has started, its group and
 * start time are history: changing them is a field error. A running campaign's edit waits for the tick
 * that holds its lock, and every later tick dials by the new values; calls in flight end as they began.
 * A new calling window (hours, days or zone) plans the contacts waiting for the old one again.
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

  const running = await ctx.sql.transaction(async (tx) => {
    await actFor(tx, ctx);
    const campaign = await lockCampaign(tx, id);
    if (!EDITABLE_STATUSES.includes(campaign.status)) {
      throw refusal(campaign.status, 'Only draft, paused and running campaigns can be edited.');
    }
    const started = campaign.status !== 'draft';
    const errors: FieldErrors = {};
    if (input.started_at !== undefined) {
      if (started) errors.started_at = ['The campaign has already started.'];
      else if (input.started_at && input.started_at <= now) errors.started_at = [FUTURE_MESSAGE];
    }
    if (input.agent_id !== undefined && input.agent_id !== campaign.agentId) await checkAgent(tx, ctx.user.id, input.agent_id, errors);
    if (input.contact_group_id !== undefined && input.contact_group_id !== campaign.contactGroupId) {
      if (started) errors.contact_group_id = ['The contact group cannot change once the campaign has started.'];
      else await checkGroup(tx, ctx.user.id, input.contact_group_id, errors);
    }
    await checkRegionalRulesOff(tx, ctx.user.id, input.regional_rules, now, errors);
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const windowChanged = input.calling_hours !== undefined || input.active_days !== undefined || input.timezone !== undefined;
    if (windowChanged) await replanWaiting(tx, id, now);
    await updateCampaignRow(tx, id, input);
    return campaign.status === 'running';
  });
  ctx.events.publish({ kind: 'campaign', campaignId: id });
  // More room (pacing, hours, a cap raised) is used at once rather than at the dialer's next sweep.
  if (running) {
    await ctx.dialer
      .wake(id, { requestId: ctx.requestId })
      .catch((error) => ctx.log.warn({ err: error, campaignId: id }, 'could not wake the dialer'));
  }
  return getCampaign(ctx, id, query);
}
