import { statement, type SqlSession } from '../../../db/sql.js';
import type { PoolNumber } from '../caller-id.js';
import { IN_FLIGHT_SQL } from '../../call-outcomes.js';

// The statements of an agent's pool of numbers: read with what each number's limits need of its recent
// calls, under the numbers' locks (ticks of campaigns sharing the agent take them in id order, so two
// ticks cannot both take a number's last call of the hour, or its last call before a cool-down), a number
// put to rest, and the start of a number's new run of unanswered calls after a cool-down.

/** A number's calls, as the index on call_attempts (user_id, from_number, created_at) serves them. */
const calls = (extra: string) =>
  `FROM call_attempts c WHERE c.user_id = p.user_id AND c.from_number = p.number ${extra} ORDER BY c.created_at DESC`;

/** Calls placed since the number's last cool-down ended: those that count toward its run of unanswered calls. */
const SINCE_COOLDOWN = `AND c.created_at >= coalesce(p.cooldown_ended_at, '-infinity')`;

/**
 * A number with what its limits need of its recent calls; `$2` is now. Its calls in flight are counted by
 * status, which the partial index of calls in flight serves, only when it has a cool-down rule.
 */
const NUMBER_STATE = `SELECT p.id, p.number, p.max_calls_per_hour AS "maxCallsPerHour", p.max_calls_per_day AS "maxCallsPerDay",
          p.cooldown_after_unanswered AS "cooldownAfterUnanswered", p.cooldown_minutes AS "cooldownMinutes",
          p.rest_below_answer_rate AS "restBelowAnswerRate", p.rest_window_calls AS "restWindowCalls", p.rest_hours AS "restHours",
          p.rested_until AS "restedUntil",
          (SELECT count(*)::int FROM call_attempts c WHERE c.user_id = p.user_id AND c.from_number = p.number AND c.created_at > $2::timestamptz - interval '1 hour') AS "hourCount",
          (SELECT count(*)::int FROM call_attempts c WHERE c.user_id = p.user_id AND c.from_number = p.number AND c.created_at > $2::timestamptz - interval '1 day') AS "dayCount",
          ARRAY(SELECT c.created_at ${calls("AND c.created_at > $2::timestamptz - interval '1 hour'")} LIMIT coalesce(p.max_calls_per_hour, 0)) AS "hourCalls",
          ARRAY(SELECT c.created_at ${calls("AND c.created_at > $2::timestamptz - interval '1 day'")} LIMIT coalesce(p.max_calls_per_day, 0)) AS "dayCalls",
          ARRAY(SELECT c.outcome::text ${calls(`AND c.outcome IS NOT NULL ${SINCE_COOLDOWN}`)}, c.id DESC LIMIT coalesce(p.cooldown_after_unanswered, 0)) AS "latestOutcomes",
          (SELECT max(r.ended_at) FROM (SELECT c.ended_at ${calls(`AND c.outcome IS NOT NULL ${SINCE_COOLDOWN}`)}, c.id DESC
                                        LIMIT coalesce(p.cooldown_after_unanswered, 0)) r) AS "lastEndedAt",
          (SELECT count(*)::int FROM call_attempts c WHERE c.user_id = p.user_id AND c.status IN ${IN_FLIGHT_SQL}
             AND c.from_number = p.number AND p.cooldown_after_unanswered IS NOT NULL ${SINCE_COOLDOWN}) AS "inFlight",
          ARRAY(SELECT c.outcome::text ${calls("AND c.outcome IS NOT NULL AND c.created_at > coalesce(p.rested_until, '-infinity')")}
                LIMIT CASE WHEN p.rest_below_answer_rate IS NULL THEN 0 ELSE p.rest_window_calls END) AS "windowOutcomes"
   FROM phone_numbers p`;

// Locked by a statement of its own: under READ COMMITTED a statement that waited for a lock still reads
// with the snapshot it started with, and would not see the calls the tick it waited for has just placed.
const lockPoolStatement = statement<{ id: string }>(
  'dialer.lock_caller_id_pool',
  `SELECT p.id FROM phone_numbers p
   WHERE p.agent_id = $1::uuid OR p.id = (SELECT phone_number_id FROM agents WHERE id = $1::uuid)
   ORDER BY p.id
   FOR NO KEY UPDATE OF p`,
);

const poolStatement = statement<PoolNumber>('dialer.caller_id_pool', `${NUMBER_STATE} WHERE p.id = ANY($1::uuid[]) ORDER BY p.id`);

const numberStatement = statement<PoolNumber>('dialer.caller_id', `${NUMBER_STATE} WHERE p.id = $1::uuid AND p.user_id = $3::uuid`);

/** One of the user's numbers with its recent calls, read without a lock. */
export async function readNumber(sql: SqlSession, userId: string, id: string, now: Date): Promise<PoolNumber | undefined> {
  const [row] = await sql.run(numberStatement, [id, now, userId]);
  return row && withDates(row);
}

/** The agent's numbers, locked in id order, with their recent calls as they stand once the locks are held. */
export async function lockPool(tx: SqlSession, agentId: string, now: Date): Promise<PoolNumber[]> {
  const locked = await tx.run(lockPoolStatement, [agentId]);
  if (locked.length === 0) return [];
  return (await tx.run(poolStatement, [locked.map((n) => n.id), now])).map(withDates);
}

/** Instants as dates, whichever driver read the arrays. */
function withDates(row: PoolNumber): PoolNumber {
  const date = (value: Date | string) => new Date(value);
  return {
    ...row,
    restedUntil: row.restedUntil && date(row.restedUntil),
    lastEndedAt: row.lastEndedAt && date(row.lastEndedAt),
    hourCalls: row.hourCalls.map(date),
    dayCalls: row.dayCalls.map(date),
  };
}

const restStatement = statement('dialer.rest_number', 'UPDATE phone_numbers SET rested_until = $2 WHERE id = $1::uuid');

export async function restNumber(tx: SqlSession, id: string, until: Date): Promise<void> {
  await tx.run(restStatement, [id, until]);
}

const endCooldownStatement = statement('dialer.end_cooldown', 'UPDATE phone_numbers SET cooldown_ended_at = $2 WHERE id = ANY($1::uuid[])');

/** These numbers' cool-downs are over and they call again: their calls before `at` no longer count toward a run. */
export async function endCooldowns(tx: SqlSession, ids: string[], at: Date): Promise<void> {
  if (ids.length) await tx.run(endCooldownStatement, [ids, at]);
}
