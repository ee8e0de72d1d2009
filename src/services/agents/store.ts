import { camelKeys, named } from '../../db/prisma-names.js';
import { statement, type SqlSession } from '../../db/sql.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { TemplateColumns } from './templates.js';
import type { AgentWithRelations } from './with-relations.js';

// The agents domain's one door to the database: agents, their phone numbers and the agent templates.
// Rules (agents.ts, templates.ts) decide who may see and change what; this module only reads and writes.

export type AgentQuery = { include?: Prisma.AgentInclude; select?: Prisma.AgentSelect };
export type AgentPage = Pick<Prisma.AgentFindManyArgs, 'take' | 'skip' | 'cursor'>;
export type AgentStatusFilter = 'active' | 'archived';
export type TemplateQuery = { include?: Prisma.AgentTemplateInclude; select?: Prisma.AgentTemplateSelect };

/** One user's agents: all of them, one status, or one id. */
export interface AgentFilter {
  userId: string;
  status?: AgentStatusFilter | null | undefined;
  id?: string;
}

function agentWhere({ userId, status, id }: AgentFilter): Prisma.AgentWhereInput {
  return { userId, ...(status ? { status } : {}), ...(id ? { id } : {}) };
}

/**
 * The one Prisma read of agents, newest first, with what `query` selects, joins and pages: GraphQL's
 * lists and single agents, and what a write hands back.
 */
export function findAgents<Q extends AgentQuery & AgentPage = {}>(db: PrismaClient, filter: AgentFilter, query: Q = {} as Q): Promise<Prisma.AgentGetPayload<Q>[]> {
  return named('agents.find', () =>
    db.agent.findMany({ ...query, where: agentWhere(filter), orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] }),
  ) as Promise<Prisma.AgentGetPayload<Q>[]>;
}

export function countAgents(db: PrismaClient, filter: AgentFilter): Promise<number> {
  return named('agents.count', () => db.agent.count({ where: agentWhere(filter) }));
}

/** As read: the template comes as a JSON object, its timestamps as text. */
type RelationsRow = Omit<AgentWithRelations, 'template'> & {
  template: Omit<AgentWithRelations['template'], 'createdAt' | 'updatedAt'> & { createdAt: string | Date; updatedAt: string | Date };
};

// Agents with their template, numbers and campaigns in one statement: Prisma's mapping of the same
// nested rows cost several times the CPU on a list clients poll. The template, numbers and campaigns come
// as JSON objects already in their final shape: cheaper to read than a column each and to put together
// here. The shape is Prisma's own for `agentRelations` (with-relations.ts), and a test holds the two
// reads to the same result.
const listWithRelations = statement<RelationsRow>(
  'agents.listWithRelations',
  `
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
  FROM agents a JOIN agent_templates t ON t.id = a.template_id
  WHERE a.user_id = $1::uuid AND ($2::text IS NULL OR a.status::text = $2)
  ORDER BY a.created_at DESC, a.id DESC`,
);

/** One user's agents with their template, numbers and campaigns, newest first, of one status or all. */
export async function listAgentsWithRelations(sql: SqlSession, userId: string, status: AgentStatusFilter | null | undefined): Promise<AgentWithRelations[]> {
  const rows = await sql.run(listWithRelations, [userId, status ?? null]);
  for (const row of rows) {
    row.template.createdAt = new Date(row.template.createdAt);
    row.template.updatedAt = new Date(row.template.updatedAt);
  }
  return rows as AgentWithRelations[];
}

/** The user's row for a number, if the user has it, with whether an active agent holds it now. */
export function findNumber(db: PrismaClient, userId: string, number: string) {
  return named('agents.findNumber', () =>
    db.phoneNumber.findUnique({
      where: { userId_number: { userId, number } },
      select: { id: true, agent: { select: { isActive: true } } },
    }),
  );
}

export type NewAgent = Omit<Prisma.AgentUncheckedCreateInput, 'phoneNumberId'>;

/** The agent's primary number: the user's existing row for it (`existingId`), or a new row. */
export interface NewAgentNumber {
  existingId: string | null;
  number: string;
  label: string;
}

/** Thrown inside insertAgent's transaction to roll it back; never leaves this module. */
class NumberTaken extends Error {}

/**
 * Inserts an agent with its primary number in one transaction and returns its id; null when another
 * active agent took the number first (checked again under the number's row lock, or a concurrent insert
 * of the same number), in which case nothing is written.
 */
export async function insertAgent(db: PrismaClient, agent: NewAgent, number: NewAgentNumber): Promise<string | null> {
  try {
    return await db.$transaction(async (tx) => {
      const { id } = await named('agents.insert', () => tx.agent.create({ data: agent, select: { id: true } }));
      let phoneId: string;
      if (number.existingId) {
        const moved = await named('agents.takeNumber', () =>
          tx.phoneNumber.updateMany({
            where: { id: number.existingId!, OR: [{ agentId: null }, { agent: { isActive: false } }] },
            data: { agentId: id, isPrimary: true, label: number.label },
          }),
        );
        if (moved.count === 0) throw new NumberTaken();
        // The archived agent the number leaves keeps no primary number (a number is one agent's primary).
        await named('agents.dropPrimaryNumber', () =>
          tx.agent.updateMany({ where: { phoneNumberId: number.existingId }, data: { phoneNumberId: null } }),
        );
        phoneId = number.existingId;
      } else {
        const phone = await named('agents.insertNumber', () =>
          tx.phoneNumber.create({
            data: { userId: agent.userId, agentId: id, number: number.number, label: number.label, isPrimary: true },
            select: { id: true },
          }),
        );
        phoneId = phone.id;
      }
      await named('agents.setPrimaryNumber', () => tx.agent.update({ where: { id }, data: { phoneNumberId: phoneId }, select: { id: true } }));
      return id;
    });
  } catch (error) {
    if (error instanceof NumberTaken) return null;
    // Another agent created at the same moment inserted the number first.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') return null;
    throw error;
  }
}

const archiveStatement = statement<{ id: string }>(
  'agents.archive',
  `UPDATE agents SET is_active = false, status = 'archived', updated_at = now() WHERE id = $1::uuid AND user_id = $2::uuid RETURNING id`,
);

/** Archives one user's agent; false when the user has no such agent. */
export async function archiveAgentRow(tx: SqlSession, userId: string, id: string): Promise<boolean> {
  return (await tx.run(archiveStatement, [id, userId])).length > 0;
}

// Agent templates

/** All templates, only the active ones, and of those one id. */
export interface TemplateFilter {
  activeOnly: boolean;
  id?: string;
}

/** The one read of templates, by name, with what `query` selects. */
export function findTemplates<Q extends TemplateQuery = {}>(db: PrismaClient, { activeOnly, id }: TemplateFilter, query: Q = {} as Q): Promise<Prisma.AgentTemplateGetPayload<Q>[]> {
  return named('agents.findTemplates', () =>
    db.agentTemplate.findMany({
      ...query,
      where: { ...(activeOnly ? { isActive: true } : {}), ...(id ? { id } : {}) },
      orderBy: [{ name: 'asc' }, { id: 'asc' }],
    }),
  ) as Promise<Prisma.AgentTemplateGetPayload<Q>[]>;
}

/** Whether a template other than `exceptId` has this key. */
export async function templateKeyTaken(db: PrismaClient, templateKey: string, exceptId?: string): Promise<boolean> {
  const clash = await named('agents.templateKeyTaken', () =>
    db.agentTemplate.findFirst({ where: { templateKey, ...(exceptId ? { id: { not: exceptId } } : {}) }, select: { id: true } }),
  );
  return clash !== null;
}

/** A template's fields as the service reads them (snake_case), JSON objects as Prisma writes them. */
const templateData = (columns: Partial<TemplateColumns>) => camelKeys(columns) as Omit<Prisma.AgentTemplateCreateInput, 'agents'>;

export function insertTemplate<Q extends TemplateQuery = {}>(db: PrismaClient, columns: TemplateColumns, query: Q = {} as Q): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  return named('agents.insertTemplate', () => db.agentTemplate.create({ ...query, data: templateData(columns) })) as Promise<
    Prisma.AgentTemplateGetPayload<Q>
  >;
}

export function updateTemplate<Q extends TemplateQuery = {}>(
  db: PrismaClient,
  id: string,
  columns: Partial<TemplateColumns>,
  query: Q = {} as Q,
): Promise<Prisma.AgentTemplateGetPayload<Q>> {
  return named('agents.updateTemplate', () => db.agentTemplate.update({ ...query, where: { id }, data: templateData(columns) })) as Promise<
    Prisma.AgentTemplateGetPayload<Q>
  >;
}
