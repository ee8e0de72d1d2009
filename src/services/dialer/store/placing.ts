import { statement, type SqlSession } from '../../../db/sql.js';
import type { CampaignPurpose, ConsentKind, DoNotCallRegistry } from '../../../generated/prisma/client.js';
import type { RegistryCallee, RegistryCopy } from '../../calling-rules/registries.js';
import { uuidv7 } from '../../ids.js';
import type { CallHistory } from '../../calling-rules/caps.js';
import type { Revocation } from '../../calling-rules/revocation.js';
import { COPIES_IN_FORCE_JSON, readCopies, registryOf } from '../../registries/store.js';
import type { ClaimPlan } from '../decisions.js';

// The statements of a tick: the look before the campaign's lock, the claim under it, and the put-back
// of calls that did not happen. Each function sends one statement.

/**
 * Counts campaign k's calls whose results are not written yet (an attempt is unfinished exactly while
 * its contact is dialing: both change in one statement), and those of them not known to have ended:
 * neither in ended_calls nor among the parameter `ended` (uuid[], this process's not marked yet).
 * Counted in live_calls, which holds every call in flight with its campaign: in call_attempts no index
 * is led by the campaign, and the count read every month's in-flight entries of the customer.
 */
const inFlight = (ended: string) => `SELECT count(*)::int AS in_flight,
    (count(*) FILTER (WHERE e.attempt_id IS NULL AND l.attempt_id <> ALL(${ended}::uuid[])))::int AS live
  FROM live_calls l LEFT JOIN ended_calls e ON e.attempt_id = l.attempt_id
  WHERE l.campaign_id = k.id`;

/** A running campaign as a tick sees it before taking its lock. */
export interface CampaignLoad {
  userId: string;
  concurrentCalls: number;
  /** Calls whose results are not written yet... */
  inFlight: number;
  /** ...and those of them not known here to have ended. */
  live: number;
  /** Whether a contact is due now. */
  due: boolean;
}

const loadStatement = statement<CampaignLoad>(
  'dialer.campaign_load',
  `SELECT k.user_id AS "userId", k.concurrent_calls AS "concurrentCalls", f.in_flight AS "inFlight", f.live,
          EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = k.id AND state = 'pending' AND next_attempt_at <= $2) AS due
   FROM campaigns k, LATERAL (${inFlight('$3')}) f
   WHERE k.id = $1::uuid AND k.status = 'running'`,
);

/** The campaign's load, read without its lock; undefined unless it is running. `ended`: this process's ended calls not marked yet. */
export async function campaignLoad(sql: SqlSession, campaignId: string, now: Date, ended: string[]): Promise<CampaignLoad | undefined> {
  return (await sql.run(loadStatement, [campaignId, now, ended]))[0];
}

/** The campaign as a tick decides on it, under its lock. */
export interface TickCampaign {
  userId: string;
  agentId: string;
  status: string;
  concurrentCalls: number;
  timezone: string;
  callingHours: unknown;
  activeDays: unknown;
  scheduleConfig: unknown;
  spendCapCents: bigint | null;
  requiredConsent: ConsentKind[];
  regionalRules: boolean;
  purpose: CampaignPurpose;
  /** What its calls are about, for the caps counted per subject; null: every call of the customer counts. */
  callSubject: string | null;
  /** The national registries' copies in force (read with the campaign: a solicitation campaign stops while one is too old). */
  registryCopies: RegistryCopy[];
  /** Where its calls may be transferred (E.164), given to the agent as {{transfer_number}}; null: nowhere. */
  transferNumber: string | null;
  /** The customer's exemption from the regional rules in force at the tick's moment, the latest to expire; null: none. */
  exemptionId: string | null;
}

const lockStatement = statement<Omit<TickCampaign, 'registryCopies'> & { registryCopies: unknown }>(
  'dialer.lock_campaign',
  `SELECT user_id AS "userId", agent_id AS "agentId", status::text, concurrent_calls AS "concurrentCalls", timezone, calling_hours AS "callingHours",
          active_days AS "activeDays", schedule_config AS "scheduleConfig", spend_cap_cents AS "spendCapCents",
          coalesce(required_consent, '{}')::text[] AS "requiredConsent", regional_rules AS "regionalRules", transfer_number AS "transferNumber",
          purpose::text, call_subject AS "callSubject", ${COPIES_IN_FORCE_JSON} AS "registryCopies",
          (SELECT x.id FROM regional_rule_exemptions x WHERE x.user_id = campaigns.user_id AND x.expires_at > $2
           ORDER BY x.expires_at DESC LIMIT 1) AS "exemptionId"
   FROM campaigns WHERE id = $1::uuid FOR NO KEY UPDATE`,
);

/** Locks the campaign's row (FOR NO KEY UPDATE) for the tick and reads it, with the exemption in force at `now`; every other tick of the campaign waits. */
export async function lockCampaignForTick(tx: SqlSession, campaignId: string, now: Date): Promise<TickCampaign | undefined> {
  const row = (await tx.run(lockStatement, [campaignId, now]))[0];
  return row && { ...row, registryCopies: readCopies(row.registryCopies) };
}

/** The campaign's agent, its calls in flight and what its calls were charged, read under the campaign's lock. */
export interface TickAgent {
  active: boolean;
  /** The agent's id and the version the provider holds (null: never provisioned there). */
  agentId: string;
  agentVersion: number | null;
  providerAgentId: string | null;
  /** The provider's published version calls name. */
  providerVersion: number | null;
  fromNumber: string | null;
  inFlight: number;
  live: number;
  /** Read with the calls in flight, in one statement: a batch of results changes both in one commit. */
  spentCents: bigint;
  /** Its calls choose among its numbers (it has several, or limits on one): the tick reads the pool. */
  pooled: boolean;
}

/** A contact due for a call, with what deciding whether it can be called now needs. */
export interface Candidate {
  /** The campaign_contacts row. */
  id: string;
  contactId: string;
  attempts: number;
  phoneNumber: string | null;
  status: 'active' | 'invalid' | 'do_not_call';
  timezone: string | null;
  region: string | null;
  /** The consents the contact holds, of those the campaign or a regional rule may require. */
  consents: ConsentKind[];
  /** The consents it revoked and has not given again since. */
  revocations: Revocation[];
  /** For a solicitation campaign: the registry the number is on, and what may let it be called all the same. */
  registry: RegistryCallee;
  /** When the latest abandoned call to the number ended, within the longest re-call bar of the rules. */
  lastAbandonedAt: Date | null;
  data: unknown;
  /** With A/B variants: the contact's variant's agent (null: the campaign agent's). */
  variant: VariantAgent | null;
}

/** An A/B variant's agent, as its calls name it. */
export interface VariantAgent {
  agentId: string;
  agentVersion: number | null;
  providerAgentId: string | null;
  providerVersion: number | null;
}

type CandidateRow = {
  revocations: { kind: ConsentKind; at: string }[] | null;
  agentActive: boolean;
  pooled: boolean;
  agentId: string;
  agentVersion: number | null;
  providerAgentId: string | null;
  providerVersion: number | null;
  fromNumber: string | null;
  inFlight: number;
  live: number;
  spentCents: bigint;
} & (CandidateColumns | { [K in keyof CandidateColumns]: null });

/** A candidate as its row holds it: the registry's columns flat. */
type CandidateColumns = Omit<Candidate, 'registry'> & {
  registry: DoNotCallRegistry | null;
  consentsToCalls: boolean;
  relationshipSince: Date | null;
};

// A person is their number: a consent revoked on any of the user's contacts with the number counts for
// all of them, unless given again since. A contact whose number has a call in flight, from any group or campaign
// of the user, is left for later. That read cannot see the claims of ticks of other campaigns still
// under way, so the claim inserts its attempts against a unique index of the numbers in flight and
// leaves out any number another tick took meanwhile. A number on the do-not-call list is skipped even
// before its contacts are marked. Locked contact rows are skipped, so a tick never waits on a contact.
// Each contact comes with the consents the gate may ask for, and the end of the latest abandoned call
// to its number (answered, then dropped by our side: failed after it connected; the partial index
// call_attempts_abandoned_idx holds just these) within the longest re-call bar of the rules.
/**
 * The SQL of what a candidate's judgement reads beside its row (the dispatch preview reads them too):
 * the consents revoked, and not given again since, on any of the customer's contacts with the number, as
 * JSON [{ kind, at }]; the end of the latest abandoned call to the number within `hours` before `now`
 * (answered, then dropped by our side: failed after it connected; the partial index
 * call_attempts_abandoned_idx holds just these); and, for a number on a registry, what may let a
 * solicitation call it all the same (columns "consentsToCalls" and "relationshipSince").
 */
export const revocationsOf = (user: string, phone: string) =>
  `(SELECT coalesce(json_agg(json_build_object('kind', r.kind, 'at', r.revoked_at)), '[]')
    FROM contacts o JOIN contact_consents r ON r.contact_id = o.id
    WHERE o.user_id = ${user} AND o.phone_number = ${phone} AND r.revoked_at IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM contacts p JOIN contact_consents g ON g.contact_id = p.id
                      WHERE p.user_id = ${user} AND p.phone_number = ${phone} AND g.kind = r.kind
                        AND g.revoked_at IS NULL AND g.obtained_at > r.revoked_at))`;

export const lastAbandonedOf = (user: string, phone: string, now: string, hours: string, placedFrom: string) =>
  `(SELECT max(o.ended_at) FROM call_attempts o
    WHERE o.user_id = ${user} AND o.to_number = ${phone} AND o.outcome = 'failed' AND o.duration_seconds > 0
      AND o.ended_at > ${now}::timestamptz - make_interval(hours => ${hours}::int) AND o.id >= uuidv7_floor(${placedFrom}::timestamptz))`;

/** No call lasts this long: a call that ended within the re-call bar was placed at most this long before it. */
const LONGEST_CALL_MS = 7 * 86_400_000;

/**
 * The `placedFrom` of lastAbandonedOf: the earliest a call that ended within `hours` before `now` can have
 * been placed. Its id (a UUIDv7 of when it was placed) from this on names the months to read: given as a
 * value, not computed in SQL, so that PostgreSQL leaves the other months' partitions out when it plans.
 */
export const abandonedPlacedFrom = (now: Date, hours: number) => new Date(now.getTime() - hours * 3_600_000 - LONGEST_CALL_MS);

export const registryExceptions = (registry: string, contact: string) =>
  `${registry} IS NOT NULL AND EXISTS (SELECT 1 FROM contact_consents g WHERE g.contact_id = ${contact} AND g.revoked_at IS NULL
                                        AND g.kind = 'calls') AS "consentsToCalls",
   CASE WHEN ${registry} IS NOT NULL THEN (SELECT max(g.obtained_at) FROM contact_consents g WHERE g.contact_id = ${contact}
                                           AND g.revoked_at IS NULL AND g.kind = 'business_relationship') END AS "relationshipSince"`;

/** A revocation as its row's JSON holds it. */
export const readRevocations = (json: { kind: ConsentKind; at: string }[] | null): Revocation[] =>
  (json ?? []).map((r) => ({ kind: r.kind, at: new Date(r.at) }));

const candidatesStatement = statement<CandidateRow>(
  'dialer.candidates',
  `WITH candidates AS (
     SELECT cc.id, cc.contact_id, cc.attempts, c.phone_number,
            CASE WHEN d.id IS NULL THEN c.status::text ELSE 'do_not_call' END AS status, c.timezone, c.data->>'region' AS region, c.data, cc.next_attempt_at,
            (SELECT json_build_object('agentId', va.id, 'agentVersion', va.provisioned_version, 'providerAgentId', va.provider_agent_id,
                                      'providerVersion', va.provider_version)
             FROM campaign_variants v JOIN agents va ON va.id = v.agent_id WHERE v.id = cc.variant_id) AS variant,
            CASE WHEN $5::text[] = '{}' THEN '{}'::text[]
                 ELSE ARRAY(SELECT DISTINCT g.kind::text FROM contact_consents g
                            WHERE g.contact_id = c.id AND g.revoked_at IS NULL AND g.kind::text = ANY($5::text[])) END AS consents,
            ${revocationsOf('c.user_id', 'c.phone_number')} AS revocations,
            CASE WHEN $6::boolean THEN ${registryOf('c.phone_number')} END AS registry,
            ${lastAbandonedOf('c.user_id', 'c.phone_number', '$3', '$7', '$8')} AS last_abandoned_at
     FROM campaign_contacts cc JOIN contacts c ON c.id = cc.contact_id
     LEFT JOIN do_not_call_entries d ON d.user_id = c.user_id AND d.phone_number = c.phone_number
     WHERE cc.campaign_id = $1::uuid AND cc.state = 'pending' AND cc.next_attempt_at <= $3
       AND NOT EXISTS (SELECT 1 FROM live_calls o WHERE o.user_id = c.user_id AND o.to_number = c.phone_number)
     ORDER BY cc.next_attempt_at
     LIMIT $4
     FOR NO KEY UPDATE OF cc, c SKIP LOCKED
   )
   SELECT a.is_active AS "agentActive", a.id AS "agentId", a.provisioned_version AS "agentVersion", a.provider_agent_id AS "providerAgentId",
          a.provider_version AS "providerVersion", p.number AS "fromNumber", f.in_flight AS "inFlight", f.live,
          EXISTS (SELECT 1 FROM phone_numbers q WHERE q.agent_id = a.id AND (q.id <> a.phone_number_id OR q.max_calls_per_hour IS NOT NULL
                  OR q.max_calls_per_day IS NOT NULL OR q.cooldown_after_unanswered IS NOT NULL OR q.rest_below_answer_rate IS NOT NULL)) AS pooled,
          coalesce((SELECT spent_cents FROM campaign_spend WHERE campaign_id = k.id), 0) AS "spentCents",
          n.id, n.contact_id AS "contactId", n.attempts, n.phone_number AS "phoneNumber", n.status, n.timezone, n.region, n.consents,
          n.revocations, n.data, n.variant, n.registry, n.last_abandoned_at AS "lastAbandonedAt",
          ${registryExceptions('n.registry', 'n.contact_id')}
   FROM campaigns k JOIN agents a ON a.id = k.agent_id LEFT JOIN phone_numbers p ON p.id = a.phone_number_id
        CROSS JOIN LATERAL (${inFlight('$2')}) f
        LEFT JOIN candidates n ON true
   WHERE k.id = $1::uuid
   ORDER BY n.next_attempt_at`,
);

// The tick's reads of its due contacts and of their numbers' recent calls run on their generic plans.
// Both plans of each read by index (the plan test checks each), but PostgreSQL took the custom plans,
// planned afresh every tick over the months of calls, and dearer as the tables grow: the due contacts
// 3.5 ms a tick at 10^7 in the bench's server, where the generic plan runs in 0.8 ms; the recent calls
// 0.9 ms of planning at 10^5 and 1.5 ms at 10^7 (by hand), where the generic plan plans and runs in
// 0.3 ms at both. The mode is set for each statement only, in the tick's transaction (outside one it
// would end with its own statement).
const PLAN_MODE = statement<{ previous: string }>(
  'dialer.planMode',
  `WITH p AS MATERIALIZED (SELECT current_setting('plan_cache_mode') AS previous)
   SELECT previous, set_config('plan_cache_mode', $1, true) FROM p`,
);

/** `read`, one statement, on its generic plan (above), in the tick's transaction. */
async function onGenericPlan<T>(tx: SqlSession, read: () => Promise<T>): Promise<T> {
  const [mode] = await tx.run(PLAN_MODE, ['force_generic_plan']);
  const result = await read();
  await tx.run(PLAN_MODE, [mode!.previous]);
  return result;
}

/**
 * Under the campaign's lock (a statement of its own, so that it sees what the ticks before this one
 * committed): its agent, its calls in flight, and up to `limit` due contacts, locked, earliest first;
 * with `lookUpRegistries`, the registry each number is on, looked up in the same statement.
 */
export async function readCandidates(
  tx: SqlSession,
  campaignId: string,
  ended: string[],
  now: Date,
  limit: number,
  consentKinds: readonly ConsentKind[],
  reads: { lookUpRegistries: boolean; recallHours: number },
): Promise<{ agent: TickAgent; candidates: Candidate[] }> {
  const rows = await onGenericPlan(tx, () =>
    tx.run(candidatesStatement, [
      campaignId,
      ended,
      now,
      limit,
      consentKinds,
      reads.lookUpRegistries,
      reads.recallHours,
      abandonedPlacedFrom(now, reads.recallHours),
    ]),
  );
  const { agentActive, agentId, agentVersion, providerAgentId, providerVersion, fromNumber, inFlight, live, spentCents, pooled } = rows[0]!;
  const candidates = rows.flatMap((row) => {
    if (row.id === null) return [];
    const { id, contactId, attempts, phoneNumber, status, timezone, region, consents, lastAbandonedAt, data, variant } = row;
    const revocations = readRevocations(row.revocations);
    const registry = { registry: row.registry, consentsToCalls: row.consentsToCalls, relationshipSince: row.relationshipSince };
    return [
      { id, contactId, attempts, phoneNumber, status, timezone, region, consents, revocations, lastAbandonedAt, data, variant, registry },
    ];
  });
  return {
    agent: {
      active: agentActive,
      agentId,
      agentVersion,
      providerAgentId,
      providerVersion,
      fromNumber,
      inFlight,
      live,
      spentCents: BigInt(spentCents),
      pooled,
    },
    candidates,
  };
}

// One lock per (customer, number) whose calls a frequency cap counts, taken in the claim's transaction
// in number order, so that two ticks (of any campaigns, on any workers) claiming a call to one number
// count each other's: the second waits for the first to commit, then reads its call.
const lockNumbersStatement = statement(
  'dialer.lock_capped_numbers',
  `SELECT count(pg_advisory_xact_lock(hashtextextended('frequency_cap:' || $1::text || ':' || n, 0)))::int AS locked FROM unnest($2::text[]) AS n`,
);

// A refusal: the callee asked during the call not to be called again, or declined the call. With a
// subject ($4), the calls counted are those of the customer's campaigns of that subject or of none; a
// refusal counts whatever the campaign. An attempt's id is a UUIDv7 drafted after the tick's moment that
// is its created_at, so the id bound drops no call the window counts; it names the months to read, and
// PostgreSQL plans only their partitions (planning every month's partitions for each of the two reads
// was most of this statement's cost, and its generic plan was never chosen: each tick planned it).
const historiesStatement = statement<{ phoneNumber: string; placed: string[]; refusedAt: Date | null }>(
  'dialer.call_histories',
  `SELECT n AS "phoneNumber",
          (SELECT coalesce(json_agg(a.created_at), '[]') FROM call_attempts a
           WHERE a.user_id = $1::uuid AND a.to_number = n AND a.created_at > $3 AND a.id >= uuidv7_floor($3)
             AND ($4::text IS NULL OR EXISTS (SELECT 1 FROM campaigns k WHERE k.id = a.campaign_id
                                              AND (k.call_subject IS NULL OR k.call_subject = $4::text)))) AS placed,
          (SELECT max(coalesce(a.opted_out_at, a.ended_at, a.created_at)) FROM call_attempts a
           WHERE a.user_id = $1::uuid AND a.to_number = n AND a.created_at > $3 AND a.id >= uuidv7_floor($3)
             AND (a.opted_out_at IS NOT NULL OR a.disconnect_reason = 'user_declined')) AS "refusedAt"
   FROM unnest($2::text[]) AS n`,
);

/**
 * Under a lock of each (customer, number), held until the claim commits: the calls the customer placed to
 * these numbers since `since`, and each one's latest refusal then. Every call placed later to one of the
 * numbers is claimed after this transaction ends.
 */
export async function lockCallHistories(
  tx: SqlSession,
  userId: string,
  numbers: string[],
  since: Date,
  subject: string | null,
): Promise<Map<string, CallHistory>> {
  const sorted = [...new Set(numbers)].sort();
  await tx.run(lockNumbersStatement, [userId, sorted]);
  return onGenericPlan(tx, () => readCallHistories(tx, userId, sorted, since, subject));
}

/** The calls the customer placed to these numbers since `since`, and each one's latest refusal then, without a lock. */
export async function readCallHistories(
  sql: SqlSession,
  userId: string,
  numbers: string[],
  since: Date,
  subject: string | null,
): Promise<Map<string, CallHistory>> {
  const rows = await sql.run(historiesStatement, [userId, numbers, since, subject]);
  return new Map(
    rows.map((row) => [
      row.phoneNumber,
      { placed: row.placed.map((at) => new Date(at)), refusedAt: row.refusedAt && new Date(row.refusedAt) },
    ]),
  );
}

const setAsideStatement = statement(
  'dialer.set_aside',
  `WITH blocks AS (
     INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason, detail, until, created_at)
     SELECT r.id, $5::uuid, $4::uuid, r.contact_id, r.reason::"DialBlockReason", r.detail, r.until, $3
     FROM jsonb_to_recordset($6::jsonb) AS r(id uuid, contact_id uuid, reason text, detail text, until timestamptz)
   ), done AS (
     UPDATE campaign_contacts SET state = 'done', outcome = r.outcome, next_attempt_at = NULL, updated_at = $3
     FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, outcome text) WHERE campaign_contacts.id = r.id
   )
   UPDATE campaign_contacts SET next_attempt_at = r.next_attempt_at, updated_at = $3
   FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, next_attempt_at timestamptz) WHERE campaign_contacts.id = r.id`,
);

/**
 * Contacts a tick cannot call: done for good (uncallable), or due again when they may be called
 * (waiting); and the calls a rule stopped, recorded with their reasons.
 */
export async function setAside(
  tx: SqlSession,
  campaign: { campaignId: string; userId: string },
  plan: Pick<ClaimPlan, 'uncallable' | 'waiting' | 'blocks'>,
  now: Date,
): Promise<void> {
  await tx.run(setAsideStatement, [
    JSON.stringify(plan.uncallable),
    JSON.stringify(plan.waiting.map((w) => ({ id: w.id, next_attempt_at: w.nextAttemptAt }))),
    now,
    campaign.campaignId,
    campaign.userId,
    JSON.stringify(plan.blocks.map((b) => ({ id: uuidv7(), contact_id: b.contactId, reason: b.reason, detail: b.detail, until: b.until }))),
  ]);
}

const creditStatement = statement<{ spendable: string; inFlight: number }>(
  'dialer.credit_check',
  `SELECT coalesce((SELECT balance_cents + included_remaining_cents - held_cents FROM credit_accounts WHERE user_id = $2::uuid), 0)::text AS spendable,
          (SELECT count(*)::int FROM live_calls WHERE campaign_id = $1::uuid) AS "inFlight"`,
);

/**
 * What the user may spend and how many calls the campaign has in flight, in one statement, so both
 * figures are of one moment: a batch of results that ends calls and releases their holds commits all
 * of it at once.
 */
export async function creditCheck(tx: SqlSession, campaignId: string, userId: string): Promise<{ spendable: bigint; inFlight: number }> {
  const [row] = await tx.run(creditStatement, [campaignId, userId]);
  return { spendable: BigInt(row!.spendable), inFlight: row!.inFlight };
}

/** A call about to be placed: its attempt's id and number, and what the agent is told of the contact. */
export interface DraftCall {
  id: string;
  contactId: string;
  attemptNumber: number;
  to: string;
  /** The caller ID it goes out from. */
  from: string;
  /** Its agent (its A/B variant's, else the campaign agent's) and the version it calls with, ours and the provider's. */
  agentId: string;
  agentVersion: number | null;
  providerAgentId: string | null;
  providerAgentVersion: number | null;
  variables: Record<string, string>;
  voicemailMessage: string | null;
  /** The exemption it goes out under, with the regional rules off; null: they applied. */
  exemptionId: string | null;
}

/**
 * The call record's consents (see results/records.ts): those of the required kinds (parameter `kinds`,
 * text[]) the contact holds unrevoked, as the gate saw them under the contact's lock, [{ id, kind }].
 */
const reliedConsents = (
  contactId: string,
  kinds: string,
) => `(SELECT coalesce(jsonb_agg(jsonb_build_object('id', g.id, 'kind', g.kind) ORDER BY g.kind, g.id), '[]')
     FROM contact_consents g WHERE g.contact_id = ${contactId} AND g.revoked_at IS NULL AND g.kind::text = ANY(${kinds}::text[]))`;

// A number another tick put in flight since the candidates were read is not taken (ON CONFLICT on the
// numbers in flight, live_calls), so its attempt is not inserted and its contact stays as it was, due
// again once that call ends. Taken in number order, so that two ticks taking the same numbers wait on
// them in one order. The contacts are updated by their key (campaign_id, contact_id) with the ids as one
// array, not joined to the attempts: a join's plan depends on the campaign's estimated size, and the
// generic plan PostgreSQL takes after five runs estimated an average campaign and hash-joined every
// contact of a large one; with the ids as an array, both plans look each one up in the unique index
// (test/read-plans.test.ts checks both).
const claimStatement = statement<{ id: string }>(
  'dialer.claim',
  `WITH calls AS (
     SELECT * FROM jsonb_to_recordset($1::jsonb)
       AS r(id uuid, contact_id uuid, attempt_number int, to_number text, from_number text, agent_id uuid, agent_version int, exemption_id uuid)
   ), held AS (
     INSERT INTO live_calls (user_id, to_number, attempt_id, campaign_id)
     SELECT $2::uuid, to_number, id, $3::uuid FROM calls ORDER BY to_number
     ON CONFLICT DO NOTHING
     RETURNING attempt_id
   ), attempts AS (
     INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, to_number, from_number, agent_id, agent_version,
                                regional_rule_exemption_id, lease_expires_at, created_at, updated_at, consents_relied, rules_version)
     SELECT r.id, $2::uuid, $3::uuid, r.contact_id, r.attempt_number, 'queued', r.to_number, r.from_number, r.agent_id, r.agent_version,
            r.exemption_id, $4, $5, $5, ${reliedConsents('r.contact_id', '$6')}, $7
     FROM calls r JOIN held ON held.attempt_id = r.id
     RETURNING id, contact_id
   ), dialing AS (
     UPDATE campaign_contacts SET state = 'dialing', attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, $5),
       last_attempt_at = $5, lease_expires_at = $4, updated_at = $5
     WHERE campaign_id = $3::uuid AND contact_id = ANY(ARRAY(SELECT contact_id FROM attempts))
     RETURNING contact_id
   )
   SELECT attempts.id FROM attempts JOIN dialing USING (contact_id)`,
);

/** Inserts the calls' attempts and puts their contacts to dialing; returns the ids of the attempts inserted. */
export async function claimCalls(
  tx: SqlSession,
  claim: { campaignId: string; userId: string; leaseUntil: Date; now: Date; requiredConsent: readonly ConsentKind[]; rulesVersion: string },
  calls: DraftCall[],
): Promise<Set<string>> {
  const inserted = await tx.run(claimStatement, [
    JSON.stringify(
      calls.map((c) => ({
        id: c.id,
        contact_id: c.contactId,
        attempt_number: c.attemptNumber,
        to_number: c.to,
        from_number: c.from,
        agent_id: c.agentId,
        agent_version: c.agentVersion,
        exemption_id: c.exemptionId,
      })),
    ),
    claim.userId,
    claim.campaignId,
    claim.leaseUntil,
    claim.now,
    claim.requiredConsent,
    claim.rulesVersion,
  ]);
  return new Set(inserted.map((row) => row.id));
}

const nextDueStatement = statement<{ nextAttemptAt: Date }>(
  'dialer.next_due',
  `SELECT next_attempt_at AS "nextAttemptAt" FROM campaign_contacts WHERE campaign_id = $1::uuid AND state = 'pending' AND next_attempt_at > $2
   ORDER BY next_attempt_at LIMIT 1`,
);

/** When the campaign's earliest contact waiting for a later time is due, if any. */
export async function nextDue(sql: SqlSession, campaignId: string, now: Date): Promise<Date | undefined> {
  return (await sql.run(nextDueStatement, [campaignId, now]))[0]?.nextAttemptAt;
}

const lockUnplacedStatement = statement<{ id: string; userId: string }>(
  'dialer.lock_unplaced',
  `SELECT id, user_id AS "userId" FROM call_attempts
   WHERE id = ANY($1::uuid[]) AND status = 'queued' ORDER BY id FOR NO KEY UPDATE`,
);

/** Of these attempts, those still queued, locked in id order. */
export function lockUnplaced(tx: SqlSession, attemptIds: string[]): Promise<{ id: string; userId: string }[]> {
  return tx.run(lockUnplacedStatement, [attemptIds]);
}

const putBackStatement = statement(
  'dialer.put_back',
  `WITH gone AS (DELETE FROM call_attempts WHERE id = ANY($1::uuid[]) RETURNING campaign_id, contact_id)
   UPDATE campaign_contacts cc SET state = 'pending', attempts = cc.attempts - 1,
     first_attempt_at = CASE WHEN cc.attempts = 1 THEN NULL ELSE cc.first_attempt_at END,
     last_attempt_at = (SELECT max(a.created_at) FROM call_attempts a
                        WHERE a.campaign_id = cc.campaign_id AND a.contact_id = cc.contact_id AND a.id <> ALL($1::uuid[])),
     next_attempt_at = $2, ready_at = $2, lease_expires_at = NULL, updated_at = $3
   FROM gone WHERE cc.campaign_id = gone.campaign_id AND cc.contact_id = gone.contact_id AND cc.state = 'dialing'`,
);

/** Removes the attempts and puts their contacts back in the queue, due at `dueAt`, as before the attempts. */
export async function putBack(tx: SqlSession, attemptIds: string[], dueAt: Date, now: Date): Promise<void> {
  await tx.run(putBackStatement, [attemptIds, dueAt, now]);
}
