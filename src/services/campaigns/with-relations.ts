import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import { uuid } from '../validation.js';

// Campaigns with the agent (and its numbers) and the contact group they tie together: what v1 lists and
// shows. Read in one plain SQL statement, because Prisma's mapping of the same nested rows cost about
// four times the CPU, on the endpoint clients poll most. The shape is Prisma's own for
// `campaignRelations`, and a test holds the two reads to the same result.

export const campaignRelations = {
  agent: {
    select: {
      id: true,
      name: true,
      status: true,
      isActive: true,
      responseEngineType: true,
      phoneNumbers: {
        select: { id: true, number: true, label: true, isPrimary: true },
        orderBy: [{ isPrimary: 'desc' as const }, { createdAt: 'asc' as const }, { id: 'asc' as const }],
      },
    },
  },
  contactGroup: { select: { id: true, name: true, description: true, total: true, csvHeaders: true, createdAt: true } },
} satisfies Prisma.CampaignInclude;

export type CampaignWithRelations = Prisma.CampaignGetPayload<{ include: typeof campaignRelations }>;

/** As read: the group's createdAt comes inside JSON, as text. */
type Row = Omit<CampaignWithRelations, 'contactGroup'> & {
  contactGroup: Omit<CampaignWithRelations['contactGroup'], 'createdAt'> & { createdAt: string | Date };
};

// The relations come as JSON objects already in their final shape: cheaper to read than a column each
// and to put together here.
const SELECT = `
  SELECT k.id, k.user_id AS "userId", k.agent_id AS "agentId", k.contact_group_id AS "contactGroupId", k.name, k.description,
         k.status, k.paused_reason AS "pausedReason", k.concurrent_calls AS "concurrentCalls", k.max_retry_days AS "maxRetryDays",
         k.calling_hours AS "callingHours", k.schedule_config AS "scheduleConfig", k.active_days AS "activeDays",
         k.field_mappings AS "fieldMappings", k.selected_contact_fields AS "selectedContactFields", k.timezone,
         k.call_insights AS "callInsights", k.post_call_analyzers AS "postCallAnalyzers", k.started_at AS "startedAt",
         k.completed_at AS "completedAt", k.created_at AS "createdAt", k.updated_at AS "updatedAt",
         json_build_object(
           'id', a.id, 'name', a.name, 'status', a.status, 'isActive', a.is_active, 'responseEngineType', a.response_engine_type,
           'phoneNumbers', coalesce((SELECT json_agg(json_build_object('id', p.id, 'number', p.number, 'label', p.label, 'isPrimary', p.is_primary)
                                                     ORDER BY p.is_primary DESC, p.created_at, p.id)
                                     FROM phone_numbers p WHERE p.agent_id = a.id), '[]')) AS agent,
         json_build_object(
           'id', g.id, 'name', g.name, 'description', g.description, 'total', g.total, 'csvHeaders', g.csv_headers,
           'createdAt', g.created_at) AS "contactGroup"
  FROM campaigns k JOIN agents a ON a.id = k.agent_id JOIN contact_groups g ON g.id = k.contact_group_id`;

function withRelations(row: Row): CampaignWithRelations {
  row.contactGroup.createdAt = new Date(row.contactGroup.createdAt);
  return row as CampaignWithRelations;
}

/** The caller's campaigns, newest first, `take` at most (all without it) after skipping `skip`. */
export async function listCampaignsWithRelations(ctx: ServiceContext, page: { take?: number | undefined; skip?: number | undefined } = {}) {
  const rows = await ctx.sql.query<Row>(
    `${SELECT} WHERE k.user_id = $1::uuid ORDER BY k.created_at DESC, k.id DESC LIMIT $2 OFFSET $3`,
    [ctx.user.id, page.take ?? null, page.skip ?? 0],
  );
  return rows.map(withRelations);
}

/** One of the caller's campaigns; another user's (or none) is a NotFoundError. */
export async function getCampaignWithRelations(ctx: ServiceContext, id: string): Promise<CampaignWithRelations> {
  if (!uuid.safeParse(id).success) throw new NotFoundError('Campaign');
  const [row] = await ctx.sql.query<Row>(`${SELECT} WHERE k.id = $1::uuid AND k.user_id = $2::uuid`, [id, ctx.user.id]);
  if (!row) throw new NotFoundError('Campaign');
  return withRelations(row);
}
