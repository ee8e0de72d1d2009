import type { Prisma } from '../generated/prisma/client.js';
import type { AgentStatusFilter } from './agents.js';
import type { ServiceContext } from './context.js';

// Agents with their template, numbers and campaigns: what v1 lists. Read in one plain SQL statement for
// the same reason as campaigns (with-relations.ts there): Prisma's mapping of the nested rows cost
// several times the CPU on a list clients poll. The shape is Prisma's own for `agentRelations`, and a
// test holds the two reads to the same result.

export const agentRelations = {
  template: true,
  phoneNumbers: {
    select: { id: true, number: true, label: true, isPrimary: true },
    orderBy: [{ isPrimary: 'desc' as const }, { createdAt: 'asc' as const }, { id: 'asc' as const }],
  },
  campaigns: { select: { id: true, name: true, status: true }, orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }] },
} satisfies Prisma.AgentInclude;

export type AgentWithRelations = Prisma.AgentGetPayload<{ include: typeof agentRelations }>;

type Template = AgentWithRelations['template'];
/** The agent's own columns and its numbers and campaigns as they are, the template's columns prefixed. */
type Row = Omit<AgentWithRelations, 'template'> & { [K in keyof Template as `template_${K & string}`]: Template[K] };

const SELECT = `
  SELECT a.id, a.user_id AS "userId", a.template_id AS "templateId", a.name, a.status, a.is_active AS "isActive",
         a.phone_number_id AS "phoneNumberId", a.response_engine_type AS "responseEngineType",
         a.llm_websocket_url AS "llmWebsocketUrl", a.system_prompt AS "systemPrompt", a.agent_config AS "agentConfig",
         a.agent_profile AS "agentProfile", a.agent_variables AS "agentVariables", a.llm_runtime_overrides AS "llmRuntimeOverrides",
         a.provider_agent_id AS "providerAgentId", a.created_at AS "createdAt", a.updated_at AS "updatedAt",
         t.id AS template_id, t.template_key AS "template_templateKey", t.name AS template_name, t.description AS template_description,
         t.system_prompt_template AS "template_systemPromptTemplate", t.placeholder_schema AS "template_placeholderSchema",
         t.agent_profile_defaults AS "template_agentProfileDefaults", t.llm_runtime_defaults AS "template_llmRuntimeDefaults",
         t.response_engine_type AS "template_responseEngineType", t.is_active AS "template_isActive",
         t.created_at AS "template_createdAt", t.updated_at AS "template_updatedAt",
         coalesce((SELECT json_agg(json_build_object('id', p.id, 'number', p.number, 'label', p.label, 'isPrimary', p.is_primary)
                                   ORDER BY p.is_primary DESC, p.created_at, p.id)
                   FROM phone_numbers p WHERE p.agent_id = a.id), '[]') AS "phoneNumbers",
         coalesce((SELECT json_agg(json_build_object('id', c.id, 'name', c.name, 'status', c.status) ORDER BY c.created_at DESC, c.id DESC)
                   FROM campaigns c WHERE c.agent_id = a.id), '[]') AS campaigns
  FROM agents a JOIN agent_templates t ON t.id = a.template_id`;

function withRelations(row: Row): AgentWithRelations {
  const agent: Record<string, unknown> = {};
  const template: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith('template_')) template[key.slice('template_'.length)] = value;
    else agent[key] = value;
  }
  return { ...agent, template } as AgentWithRelations;
}

/** The caller's agents, newest first, of one status or all. */
export async function listAgentsWithRelations(ctx: ServiceContext, status: AgentStatusFilter | null | undefined): Promise<AgentWithRelations[]> {
  const rows = await ctx.sql.query<Row>(
    `${SELECT} WHERE a.user_id = $1::uuid AND ($2::text IS NULL OR a.status::text = $2) ORDER BY a.created_at DESC, a.id DESC`,
    [ctx.user.id, status ?? null],
  );
  return rows.map(withRelations);
}
