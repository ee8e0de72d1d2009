import { z } from 'zod';
import type { Prisma } from '../generated/prisma/client.js';
import type { ServiceContext } from './context.js';
import { ForbiddenError, NotFoundError, ValidationError } from './errors.js';
import { schemaProblem } from './json-schema.js';
import { jsonObject, parseInput, uuid, type RawInput } from './validation.js';

// Agent templates are global and admin-managed; customers see the active ones.

export type TemplateQuery = { include?: Prisma.AgentTemplateInclude; select?: Prisma.AgentTemplateSelect };

function visibleTo(ctx: ServiceContext): Prisma.AgentTemplateWhereInput {
  return ctx.user.isAdmin ? {} : { isActive: true };
}

export function listTemplates<Q extends TemplateQuery = {}>(ctx: ServiceContext, query: Q = {} as Q): Promise<Prisma.AgentTemplateGetPayload<Q>[]> {
  return ctx.db.agentTemplate.findMany({ ...query, where: visibleTo(ctx), orderBy: [{ name: 'asc' }, { id: 'asc' }] }) as Promise<
    Prisma.AgentTemplateGetPayload<Q>[]
  >;
}

export async function getTemplate<Q extends TemplateQuery = {}>(ctx: ServiceContext, id: string, query: Q = {} as Q): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  if (!uuid.safeParse(id).success) throw new NotFoundError('AgentTemplate');
  const template = await ctx.db.agentTemplate.findFirst({ ...query, where: { id, ...visibleTo(ctx) } });
  if (!template) throw new NotFoundError('AgentTemplate');
  return template as Prisma.AgentTemplateGetPayload<Q>;
}

const templateFields = {
  templateKey: z.string().trim().min(1).max(64).regex(/^[a-z0-9_]+$/, { error: 'Use lowercase letters, digits and underscores.' }),
  name: z.string().trim().min(1).max(255),
  description: z.string().max(10_000),
  systemPromptTemplate: z.string().trim().min(1).max(100_000),
  placeholderSchema: jsonObject,
  agentProfileDefaults: jsonObject,
  llmRuntimeDefaults: jsonObject,
  responseEngineType: z.string().trim().min(1).max(32),
  isActive: z.boolean(),
};

export const createTemplateInput = z.object({
  ...templateFields,
  description: templateFields.description.default(''),
  agentProfileDefaults: jsonObject.default({}),
  llmRuntimeDefaults: jsonObject.default({}),
  responseEngineType: templateFields.responseEngineType.default('retell-llm'),
  isActive: z.boolean().default(true),
});
export type CreateTemplateInput = RawInput<typeof createTemplateInput>;

export const updateTemplateInput = z.object(templateFields).partial();
export type UpdateTemplateInput = RawInput<typeof updateTemplateInput>;

function requireAdmin(ctx: ServiceContext) {
  if (!ctx.user.isAdmin) throw new ForbiddenError();
}

function checkSchema(schema: unknown) {
  const problem = schema === undefined ? null : schemaProblem(schema);
  if (problem) throw ValidationError.field('placeholderSchema', problem);
}

export async function createTemplate<Q extends TemplateQuery = {}>(ctx: ServiceContext, raw: CreateTemplateInput, query: Q = {} as Q): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  requireAdmin(ctx);
  const input = parseInput(createTemplateInput, raw);
  checkSchema(input.placeholderSchema);
  const existing = await ctx.db.agentTemplate.findUnique({ where: { templateKey: input.templateKey }, select: { id: true } });
  if (existing) throw ValidationError.field('templateKey', 'An agent template with this key already exists.');
  return ctx.db.agentTemplate.create({
    ...query,
    data: {
      ...input,
      placeholderSchema: input.placeholderSchema as Prisma.InputJsonObject,
      agentProfileDefaults: input.agentProfileDefaults as Prisma.InputJsonObject,
      llmRuntimeDefaults: input.llmRuntimeDefaults as Prisma.InputJsonObject,
    },
  }) as unknown as Promise<Prisma.AgentTemplateGetPayload<Q>>;
}

export async function updateTemplate<Q extends TemplateQuery = {}>(ctx: ServiceContext, id: string, raw: UpdateTemplateInput, query: Q = {} as Q): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  requireAdmin(ctx);
  await getTemplate(ctx, id, { select: { id: true } });
  const input = parseInput(updateTemplateInput, raw);
  checkSchema(input.placeholderSchema);
  if (input.templateKey) {
    const clash = await ctx.db.agentTemplate.findFirst({
      where: { templateKey: input.templateKey, id: { not: id } },
      select: { id: true },
    });
    if (clash) throw ValidationError.field('templateKey', 'An agent template with this key already exists.');
  }
  return ctx.db.agentTemplate.update({
    ...query,
    where: { id },
    data: {
      ...input,
      placeholderSchema: input.placeholderSchema as Prisma.InputJsonObject | undefined,
      agentProfileDefaults: input.agentProfileDefaults as Prisma.InputJsonObject | undefined,
      llmRuntimeDefaults: input.llmRuntimeDefaults as Prisma.InputJsonObject | undefined,
    },
  }) as unknown as Promise<Prisma.AgentTemplateGetPayload<Q>>;
}
