import { named } from '../../db/prisma-names.js';
import { offsetPageReads, type OffsetPageReads } from '../../db/offset-pages.js';
import { statement, type SqlSession } from '../../db/sql.js';
import type {
  CallOutcome,
  CallStatus,
  ConsentKind,
  ContactStatus,
  DialBlockReason,
  Prisma,
  Sentiment,
} from '../../generated/prisma/client.js';
import type { ServiceContext } from '../context.js';
import { DEEP_OFFSET } from '../offset-pages.js';

// The results store: every statement of call history, reports and appointments, and the only module of
// the domain that talks to the database. Reads of one user's rows are scoped to the caller here; the
// rules (filters, paging, what a change may do) stay in calls.ts, reports.ts and appointments.ts.

/** The relations or columns a caller (a GraphQL selection, a v1 serializer) wants with a call attempt. */
export type CallAttemptQuery = { include?: Prisma.CallAttemptInclude; select?: Prisma.CallAttemptSelect };
export type AppointmentQuery = { include?: Prisma.AppointmentInclude; select?: Prisma.AppointmentSelect };
type CallAttemptPage = Pick<Prisma.CallAttemptFindManyArgs, 'take' | 'skip' | 'cursor'>;
type AppointmentPage = Pick<Prisma.AppointmentFindManyArgs, 'take' | 'skip' | 'cursor'>;

/** Newest first: the order of call history on both surfaces. */
export const NEWEST_FIRST = [{ createdAt: 'desc' }, { id: 'desc' }] satisfies Prisma.CallAttemptOrderByWithRelationInput[];

// ---- Call attempts

/**
 * The caller's call attempts matching `where`, newest first; `query` carries paging and relations. From
 * DEEP_OFFSET on (a filter the continuation does not take: statuses, sentiments), the ids the page skips
 * come from the index alone, and only then its own rows.
 */
export async function findCallAttempts<Q extends CallAttemptQuery & CallAttemptPage>(
  ctx: ServiceContext,
  where: Prisma.CallAttemptWhereInput,
  query: Q,
): Promise<Prisma.CallAttemptGetPayload<Q>[]> {
  const scoped = { ...where, userId: ctx.user.id };
  if ((query.skip ?? 0) < DEEP_OFFSET || query.cursor) {
    return named('results.callAttempts', () => ctx.db.callAttempt.findMany({ ...query, where: scoped, orderBy: NEWEST_FIRST })) as Promise<
      Prisma.CallAttemptGetPayload<Q>[]
    >;
  }
  const { skip, take, ...relations } = query;
  const page = await named('results.callAttemptIds', () =>
    ctx.db.callAttempt.findMany({ where: scoped, orderBy: NEWEST_FIRST, skip, take, select: { id: true } }),
  );
  return findCallAttemptsByIds(
    ctx,
    page.map((row) => row.id),
    relations,
  ) as Promise<Prisma.CallAttemptGetPayload<Q>[]>;
}

/** The caller's call attempts of these ids, newest first. */
export function findCallAttemptsByIds<Q extends CallAttemptQuery>(
  ctx: ServiceContext,
  ids: string[],
  query: Q,
): Promise<Prisma.CallAttemptGetPayload<Q>[]> {
  return named('results.callAttempts', () =>
    ctx.db.callAttempt.findMany({ ...query, where: { id: { in: ids }, userId: ctx.user.id }, orderBy: NEWEST_FIRST }),
  ) as Promise<Prisma.CallAttemptGetPayload<Q>[]>;
}

/** What selects a list of call history whose members never change: the caller, and columns no write changes. */
export interface CallHistoryScope {
  campaignId?: string | undefined;
  contactId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

const historyReads = new Map<string, OffsetPageReads>();

/**
 * The caller's call history under `scope`, as a deep offset's page reads it (src/db/offset-pages.ts):
 * from `(user_id, created_at DESC, id)`, or the campaign's or the contact's `(…, created_at)` index.
 */
export function callHistoryList(ctx: ServiceContext, scope: CallHistoryScope): { reads: OffsetPageReads; values: unknown[] } {
  const conditions = ['user_id = $1::uuid'];
  const values: unknown[] = [ctx.user.id];
  const add = (condition: string, value: unknown) => {
    values.push(value);
    conditions.push(condition.replace('?', `$${values.length}`));
  };
  if (scope.campaignId) add('campaign_id = ?::uuid', scope.campaignId);
  if (scope.contactId) add('contact_id = ?::uuid', scope.contactId);
  if (scope.from) add('created_at >= ?::timestamptz', scope.from);
  if (scope.to) add('created_at < ?::timestamptz', scope.to);
  const shape = [scope.campaignId && 'campaign', scope.contactId && 'contact', scope.from && 'from', scope.to && 'to']
    .filter(Boolean)
    .join('.');
  let reads = historyReads.get(shape);
  if (!reads) {
    reads = offsetPageReads({
      name: `results.callHistory${shape ? `.${shape}` : ''}`,
      table: 'call_attempts',
      where: conditions.join(' AND '),
      params: values.length,
      partitionedByIdTime: true,
    });
    historyReads.set(shape, reads);
  }
  return { reads, values };
}

export function countCallAttempts(ctx: ServiceContext, where: Prisma.CallAttemptWhereInput): Promise<number> {
  return named('results.countCallAttempts', () => ctx.db.callAttempt.count({ where: { ...where, userId: ctx.user.id } }));
}

/** One of the caller's call attempts, or null. */
export function findCallAttempt<Q extends CallAttemptQuery>(
  ctx: ServiceContext,
  id: string,
  query: Q,
): Promise<Prisma.CallAttemptGetPayload<Q> | null> {
  return named('results.callAttempt', () =>
    ctx.db.callAttempt.findFirst({ ...query, where: { id, userId: ctx.user.id } }),
  ) as Promise<Prisma.CallAttemptGetPayload<Q> | null>;
}

// A named statement, so its plan is cached: planned anew each time (Prisma's statements are unnamed),
// choosing among the indexes of every month of call_attempts cost more than the read itself. The owner
// is checked once, on the campaign: as a condition on the calls (`user_id = $2`) it made the cached plan
// expect one row a month and read every completed call of a large campaign to sort them (3x10^6 at 10^7
// contacts); without it, the plan merges the months' (campaign_id, status, created_at) ranges newest first.
const RECENT_COMPLETED_CALL_IDS = statement<{ id: string }>(
  'results.recentCompletedCallIds',
  `SELECT id FROM call_attempts
   WHERE campaign_id = $1::uuid AND status = 'completed'
     AND EXISTS (SELECT 1 FROM campaigns k WHERE k.id = $1::uuid AND k.user_id = $2::uuid)
   ORDER BY created_at DESC, id DESC LIMIT $3`,
);

/** The campaign's `take` latest completed calls, newest first (read from the report's covering index). */
export async function findRecentCompletedCalls<Q extends CallAttemptQuery>(
  ctx: ServiceContext,
  campaignId: string,
  take: number,
  query: Q,
): Promise<Prisma.CallAttemptGetPayload<Q>[]> {
  const rows = await ctx.sql.run(RECENT_COMPLETED_CALL_IDS, [campaignId, ctx.user.id, take]);
  // By id, each row's month is known when the statement is planned: only those partitions are read.
  return findCallAttemptsByIds(
    ctx,
    rows.map((row) => row.id),
    query,
  );
}

// ---- Campaign reports: aggregates over one campaign the caller owns (its ownership checked before)

// ---- Call records (records.ts)

/** One call attempt as the five-year record keeps it. */
export interface CallRecord {
  attemptId: string;
  campaignId: string;
  contactId: string;
  attemptNumber: number;
  fromNumber: string | null;
  toNumber: string | null;
  toNumberHash: string | null;
  placedAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  durationSeconds: number | null;
  status: CallStatus;
  outcome: CallOutcome | null;
  disconnectReason: string | null;
  costCents: string;
  consentsRelied: { id: string; kind: string }[] | null;
  rulesVersion: string | null;
}

// Keyset pages in (created_at, id) order, on the index (user_id, created_at, id). `$4`/`$5`: a number and
// its pseudonym, to match its calls before and after the person's erasure.
const CALL_RECORDS = statement<CallRecord>(
  'results.callRecords',
  `SELECT id AS "attemptId", campaign_id AS "campaignId", contact_id AS "contactId", attempt_number AS "attemptNumber",
          from_number AS "fromNumber", to_number AS "toNumber", to_number_hash AS "toNumberHash", created_at AS "placedAt",
          started_at AS "startedAt", ended_at AS "endedAt", duration_seconds AS "durationSeconds", status, outcome,
          disconnect_reason AS "disconnectReason", cost_cents::text AS "costCents", consents_relied AS "consentsRelied",
          rules_version AS "rulesVersion"
   FROM call_attempts
   WHERE user_id = $1::uuid AND created_at >= $2 AND created_at < $3
     AND ($4::text IS NULL OR to_number = $4 OR to_number_hash = $5)
     AND ($6::timestamptz IS NULL OR (created_at, id) > ($6, $7::uuid))
   ORDER BY created_at, id
   LIMIT $8`,
);

const INSERT_SIGNING_KEY = statement(
  'results.insertSigningKey',
  'INSERT INTO signing_keys (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
);
const SIGNING_KEY = statement<{ secret: Uint8Array }>('results.signingKey', 'SELECT secret FROM signing_keys WHERE name = $1');

/** The key named `name`, made from `candidate` when there is none yet; every instance reads the same. */
export async function signingKey(session: SqlSession, name: string, candidate: Buffer): Promise<Buffer> {
  await session.run(INSERT_SIGNING_KEY, [name, candidate]);
  const [row] = await session.run(SIGNING_KEY, [name]);
  return Buffer.from(row!.secret);
}

/** A page of the user's call records placed in [from, to), after `after`. */
export function callRecords(
  sql: SqlSession,
  userId: string,
  range: { from: Date; to: Date },
  number: { plain: string; hash: string } | null,
  after: { createdAt: Date; id: string } | null,
  limit: number,
): Promise<CallRecord[]> {
  return sql.run(CALL_RECORDS, [
    userId,
    range.from,
    range.to,
    number?.plain ?? null,
    number?.hash ?? null,
    after?.createdAt ?? null,
    after?.id ?? null,
    limit,
  ]);
}

export interface ReportCampaign {
  id: string;
  contactGroupId: string;
}

/** Contacts of the campaign's group that may not be called, counted in the (group, status) index. */
export function countUncallableContacts(ctx: ServiceContext, campaign: ReportCampaign): Promise<number> {
  return named('results.report.uncallableContacts', () =>
    ctx.db.contact.count({ where: { groupId: campaign.contactGroupId, status: { in: ['invalid', 'do_not_call'] } } }),
  );
}

export interface ErasedContactCounts {
  /** Erased contacts of the group that are not active. */
  uncallable: number;
  /** Erased contacts of the group this campaign enrolled. */
  enrolled: number;
  enrolledUncallable: number;
}

// Erased contacts are out of the group's total; those this campaign enrolled are still part of its
// report, as anonymous rows. A partial index holds just the erased ones.
const ERASED_CONTACTS = statement<ErasedContactCounts>(
  'results.report.erasedContacts',
  `SELECT count(*) FILTER (WHERE t.status <> 'active')::int AS uncallable,
          count(cc.id)::int AS enrolled,
          count(cc.id) FILTER (WHERE t.status <> 'active')::int AS "enrolledUncallable"
   FROM contacts t LEFT JOIN campaign_contacts cc ON cc.campaign_id = $1::uuid AND cc.contact_id = t.id
   WHERE t.contact_group_id = $2::uuid AND t.erased_at IS NOT NULL`,
);

export async function countErasedContacts(ctx: ServiceContext, campaign: ReportCampaign): Promise<ErasedContactCounts> {
  const [row] = await ctx.sql.run(ERASED_CONTACTS, [campaign.id, campaign.contactGroupId]);
  return row!;
}

export interface DialStateCounts {
  attempted: number;
  reached: number;
  done: number;
}

// Read from the totals the triggers keep (see the report_totals migration): a few rows, whatever the
// campaign's size.
const DIAL_STATES = statement<DialStateCounts>(
  'results.report.dialStates',
  `SELECT coalesce(sum(attempted), 0)::int AS attempted, coalesce(sum(reached), 0)::int AS reached, coalesce(sum(done), 0)::int AS done
   FROM campaign_dial_totals WHERE campaign_id = $1::uuid`,
);

export async function countDialStates(ctx: ServiceContext, campaign: ReportCampaign): Promise<DialStateCounts> {
  const [row] = await ctx.sql.run(DIAL_STATES, [campaign.id]);
  return row!;
}

/** The calls of one status: counts and sums, sentiments counted alongside. */
export type CallGroup = Record<Sentiment, number> & {
  status: CallStatus;
  calls: number;
  durationSeconds: bigint;
  connected: number;
  costCents: bigint;
};

const CALL_GROUPS = statement<CallGroup>(
  'results.report.callGroups',
  `SELECT status::text AS status, sum(calls)::int AS calls, sum(duration_seconds)::bigint AS "durationSeconds",
          sum(connected)::int AS connected, sum(cost_cents)::bigint AS "costCents", sum(positive)::int AS positive,
          sum(neutral)::int AS neutral, sum(negative)::int AS negative, sum(unknown)::int AS unknown
   FROM campaign_call_totals WHERE campaign_id = $1::uuid GROUP BY status`,
);

/** One row per call status the campaign's calls have had (from the totals, like the dial states). */
export function sumCallsByStatus(ctx: ServiceContext, campaign: ReportCampaign): Promise<CallGroup[]> {
  return ctx.sql.run(CALL_GROUPS, [campaign.id]);
}

const OUTCOME_GROUPS = statement<{ outcome: CallOutcome; calls: number }>(
  'results.report.outcomeGroups',
  `SELECT outcome::text AS outcome, sum(calls)::int AS calls
   FROM campaign_call_totals WHERE campaign_id = $1::uuid AND outcome IS NOT NULL GROUP BY outcome`,
);

/** How many of the campaign's finished calls met each outcome (from the totals). */
export function countCallsByOutcome(ctx: ServiceContext, campaign: ReportCampaign): Promise<{ outcome: CallOutcome; calls: number }[]> {
  return ctx.sql.run(OUTCOME_GROUPS, [campaign.id]);
}

// The triggers append a row of differences per statement; folding a campaign's rows into one per status
// and outcome keeps the reads above at a few rows. Rows appended meanwhile are not in the statement's snapshot and
// stay; two folds at once do not count a row twice (the second finds the first's deleted rows gone).
const FOLD_CALL_TOTALS = statement(
  'results.foldCallTotals',
  `WITH folded AS (
     DELETE FROM campaign_call_totals WHERE (campaign_id, status, coalesce(outcome::text, '')) IN (
       SELECT campaign_id, status, coalesce(outcome::text, '') FROM campaign_call_totals GROUP BY campaign_id, status, outcome HAVING count(*) > 1)
     RETURNING *)
   INSERT INTO campaign_call_totals (campaign_id, status, outcome, calls, duration_seconds, connected, cost_cents, positive, neutral, negative, unknown)
   SELECT campaign_id, status, outcome, sum(calls), sum(duration_seconds), sum(connected), sum(cost_cents), sum(positive), sum(neutral),
          sum(negative), sum(unknown)
   FROM folded GROUP BY campaign_id, status, outcome`,
);

const FOLD_DIAL_TOTALS = statement(
  'results.foldDialTotals',
  `WITH folded AS (
     DELETE FROM campaign_dial_totals WHERE campaign_id IN (
       SELECT campaign_id FROM campaign_dial_totals GROUP BY campaign_id HAVING count(*) > 1)
     RETURNING *)
   INSERT INTO campaign_dial_totals (campaign_id, attempted, reached, done)
   SELECT campaign_id, sum(attempted), sum(reached), sum(done) FROM folded GROUP BY campaign_id`,
);

const FOLD_REPORT_COUNTS = statement(
  'results.foldReportCounts',
  `WITH folded AS (
     DELETE FROM campaign_report_counts WHERE (campaign_id, coalesce(variant_id::text, ''), coalesce(reason::text, '')) IN (
       SELECT campaign_id, coalesce(variant_id::text, ''), coalesce(reason::text, '') FROM campaign_report_counts
       GROUP BY campaign_id, variant_id, reason HAVING count(*) > 1)
     RETURNING *)
   INSERT INTO campaign_report_counts (campaign_id, variant_id, reason, appointments, blocks, callbacks_requested, callbacks_pending,
                                       contacts, attempted, reached, calls, connected, duration_seconds, cost_cents)
   SELECT campaign_id, variant_id, reason, sum(appointments), sum(blocks), sum(callbacks_requested), sum(callbacks_pending), sum(contacts),
          sum(attempted), sum(reached), sum(calls), sum(connected), sum(duration_seconds), sum(cost_cents)
   FROM folded GROUP BY campaign_id, variant_id, reason`,
);

/** Folds every campaign's total rows into one (per status, for calls; per variant or reason, for the counts). */
export async function foldReportTotals(session: SqlSession): Promise<void> {
  await session.run(FOLD_CALL_TOTALS);
  await session.run(FOLD_DIAL_TOTALS);
  await session.run(FOLD_REPORT_COUNTS);
}

// The rest of the report's figures, from the counts the triggers keep (report_counts migration).
const REPORT_COUNTS = statement<{ appointments: number; requested: number; pending: number }>(
  'results.report.counts',
  `SELECT coalesce(sum(appointments), 0)::int AS appointments, coalesce(sum(callbacks_requested), 0)::int AS requested,
          coalesce(sum(callbacks_pending), 0)::int AS pending
   FROM campaign_report_counts WHERE campaign_id = $1::uuid`,
);

/** Appointments booked from the campaign's calls (whatever their status since), callbacks asked for and still to make. */
export async function countAppointmentsAndCallbacks(
  ctx: ServiceContext,
  campaign: ReportCampaign,
): Promise<{ appointments: number; callbacks: { requested: number; pending: number } }> {
  const { appointments, requested, pending } = (await ctx.sql.run(REPORT_COUNTS, [campaign.id]))[0]!;
  return { appointments, callbacks: { requested, pending } };
}

const BLOCKS = statement<{ reason: DialBlockReason; count: number }>(
  'results.report.blocks',
  `SELECT reason::text AS reason, sum(blocks)::int AS count
   FROM campaign_report_counts WHERE campaign_id = $1::uuid AND reason IS NOT NULL GROUP BY reason HAVING sum(blocks) <> 0`,
);

/** The calls compliance rules stopped, by reason (from the counts). */
export function countBlocksByReason(ctx: ServiceContext, campaign: ReportCampaign): Promise<{ reason: DialBlockReason; count: number }[]> {
  return ctx.sql.run(BLOCKS, [campaign.id]);
}

// Each of the campaign's calls placed at or after a revocation of its number's consent (not given again
// before the call), or after its number went on the do-not-call list by the person's or the customer's
// hand (registry copies are not revocations): none, when every revocation took effect at once.
const callsAfterRevocation = statement<{ placedAt: Date; kind: ConsentKind | null; at: Date }>(
  'results.report.calls_after_revocation',
  `SELECT a.created_at AS "placedAt", r.kind, r.at
   FROM call_attempts a
   JOIN LATERAL (
     SELECT g.kind::text AS kind, g.revoked_at AS at
     FROM contacts o JOIN contact_consents g ON g.contact_id = o.id
     WHERE o.user_id = a.user_id AND o.phone_number = a.to_number AND g.revoked_at <= a.created_at
       AND NOT EXISTS (SELECT 1 FROM contacts p JOIN contact_consents h ON h.contact_id = p.id
                       WHERE p.user_id = a.user_id AND p.phone_number = a.to_number AND h.kind = g.kind
                         AND h.obtained_at > g.revoked_at AND h.obtained_at <= a.created_at AND h.revoked_at IS NULL)
     UNION ALL
     SELECT NULL, d.created_at FROM do_not_call_entries d
     WHERE d.user_id = a.user_id AND d.phone_number = a.to_number AND d.created_at <= a.created_at AND d.source <> 'registry'
   ) r ON true
   WHERE a.campaign_id = $1::uuid AND a.user_id = $2::uuid`,
);

/** The campaign's calls placed after a revocation of their number's consent or a do-not-call request (kind null), with it. */
export function callsAfterRevocations(ctx: ServiceContext, campaign: { id: string }) {
  return ctx.sql.run(callsAfterRevocation, [campaign.id, ctx.user.id]);
}

export interface ContactOutcomeRow {
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

const OUTCOME_COLUMNS = `c.id AS "contactId", c.name AS "contactName", c.phone_number AS "phoneNumber", c.status::text AS "contactStatus",
  coalesce(cc.attempts, 0) AS attempts, cc.last_status AS "lastStatus", cc.last_attempt_at AS "lastCallAt",
  CASE WHEN cc.state = 'done' AND cc.outcome IS NOT NULL THEN cc.outcome ELSE 'pending' END AS outcome`;
// The group's contacts a report lists: erased ones only if this campaign enrolled them (looked up once, in a hashed set).
const LISTED = (t: string) => `(${t}.erased_at IS NULL OR ${t}.id IN (
  SELECT t.id FROM contacts t JOIN campaign_contacts e ON e.contact_id = t.id AND e.campaign_id = $2::uuid
  WHERE t.contact_group_id = $1::uuid AND t.erased_at IS NOT NULL))`;

// The page is cut from the index alone (erased_at is in it), so a deep offset skips index entries, not
// rows and joins.
const CONTACT_OUTCOMES = statement<ContactOutcomeRow>(
  'results.report.contactOutcomes',
  `SELECT ${OUTCOME_COLUMNS}
   FROM (SELECT id FROM contacts WHERE contact_group_id = $1::uuid AND ${LISTED('contacts')}
         ORDER BY created_at, id LIMIT $3 OFFSET $4) AS page
   JOIN contacts c ON c.id = page.id
   LEFT JOIN campaign_contacts cc ON cc.campaign_id = $2::uuid AND cc.contact_id = c.id
   ORDER BY c.created_at, c.id`,
);

// An export's batches each go on from the previous one's last contact: nothing is skipped, so the rows are
// read as the index finds them (a page of ids joined back to the table was planned as a scan of all contacts).
const CONTACT_OUTCOMES_AFTER = statement<ContactOutcomeRow & { addedAt: Date }>(
  'results.report.contactOutcomesAfter',
  `SELECT ${OUTCOME_COLUMNS}, c.created_at AS "addedAt"
   FROM contacts c LEFT JOIN campaign_contacts cc ON cc.campaign_id = $2::uuid AND cc.contact_id = c.id
   WHERE c.contact_group_id = $1::uuid AND (c.created_at, c.id) > ($4::timestamptz, $5::uuid) AND ${LISTED('c')}
   ORDER BY c.created_at, c.id LIMIT $3`,
);

/** One page of the group's contacts (and the erased ones the campaign enrolled) with their outcomes, in the order they were added. */
export function findContactOutcomes(
  ctx: ServiceContext,
  campaign: ReportCampaign,
  page: { limit: number; offset: number },
): Promise<ContactOutcomeRow[]> {
  return ctx.sql.run(CONTACT_OUTCOMES, [campaign.contactGroupId, campaign.id, page.limit, page.offset]);
}

/** The next `limit` contact outcomes after the contact added at `after` (from the first without it), with the key to go on from. */
export function findContactOutcomesAfter(
  ctx: ServiceContext,
  campaign: ReportCampaign,
  limit: number,
  after: { addedAt: Date; contactId: string } | null,
): Promise<(ContactOutcomeRow & { addedAt: Date })[]> {
  const key = after ? [after.addedAt, after.contactId] : ['-infinity', '00000000-0000-0000-0000-000000000000'];
  return ctx.sql.run(CONTACT_OUTCOMES_AFTER, [campaign.contactGroupId, campaign.id, limit, ...key]);
}

// ---- Appointments

/** The caller's appointments matching `where`, in `orderBy`; `query` carries paging and relations. */
export function findAppointments<Q extends AppointmentQuery & AppointmentPage>(
  ctx: ServiceContext,
  where: Prisma.AppointmentWhereInput,
  orderBy: Prisma.AppointmentOrderByWithRelationInput[],
  query: Q,
): Promise<Prisma.AppointmentGetPayload<Q>[]> {
  return named('results.appointments', () =>
    ctx.db.appointment.findMany({ ...query, where: { ...where, userId: ctx.user.id }, orderBy }),
  ) as Promise<Prisma.AppointmentGetPayload<Q>[]>;
}

/** The caller's appointments of these ids, newest first. */
export function findAppointmentsByIds<Q extends AppointmentQuery>(
  ctx: ServiceContext,
  ids: string[],
  query: Q,
): Promise<Prisma.AppointmentGetPayload<Q>[]> {
  return named('results.appointments', () =>
    ctx.db.appointment.findMany({
      ...query,
      where: { id: { in: ids }, userId: ctx.user.id },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    }),
  ) as Promise<Prisma.AppointmentGetPayload<Q>[]>;
}

/** All of the caller's appointments at a deep offset, newest first, from `(user_id, created_at)` (src/db/offset-pages.ts). */
export const appointmentPages = offsetPageReads({
  name: 'results.appointments',
  table: 'appointments',
  where: 'user_id = $1::uuid',
  params: 1,
});

export function countAppointments(ctx: ServiceContext, where: Prisma.AppointmentWhereInput): Promise<number> {
  return named('results.countAppointments', () => ctx.db.appointment.count({ where: { ...where, userId: ctx.user.id } }));
}

/** One of the caller's appointments, or null. */
export function findAppointment<Q extends AppointmentQuery>(
  ctx: ServiceContext,
  id: string,
  query: Q,
): Promise<Prisma.AppointmentGetPayload<Q> | null> {
  return named('results.appointment', () =>
    ctx.db.appointment.findFirst({ ...query, where: { id, userId: ctx.user.id } }),
  ) as Promise<Prisma.AppointmentGetPayload<Q> | null>;
}

export interface AppointmentChange {
  status?: string | undefined;
  scheduled_at?: Date | undefined;
}

const LOCK_APPOINTMENT = statement<{ status: string }>(
  'results.lockAppointment',
  'SELECT status FROM appointments WHERE id = $1::uuid AND user_id = $2::uuid FOR UPDATE',
);

/** Locks one of the caller's appointments until the transaction ends; its status, or undefined. */
export async function lockAppointment(tx: SqlSession, userId: string, id: string): Promise<{ status: string } | undefined> {
  return (await tx.run(LOCK_APPOINTMENT, [id, userId]))[0];
}

/** An appointment as it is after a change. */
export interface ChangedAppointment {
  id: string;
  contactId: string;
  campaignId: string | null;
  callAttemptId: string | null;
  status: string;
  scheduledAt: Date;
  timezone: string;
}

// Absent fields keep their value; `updated_at` is set as Prisma's @updatedAt sets it, from the wall clock.
const UPDATE_APPOINTMENT = statement<ChangedAppointment>(
  'results.updateAppointment',
  `UPDATE appointments
   SET status = coalesce($2::varchar, status), scheduled_at = coalesce($3::timestamptz, scheduled_at), updated_at = $4::timestamptz
   WHERE id = $1::uuid
   RETURNING id, contact_id AS "contactId", campaign_id AS "campaignId", call_attempt_id AS "callAttemptId", status, scheduled_at AS "scheduledAt", timezone`,
);

export async function updateAppointmentRow(tx: SqlSession, id: string, change: AppointmentChange): Promise<ChangedAppointment> {
  return (await tx.run(UPDATE_APPOINTMENT, [id, change.status ?? null, change.scheduled_at ?? null, new Date()]))[0]!;
}

// ---- Appointments booked on a calendar during calls

/** The statuses of an appointment that holds its place in a slot. */
const HOLDING = `status IN ('scheduled', 'confirmed')`;

const LOCK_SLOT = statement('results.lockSlot', 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))');

/** Takes the slot's lock until the transaction ends: the bookings of one slot are counted and made one at a time. */
export async function lockSlot(tx: SqlSession, calendar: string, start: Date): Promise<void> {
  await tx.run(LOCK_SLOT, [`booking:${calendar}:${start.toISOString()}`]);
}

const SLOT_PLACES = statement<{ at: Date; taken: number }>(
  'results.slotPlaces',
  `SELECT scheduled_at AS at, count(*)::int AS taken FROM appointments
   WHERE user_id = $1::uuid AND scheduled_at >= $3::timestamptz AND scheduled_at <= $4::timestamptz
     AND appointment_data->>'calendar' = $2 AND ${HOLDING}
   GROUP BY scheduled_at`,
);

/** Places taken in the calendar's slots starting in [from, to], by the slot's start (epoch ms). */
export async function slotPlaces(
  session: SqlSession,
  userId: string,
  calendar: string,
  from: Date,
  to: Date,
): Promise<Map<number, number>> {
  const rows = await session.run(SLOT_PLACES, [userId, calendar, from, to]);
  return new Map(rows.map((r) => [new Date(r.at).getTime(), r.taken]));
}

const APPOINTMENT_COLUMNS = `id, contact_id AS "contactId", campaign_id AS "campaignId", call_attempt_id AS "callAttemptId", status,
   scheduled_at AS "scheduledAt", timezone`;

const INSERT_APPOINTMENT = statement<ChangedAppointment>(
  'results.insertAppointment',
  `INSERT INTO appointments (id, user_id, contact_id, campaign_id, call_attempt_id, status, scheduled_at, timezone, contact_snapshot,
                             appointment_data, created_at, updated_at)
   VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5::uuid, 'scheduled', $6::timestamptz, $7, $8::jsonb, $9::jsonb, $10::timestamptz, $10::timestamptz)
   RETURNING ${APPOINTMENT_COLUMNS}`,
);

export interface NewCallAppointment {
  id: string;
  userId: string;
  contactId: string;
  campaignId: string;
  callAttemptId: string;
  scheduledAt: Date;
  timezone: string;
  contactSnapshot: Record<string, string>;
  appointmentData: Record<string, unknown>;
}

export async function insertAppointment(tx: SqlSession, a: NewCallAppointment, now: Date): Promise<ChangedAppointment> {
  const row = [a.id, a.userId, a.contactId, a.campaignId, a.callAttemptId, a.scheduledAt, a.timezone];
  return (await tx.run(INSERT_APPOINTMENT, [...row, JSON.stringify(a.contactSnapshot), JSON.stringify(a.appointmentData), now]))[0]!;
}

const CALL_BOOKING = statement<ChangedAppointment>(
  'results.callBooking',
  `SELECT ${APPOINTMENT_COLUMNS} FROM appointments
   WHERE call_attempt_id = $1::uuid AND appointment_data->>'source' = 'in_call' AND ${HOLDING}
   ORDER BY created_at LIMIT 1`,
);

/** The appointment a call booked while it was under way and that still holds its place, if any. */
export async function callBooking(session: SqlSession, callAttemptId: string): Promise<ChangedAppointment | undefined> {
  return (await session.run(CALL_BOOKING, [callAttemptId]))[0];
}

/** A variant's figures: its contacts, those called and reached, its calls' appointments, talk time and cost. */
export interface VariantRow {
  id: string;
  name: string;
  agentId: string;
  weight: number;
  contacts: number;
  attempted: number;
  reached: number;
  appointments: number;
  calls: number;
  connected: number;
  durationSeconds: bigint;
  costCents: bigint;
}

const VARIANTS = statement<VariantRow>(
  'results.report.variants',
  `SELECT v.id, v.name, v.agent_id AS "agentId", v.weight, coalesce(sum(n.contacts), 0)::int AS contacts,
          coalesce(sum(n.attempted), 0)::int AS attempted, coalesce(sum(n.reached), 0)::int AS reached,
          coalesce(sum(n.appointments), 0)::int AS appointments, coalesce(sum(n.calls), 0)::int AS calls,
          coalesce(sum(n.connected), 0)::int AS connected, coalesce(sum(n.duration_seconds), 0)::bigint AS "durationSeconds",
          coalesce(sum(n.cost_cents), 0)::bigint AS "costCents"
   FROM campaign_variants v LEFT JOIN campaign_report_counts n ON n.campaign_id = v.campaign_id AND n.variant_id = v.id
   WHERE v.campaign_id = $1::uuid GROUP BY v.id ORDER BY v.position`,
);

/** The campaign's A/B variants with their figures, in their order (none without variants). */
export function variantFigures(ctx: ServiceContext, campaign: ReportCampaign): Promise<VariantRow[]> {
  return ctx.sql.run(VARIANTS, [campaign.id]);
}

const forgetCallsStatement = statement(
  'results.forgetCalls',
  `UPDATE appointments SET call_attempt_id = NULL WHERE call_attempt_id >= $1::uuid AND call_attempt_id < $2::uuid`,
);

/** Lets go of the call attempts with ids in [from, to) (a month's, dropped past its retention): appointments stay, unlinked. */
export async function forgetCalls(sql: SqlSession, from: string, to: string): Promise<void> {
  await sql.run(forgetCallsStatement, [from, to]);
}
