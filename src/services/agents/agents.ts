import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { UNIQUE_VIOLATION, ValidationError, type FieldErrors } from '../errors.js';
import { validateAgainst } from '../json-schema.js';
import { INVALID_PHONE_MESSAGE, toE164 } from '../phone.js';
import { defaultCountryOf } from '../users/store.js';
import { jsonObject, parseInput, uuid, type RawInput } from '../validation.js';
import { pauseRunningCampaignsOfAgent } from '../campaigns/states.js';
import { uuidv7 } from '../ids.js';
import { ownedOrNotFound } from '../owned.js';
import { fillPlaceholders } from '../placeholders.js';
import * as store from './store.js';
import type { AgentPage, AgentQuery, AgentStatusFilter } from './store.js';

export type { AgentQuery, AgentStatusFilter } from './store.js';

const NUMBER_TAKEN = 'This number already belongs to another active agent.';

/**
 * The caller's agents, newest first (`active` is v1's `GET /agents/active/`); `query` carries paging
 * and the relations a caller wants joined.
 */
export function listAgents<Q extends AgentQuery & AgentPage = {}>(
  ctx: ServiceContext,
  status: AgentStatusFilter | null | undefined,
  query: Q = {} as Q,
): Promise<Prisma.AgentGetPayload<Q>[]> {
  return store.findAgents(ctx.db, { userId: ctx.user.id, status }, query);
}

/** The filter and order of the caller's agent list, for reads that compile it into their own statement. */
export function agentListQuery(ctx: ServiceContext, status: AgentStatusFilter | null | undefined) {
  return store.agentList({ userId: ctx.user.id, status });
}

/** The filter of one of the caller's agents, for reads that compile it into their own statement. */
export function agentItemQuery(ctx: ServiceContext, id: string) {
  return { where: store.agentList({ userId: ctx.user.id, id }).where };
}

export function countAgents(ctx: ServiceContext, status: AgentStatusFilter | null | undefined): Promise<number> {
  return store.countAgents(ctx.db, { userId: ctx.user.id, status });
}

/** One of the caller's agents; another user's (or none) is a NotFoundError. */
export function getAgent<Q extends AgentQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.AgentGetPayload<Q>> {
  return ownedOrNotFound('Agent', id, async (id) => (await store.findAgents(ctx.db, { userId: ctx.user.id, id }, query))[0]);
}

export const createAgentInput = z.object({
  template_id: uuid,
  name: z.string().trim().min(1).max(255),
  phone_number: z.string().trim().min(1).max(32),
  phone_number_label: z.string().trim().max(64).default(''),
  variables: jsonObject.default({}),
});
export type CreateAgentInput = RawInput<typeof createAgentInput>;

/**
 * Creates an agent from an active template, its variables checked against the template's placeholder
 * schema and rendered into its prompt, with the given number attached as its primary number.
 * Every check runs before the first write, and the writes share one transaction.
 */
export async function createAgent<Q extends AgentQuery = {}>(
  ctx: ServiceContext,
  raw: CreateAgentInput,
  query: Q = {} as Q,
): Promise<Prisma.AgentGetPayload<Q>> {
  const input = parseInput(createAgentInput, raw);
  const errors: FieldErrors = {};

  const [template] = await store.findTemplates(ctx.db, { activeOnly: true, id: input.template_id });
  if (!template) errors.template_id = ['No active agent template has this id.'];

  const number = toE164(input.phone_number, await defaultCountryOf(ctx.db, ctx.user.id));
  if (!number) errors.phone_number = [INVALID_PHONE_MESSAGE];

  const existingNumber = number ? await store.findNumber(ctx.db, ctx.user.id, number) : null;
  if (existingNumber?.agent?.isActive) errors.phone_number = [NUMBER_TAKEN];

  const variables = structuredClone(input.variables);
  if (template) {
    const problems = validateAgainst(
      template.placeholderSchema as object,
      `${template.id}@${template.updatedAt.toISOString()}`,
      variables,
      'variables',
    );
    Object.assign(errors, problems);
  }
  if (Object.keys(errors).length > 0 || !template || !number) throw new ValidationError(errors);

  const id = uuidv7();
  try {
    await ctx.sql.transaction(async (tx) => {
      await store.insertAgentRow(tx, {
        id,
        user_id: ctx.user.id,
        template_id: template.id,
        name: input.name,
        response_engine_type: template.responseEngineType,
        system_prompt: fillPlaceholders(template.systemPromptTemplate, variables),
        agent_variables: variables,
        agent_profile: template.agentProfileDefaults,
        agent_config: { template_key: template.templateKey },
      });
      // The user's row for the number moves to the new agent, unless an active agent took it meanwhile.
      const numberId = existingNumber?.id ?? uuidv7();
      if (existingNumber) {
        if (!(await store.takeNumber(tx, numberId, id, input.phone_number_label))) throw new NumberTaken();
      } else {
        await store.insertNumber(tx, { id: numberId, user_id: ctx.user.id, agent_id: id, number, label: input.phone_number_label });
      }
      await store.setPrimaryNumber(tx, id, numberId);
    });
  } catch (error) {
    // Taken under the number's row lock, or inserted by another agent created at the same moment.
    if (error instanceof NumberTaken || (error as { code?: unknown }).code === UNIQUE_VIOLATION) {
      throw ValidationError.field('phone_number', NUMBER_TAKEN);
    }
    throw error;
  }
  return getAgent(ctx, id, query);
}

/** Rolls the agent's transaction back when its number was taken meanwhile. */
class NumberTaken extends Error {}

/**
 * Archives an agent: it leaves the active list and its running campaigns pause with the reason
 * `agent_archived`. Archiving an archived agent changes nothing.
 */
export async function archiveAgent<Q extends AgentQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.AgentGetPayload<Q>> {
  const paused = await ownedOrNotFound('Agent', id, (id) =>
    ctx.sql.transaction(async (tx) => {
      const campaigns = await pauseRunningCampaignsOfAgent(tx, ctx.user.id, id, 'agent_archived');
      return (await store.archiveAgentRow(tx, ctx.user.id, id)) ? campaigns : null;
    }),
  );
  for (const campaignId of paused) ctx.events.publish({ kind: 'campaign', campaignId });
  return getAgent(ctx, id, query);
}
