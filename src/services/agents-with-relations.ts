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
/** As read: the template comes as a JSON object, its timestamps as text. */
type Row = Omit<AgentWithRelations, 'template'> & {
  template: Omit<Template, 'createdAt' | 'updatedAt'> & { createdAt: string | Date; updatedAt: string | Date };
};

// The template, numbers and campaigns come as JSON objects already in their final shape: cheaper to
// read than a column each and to put together here.
const SELECT = `
  SELECT a.id, a.user_id AS "userId", a.template_id AS "templateId", a.name, a.status, a.is_active AS "isActive",
         a.phone_number_id AS "phoneNumberId", a.response_engine_type AS "responseEngineType",
         a.llm_websocket_url AS "llmWebsocketUrl", a.system_prompt AS "systemPrompt", a.agent_config AS "agentConfig",
         a.agent_profile AS "agentProfile", a.agent_variables AS "agentVariables", a.llm_runtime_overrides AS "llmRuntimeOverrides",
         a.provider_agent_id AS "providerAgentId", a.created_at AS "createdAt", a.updated_at AS "updatedAt",
         json_build_object(
           'id', t.id, 'templateKey', t.template_key, 'name', t.name, 'description', t.description,
           'systemPromptTemplate', t.system_prompt_template, 'placeholderSchema', t.placeholder_schema,
           'agentProfileDefaults', t.agent_profile_defaults, 'llmRuntimeDefaults', t.llm_runtime_defaults,
           'responseEngineType', t.response_engine_type, 'isActive', t.is_active, 'createdAt', t.created_at, 'updatedAt', t.updated_at) AS template,
         coalesce((SELECT json_agg(json_build_object('id', p.id, 'number', p.number, 'label', p.label, 'isPrimary', p.is_primary)
                                   ORDER BY p.is_primary DESC, p.created_at, p.id)
                   FROM phone_numbers p WHERE p.agent_id = a.id), '[]') AS "phoneNumbers",
         coalesce((SELECT json_agg(json_build_object('id', c.id, 'name', c.name, 'status', c.status) ORDER BY c.created_at DESC, c.id DESC)
                   FROM campaigns c WHERE c.agent_id = a.id), '[]') AS campaigns
  FROM agents a JOIN agent_templates t ON t.id = a.template_id`;

function withRelations(row: Row): AgentWithRelations {
  row.template.createdAt = new Date(row.template.createdAt);
  row.template.updatedAt = new Date(row.template.updatedAt);
  return row as AgentWithRelations;
}

/** The caller's agents, newest first, of one status or all. */
export async function listAgentsWithRelations(ctx: ServiceContext, status: AgentStatusFilter | null | undefined): Promise<AgentWithRelations[]> {
  const rows = await ctx.sql.query<Row>(
    `${SELECT} WHERE a.user_id = $1::uuid AND ($2::text IS NULL OR a.status::text = $2) ORDER BY a.created_at DESC, a.id DESC`,
    [ctx.user.id, status ?? null],
  );
  return rows.map(withRelations);
}
