import { describe, expect, inject, it } from 'vitest';
import { uuidv7 } from '../src/services/ids.js';
import { migrateWhileWriting, timed, type LiveConversion, type LiveWriter, type Query } from './support/live-migration.js';

// The webhook logs (webhook_deliveries, webhook_events, webhook_messages) become partitioned by month
// through four migrations that run on live tables, as call_attempts did (migrate-live.test.ts): on
// PostgreSQL a writer records providers' deliveries (and their repeats), emits events with their
// deliveries, settles, changes and deletes them the whole time the migrations run; none of its writes is
// lost, no event is recorded twice, and a message's key to its event holds. The embedded database has
// one connection, so there the writes come before and after the migrations.

const FIRST = '20261129130000_webhook_logs_partitioned';
const COPY = '20261129130100_webhook_logs_copy';
const TABLES = ['webhook_deliveries', 'webhook_events', 'webhook_messages'] as const;
const USER = '0000000a-0000-7000-8000-000000000001';
const ENDPOINT = '0000000a-0000-7000-8000-000000000002';
const onPostgres = inject('testDatabase').kind === 'postgres';
/** Rows of each table; WEBHOOK_LIVE_MIGRATION_ROWS runs it larger by hand (on PostgreSQL), e.g. 1000000. */
const ROWS = onPostgres ? Number(process.env.WEBHOOK_LIVE_MIGRATION_ROWS ?? 20_000) : 5_000;

/** A customer, its endpoint, and ROWS deliveries, events and messages over the last 120 days, as an older release left them. */
async function seed(query: Query) {
  await query(`INSERT INTO users (id) VALUES ($1::uuid)`, [USER]);
  await query(
    `INSERT INTO webhook_endpoints (id, user_id, url, event_types, secret, updated_at)
     VALUES ($1::uuid, $2::uuid, 'https://hooks.example.com/in', '{campaign.completed}', 'whsec_live', now())`,
    [ENDPOINT, USER],
  );
  // Row g (0..ROWS-1) made at a time of the last 120 days, its id a UUIDv7 of that time (the third group
  // says the table: 7001 deliveries, 7002 events, 7003 messages); one in a thousand with a random id
  // (landing in the default partition), and the last 50 messages still pending.
  const times = `FROM generate_series(0, $1 - 1) g
     CROSS JOIN LATERAL (SELECT now() - ($1 - g) * interval '120 days' / $1 AS at) t
     CROSS JOIN LATERAL (SELECT lpad(to_hex((extract(epoch FROM t.at) * 1000)::bigint), 12, '0') AS h) s`;
  const id = (kind: number) =>
    `CASE WHEN g % 1000 = 999 THEN gen_random_uuid() ELSE (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-700${kind}-8000-' || lpad(to_hex(g), 12, '0'))::uuid END`;
  await query(
    `INSERT INTO webhook_deliveries (id, source, event_key, received_at) SELECT ${id(1)}, 'retell', 'call_' || g || ':call_ended', t.at ${times}`,
    [ROWS],
  );
  await query(
    `INSERT INTO webhook_events (id, user_id, type, payload, created_at)
     SELECT ${id(2)}, $2::uuid, 'campaign.completed', jsonb_build_object('n', g), t.at ${times}`,
    [ROWS, USER],
  );
  await query(
    `INSERT INTO webhook_messages (id, event_id, endpoint_id, state, attempts, queued, created_at)
     SELECT ${id(3)}, e.id, $2::uuid, (CASE WHEN g >= $1 - 50 THEN 'pending' ELSE 'succeeded' END)::"WebhookMessageState", 1, true, t.at
     ${times} JOIN webhook_events e ON (e.payload->>'n')::int = g`,
    [ROWS, ENDPOINT],
  );
}

/** What a writer did, to be found again afterwards. */
class Writer implements LiveWriter {
  deliveries: string[] = [];
  events: string[] = [];
  messages: string[] = [];
  settled = new Set<string>();
  changed = new Map<string, number>();
  deleted = new Set<string>();
  repeats = 0;
  repeatsRecorded = 0;
  /** Each write's end (ms since 1970) and how long it took (ms). */
  writes: { at: number; ms: number }[] = [];
  private n = 0;

  constructor(
    private readonly query: Query,
    private readonly seeded: { event: string; message: string }[],
  ) {}

  private timed<Row>(text: string, values: unknown[]) {
    return timed(this.writes, () => this.query<Row>(text, values));
  }

  /**
   * One step: a provider's delivery recorded and an event emitted with its delivery; every 2nd step a
   * delivery succeeds; every 5th a provider repeats an event; every 3rd an old delivery is tried again;
   * every 10th an old event goes (with its deliveries).
   */
  async step() {
    const n = (this.n += 1);
    const key = `live_${n}:call_ended`;
    const delivery = uuidv7();
    await this.timed(
      `INSERT INTO webhook_deliveries (id, source, event_key) VALUES ($1::uuid, 'twilio', $2) ON CONFLICT DO NOTHING RETURNING id`,
      [delivery, key],
    );
    this.deliveries.push(delivery);
    if (n % 5 === 0) {
      const repeated = await this.timed(
        `INSERT INTO webhook_deliveries (id, source, event_key) VALUES ($1::uuid, 'twilio', $2) ON CONFLICT DO NOTHING RETURNING id`,
        [uuidv7(), `live_${n - 2}:call_ended`],
      );
      this.repeats += 1;
      this.repeatsRecorded += repeated.length;
    }
    const event = uuidv7();
    const message = uuidv7();
    await this.timed(
      `WITH e AS (INSERT INTO webhook_events (id, user_id, type, payload) VALUES ($1::uuid, $3::uuid, 'campaign.completed', '{}') RETURNING id)
       INSERT INTO webhook_messages (id, event_id, endpoint_id) SELECT $2::uuid, e.id, $4::uuid FROM e`,
      [event, message, USER, ENDPOINT],
    );
    this.events.push(event);
    this.messages.push(message);
    if (n % 2 === 0) {
      const settling = this.messages[n / 2 - 1]!;
      await this.timed(`UPDATE webhook_messages SET state = 'succeeded', attempts = 1, delivered_at = now() WHERE id = $1::uuid`, [
        settling,
      ]);
      this.settled.add(settling);
    }
    const old = this.seeded[n % this.seeded.length]!;
    if (n % 10 === 0 && !this.changed.has(old.message)) {
      await this.timed('DELETE FROM webhook_events WHERE id = $1::uuid', [old.event]);
      this.deleted.add(old.event).add(old.message);
    } else if (n % 3 === 0 && !this.deleted.has(old.event)) {
      await this.timed(`UPDATE webhook_messages SET attempts = attempts + 1, last_status_code = 500 WHERE id = $1::uuid`, [old.message]);
      this.changed.set(old.message, (this.changed.get(old.message) ?? 1) + 1);
    }
  }
}

async function writerFor(query: Query): Promise<Writer> {
  const seeded = await query<{ event: string; message: string }>(
    `SELECT event_id AS event, id AS message FROM webhook_messages WHERE state = 'succeeded' AND id::text LIKE '%-7003-8000-%' ORDER BY id LIMIT 5000`,
  );
  return new Writer(query, seeded);
}

/** The conversion kept every row and every write, each event recorded once, and the keys. */
async function expectConverted(query: Query, writer: Writer) {
  for (const table of TABLES) {
    const [shape] = await query<{ kind: string; partitions: number; stray: number; misplaced: number }>(
      `SELECT c.relkind::text AS kind, (SELECT count(*)::int FROM pg_inherits WHERE inhparent = c.oid) AS partitions,
              (SELECT count(*)::int FROM ${table}_default) AS stray,
              (SELECT count(*)::int FROM ${table}_default WHERE id::text ~ '-700[123]-8000-') AS misplaced
       FROM pg_class c WHERE c.oid = $1::regclass`,
      [table],
    );
    expect(shape!.kind, table).toBe('p');
    // 120 days of months, the next month and the default.
    expect(shape!.partitions, table).toBeGreaterThanOrEqual(6);
    expect(shape!.misplaced, table).toBe(0);
    expect(shape!.stray, table).toBeLessThanOrEqual(Math.floor(ROWS / 1000));
    expect(await query(`SELECT to_regclass($1)::text AS old`, [`${table}_unpartitioned`])).toEqual([{ old: null }]);
  }
  const deletedEvents = [...writer.deleted].filter((id) => id.includes('-7002-')).length;
  const deletedMessages = writer.deleted.size - deletedEvents;
  const [counts] = await query<{ deliveries: number; events: number; messages: number; keys: number }>(
    `SELECT (SELECT count(*)::int FROM webhook_deliveries) AS deliveries, (SELECT count(*)::int FROM webhook_events) AS events,
            (SELECT count(*)::int FROM webhook_messages) AS messages,
            (SELECT count(DISTINCT (source, event_key))::int FROM webhook_deliveries) AS keys`,
  );
  expect(counts).toEqual({
    deliveries: ROWS + writer.deliveries.length,
    events: ROWS + writer.events.length - deletedEvents,
    messages: ROWS + writer.messages.length - deletedMessages,
    keys: ROWS + writer.deliveries.length,
  });
  expect(writer.repeatsRecorded).toBe(0);

  const found = await query<{ id: string; state: string; attempts: number }>(
    'SELECT id, state::text, attempts FROM webhook_messages WHERE id = ANY($1::uuid[])',
    [[...writer.messages, ...writer.changed.keys(), ...writer.deleted]],
  );
  const byId = new Map(found.map((row) => [row.id, row]));
  expect(writer.messages.filter((id) => byId.get(id)?.state !== (writer.settled.has(id) ? 'succeeded' : 'pending'))).toEqual([]);
  expect([...writer.changed].filter(([id, attempts]) => byId.get(id)?.attempts !== attempts)).toEqual([]);
  expect([...writer.deleted].filter((id) => byId.has(id))).toEqual([]);
  const events = await query<{ id: string }>('SELECT id FROM webhook_events WHERE id = ANY($1::uuid[])', [
    [...writer.events, ...writer.deleted],
  ]);
  expect(events.map((e) => e.id).sort()).toEqual([...writer.events].sort());

  // A message's event is a checked key of the table (the partitions' adopted), and it still cascades.
  expect(
    await query(
      `SELECT conname, convalidated FROM pg_constraint WHERE conrelid = 'webhook_messages'::regclass AND confrelid = 'webhook_events'::regclass`,
    ),
  ).toEqual([{ conname: 'webhook_messages_event_id_fkey', convalidated: true }]);
  expect(
    await query(`SELECT conrelid::regclass::text AS t, confrelid::regclass::text AS r FROM pg_constraint
       WHERE contype = 'f' AND NOT convalidated AND (conrelid::regclass::text LIKE 'webhook%' OR confrelid::regclass::text LIKE 'webhook%')`),
  ).toEqual([]);
  await expect(
    query(`INSERT INTO webhook_messages (id, event_id, endpoint_id) VALUES ($1::uuid, $2::uuid, $3::uuid)`, [uuidv7(), uuidv7(), ENDPOINT]),
  ).rejects.toThrow(/webhook_messages_event_id_fkey/);
  const [gone] = writer.events;
  await query('DELETE FROM webhook_events WHERE id = $1::uuid', [gone]);
  expect(await query('SELECT id FROM webhook_messages WHERE event_id = $1::uuid', [gone])).toEqual([]);
  // The replays' index, made here or by an earlier migration.
  expect(await query(`SELECT to_regclass('webhook_messages_replay_of_idx') IS NOT NULL AS made`)).toEqual([{ made: true }]);
}

const conversion: LiveConversion<Writer> = {
  first: FIRST,
  copy: COPY,
  seed,
  seeded: TABLES.join(', '),
  writerFor,
  expectConverted,
  label: `3 x ${ROWS} webhook log rows`,
};

describe('webhook logs partitioned through live migrations', { timeout: 600_000 + ROWS / 5 }, () => {
  it.runIf(onPostgres)('on PostgreSQL, while a writer records, emits, settles and deletes', () =>
    migrateWhileWriting('postgres', conversion),
  );

  it('on the embedded database, with writes before and after', () => migrateWhileWriting('embedded', conversion));
});
