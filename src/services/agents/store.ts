import { isoText } from '../../db/json-rows.js';
import { named } from '../../db/prisma-names.js';
import { camelKeys } from '../../key-case.js';
import { statement, type SqlSession } from '../../db/sql.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { TemplateColumns } from './templates.js';
import type { AgentWithRelations } from './with-relations.js';

// The agents domain's one door to the database: agents, their phone numbers and the agent templates.
// Rules (agents.ts, templates.ts) decide who may see and change what; this module only reads and writes.

export type AgentQuery = { include?: Prisma.AgentInclude; select?: Prisma.AgentSelect; omit?: Prisma.AgentOmit };
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

/** Agents newest first: the one filter and order every read of the list uses. */
export function agentList(filter: AgentFilter) {
  return { where: agentWhere(filter), orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] } satisfies Prisma.AgentFindManyArgs;
}

/**
 * The one Prisma read of agents, newest first, with what `query` selects, joins and pages: GraphQL's
 * lists and single agents, and what a write hands back.
 */
export function findAgents<Q extends AgentQuery & AgentPage = {}>(
  db: PrismaClient,
  filter: AgentFilter,
  query: Q = {} as Q,
): Promise<Prisma.AgentGetPayload<Q>[]> {
  return named('agents.find', () => db.agent.findMany({ ...query, ...agentList(filter) })) as Promise<Prisma.AgentGetPayload<Q>[]>;
}

export function countAgents(db: PrismaClient, filter: AgentFilter): Promise<number> {
  return named('agents.count', () => db.agent.count({ where: agentWhere(filter) }));
}

// Agents with their template, numbers and campaigns in one statement, as JSON objects in Prisma's shape
// for `agentRelations` less `agentHidden` (with-relations.ts), instants as ISO 8601 text (see
// json-rows.ts): Prisma's mapping of the same nested rows cost several times the CPU on a list clients
// poll, and one JSON value costs less to read than a column each. Agents mostly share a few templates,
// so each template comes once, beside the agents, and is given to its agents here. A test holds the two
// reads to the same result.
const AGENTS_OF = 'agents a WHERE a.user_id = $1::uuid AND ($2::text IS NULL OR a.status::text = $2)';
const listWithRelations = statement<{ agents: Omit<AgentWithRelations, 'template'>[]; templates: AgentWithRelations['template'][] }>(
  'agents.listWithRelations',
  `
  SELECT coalesce((SELECT json_agg(json_build_object(
             'id', a.id, 'userId', a.user_id, 'templateId', a.template_id, 'name', a.name, 'status', a.status, 'isActive', a.is_active,
             'phoneNumberId', a.phone_number_id, 'responseEngineType', a.response_engine_type, 'llmWebsocketUrl', a.llm_websocket_url,
             'agentConfig', a.agent_config, 'agentProfile', a.agent_profile, 'agentVariables', a.agent_variables,
             'llmRuntimeOverrides', a.llm_runtime_overrides, 'createdAt', ${isoText('a.created_at')}, 'updatedAt', ${isoText('a.updated_at')},
             'phoneNumbers', coalesce((SELECT json_agg(json_build_object('id', p.id, 'number', p.number, 'label', p.label, 'isPrimary', p.is_primary)
                                                       ORDER BY p.is_primary DESC, p.created_at, p.id)
                                       FROM phone_numbers p WHERE p.agent_id = a.id), '[]'),
             'campaigns', coalesce((SELECT json_agg(json_build_object('id', c.id, 'name', c.name, 'status', c.status)
                                                    ORDER BY c.created_at DESC, c.id DESC)
                                    FROM campaigns c WHERE c.agent_id = a.id), '[]'))
           ORDER BY a.created_at DESC, a.id DESC) FROM ${AGENTS_OF}), '[]') AS agents,
         coalesce((SELECT json_agg(json_build_object(
             'id', t.id, 'templateKey', t.template_key, 'name', t.name, 'description', t.description,
             'systemPromptTemplate', t.system_prompt_template, 'placeholderSchema', t.placeholder_schema,
             'agentProfileDefaults', t.agent_profile_defaults, 'llmRuntimeDefaults', t.llm_runtime_defaults,
             'responseEngineType', t.response_engine_type, 'isActive', t.is_active,
             'createdAt', ${isoText('t.created_at')}, 'updatedAt', ${isoText('t.updated_at')}))
           FROM agent_templates t WHERE t.id IN (SELECT a.template_id FROM ${AGENTS_OF})), '[]') AS templates`,
);

/** One user's agents with their template, numbers and campaigns, newest first, of one status or all. */
export async function listAgentsWithRelations(
  sql: SqlSession,
  userId: string,
  status: AgentStatusFilter | null | undefined,
): Promise<AgentWithRelations[]> {
  const { agents, templates } = (await sql.run(listWithRelations, [userId, status ?? null]))[0]!;
  const byId = new Map(templates.map((template) => [template.id, template]));
  return agents.map((agent) => Object.assign(agent, { template: byId.get(agent.templateId)! }));
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

/** A new agent's columns. */
export interface NewAgent {
  id: string;
  user_id: string;
  template_id: string;
  name: string;
  response_engine_type: string;
  system_prompt: string;
  agent_variables: unknown;
  agent_profile: unknown;
  agent_config: unknown;
}

const insertAgentStatement = statement(
  'agents.insert',
  `INSERT INTO agents (id, user_id, template_id, name, response_engine_type, system_prompt, agent_variables, agent_profile, agent_config, updated_at)
   VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, now())`,
);

export async function insertAgentRow(tx: SqlSession, agent: NewAgent): Promise<void> {
  const json = (value: unknown) => JSON.stringify(value);
  await tx.run(insertAgentStatement, [
    ...[agent.id, agent.user_id, agent.template_id, agent.name, agent.response_engine_type, agent.system_prompt],
    ...[json(agent.agent_variables), json(agent.agent_profile), json(agent.agent_config)],
  ]);
}

// The number moves only from no agent or an archived one; the archived agent keeps no primary number.
const takeNumberStatement = statement(
  'agents.take_number',
  `UPDATE phone_numbers p SET agent_id = $2::uuid, is_primary = true, label = $3
   WHERE p.id = $1::uuid AND (p.agent_id IS NULL OR EXISTS (SELECT 1 FROM agents a WHERE a.id = p.agent_id AND NOT a.is_active))
   RETURNING p.id`,
);
const dropPrimaryStatement = statement(
  'agents.drop_primary_number',
  'UPDATE agents SET phone_number_id = NULL, updated_at = now() WHERE phone_number_id = $1::uuid',
);

/** Gives the user's existing number row to the new agent; false when an active agent holds it. */
export async function takeNumber(tx: SqlSession, numberId: string, agentId: string, label: string): Promise<boolean> {
  if ((await tx.run(takeNumberStatement, [numberId, agentId, label])).length === 0) return false;
  await tx.run(dropPrimaryStatement, [numberId]);
  return true;
}

const insertNumberStatement = statement(
  'agents.insert_number',
  `INSERT INTO phone_numbers (id, user_id, agent_id, number, label, is_primary) VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, true)`,
);

export async function insertNumber(
  tx: SqlSession,
  row: { id: string; user_id: string; agent_id: string; number: string; label: string },
): Promise<void> {
  await tx.run(insertNumberStatement, [row.id, row.user_id, row.agent_id, row.number, row.label]);
}

const setPrimaryStatement = statement(
  'agents.set_primary_number',
  'UPDATE agents SET phone_number_id = $2::uuid, updated_at = now() WHERE id = $1::uuid',
);

export async function setPrimaryNumber(tx: SqlSession, agentId: string, numberId: string): Promise<void> {
  await tx.run(setPrimaryStatement, [agentId, numberId]);
}

// A first archive is a new version, which provisioning removes from the provider.
const archiveStatement = statement<{ id: string }>(
  'agents.archive',
  `UPDATE agents SET is_active = false, status = 'archived', updated_at = now(),
          version = CASE WHEN is_active THEN version + 1 ELSE version END,
          provisioning_state = CASE WHEN is_active THEN 'pending' ELSE provisioning_state END,
          provisioning_error = CASE WHEN is_active THEN NULL ELSE provisioning_error END,
          provisioning_updated_at = CASE WHEN is_active THEN now() ELSE provisioning_updated_at END
   WHERE id = $1::uuid AND user_id = $2::uuid RETURNING id`,
);

/** Archives one user's agent; false when the user has no such agent. */
export async function archiveAgentRow(tx: SqlSession, userId: string, id: string): Promise<boolean> {
  return (await tx.run(archiveStatement, [id, userId])).length > 0;
}

/** An edited agent's columns. */
export interface AgentEdit {
  name: string;
  system_prompt: string;
  agent_variables: unknown;
  agent_profile: unknown;
  agent_config: unknown;
  llm_runtime_overrides: unknown;
  llm_websocket_url: string | null;
  response_engine_type: string;
}

// Every edit is a new version, pending at the provider until its provisioning job has published it.
const updateStatement = statement<{ id: string }>(
  'agents.update',
  `UPDATE agents SET name = $3, system_prompt = $4, agent_variables = $5::jsonb, agent_profile = $6::jsonb, agent_config = $7::jsonb,
          llm_runtime_overrides = $8::jsonb, llm_websocket_url = $9, response_engine_type = $10, version = version + 1,
          provisioning_state = 'pending', provisioning_error = NULL, provisioning_updated_at = now(), updated_at = now()
   WHERE id = $1::uuid AND user_id = $2::uuid AND is_active RETURNING id`,
);

/** Writes one user's active agent's edit; false when it is archived (or not the user's). */
export async function updateAgentRow(sql: SqlSession, userId: string, id: string, edit: AgentEdit): Promise<boolean> {
  const json = (value: unknown) => JSON.stringify(value);
  const rows = await sql.run(updateStatement, [
    ...[id, userId, edit.name, edit.system_prompt, json(edit.agent_variables), json(edit.agent_profile), json(edit.agent_config)],
    ...[json(edit.llm_runtime_overrides), edit.llm_websocket_url, edit.response_engine_type],
  ]);
  return rows.length > 0;
}

// Agent templates

/** All templates, only the active ones, and of those one id. */
export interface TemplateFilter {
  activeOnly: boolean;
  id?: string;
}

/** The one read of templates, by name, with what `query` selects. */
export function findTemplates<Q extends TemplateQuery = {}>(
  db: PrismaClient,
  { activeOnly, id }: TemplateFilter,
  query: Q = {} as Q,
): Promise<Prisma.AgentTemplateGetPayload<Q>[]> {
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

export function insertTemplate<Q extends TemplateQuery = {}>(
  db: PrismaClient,
  columns: TemplateColumns,
  query: Q = {} as Q,
): Promise<Prisma.AgentTemplateGetPayload<Q>> {
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

// A number joins the agent's pool: a new row, or the user's row of a number no active agent holds.
const addPoolNumberStatement = statement<{ id: string }>(
  'agents.add_pool_number',
  `INSERT INTO phone_numbers (id, user_id, agent_id, number, label, is_primary) VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, false)
   ON CONFLICT (user_id, number) DO UPDATE SET agent_id = EXCLUDED.agent_id, label = EXCLUDED.label, is_primary = false
   WHERE phone_numbers.agent_id IS NULL OR NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = phone_numbers.agent_id AND a.is_active)
   RETURNING id`,
);

/** Adds the number to the agent's numbers; null when an active agent holds it. */
export async function addPoolNumber(
  tx: SqlSession,
  row: { id: string; user_id: string; agent_id: string; number: string; label: string },
): Promise<string | null> {
  const [added] = await tx.run(addPoolNumberStatement, [row.id, row.user_id, row.agent_id, row.number, row.label]);
  if (!added) return null;
  await tx.run(dropPrimaryStatement, [added.id]);
  return added.id;
}

/** The caller-ID limits of one of the user's numbers; false when the user has no such number. */
export async function updateNumberLimits(db: PrismaClient, userId: string, id: string, data: Prisma.PhoneNumberUpdateManyMutationInput) {
  return named('agents.updateNumberLimits', async () => (await db.phoneNumber.updateMany({ where: { id, userId }, data })).count > 0);
}

export function findUserNumber<Q extends Omit<Prisma.PhoneNumberFindFirstArgs, 'where'>>(
  db: PrismaClient,
  userId: string,
  id: string,
  query: Q,
) {
  return named('agents.findUserNumber', () => db.phoneNumber.findFirst({ ...query, where: { id, userId } }));
}

export function findActiveAgent(db: PrismaClient, userId: string, id: string) {
  return named('agents.findActiveAgent', () => db.agent.findFirst({ where: { id, userId, isActive: true }, select: { id: true } }));
}

const setBookingCalendarStatement = statement<{ id: string }>(
  'agents.setBookingCalendar',
  'UPDATE agents SET booking_calendar = $3::jsonb, updated_at = now() WHERE id = $1::uuid AND user_id = $2::uuid RETURNING id',
);

/** Sets (null: clears) the agent's booking calendar; false when the user has no such agent. */
export async function setBookingCalendar(tx: SqlSession, userId: string, id: string, calendar: object | null): Promise<boolean> {
  return (await tx.run(setBookingCalendarStatement, [id, userId, calendar === null ? null : JSON.stringify(calendar)])).length > 0;
}
