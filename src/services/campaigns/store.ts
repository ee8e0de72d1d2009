import { instantJson, isoText, objectJson, openJson, plainJson, printedPiece, stringJson } from '../../db/json-rows.js';
import { named } from '../../db/prisma-names.js';
import { dynamicStatement, statement, type SqlSession } from '../../db/sql.js';
import type {
  CallOutcome,
  Campaign,
  CampaignStatus,
  ConsentKind,
  DoNotCallRegistry,
  Prisma,
  ProvisioningState,
} from '../../generated/prisma/client.js';
import { camelCase } from '../../key-case.js';
import type { ServiceContext, ServiceEnv } from '../context.js';
import type { CampaignWithRelations } from './with-relations.js';
import type { UpdateCampaignColumns } from './inputs.js';
import type { RegistryCallee } from '../calling-rules/registries.js';
import type { Revocation } from '../calling-rules/revocation.js';
import {
  abandonedPlacedFrom,
  lastAbandonedOf,
  readCallHistories,
  readRevocations,
  registryExceptions,
  revocationsOf,
} from '../dialer/store/placing.js';
import { registryOf } from '../registries/store.js';

// Every statement of the campaigns domain. Rows come back in Prisma's shapes (`Campaign`), so that a
// campaign read under a lock and one read through Prisma are the same type.

export type CampaignQuery = { include?: Prisma.CampaignInclude; select?: Prisma.CampaignSelect };
export type CampaignPage = Pick<Prisma.CampaignFindManyArgs, 'take' | 'skip' | 'cursor'>;

export interface CampaignFilter {
  statuses?: CampaignStatus[] | null | undefined;
}

function owned(userId: string, filter: CampaignFilter = {}): Prisma.CampaignWhereInput {
  return { userId, ...(filter.statuses ? { status: { in: filter.statuses } } : {}) };
}

/** The caller's campaigns, newest first: the one filter and order every read of the list uses. */
export function campaignList(userId: string, filter: CampaignFilter = {}) {
  return { where: owned(userId, filter), orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] } satisfies Prisma.CampaignFindManyArgs;
}

export function findCampaigns<Q extends CampaignQuery & CampaignPage>(
  ctx: ServiceContext,
  filter: CampaignFilter,
  query: Q,
): Promise<Prisma.CampaignGetPayload<Q>[]> {
  return named('campaigns.list', () => ctx.db.campaign.findMany({ ...query, ...campaignList(ctx.user.id, filter) })) as Promise<
    Prisma.CampaignGetPayload<Q>[]
  >;
}

export function countCampaigns(ctx: ServiceContext, filter: CampaignFilter): Promise<number> {
  return named('campaigns.count', () => ctx.db.campaign.count({ where: owned(ctx.user.id, filter) }));
}

/** The caller's campaign with this id: the one filter every read of one campaign uses. */
export function campaignItem(userId: string, id: string) {
  return { where: { userId, id } } satisfies Prisma.CampaignFindFirstArgs;
}

/** The caller's campaign, or null (another user's, or none). */
export function findCampaign<Q extends CampaignQuery>(
  ctx: ServiceContext,
  id: string,
  query: Q,
): Promise<Prisma.CampaignGetPayload<Q> | null> {
  return named('campaigns.get', () =>
    ctx.db.campaign.findFirst({ ...query, ...campaignItem(ctx.user.id, id) }),
  ) as Promise<Prisma.CampaignGetPayload<Q> | null>;
}

/** Enrolled contacts of each campaign, by state and outcome. */
export function progressCounts(ctx: Pick<ServiceEnv, 'db'>, campaignIds: string[]) {
  return named('campaigns.progress', () =>
    ctx.db.campaignContact.groupBy({
      by: ['campaignId', 'state', 'outcome'],
      where: { campaignId: { in: campaignIds } },
      _count: { _all: true },
    }),
  );
}

// A campaign's columns, which Prisma names by the camelCase rule (`paused_reason` is `pausedReason`).
const CAMPAIGN_FIELDS = [
  'id',
  'user_id',
  'agent_id',
  'contact_group_id',
  'name',
  'description',
  'status',
  'paused_reason',
  'concurrent_calls',
  'max_retry_days',
  'calling_hours',
  'schedule_config',
  'active_days',
  'field_mappings',
  'selected_contact_fields',
  'timezone',
  'call_insights',
  'post_call_analyzers',
  'spend_cap_cents',
  'required_consent',
  'regional_rules',
  'purpose',
  'call_subject',
  'redial_of',
  'redial_outcomes',
  'booking_calendar',
  'transfer_number',
  'started_at',
  'completed_at',
  'created_at',
  'updated_at',
];
const INSTANTS = new Set(['started_at', 'completed_at', 'created_at', 'updated_at']);
const SCHEDULE = new Set(['calling_hours', 'schedule_config', 'active_days']);

/** The columns under Prisma's names, for statements that return `Campaign` rows. */
const CAMPAIGN_COLUMNS = CAMPAIGN_FIELDS.map((column) => `k.${column} AS "${camelCase(column)}"`).join(', ');

/** The same as json_build_object's arguments: instants as ISO 8601 text, the schedule columns as their JSON text. */
const CAMPAIGN_OBJECT_FIELDS = CAMPAIGN_FIELDS.map((column) => {
  const value = INSTANTS.has(column) ? isoText(`k.${column}`) : SCHEDULE.has(column) ? `k.${column}::text` : `k.${column}`;
  return `'${camelCase(column)}', ${value}`;
}).join(', ');

const lockStatement = statement<Campaign>(
  'campaigns.lock',
  `SELECT ${CAMPAIGN_COLUMNS} FROM campaigns k WHERE k.id = $1::uuid FOR NO KEY UPDATE`,
);

/**
 * Locks the campaign row (FOR NO KEY UPDATE) until the transaction ends and reads it. NO KEY: every writer
 * of campaigns still waits for it, but the foreign-key checks of rows that point at the campaign
 * (attempts, ledger rows, appointments) do not.
 */
export async function lockCampaignRow(tx: SqlSession, id: string): Promise<Campaign | undefined> {
  return (await tx.run(lockStatement, [id]))[0];
}

const groupOfStatement = statement<{ groupId: string }>(
  'campaigns.group_of',
  'SELECT contact_group_id AS "groupId" FROM campaigns WHERE id = $1::uuid',
);
const lockGroupStatement = statement('campaigns.lock_group', 'SELECT id FROM contact_groups WHERE id = $1::uuid FOR NO KEY UPDATE');

/** The campaign's contact group, locked (FOR NO KEY UPDATE), or undefined when there is no such campaign. */
export async function lockGroupOf(tx: SqlSession, campaignId: string): Promise<string | undefined> {
  const [current] = await tx.run(groupOfStatement, [campaignId]);
  if (!current) return undefined;
  await tx.run(lockGroupStatement, [current.groupId]);
  return current.groupId;
}

const agentForStartStatement = statement<{
  name: string;
  isActive: boolean;
  numbers: number;
  provisioningState: ProvisioningState;
  provisioningError: string | null;
  responseEngineType: string;
  beginMessage: string | null;
}>(
  'campaigns.agent_for_start',
  `SELECT a.name, a.is_active AS "isActive", (SELECT count(*)::int FROM phone_numbers p WHERE p.agent_id = a.id) AS numbers,
          a.provisioning_state AS "provisioningState", a.provisioning_error AS "provisioningError",
          a.response_engine_type AS "responseEngineType",
          CASE WHEN jsonb_typeof(a.agent_profile->'begin_message') = 'string' THEN a.agent_profile->>'begin_message' END AS "beginMessage"
   FROM agents a WHERE a.id = $1::uuid`,
);

export async function agentForStart(tx: SqlSession, agentId: string) {
  return (await tx.run(agentForStartStatement, [agentId]))[0]!;
}

// An active contact of the group that this campaign has not finished with (enrolled or not yet).
/**
 * Whether campaign k may enroll contact c: any contact of its group, or, for a redial, one its source
 * campaign called without reaching (not reached, cancelled, or still waiting after a call), or whose last
 * call met one of the outcomes the redial picked.
 */
const ENROLLABLE = `(k.redial_of IS NULL OR EXISTS (
     SELECT 1 FROM campaign_contacts s WHERE s.campaign_id = k.redial_of AND s.contact_id = c.id AND
       CASE WHEN coalesce(cardinality(k.redial_outcomes), 0) = 0
            THEN s.outcome IN ('not_reached', 'cancelled') OR (s.state <> 'done' AND s.attempts > 0)
            ELSE (SELECT a.outcome FROM call_attempts a WHERE a.campaign_id = k.redial_of AND a.contact_id = c.id AND a.outcome IS NOT NULL
                  ORDER BY a.created_at DESC LIMIT 1) = ANY (k.redial_outcomes)
       END))`;

// One number for each start of a number (country and area code) and own region among the contacts the
// campaign may still call: enough to tell every region it will call, without reading every contact.
const callablePlacesStatement = statement<{ phoneNumber: string; region: string | null }>(
  'campaigns.callable_places',
  `SELECT DISTINCT ON (left(c.phone_number, 7), c.data->>'region') c.phone_number AS "phoneNumber", c.data->>'region' AS region
   FROM campaigns k JOIN contacts c ON c.contact_group_id = k.contact_group_id
   LEFT JOIN campaign_contacts cc ON cc.contact_id = c.id AND cc.campaign_id = k.id
   WHERE k.id = $1::uuid AND c.status = 'active' AND c.erased_at IS NULL AND c.phone_number IS NOT NULL
     AND (cc.id IS NULL OR cc.state <> 'done') AND ${ENROLLABLE}
   ORDER BY left(c.phone_number, 7), c.data->>'region'`,
);

export function callablePlaces(tx: SqlSession, campaign: Pick<Campaign, 'id'>) {
  return tx.run(callablePlacesStatement, [campaign.id]);
}

const callableStatement = statement<{ callable: boolean }>(
  'campaigns.has_callable_contact',
  `SELECT EXISTS (
     SELECT 1 FROM campaigns k JOIN contacts c ON c.contact_group_id = k.contact_group_id
     LEFT JOIN campaign_contacts cc ON cc.contact_id = c.id AND cc.campaign_id = k.id
     WHERE k.id = $1::uuid AND c.status = 'active' AND c.erased_at IS NULL
       AND (cc.id IS NULL OR cc.state <> 'done') AND ${ENROLLABLE}
   ) AS callable`,
);

export async function hasCallableContact(tx: SqlSession, campaign: Pick<Campaign, 'id'>): Promise<boolean> {
  return (await tx.run(callableStatement, [campaign.id]))[0]?.callable ?? false;
}

const startStatement = statement(
  'campaigns.start',
  `UPDATE campaigns SET status = 'running', paused_reason = NULL, started_at = $2, updated_at = now() WHERE id = $1::uuid`,
);

export async function markRunning(tx: SqlSession, id: string, startedAt: Date): Promise<void> {
  await tx.run(startStatement, [id, startedAt]);
}

const scheduleStatement = statement(
  'campaigns.schedule',
  `UPDATE campaigns SET status = 'scheduled', updated_at = now() WHERE id = $1::uuid`,
);

export async function markScheduled(tx: SqlSession, id: string): Promise<void> {
  await tx.run(scheduleStatement, [id]);
}

const pauseStatement = statement(
  'campaigns.pause',
  `UPDATE campaigns SET status = 'paused', paused_reason = $2, updated_at = now()
   WHERE id = $1::uuid AND status IN ('running', 'scheduled') RETURNING id`,
);

/** Pauses a running or scheduled campaign with a reason; false when it was neither. */
export async function pauseRow(tx: SqlSession, id: string, reason: string): Promise<boolean> {
  return (await tx.run(pauseStatement, [id, reason])).length > 0;
}

const pauseRunningOfAgentStatement = statement<{ id: string }>(
  'campaigns.pause_running_of_agent',
  `UPDATE campaigns SET status = 'paused', paused_reason = $3, updated_at = now()
   WHERE agent_id = $1::uuid AND user_id = $2::uuid AND status = 'running' RETURNING id`,
);

export async function pauseRunningOfAgent(tx: SqlSession, userId: string, agentId: string, reason: string): Promise<string[]> {
  return (await tx.run(pauseRunningOfAgentStatement, [agentId, userId, reason])).map((row) => row.id);
}

const cancelStatement = statement(
  'campaigns.cancel',
  `UPDATE campaigns SET status = 'cancelled', paused_reason = NULL, updated_at = now() WHERE id = $1::uuid`,
);
const cancelWaitingStatement = statement(
  'campaigns.cancel_waiting',
  `UPDATE campaign_contacts SET state = 'done', outcome = 'cancelled', next_attempt_at = NULL, updated_at = now()
   WHERE campaign_id = $1::uuid AND state = 'pending'`,
);

/** Cancels the campaign and closes its waiting contacts with the outcome `cancelled`. */
export async function cancelRows(tx: SqlSession, id: string): Promise<void> {
  await tx.run(cancelStatement, [id]);
  await tx.run(cancelWaitingStatement, [id]);
}

// Callable contacts wait as `pending`, ready at once; invalid and do-not-call contacts are `done` at once
// with that as their outcome, and a listed one counts as a call the do-not-call rule stopped, as the
// dialer records the ones it finds later (its id a UUIDv7: dial_blocks is partitioned by month on it).
// Erased contacts are nobody to call.
const enrollStatement = statement(
  'campaigns.enroll',
  `WITH enrolled AS (
     INSERT INTO campaign_contacts (id, campaign_id, contact_id, state, outcome, next_attempt_at, ready_at, updated_at)
     SELECT gen_random_uuid(), c.campaign_id, c.contact_id, c.state::"DialState", c.outcome, $2, $2, $2
     FROM (
       SELECT k.id AS campaign_id, c.id AS contact_id,
              CASE c.status WHEN 'active' THEN 'pending' ELSE 'done' END AS state,
              CASE c.status WHEN 'active' THEN NULL ELSE c.status::text END AS outcome
       FROM campaigns k JOIN contacts c ON c.contact_group_id = k.contact_group_id
       WHERE k.id = $1::uuid AND c.erased_at IS NULL AND ${ENROLLABLE}
     ) AS c
     ON CONFLICT (campaign_id, contact_id) DO NOTHING
     RETURNING campaign_id, contact_id, outcome
   )
   INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason, created_at)
   SELECT webhook_uuid_v7(), k.user_id, e.campaign_id, e.contact_id, 'do_not_call', $2
   FROM enrolled e JOIN campaigns k ON k.id = e.campaign_id WHERE e.outcome = 'do_not_call'`,
);

/** Enrolls the group's contacts not enrolled yet, due from `now`. */
export async function enrollContacts(tx: SqlSession, campaignId: string, now: Date): Promise<void> {
  await tx.run(enrollStatement, [campaignId, now]);
  await assignVariants(tx, campaignId);
}

const replanStatement = statement(
  'campaigns.replan_waiting',
  `UPDATE campaign_contacts SET next_attempt_at = ready_at, updated_at = $2
   WHERE campaign_id = $1::uuid AND state = 'pending' AND ready_at IS NOT NULL AND next_attempt_at > ready_at`,
);

/** Waiting contacts are due again from when the retry policy allows (ready_at), not from an opening of an old window. */
export async function replanWaiting(tx: SqlSession, campaignId: string, now: Date): Promise<void> {
  await tx.run(replanStatement, [campaignId, now]);
}

export interface ReferencedAgent {
  id: string;
  name: string;
  isActive: boolean;
  phoneNumbers: { number: string }[];
}

const referencedAgentStatement = statement<ReferencedAgent>(
  'campaigns.referenced_agent',
  `SELECT a.id, a.name, a.is_active AS "isActive",
          coalesce((SELECT json_agg(json_build_object('number', p.number)) FROM phone_numbers p WHERE p.agent_id = a.id), '[]') AS "phoneNumbers"
   FROM agents a WHERE a.id = $1::uuid AND a.user_id = $2::uuid`,
);

export async function referencedAgent(tx: SqlSession, userId: string, agentId: string): Promise<ReferencedAgent | undefined> {
  return (await tx.run(referencedAgentStatement, [agentId, userId]))[0];
}

export interface ReferencedGroup {
  id: string;
  name: string;
  total: number;
}

// Share-locked until the transaction ends, so that a concurrent delete of the group waits for the
// campaign that names it. An archived group is gone for the user, like a deleted one.
const referencedGroupStatement = statement<ReferencedGroup>(
  'campaigns.referenced_group',
  `SELECT id, name, total FROM contact_groups
   WHERE id = $1::uuid AND user_id = $2::uuid AND archived_at IS NULL FOR SHARE`,
);

export async function referencedGroup(tx: SqlSession, userId: string, groupId: string): Promise<ReferencedGroup | undefined> {
  return (await tx.run(referencedGroupStatement, [groupId, userId]))[0];
}

const JSON_COLUMNS = new Set([
  'calling_hours',
  'active_days',
  'schedule_config',
  'field_mappings',
  'selected_contact_fields',
  'call_insights',
  'post_call_analyzers',
]);
const UUID_COLUMNS = new Set(['agent_id', 'contact_group_id', 'redial_of']);

/** The given columns (undefined ones left out) as `$first`, `$first + 1`, ... placeholders, and their values. */
/** What makes a campaign a redial of another (set at creation only). */
export interface RedialColumns {
  redial_of?: string;
  redial_outcomes?: CallOutcome[];
}

function assignments(columns: UpdateCampaignColumns & RedialColumns, first: number) {
  const given = Object.entries(columns).filter(([, value]) => value !== undefined);
  const cast = (name: string) => (JSON_COLUMNS.has(name) ? '::jsonb' : UUID_COLUMNS.has(name) ? '::uuid' : '');
  return {
    names: given.map(([name]) => name),
    params: given.map(([name], index) => `$${first + index}${cast(name)}`),
    values: given.map(([name, value]) =>
      JSON_COLUMNS.has(name) ? JSON.stringify(value) : typeof value === 'bigint' ? String(value) : value,
    ),
  };
}

/** Inserts a campaign; the columns not given take their defaults. */
export async function insertCampaign(
  tx: SqlSession,
  row: UpdateCampaignColumns & RedialColumns & { id: string; user_id: string; status: CampaignStatus },
): Promise<void> {
  const { id, user_id, status, ...columns } = row;
  const given = assignments(columns, 4);
  const text = `INSERT INTO campaigns (id, user_id, status, updated_at${given.names.map((name) => `, ${name}`).join('')})
    VALUES ($1::uuid, $2::uuid, $3::"CampaignStatus", now()${given.params.map((param) => `, ${param}`).join('')})`;
  await tx.run(dynamicStatement('campaigns.insert', text), [id, user_id, status, ...given.values]);
}

/** Writes the given columns of a campaign. */
export async function updateCampaignRow(tx: SqlSession, id: string, columns: UpdateCampaignColumns): Promise<void> {
  const given = assignments(columns, 2);
  const sets = given.names.map((name, index) => `, ${name} = ${given.params[index]}`).join('');
  await tx.run(dynamicStatement('campaigns.update', `UPDATE campaigns SET updated_at = now()${sets} WHERE id = $1::uuid`), [
    id,
    ...given.values,
  ]);
}

// A campaign with its agent (and the agent's numbers) and its group, as one JSON object in the shape of
// `CampaignWithRelations` (with-relations.ts): what a create answers, through the v1 serializer.
const WITH_RELATIONS = `json_build_object(
  ${CAMPAIGN_OBJECT_FIELDS},
  'agent', json_build_object(
    'id', a.id, 'name', a.name, 'status', a.status, 'isActive', a.is_active, 'responseEngineType', a.response_engine_type,
    'phoneNumbers', coalesce((SELECT json_agg(json_build_object('id', p.id, 'number', p.number, 'label', p.label, 'isPrimary', p.is_primary)
                                              ORDER BY p.is_primary DESC, p.created_at, p.id)
                              FROM phone_numbers p WHERE p.agent_id = a.id), '[]')),
  'contactGroup', json_build_object(
    'id', g.id, 'name', g.name, 'description', g.description, 'total', g.total, 'csvHeaders', g.csv_headers,
    'createdAt', ${isoText('g.created_at')}))`;
const WITH_RELATIONS_FROM = 'campaigns k JOIN agents a ON a.id = k.agent_id JOIN contact_groups g ON g.id = k.contact_group_id';

const getWithRelationsStatement = statement<{ campaign: CampaignWithRelations }>(
  'campaigns.get_with_relations',
  `SELECT ${WITH_RELATIONS} AS campaign FROM ${WITH_RELATIONS_FROM} WHERE k.id = $1::uuid AND k.user_id = $2::uuid`,
);

export async function campaignWithRelations(ctx: ServiceContext, id: string): Promise<CampaignWithRelations | undefined> {
  return (await ctx.sql.run(getWithRelationsStatement, [id, ctx.user.id]))[0]?.campaign;
}

/** The letters of the pieces the v1 text leaves to node (json-rows.ts): the schedule columns, read with their defaults. */
export const V1_SCHEDULE_PIECES = { callingHours: 'h', scheduleConfig: 's', activeDays: 'd' } as const;

// The same campaign as v1's JSON text (contract 2.2, in the serializer's order: rest/serializers/campaigns.ts),
// which the reads clients poll write out as it comes: building and printing fifty campaigns' objects was
// most of the list's CPU. The schedule columns go to node, whose readers hold their defaults; a test holds
// the text to the serializer's bytes.
const V1_CAMPAIGN = objectJson([
  ['id', stringJson('k.id')],
  ['name', stringJson('k.name')],
  ['description', stringJson('k.description')],
  ['status', stringJson('k.status')],
  ['paused_reason', stringJson('k.paused_reason')],
  ['agent_id', stringJson('k.agent_id')],
  ['contact_group_id', stringJson('k.contact_group_id')],
  ['concurrent_calls', plainJson('k.concurrent_calls')],
  ['max_retry_days', plainJson('k.max_retry_days')],
  ['calling_hours', printedPiece(V1_SCHEDULE_PIECES.callingHours, 'k.calling_hours')],
  ['schedule_config', printedPiece(V1_SCHEDULE_PIECES.scheduleConfig, 'k.schedule_config')],
  ['active_days', printedPiece(V1_SCHEDULE_PIECES.activeDays, 'k.active_days')],
  ['field_mappings', openJson('k.field_mappings')],
  ['selected_contact_fields', openJson('k.selected_contact_fields')],
  ['timezone', stringJson('k.timezone')],
  ['call_insights', openJson('k.call_insights')],
  ['post_call_analyzers', openJson('k.post_call_analyzers')],
  ['started_at', instantJson('k.started_at')],
  ['completed_at', instantJson('k.completed_at')],
  ['created_at', instantJson('k.created_at')],
  ['updated_at', instantJson('k.updated_at')],
  [
    'user_agents',
    objectJson([
      ['id', stringJson('a.id')],
      ['name', stringJson('a.name')],
      ['status', stringJson('a.status')],
      ['is_active', plainJson('a.is_active')],
      ['response_engine_type', stringJson('a.response_engine_type')],
      [
        'phone_numbers',
        `(SELECT '[' || coalesce(string_agg(${objectJson([
          ['id', stringJson('p.id')],
          ['number', stringJson('p.number')],
          ['label', stringJson('p.label')],
          ['is_primary', plainJson('p.is_primary')],
        ])}, ',' ORDER BY p.is_primary DESC, p.created_at, p.id), '') || ']' FROM phone_numbers p WHERE p.agent_id = a.id)`,
      ],
    ]),
  ],
  [
    'contact_groups',
    objectJson([
      ['id', stringJson('g.id')],
      ['name', stringJson('g.name')],
      ['description', stringJson('g.description')],
      ['total', plainJson('g.total')],
      ['csv_headers', openJson('g.csv_headers')],
      ['created_at', instantJson('g.created_at')],
    ]),
  ],
]);

// The page is cut from the index alone ((user_id, created_at, id)), so an offset skips index entries, not
// rows; each of the page's campaigns is then read by its id with its agent and group. Joined as tables,
// a campaigns table the planner takes for small was read whole and hashed for a page of fifty.
const v1ListStatement = statement<{ campaigns: string }>(
  'campaigns.list_with_relations',
  `SELECT '[' || coalesce(string_agg((SELECT ${V1_CAMPAIGN} FROM ${WITH_RELATIONS_FROM} WHERE k.id = page.id), ','
                                     ORDER BY page.created_at DESC, page.id DESC), '') || ']' AS campaigns
   FROM (SELECT id, created_at FROM campaigns WHERE user_id = $1::uuid ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3) page`,
);
const v1GetStatement = statement<{ campaign: string }>(
  'campaigns.get_v1',
  `SELECT ${V1_CAMPAIGN} AS campaign FROM ${WITH_RELATIONS_FROM} WHERE k.id = $1::uuid AND k.user_id = $2::uuid`,
);

/** The caller's campaigns as v1's JSON text, its schedule pieces not yet printed; newest first, a page of them. */
export async function v1CampaignsText(ctx: ServiceContext, page: { take?: number | undefined; skip?: number | undefined }) {
  return (await ctx.sql.run(v1ListStatement, [ctx.user.id, page.take ?? null, page.skip ?? 0]))[0]!.campaigns;
}

/** One of the caller's campaigns as v1's JSON text, its schedule pieces not yet printed. */
export async function v1CampaignText(ctx: ServiceContext, id: string): Promise<string | undefined> {
  return (await ctx.sql.run(v1GetStatement, [id, ctx.user.id]))[0]?.campaign;
}

// The history's trigger sees only the campaigns row: a change kept elsewhere (the A/B variants) is written
// here, in the same shape and by the same actor.
const recordChangeStatement = statement(
  'campaigns.record_change',
  `INSERT INTO campaign_changes (id, campaign_id, actor, action, changes, created_at)
   VALUES (webhook_uuid_v7(), $1::uuid, coalesce(nullif(current_setting('callflow.actor', true), ''), 'system'), $2, $3::jsonb, now())`,
);

/** Writes a history entry: each changed field `{ from, to }`, under its column's name. */
export async function recordChange(
  tx: SqlSession,
  campaignId: string,
  action: 'edited',
  changes: Record<string, { from: unknown; to: unknown }>,
): Promise<void> {
  await tx.run(recordChangeStatement, [campaignId, action, JSON.stringify(changes)]);
}

// The trigger names every tracked column of a new campaign, defaults and all: the creating transaction
// keeps in that entry only the fields its creator set, and adds what is kept beside the row.
const settleCreatedStatement = statement(
  'campaigns.settle_created_entry',
  `UPDATE campaign_changes
   SET changes = coalesce((SELECT jsonb_object_agg(key, value) FROM jsonb_each(changes) WHERE key = ANY ($2::text[])), '{}') || $3::jsonb
   WHERE campaign_id = $1::uuid AND action = 'created'`,
);

/** Narrows the new campaign's "created" entry to `fields`, and adds `added` (fields kept outside its row). */
export async function settleCreatedEntry(
  tx: SqlSession,
  campaignId: string,
  fields: string[],
  added: Record<string, { from: unknown; to: unknown }>,
): Promise<void> {
  await tx.run(settleCreatedStatement, [campaignId, fields, JSON.stringify(added)]);
}

const actorStatement = statement('campaigns.actor', `SELECT set_config('callflow.actor', $1, true)`);

/** Names who acts in this transaction (`user:<id>`, `api_key:<id>`): the campaign history's trigger reads it. */
export async function setActor(tx: SqlSession, actor: string): Promise<void> {
  await tx.run(actorStatement, [actor]);
}

/** The campaign's changes after `afterSeq` (all when null), oldest first: their ids and order. */
export function findChangesAfter(db: ServiceEnv['db'], campaignId: string, afterSeq: bigint | null) {
  return named('campaigns.changesAfter', () =>
    db.campaignChange.findMany({
      where: { campaignId, ...(afterSeq === null ? {} : { seq: { gt: afterSeq } }) },
      orderBy: { seq: 'asc' },
      select: { id: true, seq: true },
    }),
  );
}

export type CampaignChangeQuery = Omit<Prisma.CampaignChangeFindFirstArgs, 'where'>;

export function findChange<Q extends CampaignChangeQuery>(db: ServiceEnv['db'], userId: string, id: string, query: Q) {
  return named('campaigns.change', () => db.campaignChange.findFirst({ ...query, where: { id, campaign: { userId } } }));
}

const deleteVariantsStatement = statement('campaigns.delete_variants', `DELETE FROM campaign_variants WHERE campaign_id = $1::uuid`);
const insertVariantsStatement = statement(
  'campaigns.insert_variants',
  `INSERT INTO campaign_variants (id, campaign_id, agent_id, name, weight, position)
   SELECT r.id, $1::uuid, r.agent_id, r.name, r.weight, r.position
   FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, agent_id uuid, name text, weight int, position int)`,
);

/** A campaign's A/B variant as its history and a copy of the campaign carry it. */
export interface VariantSetting {
  agent_id: string;
  name: string;
  weight: number;
}

const variantsOfStatement = statement<VariantSetting>(
  'campaigns.variants_of',
  `SELECT agent_id, name, weight FROM campaign_variants WHERE campaign_id = $1::uuid ORDER BY position`,
);

const activeVariantsOfStatement = statement<VariantSetting>(
  'campaigns.active_variants_of',
  `SELECT v.agent_id, v.name, v.weight FROM campaign_variants v JOIN agents a ON a.id = v.agent_id
   WHERE v.campaign_id = $1::uuid AND a.is_active ORDER BY v.position`,
);

/** The campaign's A/B variants in their order (none: an empty list); with `activeOnly`, those whose agents are not archived. */
export function variantsOf(sql: SqlSession, campaignId: string, { activeOnly = false } = {}): Promise<VariantSetting[]> {
  return sql.run(activeOnly ? activeVariantsOfStatement : variantsOfStatement, [campaignId]);
}

/** Replaces the campaign's A/B variants (none: an empty list). */
export async function replaceVariants(
  tx: SqlSession,
  campaignId: string,
  variants: { id: string; agentId: string; name: string; weight: number }[],
): Promise<void> {
  await tx.run(deleteVariantsStatement, [campaignId]);
  if (variants.length === 0) return;
  const rows = variants.map((v, position) => ({ id: v.id, agent_id: v.agentId, name: v.name, weight: v.weight, position }));
  await tx.run(insertVariantsStatement, [campaignId, JSON.stringify(rows)]);
}

// A redial's contact keeps the variant its source gave it, by name, so that its calls go on as the
// source's retries would have; the other contacts are given theirs by weight.
const inheritVariantsStatement = statement(
  'campaigns.inherit_variants',
  `UPDATE campaign_contacts cc SET variant_id = v.id
   FROM campaigns k, campaign_contacts s, campaign_variants sv, campaign_variants v
   WHERE cc.campaign_id = $1::uuid AND cc.variant_id IS NULL AND k.id = cc.campaign_id
     AND s.campaign_id = k.redial_of AND s.contact_id = cc.contact_id AND sv.id = s.variant_id
     AND v.campaign_id = cc.campaign_id AND lower(v.name) = lower(sv.name)`,
);

// A contact's variant is the one whose weight range holds a hash of the campaign and contact: the same
// every time it is asked, so a contact enrolled again (a resume) or called again keeps its variant.
const assignVariantsStatement = statement(
  'campaigns.assign_variants',
  `WITH ranges AS (
     SELECT id, sum(weight) OVER (ORDER BY position) - weight AS low, sum(weight) OVER (ORDER BY position) AS high,
            sum(weight) OVER () AS total
     FROM campaign_variants WHERE campaign_id = $1::uuid
   )
   UPDATE campaign_contacts cc SET variant_id = r.id
   FROM ranges r
   WHERE cc.campaign_id = $1::uuid AND cc.variant_id IS NULL
     AND ((hashtextextended(cc.campaign_id::text || ':' || cc.contact_id::text, 0) % r.total) + r.total) % r.total >= r.low
     AND ((hashtextextended(cc.campaign_id::text || ':' || cc.contact_id::text, 0) % r.total) + r.total) % r.total < r.high`,
);

/** Gives each enrolled contact without a variant its variant (nothing without variants). */
export async function assignVariants(tx: SqlSession, campaignId: string): Promise<void> {
  await tx.run(inheritVariantsStatement, [campaignId]);
  await tx.run(assignVariantsStatement, [campaignId]);
}

/** One number for each kind of place the campaign's contacts still waiting to be called are in, with the earliest due. */
export interface WaitingPlace {
  phoneNumber: string;
  timezone: string | null;
  region: string | null;
  dueAt: Date | null;
}

// A campaign not started yet has enrolled nobody: its group's contacts that enrolment would take count.
const waitingPlacesStatement = statement<WaitingPlace>(
  'campaigns.waiting_places',
  `SELECT min(p.phone_number) AS "phoneNumber", p.timezone, p.region, min(p.due_at) AS "dueAt"
   FROM (
     SELECT c.phone_number, c.timezone, c.data->>'region' AS region, cc.next_attempt_at AS due_at
     FROM campaign_contacts cc JOIN contacts c ON c.id = cc.contact_id
     WHERE cc.campaign_id = $1::uuid AND cc.state = 'pending'
     UNION ALL
     SELECT c.phone_number, c.timezone, c.data->>'region', NULL
     FROM campaigns k JOIN contacts c ON c.contact_group_id = k.contact_group_id
     WHERE k.id = $1::uuid AND c.erased_at IS NULL AND c.status = 'active' AND ${ENROLLABLE}
       AND NOT EXISTS (SELECT 1 FROM campaign_contacts e WHERE e.campaign_id = k.id)
   ) p
   GROUP BY p.timezone, p.region, left(p.phone_number, 5)
   LIMIT $2`,
);

/** The places of the contacts still to call (by zone, region and area code), at most `limit` of them. */
export function waitingPlaces(sql: SqlSession, campaignId: string, limit: number): Promise<WaitingPlace[]> {
  return sql.run(waitingPlacesStatement, [campaignId, limit]);
}

/** A contact a dispatch preview judges: the dialer's candidate fields, and when it is due (null: not enrolled yet, due at once). */
export interface PreviewContact {
  contactId: string;
  phoneNumber: string | null;
  status: 'active' | 'invalid' | 'do_not_call';
  timezone: string | null;
  region: string | null;
  consents: ConsentKind[];
  dueAt: Date | null;
  /** What the gate reads beside the row, as the dialer's candidates statement reads it. */
  revocations: Revocation[];
  lastAbandonedAt: Date | null;
  registry: RegistryCallee;
}

type PreviewRow = Omit<PreviewContact, 'revocations' | 'registry'> & {
  revocations: { kind: ConsentKind; at: string }[] | null;
  registry: DoNotCallRegistry | null;
  consentsToCalls: boolean;
  relationshipSince: Date | null;
};

// The contacts a dispatch would leave to the dialer: those enrolled and waiting, and those of its group
// that enrolment would take (it enrols on every start). Read as the dialer's candidates statement reads
// them (status with the do-not-call list, region, the consents the gate may ask for, revocations, the
// last abandoned call, a registry's listing for a solicitation), in contact id order.
const previewContactsStatement = statement<PreviewRow>(
  'campaigns.preview_contacts',
  `SELECT p.* FROM (
     (SELECT c.id AS "contactId", c.phone_number AS "phoneNumber", c.status::text AS status, c.timezone, c.data->>'region' AS region,
             cc.next_attempt_at AS "dueAt", c.user_id
      FROM campaign_contacts cc JOIN contacts c ON c.id = cc.contact_id
      WHERE cc.campaign_id = $1::uuid AND cc.state = 'pending' AND c.id > $2::uuid
      ORDER BY c.id LIMIT $4)
     UNION ALL
     (SELECT c.id, c.phone_number, c.status::text, c.timezone, c.data->>'region', NULL, c.user_id
      FROM campaigns k JOIN contacts c ON c.contact_group_id = k.contact_group_id
      WHERE k.id = $1::uuid AND c.erased_at IS NULL AND ${ENROLLABLE} AND c.id > $2::uuid
        AND NOT EXISTS (SELECT 1 FROM campaign_contacts e WHERE e.campaign_id = k.id AND e.contact_id = c.id)
      ORDER BY c.id LIMIT $4)
   ) q, LATERAL (
     SELECT q."contactId", q."phoneNumber", q.timezone, q.region, q."dueAt",
            CASE WHEN EXISTS (SELECT 1 FROM do_not_call_entries d WHERE d.user_id = q.user_id AND d.phone_number = q."phoneNumber")
                 THEN 'do_not_call' ELSE q.status END AS status,
            CASE WHEN $3::text[] = '{}' THEN '{}'::text[]
                 ELSE ARRAY(SELECT DISTINCT g.kind::text FROM contact_consents g
                            WHERE g.contact_id = q."contactId" AND g.revoked_at IS NULL AND g.kind::text = ANY($3::text[])) END AS consents,
            ${revocationsOf('q.user_id', 'q."phoneNumber"')} AS revocations,
            ${lastAbandonedOf('q.user_id', 'q."phoneNumber"', '$6', '$7', '$8')} AS "lastAbandonedAt",
            l.registry, ${registryExceptions('l.registry', 'q."contactId"')}
     FROM (SELECT CASE WHEN $5::boolean THEN ${registryOf('q."phoneNumber"')} END AS registry) l
   ) p
   ORDER BY p."contactId" LIMIT $4`,
);

/**
 * Up to `limit` of the contacts a dispatch preview judges, after contact `after` in id order, with the
 * consents of `consentKinds`, registries looked up when `lookUpRegistries`, and abandoned calls ended
 * within `recallHours` before `now`.
 */
export async function previewContacts(
  sql: SqlSession,
  campaignId: string,
  reads: { consentKinds: readonly ConsentKind[]; lookUpRegistries: boolean; now: Date; recallHours: number },
  after: string,
  limit: number,
): Promise<PreviewContact[]> {
  const rows = await sql.run(previewContactsStatement, [
    campaignId,
    after,
    reads.consentKinds,
    limit,
    reads.lookUpRegistries,
    reads.now,
    reads.recallHours,
    abandonedPlacedFrom(reads.now, reads.recallHours),
  ]);
  return rows.map(({ revocations, registry, consentsToCalls, relationshipSince, ...row }) => ({
    ...row,
    revocations: readRevocations(revocations),
    registry: { registry, consentsToCalls, relationshipSince },
  }));
}

/** The calls the customer placed to these numbers since `since`, as the frequency caps count them. */
export const callHistories = readCallHistories;

/** An enrolled contact still to call, with what decided when it is due. */
export interface WaitingContact {
  contactId: string;
  phoneNumber: string;
  attempts: number;
  lastAttemptAt: Date | null;
  callbackAt: Date | null;
}

// The index on (campaign_id, state, next_attempt_at) finds it; the place narrows it to the group
// waitingPlaces read its due time from.
const waitingContactStatement = statement<WaitingContact>(
  'campaigns.waiting_contact',
  `SELECT cc.contact_id AS "contactId", c.phone_number AS "phoneNumber", cc.attempts,
          cc.last_attempt_at AS "lastAttemptAt", cc.callback_at AS "callbackAt"
   FROM campaign_contacts cc JOIN contacts c ON c.id = cc.contact_id
   WHERE cc.campaign_id = $1::uuid AND cc.state = 'pending' AND cc.next_attempt_at = $2::timestamptz
     AND c.timezone IS NOT DISTINCT FROM $3::text AND c.data->>'region' IS NOT DISTINCT FROM $4::text
     AND left(c.phone_number, 5) = left($5::text, 5)
   ORDER BY cc.contact_id
   LIMIT 1`,
);

/** The contact of `place` whose next attempt is due at `dueAt` (the place's earliest); null when none is now. */
export async function waitingContact(
  sql: SqlSession,
  campaignId: string,
  place: WaitingPlace,
  dueAt: Date,
): Promise<WaitingContact | null> {
  const [row] = await sql.run(waitingContactStatement, [campaignId, dueAt, place.timezone, place.region, place.phoneNumber]);
  return row ?? null;
}

const setCallToolsStatement = statement(
  'campaigns.setCallTools',
  `UPDATE campaigns SET booking_calendar = CASE WHEN $2::boolean THEN $3::jsonb ELSE booking_calendar END,
     transfer_number = CASE WHEN $4::boolean THEN $5 ELSE transfer_number END, updated_at = now()
   WHERE id = $1::uuid`,
);

/** Sets what is given of the campaign's in-call tool settings; null clears one. */
export async function setCallTools(
  tx: SqlSession,
  id: string,
  settings: { bookingCalendar?: object | null | undefined; transferNumber?: string | null | undefined },
): Promise<void> {
  // SQL NULL, not JSON null, for a calendar cleared.
  const calendar = settings.bookingCalendar ? JSON.stringify(settings.bookingCalendar) : null;
  await tx.run(setCallToolsStatement, [
    id,
    settings.bookingCalendar !== undefined,
    calendar,
    settings.transferNumber !== undefined,
    settings.transferNumber ?? null,
  ]);
}

// Exemptions from the regional calling rules, granted by an admin (campaigns/exemptions.ts).

export type ExemptionQuery = Pick<Prisma.RegionalRuleExemptionFindManyArgs, 'select' | 'include'>;

export function insertExemption(ctx: ServiceContext, data: Prisma.RegionalRuleExemptionUncheckedCreateInput, query: ExemptionQuery) {
  return named('campaigns.insertExemption', () => ctx.db.regionalRuleExemption.create({ ...query, data }));
}

/** A customer's exemptions, latest to expire first. */
export function findExemptions<Q extends ExemptionQuery>(ctx: ServiceContext, userId: string, query: Q) {
  return named('campaigns.exemptions', () =>
    ctx.db.regionalRuleExemption.findMany({ ...query, where: { userId }, orderBy: [{ expiresAt: 'desc' }, { id: 'desc' }] }),
  );
}

const exemptionInForce = statement<{ id: string }>(
  'campaigns.exemption_in_force',
  `SELECT id FROM regional_rule_exemptions WHERE user_id = $1::uuid AND expires_at > $2 ORDER BY expires_at DESC LIMIT 1`,
);

/** The customer's exemption in force at `at`, the latest to expire; undefined when none. */
export async function exemptionAt(sql: SqlSession, userId: string, at: Date): Promise<string | undefined> {
  return (await sql.run(exemptionInForce, [userId, at]))[0]?.id;
}

/** An edit's record of a time (`{"started_at": {"from": ..., "to": ...}}`) moved with its data (src/demo/redate.ts). */
const shiftHistoryTimes = statement(
  'campaigns.shiftHistoryTimes',
  `UPDATE campaign_changes
      SET changes = (SELECT jsonb_object_agg(
                              key,
                              CASE WHEN key LIKE '%\\_at' AND jsonb_typeof(value) = 'object'
                                   THEN jsonb_build_object(
                                          'from', to_jsonb((value ->> 'from')::timestamptz + $1::interval),
                                          'to', to_jsonb((value ->> 'to')::timestamptz + $1::interval))
                                   ELSE value END)
                       FROM jsonb_each(changes))
    WHERE changes::text LIKE '%\\_at"%'`,
);

/** Moves the times the campaigns' histories of edits record by `ms`. */
export async function shiftHistory(sql: SqlSession, ms: number): Promise<void> {
  await sql.run(shiftHistoryTimes, [`${ms} milliseconds`]);
}
