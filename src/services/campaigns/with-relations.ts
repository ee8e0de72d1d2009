import { fillPieces, type IsoInstants } from '../../db/json-rows.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { readActiveDays, readCallingHours, readScheduleConfig } from '../calling-rules/schedule.js';
import type { ServiceContext } from '../context.js';
import { ownedOrNotFound } from '../owned.js';
import { campaignWithRelations, V1_SCHEDULE_PIECES, v1CampaignsText, v1CampaignText } from './store.js';

// Campaigns with the agent (and its numbers) and the contact group they tie together: what v1 lists and
// shows. The store reads one in a plain SQL statement that builds the row as one JSON object, because
// Prisma's mapping of the same nested rows cost about four times the CPU. The shape is Prisma's own for
// `campaignRelations` with instants as ISO 8601 text and the schedule columns as their JSON text, and a
// test holds the two reads to the same result.

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

/** One of the caller's campaigns; another user's (or none) is a NotFoundError. */
export async function getCampaignWithRelations(ctx: ServiceContext, id: string): Promise<CampaignWithRelations> {
  return ownedOrNotFound('Campaign', id, (id) => campaignWithRelations(ctx, id));
}

// The reads clients poll come as v1's JSON text, built by the store's statement; node prints only the
// schedule columns' effective values, with the readers that hold their defaults.
const SCHEDULE_PRINTERS = {
  [V1_SCHEDULE_PIECES.callingHours]: readCallingHours.jsonFromText,
  [V1_SCHEDULE_PIECES.scheduleConfig]: readScheduleConfig.jsonFromText,
  [V1_SCHEDULE_PIECES.activeDays]: readActiveDays.jsonFromText,
};

/** The caller's campaigns as v1's JSON text, newest first, `take` at most (all without it) after skipping `skip`. */
export async function listCampaignsAsV1Json(
  ctx: ServiceContext,
  page: { take?: number | undefined; skip?: number | undefined } = {},
): Promise<string> {
  return fillPieces(await v1CampaignsText(ctx, page), SCHEDULE_PRINTERS);
}

/** One of the caller's campaigns as v1's JSON text; another user's (or none) is a NotFoundError. */
export async function getCampaignAsV1Json(ctx: ServiceContext, id: string): Promise<string> {
  return fillPieces(await ownedOrNotFound('Campaign', id, (id) => v1CampaignText(ctx, id)), SCHEDULE_PRINTERS);
}
