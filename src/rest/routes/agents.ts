import { z } from 'zod';
import * as agents from '../../services/agents/agents.js';
import { listAgentsWithRelations } from '../../services/agents/with-relations.js';
import * as templates from '../../services/agents/templates.js';
import { defineRoute } from '../route.js';
import { toV1Agent, toV1AgentTemplate, v1Agent, v1AgentTemplate } from '../serializers/agents.js';
import { id } from '../serializers/common.js';

const byId = z.object({ id });

export const agentRoutes = [
  defineRoute({
    method: 'GET',
    path: '/agents/templates/',
    operationId: 'listAgentTemplates',
    summary: 'List agent templates',
    tag: 'Agents',
    status: 200,
    response: z.array(v1AgentTemplate),
    handler: async (_input, ctx) => (await templates.listTemplates(ctx)).map(toV1AgentTemplate),
  }),
  defineRoute({
    method: 'GET',
    path: '/agents/templates/{id}/',
    operationId: 'getAgentTemplate',
    summary: 'Get an agent template',
    tag: 'Agents',
    params: byId,
    status: 200,
    response: v1AgentTemplate,
    handler: async ({ params }, ctx) => toV1AgentTemplate(await templates.getTemplate(ctx, params.id)),
  }),
  defineRoute({
    method: 'GET',
    path: '/agents/active/',
    operationId: 'listActiveAgents',
    summary: 'List active agents',
    tag: 'Agents',
    status: 200,
    response: z.array(v1Agent),
    handler: async (_input, ctx) => (await listAgentsWithRelations(ctx, 'active')).map(toV1Agent),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/agents/{id}/',
    operationId: 'archiveAgent',
    summary: 'Archive an agent (it leaves the active list; its running campaigns pause)',
    tag: 'Agents',
    params: byId,
    status: 204,
    handler: async ({ params }, ctx) => {
      await agents.archiveAgent(ctx, params.id, { select: { id: true } });
    },
  }),
];
