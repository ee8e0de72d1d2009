import * as templates from '../../services/agents/templates.js';
import { builder } from '../builder.js';
import { withServiceInput } from '../service-input.js';

export const AgentTemplate = builder.prismaObject('AgentTemplate', {
  description: 'A global blueprint agents are made from; its placeholder schema says which variables an agent needs.',
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    templateKey: t.exposeString('templateKey'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    systemPromptTemplate: t.exposeString('systemPromptTemplate'),
    placeholderSchema: t.expose('placeholderSchema', { type: 'JSON' }),
    agentProfileDefaults: t.expose('agentProfileDefaults', { type: 'JSON' }),
    llmRuntimeDefaults: t.expose('llmRuntimeDefaults', { type: 'JSON' }),
    responseEngineType: t.exposeString('responseEngineType'),
    isActive: t.exposeBoolean('isActive'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.queryFields((t) => ({
  agentTemplates: t.prismaField({
    description: 'Active agent templates (administrators also see inactive ones).',
    type: ['AgentTemplate'],
    authScopes: { authenticated: true },
    resolve: (query, _root, _args, ctx) => templates.listTemplates(ctx.service, query),
  }),
  agentTemplate: t.prismaField({
    type: 'AgentTemplate',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => templates.getTemplate(ctx.service, args.id, query),
  }),
}));

const CreateAgentTemplateInput = builder.inputType('CreateAgentTemplateInput', {
  fields: (t) => ({
    templateKey: t.string({ required: true }),
    name: t.string({ required: true }),
    description: t.string(),
    systemPromptTemplate: t.string({ required: true, description: 'Prompt with {{ placeholder }} markers.' }),
    placeholderSchema: t.field({ type: 'JSON', required: true, description: 'JSON Schema of an object.' }),
    agentProfileDefaults: t.field({ type: 'JSON' }),
    llmRuntimeDefaults: t.field({ type: 'JSON' }),
    responseEngineType: t.string(),
    isActive: t.boolean(),
  }),
});

const UpdateAgentTemplateInput = builder.inputType('UpdateAgentTemplateInput', {
  fields: (t) => ({
    templateKey: t.string(),
    name: t.string(),
    description: t.string(),
    systemPromptTemplate: t.string(),
    placeholderSchema: t.field({ type: 'JSON' }),
    agentProfileDefaults: t.field({ type: 'JSON' }),
    llmRuntimeDefaults: t.field({ type: 'JSON' }),
    responseEngineType: t.string(),
    isActive: t.boolean(),
  }),
});

builder.mutationFields((t) => ({
  createAgentTemplate: t.prismaField({
    type: 'AgentTemplate',
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateAgentTemplateInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => templates.createTemplate(ctx.service, input, query)),
  }),
  updateAgentTemplate: t.prismaField({
    type: 'AgentTemplate',
    authScopes: { admin: true },
    args: {
      id: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: UpdateAgentTemplateInput, required: true }),
    },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => templates.updateTemplate(ctx.service, args.id, input, query)),
  }),
}));
