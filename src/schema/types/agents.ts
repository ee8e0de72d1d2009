import * as agents from '../../services/agents/agents.js';
import { retryProvisioning } from '../../services/voice/provisioning.js';
import { builder } from '../builder.js';
import { compiledConnection, compiledItem } from '../compiled-reads/declare.js';
import { withServiceInput } from '../service-input.js';

export const AgentStatus = builder.enumType('AgentStatus', { values: ['active', 'archived'] as const });

const ProvisioningState = builder.enumType('ProvisioningState', {
  description: 'Whether the voice provider holds the agent as it is here (docs/agents.md).',
  values: {
    pending: { description: 'A change (create, edit, archive, retry) is on its way to the provider.' },
    ready: { description: 'The provider holds this version; calls use it.' },
    failed: { description: 'The provider refused it, or kept failing; `error` says why. Fix and retry.' },
  },
});

interface ProvisioningFields {
  provisioningState: 'pending' | 'ready' | 'failed';
  provisioningError: string | null;
  provisioningUpdatedAt: Date;
  providerAgentId: string | null;
  providerVersion: number | null;
  provisionedVersion: number | null;
  providerDrift: string | null;
  providerDriftAt: Date | null;
}

const AgentProvisioning = builder.objectRef<ProvisioningFields>('AgentProvisioning').implement({
  description: "The agent at the voice provider (Retell, or the simulator): its state, the provider's ids and versions.",
  fields: (t) => ({
    state: t.field({ type: ProvisioningState, resolve: (p) => p.provisioningState }),
    error: t.string({
      nullable: true,
      description: "The provider's answer when provisioning failed.",
      resolve: (p) => p.provisioningError,
    }),
    providerAgentId: t.string({ nullable: true, description: "The provider's id of the agent.", resolve: (p) => p.providerAgentId }),
    providerVersion: t.int({
      nullable: true,
      description: "The provider's published version that calls name.",
      resolve: (p) => p.providerVersion,
    }),
    version: t.int({
      nullable: true,
      description: "Which of this agent's versions the provider holds (the agent's `version` once ready).",
      resolve: (p) => p.provisionedVersion,
    }),
    drift: t.string({
      nullable: true,
      description: 'What the last drift sweep found changed at the provider (its dashboard), and set back.',
      resolve: (p) => p.providerDrift,
    }),
    driftAt: t.field({ type: 'DateTime', nullable: true, resolve: (p) => p.providerDriftAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (p) => p.provisioningUpdatedAt }),
  }),
});

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
    version: t.exposeInt('version', { description: "The agent's version: 1 when created, one more on each edit." }),
    provisioning: t.field({
      type: AgentProvisioning,
      select: {
        provisioningState: true,
        provisioningError: true,
        provisioningUpdatedAt: true,
        providerAgentId: true,
        providerVersion: true,
        provisionedVersion: true,
        providerDrift: true,
        providerDriftAt: true,
      },
      resolve: (agent) => agent,
    }),
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

const UpdateAgentInput = builder.inputType('UpdateAgentInput', {
  description: 'What to change; fields left out keep their values. Every edit is a new version, provisioned at the voice provider.',
  fields: (t) => ({
    name: t.string(),
    variables: t.field({ type: 'JSON', description: "Values for the template's placeholder schema; the prompt is rendered again." }),
    agentProfile: t.field({
      type: 'JSON',
      description: 'Voice (`voice_id`), `language`, `speaking_rate`, `interruption_sensitivity`, `begin_message`.',
    }),
    llmRuntimeOverrides: t.field({
      type: 'JSON',
      description: "`model` and `temperature` (0 to 2), over the template's runtime defaults.",
    }),
    llmWebsocketUrl: t.string({ description: "The customer's own LLM server (ws:// or wss://); null: the template's engine again." }),
    transferNumber: t.string({
      description: 'Where the agent may transfer a call to a person (offers the transfer_call tool); null: nowhere.',
    }),
  }),
});

builder.mutationFields((t) => ({
  updateAgent: t.prismaField({
    type: 'Agent',
    description:
      'Edits an active agent: a new version, provisioned at the voice provider; calls use it from their next call once it is ready there.',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: UpdateAgentInput, required: true }) },
    resolve: (query, _root, args, ctx, info) =>
      withServiceInput(info, 'input', args.input, (input) => agents.updateAgent(ctx.service, args.id, input, query)),
  }),
  retryAgentProvisioning: t.prismaField({
    type: 'Agent',
    description: 'Provisions an agent whose provisioning failed again (CONFLICT provisioning_not_failed otherwise).',
    authScopes: { authenticated: true },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => retryProvisioning(ctx.service, args.id, query),
  }),
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
