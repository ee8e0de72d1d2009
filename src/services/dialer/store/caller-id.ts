import { statement, type SqlSession } from '../../../db/sql.js';
import type { PoolNumber } from '../caller-id.js';

// The statements of an agent's pool of numbers: read with what each number's limits need of its recent
// calls, under the numbers' locks (ticks of campaigns sharing the agent take them in id order, so two
// ticks cannot both take a number's last call of the hour), and a number put to rest.

/** A number's calls, as the index on call_attempts (user_id, from_number, created_at) serves them. */
const calls = (extra: string) =>
  `FROM call_attempts c WHERE c.user_id = p.user_id AND c.from_number = p.number ${extra} ORDER BY c.created_at DESC`;

/** A number with what its limits need of its recent calls; `$2` is now. */
const NUMBER_STATE = `SELECT p.id, p.number, p.max_calls_per_hour AS "maxCallsPerHour", p.max_calls_per_day AS "maxCallsPerDay",
          p.cooldown_after_unanswered AS "cooldownAfterUnanswered", p.cooldown_minutes AS "cooldownMinutes",
          p.rest_below_answer_rate AS "restBelowAnswerRate", p.rest_window_calls AS "restWindowCalls", p.rest_hours AS "restHours",
          p.rested_until AS "restedUntil",
          (SELECT count(*)::int FROM call_attempts c WHERE c.user_id = p.user_id AND c.from_number = p.number AND c.created_at > $2::timestamptz - interval '1 hour') AS "hourCount",
          (SELECT count(*)::int FROM call_attempts c WHERE c.user_id = p.user_id AND c.from_number = p.number AND c.created_at > $2::timestamptz - interval '1 day') AS "dayCount",
          ARRAY(SELECT c.created_at ${calls("AND c.created_at > $2::timestamptz - interval '1 hour'")} LIMIT coalesce(p.max_calls_per_hour, 0)) AS "hourCalls",
          ARRAY(SELECT c.created_at ${calls("AND c.created_at > $2::timestamptz - interval '1 day'")} LIMIT coalesce(p.max_calls_per_day, 0)) AS "dayCalls",
          ARRAY(SELECT c.outcome::text ${calls('AND c.outcome IS NOT NULL')} LIMIT 10 * coalesce(p.cooldown_after_unanswered, 0)) AS "latestOutcomes",
          (SELECT c.ended_at ${calls('AND c.outcome IS NOT NULL')} LIMIT 1) AS "lastEndedAt",
          ARRAY(SELECT c.outcome::text ${calls("AND c.outcome IS NOT NULL AND c.created_at > coalesce(p.rested_until, '-infinity')")}
                LIMIT CASE WHEN p.rest_below_answer_rate IS NULL THEN 0 ELSE p.rest_window_calls END) AS "windowOutcomes"
   FROM phone_numbers p`;

const poolStatement = statement<PoolNumber>(
  'dialer.caller_id_pool',
  `${NUMBER_STATE}
   WHERE p.agent_id = $1::uuid OR p.id = (SELECT phone_number_id FROM agents WHERE id = $1::uuid)
   ORDER BY p.id
   FOR NO KEY UPDATE OF p`,
);

const numberStatement = statement<PoolNumber>('dialer.caller_id', `${NUMBER_STATE} WHERE p.id = $1::uuid AND p.user_id = $3::uuid`);

/** One of the user's numbers with its recent calls, read without a lock. */
export async function readNumber(sql: SqlSession, userId: string, id: string, now: Date): Promise<PoolNumber | undefined> {
  const [row] = await sql.run(numberStatement, [id, now, userId]);
  return row && withDates(row);
}

/** The agent's numbers, locked in id order, with their recent calls. */
export async function lockPool(tx: SqlSession, agentId: string, now: Date): Promise<PoolNumber[]> {
  return (await tx.run(poolStatement, [agentId, now])).map(withDates);
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
