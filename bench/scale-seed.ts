// The data of the scale benchmark and of the plan test: CONTACTS contacts across CUSTOMERS customers, one
// of whom holds 40% of them, each contact called five times over three years, written set-based
// (generate_series, INSERT ... SELECT) as years of dialing would have left them. Each table is filled by
// one statement of SEED below, in order, so a change of a table's keys or partitioning changes one place.
// Everything derives from the contact's number i (1..contacts) and the attempt's number n (1..5), so every
// run sees the same rows.

export interface ScaleOptions {
  contacts: number;
  customers?: number;
  /** Contacts of the large customer's campaign left waiting for the dialer (at most its contacts). */
  waiting?: number;
}

export const ATTEMPTS_PER_CONTACT = 5;
/** The large customer's share of the contacts. */
export const LARGE_SHARE = 0.4;
/** Three years of calls, in seconds. */
const SPAN_SECONDS = 3 * 365 * 86_400;
/**
 * The three years end with the current month, so that the month being written holds a month of calls,
 * as it does in a service at its steady state (its later days are in the future): a month's partition
 * just begun holds a few rows, and PostgreSQL rightly reads so small a table whole. The start is the
 * first day of a month, 36 months before the next.
 */
const today = new Date();
export const SEED_START = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1 - 36, 1)).toISOString();

/** A fixed id for row `expr` of table kind `kind` (hex, 1..f), time-ordered within a kind like UUIDv7s. */
export const idOf = (kind: number, expr: string) =>
  `('${kind.toString(16).padStart(8, '0')}-0000-7000-8000-' || lpad(to_hex(${expr}), 12, '0'))::uuid`;

/** The ids of customer k's user, agent, group, campaign, phone number and webhook endpoint. */
export const customerIds = (k: number) => ({
  userId: uuidOf(0xa, k),
  agentId: uuidOf(0xb, k),
  groupId: uuidOf(0xc, k),
  campaignId: uuidOf(0xd, k),
  endpointId: uuidOf(0xe, k),
});
const uuidOf = (kind: number, n: number) => `${kind.toString(16).padStart(8, '0')}-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;
export const contactId = (i: number) => uuidOf(1, i);

/**
 * Contact i's place (1..contacts) in each round of calls. A round calls every contact once, as a campaign
 * dials its list: each customer's contacts in the order they were imported, the customers' calls
 * interleaved so that each customer's are spread over the round (not bunched in the months of its
 * contacts' numbers). In every five places, two go to the large customer's next contacts (its 40%) and
 * three to the others' next (dealt round the other customers), so the contacts must be a multiple of five.
 */
const slotOf = (i: number, contacts: number) => {
  const large = (contacts * 2) / 5;
  if (i <= large) return 5 * Math.floor((i - 1) / 2) + ((i - 1) % 2) + 1;
  const r = i - large - 1;
  return 5 * Math.floor(r / 3) + 2 + (r % 3) + 1;
};
/** SQL for the contact called at place `s` of a round (the inverse of slotOf); `$1` is the contacts. */
const contactAtSlot = (s: string) =>
  `CASE WHEN (${s} - 1) % 5 < 2 THEN 2 * ((${s} - 1) / 5) + (${s} - 1) % 5 + 1
     ELSE $1 * 2 / 5 + 3 * ((${s} - 1) / 5) + (${s} - 1) % 5 - 1 END`;

/**
 * Attempt n of contact i is attempt number k = (n - 1) * contacts + i, made at round n's place of contact
 * i, `offset` milliseconds after SEED_START (the place's share of the span, whole milliseconds, so SQL
 * and JavaScript agree). Its id is a UUIDv7 of that instant (k in its last bits), so it lands in its
 * month's partition.
 */
export function attemptId(contacts: number, i: number, n: number): string {
  const k = (n - 1) * contacts + i;
  const slot = (n - 1) * contacts + slotOf(i, contacts);
  const offset = (BigInt(slot) * BigInt(SPAN_SECONDS * 1000)) / BigInt(ATTEMPTS_PER_CONTACT * contacts);
  const ms = (BigInt(Date.parse(SEED_START)) + offset).toString(16).padStart(12, '0');
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7000-8000-${k.toString(16).padStart(12, '0')}`;
}
/** The same in SQL, of the attempt number `k` and its offset in milliseconds `offset` (bigint expressions). */
const attemptIdOf = (k: string, offset: string) =>
  `(SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(${k}), 12, '0'))::uuid
    FROM (SELECT lpad(to_hex((extract(epoch FROM $4) * 1000)::bigint + ${offset}), 12, '0') AS h) AS t)`;

/**
 * SQL for the customer (1..customers) of contact `i`: the first 40% of the contacts are customer 1's, the
 * rest dealt round the others. `$contacts` and `$customers` are the statement's parameters.
 */
const customerOf = (i: string) => `CASE WHEN ${i} <= floor($1 * ${LARGE_SHARE}) THEN 1 ELSE 2 + (${i} - 1) % ($2 - 1) END`;
const ownerId = (k: string) => idOf(0xa, k);
/** A valid US number for contact `i`, distinct for up to 8x10^7 contacts (area, exchange 200-999, line). */
const phoneOf = (i: string) =>
  `('+1' || (ARRAY['212', '312', '415', '617', '206', '303', '512', '646', '718', '305'])[(${i} / 8000000) % 10 + 1]
    || (200 + (${i} / 10000) % 800) || lpad((${i} % 10000)::text, 4, '0'))`;

/** The customer (1..customers) whose contact `i` is, as the seed deals them. */
export const customerOfContact = (i: number, contacts: number, customers = 1_000) =>
  i <= Math.floor(contacts * LARGE_SHARE) ? 1 : 2 + ((i - 1) % (customers - 1));
/** The first contact of customer k. */
export function firstContactOf(k: number, contacts: number, customers = 1_000): number {
  for (let i = 1; i <= contacts; i += 1) if (customerOfContact(i, contacts, customers) === k) return i;
  throw new Error(`customer ${k} has no contacts`);
}

/** One statement per table, in which $1 is the contacts, $2 the customers, $3 the waiting contacts, $4 the start. */
export const SEED: { table: string; sql: string }[] = [
  { table: 'users', sql: `INSERT INTO users (id) SELECT ${ownerId('k')} FROM generate_series(1, $2) k` },
  {
    table: 'agents',
    sql: `INSERT INTO agents (id, user_id, template_id, name, response_engine_type, system_prompt, provisioning_state,
            provider_agent_id, provisioned_version, phone_number_id, updated_at)
          SELECT ${idOf(0xb, 'k')}, ${ownerId('k')}, t.id, 'Agent ' || k, t.response_engine_type, 'Hello', 'ready',
            'sim_' || k, 1, ${idOf(0xf, 'k')}, $4
          FROM generate_series(1, $2) k, (SELECT * FROM agent_templates ORDER BY template_key LIMIT 1) t`,
  },
  {
    table: 'phone_numbers',
    sql: `INSERT INTO phone_numbers (id, user_id, agent_id, number, is_primary)
          SELECT ${idOf(0xf, 'k')}, ${ownerId('k')}, ${idOf(0xb, 'k')}, '+1415' || (5000000 + k), true FROM generate_series(1, $2) k`,
  },
  {
    table: 'contact_groups',
    sql: `INSERT INTO contact_groups (id, user_id, name, total, created_at, updated_at)
          SELECT ${idOf(0xc, 'k')}, ${ownerId('k')}, 'List ' || k,
            CASE WHEN k = 1 THEN floor($1 * ${LARGE_SHARE}) ELSE ($1 - floor($1 * ${LARGE_SHARE})) / ($2 - 1) END, $4, $4
          FROM generate_series(1, $2) k`,
  },
  {
    table: 'campaigns',
    sql: `INSERT INTO campaigns (id, user_id, agent_id, contact_group_id, name, status, started_at, concurrent_calls,
            timezone, calling_hours, active_days, schedule_config, regional_rules, created_at, updated_at)
          SELECT ${idOf(0xd, 'k')}, ${ownerId('k')}, ${idOf(0xb, 'k')}, ${idOf(0xc, 'k')}, 'Campaign ' || k,
            CASE WHEN k = 1 THEN 'running' ELSE 'completed' END::"CampaignStatus", $4, 10, 'UTC',
            '{"start": "00:00", "end": "24:00"}', '["mon", "tue", "wed", "thu", "fri", "sat", "sun"]',
            '{"max_attempts": 6}', k <> 1, $4, $4
          FROM generate_series(1, $2) k`,
  },
  {
    // The large customer dials at any hour (its campaign's regional rules off, under an administrator's exemption).
    table: 'regional_rule_exemptions',
    sql: `INSERT INTO regional_rule_exemptions (id, user_id, granted_by, reason, expires_at)
          VALUES (${idOf(0xa, '1')}, ${ownerId('1')}, 'scale seed', 'Calls at any hour', '2100-01-01')`,
  },
  {
    // A national registry copy in force, as a solicitation campaign needs to dial.
    table: 'registry_imports',
    sql: `INSERT INTO registry_imports (id, registry, downloaded_on, numbers, area_codes, imported_by)
          VALUES (${idOf(0xa, '2')}, 'us_dnc', current_date, 0, ARRAY['212', '312', '415', '617', '206', '303', '512', '646', '718', '305'], 'scale seed')`,
  },
  {
    table: 'credit_accounts',
    sql: `INSERT INTO credit_accounts (user_id, balance_cents, updated_at)
          SELECT ${ownerId('k')}, 100000000, $4 FROM generate_series(1, $2) k`,
  },
  {
    table: 'contacts',
    sql: `INSERT INTO contacts (id, user_id, contact_group_id, phone_number, status, name, data, created_at, updated_at)
          SELECT ${idOf(1, 'i')}, ${ownerId('c.k')}, ${idOf(0xc, 'c.k')}, ${phoneOf('i')}, 'active', 'Person ' || i,
            jsonb_build_object('first_name', 'Person', 'last_name', i::text, 'phone_number', ${phoneOf('i')}),
            $4::timestamptz + make_interval(secs => i * ${SPAN_SECONDS / ATTEMPTS_PER_CONTACT}.0 / $1),
            $4::timestamptz + make_interval(secs => i * ${SPAN_SECONDS / ATTEMPTS_PER_CONTACT}.0 / $1)
          FROM generate_series(1, $1) i CROSS JOIN LATERAL (SELECT ${customerOf('i')} AS k) c`,
  },
  {
    // The calls in the order they were made, as the service appends them (g is the place among all
    // rounds' calls): attempt n of contact i at its place in round n (see attemptId); h is a fixed hash
    // that picks the outcome.
    table: 'call_attempts',
    sql: `INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, outcome, to_number,
            from_number, duration_seconds, summary, sentiment, cost_cents, started_at, ended_at, created_at, updated_at)
          SELECT ${attemptIdOf('(n - 1) * $1 + i', 'c.after_ms')}, ${ownerId('c.k')}, ${idOf(0xd, 'c.k')}, ${idOf(1, 'i')}, n, s.status::"CallStatus",
             s.outcome::"CallOutcome", ${phoneOf('i')}, '+1415' || (5000000 + c.k), s.duration,
            CASE WHEN s.status = 'completed' THEN 'Talked about the offer (' || h || ')' END,
            (CASE WHEN s.status = 'completed' THEN (ARRAY['positive', 'neutral', 'negative', 'unknown'])[h % 4 + 1] ELSE 'unknown' END)::"Sentiment",
            coalesce(ceil(s.duration * 10 / 60.0), 0), at, at + make_interval(secs => coalesce(s.duration, 0)), at, at
          FROM generate_series(0, ${ATTEMPTS_PER_CONTACT} * $1::bigint - 1) g
          CROSS JOIN LATERAL (SELECT (g / $1 + 1)::int AS n, g % $1 + 1 AS s) r
          CROSS JOIN LATERAL (SELECT (${contactAtSlot('r.s')})::int AS i,
            (g + 1) * ${SPAN_SECONDS * 1000} / (${ATTEMPTS_PER_CONTACT} * $1) AS after_ms) o
          CROSS JOIN LATERAL (SELECT ${customerOf('i')} AS k, ((i::bigint * 7919 + n * 104729) % 100)::int AS h, o.after_ms,
            $4::timestamptz + o.after_ms * interval '1 millisecond' AS at) c
          CROSS JOIN LATERAL (SELECT CASE WHEN h < 50 THEN 'no_answer' WHEN h < 65 THEN 'busy' WHEN h < 80 THEN 'voicemail'
            WHEN h < 85 THEN 'failed' ELSE 'completed' END AS status) st
          CROSS JOIN LATERAL (SELECT st.status,
            CASE st.status WHEN 'completed' THEN 'human' WHEN 'no_answer' THEN 'no_answer' WHEN 'busy' THEN 'busy'
              WHEN 'voicemail' THEN 'voicemail' ELSE 'failed' END AS outcome,
            CASE st.status WHEN 'completed' THEN 30 + (h * 37) % 270 WHEN 'voicemail' THEN 20 + h % 20 END AS duration) s`,
  },
  {
    // The dialer's state per contact: the large customer's first `waiting` contacts are due again now.
    table: 'campaign_contacts',
    sql: `INSERT INTO campaign_contacts (id, campaign_id, contact_id, state, attempts, first_attempt_at, last_attempt_at,
            next_attempt_at, ready_at, last_status, outcome, updated_at)
          SELECT ${idOf(3, 'i')}, ${idOf(0xd, 'c.k')}, ${idOf(1, 'i')}, CASE WHEN w THEN 'pending' ELSE 'done' END::"DialState",
            ${ATTEMPTS_PER_CONTACT}, $4, $4, CASE WHEN w THEN $4::timestamptz END, CASE WHEN w THEN $4::timestamptz END, 'no_answer',
            CASE WHEN w THEN NULL ELSE 'not_reached' END, $4
          FROM generate_series(1, $1) i CROSS JOIN LATERAL (SELECT ${customerOf('i')} AS k) c
          CROSS JOIN LATERAL (SELECT c.k = 1 AND i <= $3 AS w) d`,
  },
  {
    // A top-up per customer, then a charge per completed call.
    table: 'credit_transactions',
    sql: `INSERT INTO credit_transactions (id, user_id, kind, amount_cents, balance_after_cents, included_after_cents,
            description, campaign_id, call_attempt_id, created_at)
          SELECT ${idOf(5, 'k')}, ${ownerId('k')}, 'top_up'::"CreditTransactionKind", 100000000, 100000000, 0, 'Top-up', NULL, NULL, $4
          FROM generate_series(1, $2) k
          UNION ALL
          SELECT ${idOf(5, `$2 + row_number() OVER ()`)}, a.user_id, 'call_charge'::"CreditTransactionKind", -a.cost_cents, 100000000, 0, 'Call',
            a.campaign_id, a.id, a.ended_at
          FROM call_attempts a WHERE a.status = 'completed'`,
  },
  {
    table: 'appointments',
    sql: `INSERT INTO appointments (id, user_id, contact_id, campaign_id, call_attempt_id, status, scheduled_at, timezone,
            contact_snapshot, created_at, updated_at)
          SELECT ${idOf(4, 'row_number() OVER ()')}, a.user_id, a.contact_id, a.campaign_id, a.id, 'scheduled',
            a.created_at + interval '3 days', 'America/New_York', '{}', a.ended_at, a.ended_at
          FROM call_attempts a WHERE a.status = 'completed' AND get_byte(uuid_send(a.id), 15) % 7 = 0`,
  },
  {
    table: 'dial_blocks',
    sql: `INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason, detail, created_at)
          SELECT ${idOf(6, 'i')}, ${ownerId('c.k')}, ${idOf(0xd, 'c.k')}, ${idOf(1, 'i')}, 'regional_hours', 'US',
            $4::timestamptz + make_interval(secs => i * ${SPAN_SECONDS}.0 / $1)
          FROM generate_series(10, $1, 10) i CROSS JOIN LATERAL (SELECT ${customerOf('i')} AS k) c`,
  },
  {
    table: 'do_not_call_entries',
    sql: `INSERT INTO do_not_call_entries (id, user_id, phone_number, created_at)
          SELECT ${idOf(7, 'i')}, ${ownerId('c.k')}, '+1' || (3000000000 + i), $4::timestamptz + make_interval(secs => i)
          FROM generate_series(1, $1, 5) i CROSS JOIN LATERAL (SELECT ${customerOf('i')} AS k) c`,
  },
  {
    table: 'contact_consents',
    sql: `INSERT INTO contact_consents (id, user_id, contact_id, kind, source, obtained_at, created_at)
          SELECT ${idOf(8, 'i')}, ${ownerId('c.k')}, ${idOf(1, 'i')}, 'calls', 'web form', $4, $4
          FROM generate_series(20, $1, 20) i CROSS JOIN LATERAL (SELECT ${customerOf('i')} AS k) c`,
  },
  {
    table: 'registry_numbers',
    sql: `INSERT INTO registry_numbers (registry, number)
          SELECT r, 13000000000 + i FROM generate_series(1, $1, 3) i, unnest(enum_range(NULL::"DoNotCallRegistry")) r`,
  },
  {
    table: 'webhook_endpoints',
    sql: `INSERT INTO webhook_endpoints (id, user_id, url, secret, created_at, updated_at)
          SELECT ${idOf(0xe, 'k')}, ${ownerId('k')}, 'https://hooks.example.com/' || k, 'whsec_' || k, $4, $4
          FROM generate_series(1, $2) k`,
  },
  {
    // One call.ended event per contact's last attempt, delivered once.
    table: 'webhook_events',
    sql: `INSERT INTO webhook_events (id, user_id, type, payload, created_at)
          SELECT ${idOf(9, 'i')}, ${ownerId('c.k')}, 'call.ended', jsonb_build_object('contact_id', ${idOf(1, 'i')}),
            $4::timestamptz + make_interval(secs => i * ${SPAN_SECONDS}.0 / $1)
          FROM generate_series(1, $1) i CROSS JOIN LATERAL (SELECT ${customerOf('i')} AS k) c`,
  },
  {
    table: 'webhook_messages',
    sql: `INSERT INTO webhook_messages (id, event_id, endpoint_id, state, attempts, queued, last_status_code, delivered_at, created_at)
          SELECT ${idOf(9, 'i')}, ${idOf(9, 'i')}, ${idOf(0xe, 'c.k')}, 'succeeded', 1, true, 200, e.created_at, e.created_at
          FROM generate_series(1, $1) i CROSS JOIN LATERAL (SELECT ${customerOf('i')} AS k) c
          JOIN webhook_events e ON e.id = ${idOf(9, 'i')}`,
  },
];

/**
 * Fills a migrated database (with its agent templates) through `run`, one statement at a time, and leaves
 * it as autovacuum would: the tables written vacuumed and analyzed. `onTable` hears each table's time.
 */
export async function seedScale(
  run: (text: string) => Promise<{ rows: unknown[] }>,
  options: ScaleOptions,
  onTable: (table: string, ms: number) => void = () => {},
): Promise<void> {
  const customers = options.customers ?? 1_000;
  if (options.contacts % 5 !== 0) throw new Error('the scale seed deals its contacts in fives (see slotOf)');
  const waiting = Math.min(options.waiting ?? 1_000_000, Math.floor(options.contacts * LARGE_SHARE));
  // The months of the three years of calls, made as the retention job makes them, before their rows arrive.
  await run(
    `SELECT month_partition_add('call_attempts', 'call_attempts', m::date)
     FROM generate_series('${SEED_START}'::timestamptz AT TIME ZONE 'UTC', ('${SEED_START}'::timestamptz + interval '${SPAN_SECONDS} seconds') AT TIME ZONE 'UTC', interval '1 month') AS m`,
  );
  for (const { table, sql } of SEED) {
    const started = performance.now();
    await bulkLoad(run, table, withValues(sql, [options.contacts, customers, waiting, `'${SEED_START}'::timestamptz`]));
    onTable(table, performance.now() - started);
  }
  // Autovacuum processes the tables that were written; it never analyzes a partitioned parent (its
  // partitions' statistics are what plans use) nor touches a partition nothing was written to, which
  // the planner then takes for ten pages, not for empty: the months made ahead, the default partition.
  const started = performance.now();
  const written = (
    await run(
      `SELECT c.oid::regclass::text AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind = 'r' AND n.nspname = current_schema() AND pg_relation_size(c.oid) > 0`,
    )
  ).rows as { name: string }[];
  await run(`VACUUM ANALYZE ${written.map((table) => table.name).join(', ')}`);
  onTable('vacuum analyze', performance.now() - started);
}

/**
 * One table's rows, loaded as a restore would: its secondary indexes built once after the rows are in, and
 * its foreign keys not checked row by row (the rows are consistent by construction). Its own triggers
 * (the report's running totals) still fire, as they do in production: made ALWAYS for the load, since
 * the replica role that skips the foreign-key checks skips ordinary triggers too.
 */
async function bulkLoad(run: (text: string) => Promise<{ rows: unknown[] }>, table: string, insert: string): Promise<void> {
  const literal = `'${table}'`;
  const indexes = (
    await run(
      `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i
     WHERE i.indrelid = ${literal}::regclass AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
    )
  ).rows as { name: string; definition: string }[];
  const triggers = (
    await run(`SELECT tgname AS name FROM pg_trigger WHERE tgrelid = ${literal}::regclass AND NOT tgisinternal AND tgenabled = 'O'`)
  ).rows as { name: string }[];
  for (const index of indexes) await run(`DROP INDEX ${index.name}`);
  // A partitioned table's index is printed ON ONLY the parent; made so, no partition would have it.
  for (const trigger of triggers) await run(`ALTER TABLE ${table} ENABLE ALWAYS TRIGGER ${trigger.name}`);
  await run('SET session_replication_role = replica');
  try {
    await run(insert);
  } finally {
    await run('SET session_replication_role = DEFAULT');
    for (const trigger of triggers) await run(`ALTER TABLE ${table} ENABLE TRIGGER ${trigger.name}`);
    for (const index of indexes) await run(index.definition.replace(' ON ONLY ', ' ON '));
  }
}

/** The statement with its $1..$4 written in: a statement need not use them all, nor PostgreSQL type them. */
export const withValues = (sql: string, values: (number | string)[]) =>
  sql.replace(/\$(\d)/g, (_, n: string) => `(${values[Number(n) - 1]})`);
