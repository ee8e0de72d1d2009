import { statement, type SqlSession } from '../../../db/sql.js';
import type { NewCallAppointment } from '../../results/store.js';
import { IN_FLIGHT_SQL } from '../../call-outcomes.js';

// The statements of a batch of results: the marks that free slots early, the calls placed, the
// attempts finished and their contacts' next steps, and the campaign's verdict after them.

const markEndedStatement = statement(
  'dialer.mark_ended',
  'INSERT INTO ended_calls (attempt_id, ended_at) SELECT * FROM unnest($1::uuid[], $2::timestamptz[]) ON CONFLICT DO NOTHING',
);

/** A call this worker heard end, and when. */
export interface EndedMark {
  id: string;
  at: Date;
}

/** Tells every worker that these calls ended, and when, before their results are written. */
export async function markEnded(sql: SqlSession, marks: EndedMark[]): Promise<void> {
  await sql.run(markEndedStatement, [marks.map((m) => m.id), marks.map((m) => m.at)]);
}

/** A call the provider accepted, whose id and start are written with the next batch of results. */
export interface PlacedCall {
  id: string;
  campaignId: string;
  providerCallId: string;
  at: Date;
}

// Rows are locked in id order, as result batches lock them, so the two cannot deadlock.
const ringingStatement = statement(
  'dialer.ringing',
  `UPDATE call_attempts a SET provider_call_id = r.provider_call_id, started_at = coalesce(a.started_at, r.started_at), updated_at = now(),
     status = CASE WHEN a.status = 'queued' THEN 'ringing'::"CallStatus" ELSE a.status END
   FROM (SELECT id FROM call_attempts WHERE id = ANY($1::uuid[]) AND status IN ${IN_FLIGHT_SQL}
         ORDER BY id FOR NO KEY UPDATE) l,
        unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS r(id, provider_call_id, started_at)
   WHERE a.id = l.id AND a.id = r.id`,
);

/** Calls under way: their provider's call id, their start, and `ringing` unless a result came first. */
export async function markRinging(sql: SqlSession, calls: PlacedCall[]): Promise<void> {
  await sql.run(ringingStatement, [calls.map((c) => c.id), calls.map((c) => c.providerCallId), calls.map((c) => c.at)]);
}

/** A finished call's attempt, locked, with what deciding its contact's next step needs. */
export interface FinishedAttempt {
  id: string;
  userId: string;
  campaignId: string;
  contactId: string;
  /** The campaign_contacts row. */
  enrolmentId: string;
  attempts: number;
  firstAttemptAt: Date;
  contactTimezone: string | null;
  phoneNumber: string;
  contactData: unknown;
  campaignTimezone: string;
  callingHours: unknown;
  activeDays: unknown;
  scheduleConfig: unknown;
  maxRetryDays: number;
  /** When each attempt of this contact in this campaign was made, this one included. */
  attemptTimes: Date[];
  /** The outcomes of the contact's earlier attempts in this campaign (null for one not finished). */
  earlierOutcomes: (string | null)[];
  /** A callback the callee asked for during the call (the schedule_callback tool). */
  callbackAt: Date | null;
  /** When the callee asked during the call not to be called again (the add_to_do_not_call tool). */
  optedOutAt: Date | null;
}

// The attempts still unfinished, locked in id order: the order every dialer transaction takes them in.
const lockFinishedStatement = statement<FinishedAttempt>(
  'dialer.lock_finished',
  `SELECT a.id, a.user_id AS "userId", a.campaign_id AS "campaignId", a.contact_id AS "contactId", cc.id AS "enrolmentId", cc.attempts,
          cc.first_attempt_at AS "firstAttemptAt", c.timezone AS "contactTimezone", c.phone_number AS "phoneNumber", c.data AS "contactData",
          k.timezone AS "campaignTimezone", k.calling_hours AS "callingHours", k.active_days AS "activeDays",
          k.schedule_config AS "scheduleConfig", k.max_retry_days AS "maxRetryDays",
          p."attemptTimes", p."earlierOutcomes", a.callback_at AS "callbackAt", a.opted_out_at AS "optedOutAt"
   FROM call_attempts a
   JOIN campaign_contacts cc ON cc.campaign_id = a.campaign_id AND cc.contact_id = a.contact_id
   JOIN contacts c ON c.id = a.contact_id
   JOIN campaigns k ON k.id = a.campaign_id
   CROSS JOIN LATERAL (SELECT array_agg(p.created_at) AS "attemptTimes",
                              coalesce(array_agg(p.outcome::text) FILTER (WHERE p.id <> a.id), '{}') AS "earlierOutcomes"
                       FROM call_attempts p WHERE p.campaign_id = a.campaign_id AND p.contact_id = a.contact_id) p
   WHERE a.id = ANY($1::uuid[]) AND a.status IN ${IN_FLIGHT_SQL}
   ORDER BY a.id
   FOR NO KEY UPDATE OF a`,
);

/** Of these attempts, those still unfinished, locked in id order. */
export function lockFinished(tx: SqlSession, attemptIds: string[]): Promise<FinishedAttempt[]> {
  return tx.run(lockFinishedStatement, [attemptIds]);
}

/** What an attempt's row says once its call ended. */
export interface AttemptEnd {
  id: string;
  status: string;
  outcome: string;
  callbackAt: Date | null;
  durationSeconds: number;
  summary: string | null;
  sentiment: string | null;
  disconnectReason: string | null;
  recordingUrl: string | null;
  transcript: string | null;
  analysis: unknown;
  costCents: bigint;
  providerCallId: string | null;
  startedAt: Date | null;
  endedAt: Date;
}

/** A contact's next step after its call: due again at `nextAttemptAt`, or done with an outcome. */
export interface ContactStep {
  /** The campaign_contacts row. */
  id: string;
  state: 'pending' | 'done';
  outcome: string | null;
  nextAttemptAt: Date | null;
  readyAt?: Date;
  lastStatus: string;
  /** A callback the callee asked for, which this step is due for. */
  callbackAt?: Date;
}

/** An appointment a call booked: the one shape the results store writes. */
export type NewAppointment = NewCallAppointment;

// A transcript kept while the call went on (the built-in agent's) stays when the end brings none.
const writeResultsStatement = statement(
  'dialer.write_results',
  `WITH attempts AS (
     UPDATE call_attempts SET status = r.status::"CallStatus", outcome = r.outcome::"CallOutcome", callback_at = r.callback_at, duration_seconds = r.duration_seconds, summary = r.summary,
       sentiment = coalesce(r.sentiment, 'unknown')::"Sentiment", disconnect_reason = r.disconnect_reason,
       recording_url = r.recording_url, transcript = coalesce(r.transcript, call_attempts.transcript), analysis = coalesce(r.analysis, '{}'::jsonb),
       cost_cents = r.cost_cents, ended_at = r.ended_at, lease_expires_at = NULL, pending_result = NULL, updated_at = $4,
       provider_call_id = coalesce(call_attempts.provider_call_id, r.provider_call_id), started_at = coalesce(call_attempts.started_at, r.started_at)
     FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, status text, outcome text, callback_at timestamptz, duration_seconds int, summary text, sentiment text, disconnect_reason text,
                                            recording_url text, transcript text, analysis jsonb, cost_cents bigint,
                                            provider_call_id text, started_at timestamptz, ended_at timestamptz)
     WHERE call_attempts.id = r.id
   ), appointments AS (
     INSERT INTO appointments (id, user_id, contact_id, campaign_id, call_attempt_id, status, scheduled_at, timezone, contact_snapshot, appointment_data, created_at, updated_at)
     SELECT r.id, r.user_id, r.contact_id, r.campaign_id, r.call_attempt_id, 'scheduled', r.scheduled_at, r.timezone, r.contact_snapshot, r.appointment_data, $4, $4
     FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, user_id uuid, contact_id uuid, campaign_id uuid, call_attempt_id uuid, scheduled_at timestamptz,
                                            timezone text, contact_snapshot jsonb, appointment_data jsonb)
   )
   UPDATE campaign_contacts SET state = r.state::"DialState", outcome = r.outcome, next_attempt_at = r.next_attempt_at,
     ready_at = r.ready_at, last_status = r.last_status, callback_at = r.callback_at, lease_expires_at = NULL, updated_at = $4
   FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, state text, outcome text, next_attempt_at timestamptz, ready_at timestamptz, last_status text,
                                          callback_at timestamptz)
   WHERE campaign_contacts.id = r.id`,
);

/** Writes the attempts' ends, their contacts' next steps and the appointments booked, in one statement. */
export async function writeResults(
  tx: SqlSession,
  attempts: AttemptEnd[],
  contacts: ContactStep[],
  appointments: NewAppointment[],
  now: Date,
): Promise<void> {
  await tx.run(writeResultsStatement, [
    JSON.stringify(
      attempts.map((a) => ({
        id: a.id,
        status: a.status,
        outcome: a.outcome,
        callback_at: a.callbackAt,
        duration_seconds: a.durationSeconds,
        summary: a.summary,
        sentiment: a.sentiment,
        disconnect_reason: a.disconnectReason,
        recording_url: a.recordingUrl,
        transcript: a.transcript,
        analysis: a.analysis,
        cost_cents: String(a.costCents),
        provider_call_id: a.providerCallId,
        started_at: a.startedAt,
        ended_at: a.endedAt,
      })),
    ),
    JSON.stringify(
      contacts.map((c) => ({
        id: c.id,
        state: c.state,
        outcome: c.outcome,
        next_attempt_at: c.nextAttemptAt,
        ready_at: c.readyAt,
        last_status: c.lastStatus,
        callback_at: c.callbackAt ?? null,
      })),
    ),
    JSON.stringify(
      appointments.map((a) => ({
        id: a.id,
        user_id: a.userId,
        contact_id: a.contactId,
        campaign_id: a.campaignId,
        call_attempt_id: a.callAttemptId,
        scheduled_at: a.scheduledAt,
        timezone: a.timezone,
        contact_snapshot: a.contactSnapshot,
        appointment_data: a.appointmentData,
      })),
    ),
    now,
  ]);
}

/** An appointment a call booked while it was under way (an in-call tool), which its analysis confirms or annotates. */
export interface CallBooking {
  id: string;
  callAttemptId: string;
  status: string;
  scheduledAt: Date;
}

const callBookingsStatement = statement<CallBooking>(
  'dialer.call_bookings',
  `SELECT DISTINCT ON (call_attempt_id) id, call_attempt_id AS "callAttemptId", status, scheduled_at AS "scheduledAt"
   FROM appointments
   WHERE call_attempt_id = ANY($1::uuid[]) AND appointment_data->>'source' = 'in_call' AND status IN ('scheduled', 'confirmed')
   ORDER BY call_attempt_id, created_at`,
);

/** The appointments these calls booked while under way, by attempt. */
export async function callBookings(tx: SqlSession, attemptIds: string[]): Promise<Map<string, CallBooking>> {
  const rows = await tx.run(callBookingsStatement, [attemptIds]);
  return new Map(rows.map((r) => [r.callAttemptId, r]));
}

/** What a call's analysis says of the appointment it booked while under way. */
export interface BookingNote {
  id: string;
  status: string;
  analysis: { scheduled_at: Date; notes: string; agrees: boolean };
}

/** An appointment after its analysis, as its webhook events carry it. */
export interface NotedBooking {
  id: string;
  userId: string;
  contactId: string;
  campaignId: string | null;
  callAttemptId: string | null;
  status: string;
  scheduledAt: Date;
  timezone: string;
}

const noteBookingsStatement = statement<NotedBooking>(
  'dialer.note_bookings',
  `UPDATE appointments a SET status = r.status, appointment_data = a.appointment_data || jsonb_build_object('analysis', r.analysis), updated_at = $2
   FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, status text, analysis jsonb)
   WHERE a.id = r.id
   RETURNING a.id, a.user_id AS "userId", a.contact_id AS "contactId", a.campaign_id AS "campaignId", a.call_attempt_id AS "callAttemptId", a.status,
             a.scheduled_at AS "scheduledAt", a.timezone`,
);

/** Writes what the calls' analyses say on the appointments they booked while under way. */
export async function noteBookings(tx: SqlSession, notes: BookingNote[], now: Date): Promise<NotedBooking[]> {
  if (notes.length === 0) return [];
  return tx.run(noteBookingsStatement, [JSON.stringify(notes), now]);
}

const correctCostsStatement = statement(
  'dialer.correct_costs',
  `UPDATE call_attempts SET cost_cents = r.cost_cents FROM unnest($1::uuid[], $2::bigint[]) AS r(id, cost_cents) WHERE call_attempts.id = r.id`,
);

/** Sets the attempts' costs to what was charged. */
export async function correctCosts(tx: SqlSession, corrections: { id: string; costCents: bigint }[]): Promise<void> {
  await tx.run(correctCostsStatement, [corrections.map((c) => c.id), corrections.map((c) => String(c.costCents))]);
}

/** What decides a campaign's fate after results: its status, whether contacts are left, and its recent calls. */
export interface CampaignRecord {
  status: string;
  /** Whether a contact is not done yet. */
  open: boolean;
  /** The most recent finished calls, at most the breaker's window of them... */
  recent: number;
  /** ...and how many of them failed. */
  failed: number;
}

const recordStatement = statement<CampaignRecord>(
  'dialer.campaign_record',
  `SELECT k.status::text,
          EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = k.id AND state <> 'done') AS open,
          r.recent, r.failed
   FROM campaigns k,
        LATERAL (SELECT count(*)::int AS recent, count(*) FILTER (WHERE status = 'failed')::int AS failed
                 FROM (SELECT status FROM call_attempts
                       WHERE campaign_id = k.id AND status NOT IN ${IN_FLIGHT_SQL}
                         AND disconnect_reason IS DISTINCT FROM 'no_report'
                       ORDER BY created_at DESC, id DESC LIMIT $2) last) r
   WHERE k.id = $1::uuid`,
);

/** The campaign's record over its last `window` finished calls; undefined when there is no such campaign. */
export async function campaignRecord(session: SqlSession, campaignId: string, window: number): Promise<CampaignRecord | undefined> {
  return (await session.run(recordStatement, [campaignId, window]))[0];
}

const lockedAccountsStatement = statement<{ id: string; userId: string }>(
  'dialer.locked_accounts',
  `WITH a AS (SELECT id, user_id FROM call_attempts WHERE id = ANY($1::uuid[])),
        free AS (SELECT user_id FROM credit_accounts WHERE user_id IN (SELECT user_id FROM a) FOR UPDATE SKIP LOCKED)
   SELECT a.id, a.user_id AS "userId" FROM a
   WHERE EXISTS (SELECT 1 FROM credit_accounts c WHERE c.user_id = a.user_id) AND a.user_id NOT IN (SELECT user_id FROM free)`,
);

/**
 * Of these attempts, those whose owner's account another transaction has locked at this moment, with
 * their owners. Asked without waiting: the probe's own locks go with its statement.
 */
export function attemptsOfLockedAccounts(sql: SqlSession, attemptIds: string[]): Promise<{ id: string; userId: string }[]> {
  return sql.run(lockedAccountsStatement, [attemptIds]);
}

const lockCampaignStatement = statement('dialer.lock_campaign_row', 'SELECT 1 FROM campaigns WHERE id = $1::uuid FOR NO KEY UPDATE');

/** Takes the campaign's row lock (FOR NO KEY UPDATE), the ticks' lock, until the transaction ends. */
export async function lockCampaignRow(tx: SqlSession, campaignId: string): Promise<void> {
  await tx.run(lockCampaignStatement, [campaignId]);
}

const completeStatement = statement(
  'dialer.complete_campaign',
  `UPDATE campaigns SET status = 'completed', completed_at = $2, paused_reason = NULL, updated_at = now() WHERE id = $1::uuid`,
);

export async function completeCampaign(tx: SqlSession, campaignId: string, now: Date): Promise<void> {
  await tx.run(completeStatement, [campaignId, now]);
}
