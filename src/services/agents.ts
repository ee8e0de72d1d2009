import { z } from 'zod';
import { Prisma } from '../generated/prisma/client.js';
import type { ServiceContext } from './context.js';
import { NotFoundError, ValidationError, type FieldErrors } from './errors.js';
import { validateAgainst } from './json-schema.js';
import { INVALID_PHONE_MESSAGE, toE164 } from './phone.js';
import { jsonObject, parseInput, uuid, type RawInput } from './validation.js';

export type AgentQuery = { include?: Prisma.AgentInclude; select?: Prisma.AgentSelect };
export type AgentStatusFilter = 'active' | 'archived';

const NUMBER_TAKEN = 'This number already belongs to another active agent.';

function owned(ctx: ServiceContext, where: Prisma.AgentWhereInput = {}): Prisma.AgentWhereInput {
  return { ...where, userId: ctx.user.id };
}

/**
 * The caller's agents, newest first (`active` is v1's `GET /agents/active/`); `query` carries paging
 * and the relations a caller wants joined.
 */
export function listAgents<Q extends AgentQuery & Pick<Prisma.AgentFindManyArgs, 'take' | 'skip' | 'cursor'> = {}>(
  ctx: ServiceContext,
  status: AgentStatusFilter | null | undefined,
  query: Q = {} as Q,
): Promise<Prisma.AgentGetPayload<Q>[]> {
  return ctx.db.agent.findMany({
    ...query,
    where: owned(ctx, status ? { status } : {}),
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  }) as Promise<Prisma.AgentGetPayload<Q>[]>;
}

export function countAgents(ctx: ServiceContext, status: AgentStatusFilter | null | undefined): Promise<number> {
  return ctx.db.agent.count({ where: owned(ctx, status ? { status } : {}) });
}

export async function getAgent<Q extends AgentQuery = {}>(ctx: ServiceContext, id: string, query: Q = {} as Q): Promise<Prisma.AgentGetPayload<Q>> {
  if (!uuid.safeParse(id).success) throw new NotFoundError('Agent');
  const agent = await ctx.db.agent.findFirst({ ...query, where: owned(ctx, { id }) });
  if (!agent) throw new NotFoundError('Agent');
  return agent as Prisma.AgentGetPayload<Q>;
}

export const createAgentInput = z.object({
  templateId: uuid,
  name: z.string().trim().min(1).max(255),
  phoneNumber: z.string().trim().min(1).max(32),
  phoneNumberLabel: z.string().trim().max(64).default(''),
  variables: jsonObject.default({}),
});
export type CreateAgentInput = RawInput<typeof createAgentInput>;

/** Fills `{{ name }}` placeholders with the agent's variables; unknown placeholders become empty. */
export function renderPrompt(template: string, variables: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_, key: string) => {
    const value = variables[key];
    if (value === undefined || value === null) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}

/**
 * Creates an agent from an active template, its variables checked against the template's placeholder
 * schema and rendered into its prompt, with the given number attached as its primary number.
 * Every check runs before the first write, and the writes share one transaction.
 */
export async function createAgent<Q extends AgentQuery = {}>(ctx: ServiceContext, raw: CreateAgentInput, query: Q = {} as Q): Promise<Prisma.AgentGetPayload<Q>> {
  const input = parseInput(createAgentInput, raw);
  const errors: FieldErrors = {};

  const template = await ctx.db.agentTemplate.findFirst({ where: { id: input.templateId, isActive: true } });
  if (!template) errors.templateId = ['No active agent template has this id.'];

  const user = await ctx.db.user.findUniqueOrThrow({ where: { id: ctx.user.id }, select: { defaultCountry: true } });
  const number = toE164(input.phoneNumber, user.defaultCountry);
  if (!number) errors.phoneNumber = [INVALID_PHONE_MESSAGE];

  const existingNumber = number
    ? await ctx.db.phoneNumber.findUnique({
        where: { userId_number: { userId: ctx.user.id, number } },
        select: { id: true, agent: { select: { isActive: true } } },
      })
    : null;
  if (existingNumber?.agent?.isActive) errors.phoneNumber = [NUMBER_TAKEN];

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

  try {
    return await ctx.db.$transaction(async (tx) => {
      const agent = await tx.agent.create({
        data: {
          userId: ctx.user.id,
          templateId: template.id,
          name: input.name,
          responseEngineType: template.responseEngineType,
          systemPrompt: renderPrompt(template.systemPromptTemplate, variables),
          agentVariables: variables as Prisma.InputJsonObject,
          agentProfile: template.agentProfileDefaults as Prisma.InputJsonValue,
          agentConfig: { template_key: template.templateKey },
        },
        select: { id: true },
      });
      let phoneId: string;
      if (existingNumber) {
        // Checked again under the row's lock: another agent may have taken the number since it was read.
        const moved = await tx.phoneNumber.updateMany({
          where: { id: existingNumber.id, OR: [{ agentId: null }, { agent: { isActive: false } }] },
          data: { agentId: agent.id, isPrimary: true, label: input.phoneNumberLabel },
        });
        if (moved.count === 0) throw ValidationError.field('phoneNumber', NUMBER_TAKEN);
        // The archived agent the number leaves keeps no primary number (a number is one agent's primary).
        await tx.agent.updateMany({ where: { phoneNumberId: existingNumber.id }, data: { phoneNumberId: null } });
        phoneId = existingNumber.id;
      } else {
        const phone = await tx.phoneNumber.create({
          data: { userId: ctx.user.id, agentId: agent.id, number, label: input.phoneNumberLabel, isPrimary: true },
          select: { id: true },
        });
        phoneId = phone.id;
      }
      return tx.agent.update({ ...query, where: { id: agent.id }, data: { phoneNumberId: phoneId } });
    }) as Prisma.AgentGetPayload<Q>;
  } catch (error) {
    // Another agent created at the same moment inserted the number first.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw ValidationError.field('phoneNumber', NUMBER_TAKEN);
    throw error;
  }
}

/**
 * Archives an agent: it leaves the active list and its running campaigns pause with the reason
 * `agent_archived`. Archiving an archived agent changes nothing.
 */
export async function archiveAgent<Q extends AgentQuery = {}>(ctx: ServiceContext, id: string, query: Q = {} as Q): Promise<Prisma.AgentGetPayload<Q>> {
  await getAgent(ctx, id, { select: { id: true } });
  const { agent, paused } = await ctx.db.$transaction(async (tx) => {
    const paused = await tx.campaign.updateManyAndReturn({
      where: { agentId: id, userId: ctx.user.id, status: 'running' },
      data: { status: 'paused', pausedReason: 'agent_archived' },
      select: { id: true },
    });
    const agent = await tx.agent.update({ ...query, where: { id }, data: { isActive: false, status: 'archived' } });
    return { agent, paused };
  });
  for (const campaign of paused) ctx.events.publish({ kind: 'campaign', campaignId: campaign.id });
  return agent as Prisma.AgentGetPayload<Q>;
}
