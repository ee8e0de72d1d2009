import * as agents from '../../services/agents/agents.js';
import { builder } from '../builder.js';
import { compiledConnection, compiledItem } from '../compiled-reads/declare.js';
import { withServiceInput } from '../service-input.js';

export const AgentStatus = builder.enumType('AgentStatus', { values: ['active', 'archived'] as const });

const CAMPAIGNS_PAGE = { cursor: 'id', totalCount: true } as const;
const CAMPAIGNS_QUERY = { orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }] };
// countAgents counts the rows the list query reads.
const AGENTS_PAGE = { cursor: 'id', totalCount: true } as const;

export const Agent = builder.prismaObject('Agent', {
  description: "An AI caller made from a template, with the user's variables rendered into its prompt.",
  select: { id: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    status: t.expose('status', { type: AgentStatus }),
    isActive: t.exposeBoolean('isActive'),
    responseEngineType: t.exposeString('responseEngineType'),
    llmWebsocketUrl: t.exposeString('llmWebsocketUrl', { nullable: true }),
    systemPrompt: t.exposeString('systemPrompt'),
    agentConfig: t.expose('agentConfig', { type: 'JSON' }),
    agentProfile: t.expose('agentProfile', { type: 'JSON' }),
    agentVariables: t.expose('agentVariables', { type: 'JSON' }),
    llmRuntimeOverrides: t.expose('llmRuntimeOverrides', { type: 'JSON' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    template: t.relation('template'),
    primaryPhoneNumber: t.relation('primaryPhoneNumber', { nullable: true }),
    phoneNumbers: t.relation('phoneNumbers', { query: { orderBy: [{ isPrimary: 'desc' }, { createdAt: 'asc' }] } }),
    campaigns: t.relatedConnection('campaigns', {
      ...CAMPAIGNS_PAGE,
      query: CAMPAIGNS_QUERY,
      extensions: compiledConnection(CAMPAIGNS_PAGE, CAMPAIGNS_QUERY),
    }),
  }),
});

builder.queryFields((t) => ({
  agents: t.prismaConnection({
    type: 'Agent',
    cursor: AGENTS_PAGE.cursor,
    authScopes: { authenticated: true },
    args: { status: t.arg({ type: AgentStatus, description: 'Only active or only archived agents.' }) },
    totalCount: (_parent, args, ctx) => agents.countAgents(ctx.service, args.status),
    resolve: (query, _root, args, ctx) => agents.listAgents(ctx.service, args.status, query),
    extensions: compiledConnection(AGENTS_PAGE, (args: { status?: 'active' | 'archived' | null }, ctx) =>
      agents.agentListQuery(ctx.service, args.status),
    ),
  }),
  agent: t.prismaField({
    type: 'Agent',
    nullable: true,
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => agents.getAgent(ctx.service, args.id, query),
    extensions: compiledItem((args: { id: string }, ctx) => agents.agentItemQuery(ctx.service, args.id)),
  }),
}));

const CreateAgentInput = builder.inputType('CreateAgentInput', {
  fields: (t) => ({
    templateId: t.field({ type: 'UUID', required: true }),
    name: t.string({ required: true }),
    phoneNumber: t.string({ required: true, description: 'The outbound number, in E.164 (e.g. +14155552671).' }),
    phoneNumberLabel: t.string(),
    variables: t.field({ type: 'JSON', description: "Values for the template's placeholder schema." }),
  }),
});

builder.mutationFields((t) => ({
  createAgent: t.prismaField({
    type: 'Agent',
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: CreateAgentInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => agents.createAgent(ctx.service, input, query)),
  }),
  archiveAgent: t.prismaField({
    type: 'Agent',
    description: 'Archives the agent; its running campaigns pause with the reason agent_archived.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => agents.archiveAgent(ctx.service, args.id, query),
  }),
}));
