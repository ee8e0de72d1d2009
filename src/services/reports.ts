import { z } from 'zod';
import type { CallStatus, Campaign, ContactStatus, Prisma, Sentiment } from '../generated/prisma/client.js';
import { NEWEST_FIRST, type CallAttemptQuery } from './calls.js';
import type { ServiceContext } from './context.js';
import { NotFoundError } from './errors.js';
import { parseInput, uuid, type RawInput } from './validation.js';

// A campaign's report, the same on both surfaces. Every figure is an aggregate the database computes
// over indexed columns; no attempt is loaded to be counted. The statements run side by side, so on a
// busy campaign two figures may be a few milliseconds apart.

/** How many of the latest completed calls a report shows. */
export const RECENT_SUCCESSFUL_CALLS = 10;

/** Paging of a report's contact outcomes: v1's rules (default 50, above 500 counts as 500). */
export const reportPageInput = z.object({
  limit: z
    .int()
    .min(1)
    .transform((n) => Math.min(n, 500))
    .default(50),
  offset: z.int().min(0).default(0),
});
export type ReportPage = RawInput<typeof reportPageInput>;

/** Call statuses as metric field names. */
const STATUS_FIELD = {
  queued: 'queued',
  ringing: 'ringing',
  in_progress: 'inProgress',
  completed: 'completed',
  no_answer: 'noAnswer',
  busy: 'busy',
  failed: 'failed',
  voicemail: 'voicemail',
  canceled: 'canceled',
} as const satisfies Record<CallStatus, string>;

export type CallCounts = { total: number } & Record<(typeof STATUS_FIELD)[CallStatus], number>;
export type SentimentCounts = Record<Sentiment, number>;

export interface ContactCounts {
  /** Contacts in the campaign's group now, and those it enrolled that were erased since. */
  total: number;
  /** Of those, the ones that may be called (status active). */
  callable: number;
  /** Contacts the campaign dialed at least once. */
  attempted: number;
  /** Contacts with the final outcome `reached`. */
  reached: number;
  /** Contacts of the group without a final outcome: not dispatched yet, waiting for a retry, or on a call. */
  pending: number;
}

export interface CampaignMetrics {
  contacts: ContactCounts;
  calls: CallCounts;
  /** reached / attempted contacts, 0 to 1 (4 decimals); 0 before anyone was dialed. */
  successRate: number;
  /** Mean length of the calls that connected (duration above 0), 1 decimal. */
  averageDurationSeconds: number;
  totalDurationSeconds: number;
  totalCostCents: bigint;
  /** Appointments booked from the campaign's calls, whatever became of them since. */
  appointmentsBooked: number;
  /** Sentiment of the completed calls (conversations). */
  sentiment: SentimentCounts;
}

export interface ContactOutcome {
  contactId: string;
  contactName: string;
  phoneNumber: string | null;
  contactStatus: ContactStatus;
  attempts: number;
  lastStatus: string | null;
  lastCallAt: Date | null;
  /** The dialer's final outcome (reached, not_reached, do_not_call, invalid, cancelled), else `pending`. */
  outcome: string;
}

export interface CampaignReport {
  campaign: Campaign;
  metrics: CampaignMetrics;
  contactOutcomes: ContactOutcome[];
  totalContactOutcomes: number;
  hasMoreContactOutcomes: boolean;
  limit: number;
  offset: number;
}

async function ownedCampaign(ctx: ServiceContext, id: string) {
  if (!uuid.safeParse(id).success) throw new NotFoundError('Campaign');
  const campaign = await ctx.db.campaign.findFirst({
    where: { id, userId: ctx.user.id },
    include: { contactGroup: { select: { total: true } } },
  });
  if (!campaign) throw new NotFoundError('Campaign');
  return campaign;
}

/** Metrics of a campaign and one page of its contacts' outcomes (in the order the contacts were added). */
export async function getCampaignReport(ctx: ServiceContext, campaignId: string, rawPage: ReportPage = {}): Promise<CampaignReport> {
  const page = parseInput(reportPageInput, rawPage);
  const { contactGroup, ...campaign } = await ownedCampaign(ctx, campaignId);
  const [uncallable, erased, dialed, callGroups, appointmentsBooked, contactOutcomes] = await Promise.all([
    // The group keeps its total in step with its contacts; the few that may not be called are counted
    // in the (group, status) index, which spares a scan of every contact.
    ctx.db.contact.count({ where: { groupId: campaign.contactGroupId, status: { in: ['invalid', 'do_not_call'] } } }),
    // Erased contacts are out of the group's total and in the count above; those this campaign enrolled
    // are still part of its report, as anonymous rows. A partial index holds just the erased ones.
    ctx.db.$queryRaw<{ uncallable: number; enrolled: number; enrolledUncallable: number }[]>`
      SELECT count(*) FILTER (WHERE t.status <> 'active')::int AS uncallable,
             count(cc.id)::int AS enrolled,
             count(cc.id) FILTER (WHERE t.status <> 'active')::int AS "enrolledUncallable"
      FROM contacts t LEFT JOIN campaign_contacts cc ON cc.campaign_id = ${campaign.id}::uuid AND cc.contact_id = t.id
      WHERE t.contact_group_id = ${campaign.contactGroupId}::uuid AND t.erased_at IS NOT NULL`,
    ctx.db.$queryRaw<{ attempted: number; reached: number; done: number }[]>`
      SELECT count(*) FILTER (WHERE attempts > 0)::int AS attempted,
             count(*) FILTER (WHERE state = 'done' AND outcome = 'reached')::int AS reached,
             count(*) FILTER (WHERE state = 'done')::int AS done
      FROM campaign_contacts WHERE campaign_id = ${campaign.id}::uuid`,
    // One aggregate per status, each over its own range of the covering index: the plan reads the index
    // alone whatever share of the table the campaign is, and no attempt is hashed or sorted.
    ctx.db.$queryRaw<CallGroup[]>`
      SELECT s.status::text AS status, a.*
      FROM unnest(enum_range(NULL::"CallStatus")) AS s(status)
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS calls,
               coalesce(sum(duration_seconds), 0)::bigint AS "durationSeconds",
               count(*) FILTER (WHERE duration_seconds > 0)::int AS connected,
               coalesce(sum(cost_cents), 0)::bigint AS "costCents",
               count(*) FILTER (WHERE sentiment = 'positive')::int AS positive,
               count(*) FILTER (WHERE sentiment = 'neutral')::int AS neutral,
               count(*) FILTER (WHERE sentiment = 'negative')::int AS negative,
               count(*) FILTER (WHERE sentiment = 'unknown')::int AS unknown
        FROM call_attempts WHERE campaign_id = ${campaign.id}::uuid AND status = s.status) AS a`,
    ctx.db.appointment.count({ where: { campaignId: campaign.id, userId: ctx.user.id } }),
    // The page is cut from the index alone (erased_at is in it), so a deep offset skips index entries,
    // not rows and joins; erased contacts this campaign enrolled are looked up once, in a hashed set.
    ctx.db.$queryRaw<ContactOutcome[]>`
      SELECT c.id AS "contactId", c.name AS "contactName", c.phone_number AS "phoneNumber", c.status::text AS "contactStatus",
             coalesce(cc.attempts, 0) AS attempts, cc.last_status AS "lastStatus", cc.last_attempt_at AS "lastCallAt",
             CASE WHEN cc.state = 'done' AND cc.outcome IS NOT NULL THEN cc.outcome ELSE 'pending' END AS outcome
      FROM (SELECT id FROM contacts
            WHERE contact_group_id = ${campaign.contactGroupId}::uuid
              AND (erased_at IS NULL OR id IN (
                SELECT t.id FROM contacts t JOIN campaign_contacts e ON e.contact_id = t.id AND e.campaign_id = ${campaign.id}::uuid
                WHERE t.contact_group_id = ${campaign.contactGroupId}::uuid AND t.erased_at IS NOT NULL))
            ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}) AS page
      JOIN contacts c ON c.id = page.id
      LEFT JOIN campaign_contacts cc ON cc.campaign_id = ${campaign.id}::uuid AND cc.contact_id = c.id
      ORDER BY c.created_at, c.id`,
  ]);
  const { attempted, reached, done } = dialed[0]!;
  const gone = erased[0]!;
  const total = contactGroup.total + gone.enrolled;
  const notCallable = uncallable - gone.uncallable + gone.enrolledUncallable;
  // A contact moved to another group after its outcome keeps counting for this campaign, so `done` may
  // exceed what is left of the group.
  const contacts = { total, callable: total - notCallable, attempted, reached, pending: Math.max(total - done, 0) };
  return {
    campaign,
    metrics: { ...callMetrics(callGroups), contacts, successRate: ratio(reached, attempted, 4), appointmentsBooked },
    contactOutcomes,
    totalContactOutcomes: total,
    hasMoreContactOutcomes: page.offset + contactOutcomes.length < total,
    limit: page.limit,
    offset: page.offset,
  };
}

type CallGroup = SentimentCounts & {
  status: CallStatus;
  calls: number;
  durationSeconds: bigint;
  connected: number;
  costCents: bigint;
};

/** Folds the per-status aggregates, one row per status, into the call metrics. */
function callMetrics(groups: CallGroup[]): Omit<CampaignMetrics, 'contacts' | 'successRate' | 'appointmentsBooked'> {
  const calls = Object.fromEntries([['total', 0], ...Object.values(STATUS_FIELD).map((field) => [field, 0])]) as CallCounts;
  const completed = groups.find((group) => group.status === 'completed');
  const sentiment: SentimentCounts = {
    positive: completed?.positive ?? 0,
    neutral: completed?.neutral ?? 0,
    negative: completed?.negative ?? 0,
    unknown: completed?.unknown ?? 0,
  };
  let totalDurationSeconds = 0;
  let connected = 0;
  let totalCostCents = 0n;
  for (const group of groups) {
    calls.total += group.calls;
    calls[STATUS_FIELD[group.status]] += group.calls;
    totalDurationSeconds += Number(group.durationSeconds);
    connected += group.connected;
    totalCostCents += group.costCents;
  }
  return {
    calls,
    sentiment,
    totalDurationSeconds,
    averageDurationSeconds: ratio(totalDurationSeconds, connected, 1),
    totalCostCents,
  };
}

const ratio = (part: number, whole: number, decimals: number) =>
  whole === 0 ? 0 : Math.round((part / whole) * 10 ** decimals) / 10 ** decimals;

/** The campaign's latest completed calls, newest first; `query` carries the relations a caller wants. */
export function listRecentSuccessfulCalls<Q extends CallAttemptQuery = {}>(
  ctx: ServiceContext,
  campaignId: string,
  query: Q = {} as Q,
): Promise<Prisma.CallAttemptGetPayload<Q>[]> {
  return ctx.db.callAttempt.findMany({
    ...query,
    where: { campaignId, userId: ctx.user.id, status: 'completed' },
    orderBy: NEWEST_FIRST,
    take: RECENT_SUCCESSFUL_CALLS,
  }) as Promise<Prisma.CallAttemptGetPayload<Q>[]>;
}
