import type { IsoInstants } from '../../db/json-rows.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { ownedOrNotFound } from '../owned.js';
import { campaignsWithRelations, campaignWithRelations } from './store.js';

// Campaigns with the agent (and its numbers) and the contact group they tie together: what v1 lists and
// shows. The store reads them in one plain SQL statement that builds each row as one JSON object, because
// Prisma's mapping of the same nested rows cost about four times the CPU, on the endpoint clients poll
// most. The shape is Prisma's own for `campaignRelations` with instants as ISO 8601 text and the schedule
// columns as their JSON text, and a test holds the two reads to the same result.

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

/** Read as their JSON text, for schedule.ts's readers (`fromText`), which remember each text's effective value. */
type ScheduleColumn = 'callingHours' | 'scheduleConfig' | 'activeDays';

export type CampaignWithRelations = Omit<IsoInstants<Prisma.CampaignGetPayload<{ include: typeof campaignRelations }>>, ScheduleColumn> &
  Record<ScheduleColumn, string>;

/** The caller's campaigns, newest first, `take` at most (all without it) after skipping `skip`. */
export function listCampaignsWithRelations(ctx: ServiceContext, page: { take?: number | undefined; skip?: number | undefined } = {}) {
  return campaignsWithRelations(ctx, page);
}

/** One of the caller's campaigns; another user's (or none) is a NotFoundError. */
export async function getCampaignWithRelations(ctx: ServiceContext, id: string): Promise<CampaignWithRelations> {
  return ownedOrNotFound('Campaign', id, (id) => campaignWithRelations(ctx, id));
}
