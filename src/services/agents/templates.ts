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

export function listTemplates<Q extends TemplateQuery = {}>(
  ctx: ServiceContext,
  query: Q = {} as Q,
): Promise<Prisma.AgentTemplateGetPayload<Q>[]> {
  return store.findTemplates(ctx.db, visibleTo(ctx), query);
}

export function getTemplate<Q extends TemplateQuery = {}>(
  ctx: ServiceContext,
  id: string,
  query: Q = {} as Q,
): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  return ownedOrNotFound('AgentTemplate', id, async (id) => (await store.findTemplates(ctx.db, { ...visibleTo(ctx), id }, query))[0]);
}

const templateFields = {
  template_key: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9_]+$/, { error: 'Use lowercase letters, digits and underscores.' }),
  name: z.string().trim().min(1).max(255),
  description: z.string().max(10_000),
  system_prompt_template: z.string().trim().min(1).max(100_000),
  placeholder_schema: jsonObject,
  agent_profile_defaults: jsonObject,
  llm_runtime_defaults: jsonObject,
  response_engine_type: z.string().trim().min(1).max(32),
  is_active: z.boolean(),
};

export const createTemplateInput = z.object({
  ...templateFields,
  description: templateFields.description.default(''),
  agent_profile_defaults: jsonObject.default({}),
  llm_runtime_defaults: jsonObject.default({}),
  response_engine_type: templateFields.response_engine_type.default('retell-llm'),
  is_active: z.boolean().default(true),
});
export type CreateTemplateInput = RawInput<typeof createTemplateInput>;

export const updateTemplateInput = z.object(templateFields).partial();
export type UpdateTemplateInput = RawInput<typeof updateTemplateInput>;
export type TemplateColumns = z.output<typeof createTemplateInput>;

const KEY_TAKEN = 'An agent template with this key already exists.';

function requireAdmin(ctx: ServiceContext) {
  if (!ctx.user.isAdmin) throw new ForbiddenError();
}

function checkSchema(schema: unknown) {
  const problem = schema === undefined ? null : schemaProblem(schema);
  if (problem) throw ValidationError.field('placeholder_schema', problem);
}

export async function createTemplate<Q extends TemplateQuery = {}>(
  ctx: ServiceContext,
  raw: CreateTemplateInput,
  query: Q = {} as Q,
): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  requireAdmin(ctx);
  const input = parseInput(createTemplateInput, raw);
  checkSchema(input.placeholder_schema);
  if (await store.templateKeyTaken(ctx.db, input.template_key)) throw ValidationError.field('template_key', KEY_TAKEN);
  return store.insertTemplate(ctx.db, input, query);
}

export async function updateTemplate<Q extends TemplateQuery = {}>(
  ctx: ServiceContext,
  id: string,
  raw: UpdateTemplateInput,
  query: Q = {} as Q,
): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  requireAdmin(ctx);
  await getTemplate(ctx, id, { select: { id: true } });
  const input = parseInput(updateTemplateInput, raw);
  checkSchema(input.placeholder_schema);
  if (input.template_key && (await store.templateKeyTaken(ctx.db, input.template_key, id)))
    throw ValidationError.field('template_key', KEY_TAKEN);
  return store.updateTemplate(ctx.db, id, input, query);
}
