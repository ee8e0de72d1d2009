import pg from 'pg';

// The data of the report benchmark: one user's campaign over CONTACTS contacts with three attempts each,
// written set-based (generate_series, INSERT ... SELECT) as a dialer would have left it. Outcomes and
// statuses come from a fixed hash of the contact and attempt number, so every run sees the same data.

export interface ReportSeed {
  userId: string;
  campaignId: string;
  contacts: number;
  attempts: number;
  appointments: number;
}

const ATTEMPTS_PER_CONTACT = 3;

/** A time-ordered id like the service's UUIDv7s; `kind` keeps the tables' ids apart. */
const idOf = (kind: number, expr: string) => `('0000000${kind}-0000-7000-8000-' || lpad(to_hex(${expr}), 12, '0'))::uuid`;

export async function seedReport(databaseUrl: string, contacts: number): Promise<ReportSeed> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const userId = '0000000a-0000-4000-8000-000000000001';
  const agentId = '0000000a-0000-4000-8000-000000000002';
  const groupId = '0000000a-0000-4000-8000-000000000003';
  const campaignId = '0000000a-0000-4000-8000-000000000004';
  const start = '2026-09-01T09:00:00Z';
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO users (id) VALUES ($1)', [userId]);
    await client.query(
      `INSERT INTO agents (id, user_id, template_id, name, response_engine_type, system_prompt, updated_at)
       SELECT $1, $2, id, 'Bench agent', response_engine_type, 'Hello', now() FROM agent_templates ORDER BY template_key LIMIT 1`,
      [agentId, userId],
    );
    await client.query(`INSERT INTO contact_groups (id, user_id, name, total, updated_at) VALUES ($1, $2, 'Bench group', $3, now())`, [
      groupId,
      userId,
      contacts,
    ]);
    await client.query(
      `INSERT INTO campaigns (id, user_id, agent_id, contact_group_id, name, status, started_at, updated_at)
       VALUES ($1, $2, $3, $4, 'Bench campaign', 'running', $5, now())`,
      [campaignId, userId, agentId, groupId, start],
    );
    // One import's worth of contacts: one creation time, ids in file order.
    await client.query(
      `INSERT INTO contacts (id, user_id, contact_group_id, phone_number, status, name, created_at, updated_at)
       SELECT ${idOf(1, 'i')}, $1, $2, '+1' || (2000000000 + i), 'active', 'Person ' || i, $3, $3
       FROM generate_series(1, $4) AS i`,
      [userId, groupId, start, contacts],
    );
    // Attempt n of contact i, a round of the whole list a day; h is a fixed hash that picks the outcome.
    await client.query(
      `INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, to_number,
         duration_seconds, summary, sentiment, cost_cents, started_at, ended_at, created_at, updated_at)
       SELECT ${idOf(2, '(n - 1) * $4 + i')}, $1, $2, ${idOf(1, 'i')}, n, s.status::"CallStatus", '+1' || (2000000000 + i),
         s.duration, CASE WHEN s.status = 'completed' THEN 'Talked about the offer (' || h || ')' END,
         (CASE WHEN s.status = 'completed' THEN (ARRAY['positive', 'neutral', 'negative', 'unknown'])[h % 4 + 1] ELSE 'unknown' END)::"Sentiment",
         coalesce(ceil(s.duration * 10 / 60.0), 0), at, at + make_interval(secs => coalesce(s.duration, 0)), at, at
       FROM generate_series(1, $5) AS n
       CROSS JOIN generate_series(1, $4) AS i
       CROSS JOIN LATERAL (SELECT (i * 7919 + n * 104729) % 100 AS h,
                                  $3::timestamptz + make_interval(days => n - 1, secs => i / 2.0) AS at) AS k
       CROSS JOIN LATERAL (SELECT CASE
           WHEN n < $5 THEN CASE WHEN h < 50 THEN 'no_answer' WHEN h < 65 THEN 'busy' WHEN h < 80 THEN 'voicemail'
                                 WHEN h < 90 THEN 'failed' ELSE 'completed' END
           ELSE CASE WHEN h < 35 THEN 'completed' WHEN h < 60 THEN 'no_answer' WHEN h < 70 THEN 'busy'
                     WHEN h < 85 THEN 'voicemail' WHEN h < 98 THEN 'failed' ELSE 'in_progress' END
         END AS status) AS st
       CROSS JOIN LATERAL (SELECT st.status,
           CASE st.status WHEN 'completed' THEN 30 + (h * 37) % 270 WHEN 'voicemail' THEN 20 + h % 20 END AS duration) AS s`,
      [userId, campaignId, start, contacts, ATTEMPTS_PER_CONTACT],
    );
    // The dialer's per-contact state, derived from the attempts: reached once a call completed; a quarter
    // of the rest still waits for a retry, the others are out of retries.
    await client.query(
      `INSERT INTO campaign_contacts (id, campaign_id, contact_id, state, attempts, first_attempt_at, last_attempt_at,
         last_status, outcome, updated_at)
       SELECT ${idOf(3, 'row_number() OVER ()')}, $1, contact_id,
         (CASE WHEN reached OR get_byte(uuid_send(contact_id), 15) % 4 <> 0 THEN 'done' ELSE 'pending' END)::"DialState",
         attempts, first_at, last_at, last_status,
         CASE WHEN reached THEN 'reached' WHEN get_byte(uuid_send(contact_id), 15) % 4 <> 0 THEN 'not_reached' END, now()
       FROM (SELECT contact_id, count(*)::int AS attempts, min(created_at) AS first_at, max(created_at) AS last_at,
                    (array_agg(status::text ORDER BY attempt_number DESC))[1] AS last_status,
                    bool_or(status = 'completed') AS reached
             FROM call_attempts WHERE campaign_id = $1 GROUP BY contact_id) AS per_contact`,
      [campaignId],
    );
    // Every seventh completed call booked an appointment.
    await client.query(
      `INSERT INTO appointments (id, user_id, contact_id, campaign_id, call_attempt_id, status, scheduled_at, timezone,
         contact_snapshot, appointment_data, created_at, updated_at)
       SELECT ${idOf(4, 'row_number() OVER (ORDER BY a.created_at)')}, $1, a.contact_id, $2, a.id, 'scheduled',
         a.created_at + interval '3 days', 'America/New_York',
         jsonb_build_object('name', c.name, 'phone_number', c.phone_number),
         jsonb_build_object('source_call_id', a.id, 'notes', 'Booked by the agent'), a.ended_at, a.ended_at
       FROM call_attempts a JOIN contacts c ON c.id = a.contact_id
       WHERE a.campaign_id = $2 AND a.status = 'completed' AND get_byte(uuid_send(a.id), 15) % 7 = 0`,
      [userId, campaignId],
    );
    await client.query('COMMIT');
    // A settled table, as autovacuum leaves it: statistics for the planner and a visibility map.
    await client.query('VACUUM ANALYZE');
    const counts = await client.query<{ attempts: number; appointments: number }>(
      `SELECT (SELECT count(*)::int FROM call_attempts) AS attempts, (SELECT count(*)::int FROM appointments) AS appointments`,
    );
    return { userId, campaignId, contacts, ...counts.rows[0]! };
  } finally {
    await client.end();
  }
}
