import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ForbiddenError, ValidationError } from '../errors.js';
import { schemaProblem } from '../json-schema.js';
import { jsonObject, parseInput, type RawInput } from '../validation.js';
import { ownedOrNotFound } from '../owned.js';
import * as store from './store.js';
import type { TemplateQuery } from './store.js';

export type { TemplateQuery } from './store.js';

// Agent templates are global and admin-managed; customers see the active ones.

const visibleTo = (ctx: ServiceContext) => ({ activeOnly: !ctx.user.isAdmin });

export function listTemplates<Q extends TemplateQuery = {}>(ctx: ServiceContext, query: Q = {} as Q): Promise<Prisma.AgentTemplateGetPayload<Q>[]> {
  return store.findTemplates(ctx.db, visibleTo(ctx), query);
}

export function getTemplate<Q extends TemplateQuery = {}>(ctx: ServiceContext, id: string, query: Q = {} as Q): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  return ownedOrNotFound('AgentTemplate', id, async (id) => (await store.findTemplates(ctx.db, { ...visibleTo(ctx), id }, query))[0]);
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

const KEY_TAKEN = 'An agent template with this key already exists.';

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
  if (await store.templateKeyTaken(ctx.db, input.templateKey)) throw ValidationError.field('templateKey', KEY_TAKEN);
  return store.insertTemplate(
    ctx.db,
    {
      ...input,
      placeholderSchema: input.placeholderSchema as Prisma.InputJsonObject,
      agentProfileDefaults: input.agentProfileDefaults as Prisma.InputJsonObject,
      llmRuntimeDefaults: input.llmRuntimeDefaults as Prisma.InputJsonObject,
    },
    query,
  );
}

export async function updateTemplate<Q extends TemplateQuery = {}>(ctx: ServiceContext, id: string, raw: UpdateTemplateInput, query: Q = {} as Q): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  requireAdmin(ctx);
  await getTemplate(ctx, id, { select: { id: true } });
  const input = parseInput(updateTemplateInput, raw);
  checkSchema(input.placeholderSchema);
  if (input.templateKey && (await store.templateKeyTaken(ctx.db, input.templateKey, id))) throw ValidationError.field('templateKey', KEY_TAKEN);
  return store.updateTemplate(
    ctx.db,
    id,
    {
      ...input,
      placeholderSchema: input.placeholderSchema as Prisma.InputJsonObject | undefined,
      agentProfileDefaults: input.agentProfileDefaults as Prisma.InputJsonObject | undefined,
      llmRuntimeDefaults: input.llmRuntimeDefaults as Prisma.InputJsonObject | undefined,
    },
    query,
  );
}
