import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ConflictError, UNIQUE_VIOLATION, ValidationError, type FieldErrors } from '../errors.js';
import { validateAgainst } from '../json-schema.js';
import { INVALID_PHONE_MESSAGE, toE164 } from '../phone.js';
import { defaultCountryOf } from '../users/store.js';
import { jsonObject, parseInput, uuid, type RawInput } from '../validation.js';
import { pauseRunningCampaignsOfAgent } from '../campaigns/states.js';
import { uuidv7 } from '../ids.js';
import { ownedOrNotFound } from '../owned.js';
import { fillPlaceholders } from '../placeholders.js';
import { provisioningQueued } from '../voice/control.js';
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
  await provisioningQueued(ctx, id);
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
  // Removed at the provider by its provisioning job (a second archive finds nothing left to remove).
  await provisioningQueued(ctx, id);
  return getAgent(ctx, id, query);
}

export const updateAgentInput = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  /** Rendered into the template's prompt again, checked against its placeholder schema. */
  variables: jsonObject.optional(),
  agent_profile: jsonObject.optional(),
  llm_runtime_overrides: z
    .strictObject({ model: z.string().trim().min(1).max(64).optional(), temperature: z.number().min(0).max(2).optional() })
    .optional(),
  /** The customer's own LLM server (Retell's custom LLM protocol); null: the template's engine again. */
  llm_websocket_url: z
    .url({ protocol: /^wss?$/, error: 'Must be a ws:// or wss:// URL.' })
    .max(200)
    .nullable()
    .optional(),
  /** Where the agent may transfer a call to a person (offering the transfer_call tool); null: nowhere. */
  transfer_number: z.string().trim().min(1).max(32).nullable().optional(),
});
export type UpdateAgentInput = RawInput<typeof updateAgentInput>;

/**
 * Edits an active agent: a new version, which its provisioning job takes to the provider. Calls go on
 * with the provider's current version until the new one is published there, then use it from their
 * next call on (running campaigns included).
 */
export async function updateAgent<Q extends AgentQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: UpdateAgentInput,
  query: Q = {} as Q,
): Promise<Prisma.AgentGetPayload<Q>> {
  const agent = await getAgent(ctx, id, { include: { template: true } });
  const input = parseInput(updateAgentInput, raw);
  if (!agent.isActive) throw new ConflictError(`The agent "${agent.name}" is archived; it can no longer be edited.`, 'agent_inactive');
  const errors: FieldErrors = {};
  let prompt = agent.systemPrompt;
  let variables = agent.agentVariables;
  if (input.variables) {
    const filled = structuredClone(input.variables);
    const { template } = agent;
    Object.assign(
      errors,
      validateAgainst(template.placeholderSchema as object, `${template.id}@${template.updatedAt.toISOString()}`, filled, 'variables'),
    );
    prompt = fillPlaceholders(template.systemPromptTemplate, filled);
    variables = filled as Prisma.JsonObject;
  }
  let transferNumber: string | null | undefined = input.transfer_number;
  if (input.transfer_number) {
    transferNumber = toE164(input.transfer_number, await defaultCountryOf(ctx.db, ctx.user.id));
    if (!transferNumber) errors.transfer_number = [INVALID_PHONE_MESSAGE];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);

  const config = { ...(agent.agentConfig as Record<string, unknown>) };
  if (transferNumber !== undefined) {
    if (transferNumber === null) delete config.transfer_number;
    else config.transfer_number = transferNumber;
  }
  const websocketUrl = input.llm_websocket_url === undefined ? agent.llmWebsocketUrl : input.llm_websocket_url;
  const updated = await store.updateAgentRow(ctx.sql, ctx.user.id, id, {
    name: input.name ?? agent.name,
    system_prompt: prompt,
    agent_variables: variables,
    agent_profile: input.agent_profile ?? agent.agentProfile,
    agent_config: config,
    llm_runtime_overrides: input.llm_runtime_overrides ?? agent.llmRuntimeOverrides,
    llm_websocket_url: websocketUrl,
    response_engine_type: websocketUrl ? 'custom-llm' : agent.template.responseEngineType,
  });
  if (!updated) throw new ConflictError(`The agent "${agent.name}" is archived; it can no longer be edited.`, 'agent_inactive');
  await provisioningQueued(ctx, id);
  return getAgent(ctx, id, query);
}
