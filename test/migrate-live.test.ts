import { describe, expect, inject, it } from 'vitest';
import { customerIds } from '../bench/scale-seed.js';
import { uuidv7 } from '../src/services/ids.js';
import { migrateWhileWriting, seedCustomers, timed, type LiveConversion, type LiveWriter, type Query } from './support/live-migration.js';

// call_attempts becomes partitioned by month through four migrations that run on a live table: the twin
// with its mirror, the copy in batches, the swap, the drop. On PostgreSQL a writer inserts, updates and
// deletes attempts the whole time the migrations run: none of its writes is lost, and it goes on writing
// while the rows are copied (how long its longest write waited is measured and printed, not asserted: it
// depends on the machine). The embedded database has one connection, so there the writes come before
// and after the migrations.

const FIRST = '20261129100000_call_attempts_partitioned';
const COPY = '20261129100100_call_attempts_copy';
const CONTACTS = 10_000;
const CUSTOMERS = 10;
const onPostgres = inject('testDatabase').kind === 'postgres';
/** LIVE_MIGRATION_ROWS runs it larger by hand (on PostgreSQL), e.g. 1000000. */
const ROWS = onPostgres ? Number(process.env.LIVE_MIGRATION_ROWS ?? 200_000) : 20_000;

/** The tables of the calls, as an older release left them: 10 customers, their contacts and ROWS attempts. */
async function seed(query: Query) {
  await seedCustomers(query, CONTACTS, CUSTOMERS);
  // Attempt g (0..ROWS-1) of contact 1 + g % CONTACTS over the last 120 days, a UUIDv7 of its time; one in
  // a thousand with a random id (landing in the default partition); the last 50 still in flight.
  await query(
    `INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, outcome, to_number, duration_seconds,
       sentiment, cost_cents, created_at, updated_at)
     SELECT CASE WHEN g % 1000 = 999 THEN gen_random_uuid()
                 ELSE (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid END,
            c.user_id, k.id, c.id, g / $2 + 1, s.status::"CallStatus", CASE WHEN s.status = 'completed' THEN 'human'::"CallOutcome" END,
            c.phone_number, 60, 'positive', 10, t.at, t.at
     FROM generate_series(0, $1 - 1) g
     CROSS JOIN LATERAL (SELECT now() - ($1 - g) * interval '120 days' / $1 AS at) t
     CROSS JOIN LATERAL (SELECT lpad(to_hex((extract(epoch FROM t.at) * 1000)::bigint), 12, '0') AS h,
                                CASE WHEN g >= $1 - 50 THEN 'queued' ELSE 'completed' END AS status) s
     JOIN contacts c ON c.id = ('00000001-0000-7000-8000-' || lpad(to_hex(1 + g % $2), 12, '0'))::uuid
     JOIN campaigns k ON k.contact_group_id = c.contact_group_id`,
    [ROWS, CONTACTS],
  );
}

/** What a writer did, to be found again afterwards. */
class Writer implements LiveWriter {
  inserted: string[] = [];
  ended = new Set<string>();
  updated = new Map<string, string>();
  deleted = new Set<string>();
  /** Each write's end (ms since 1970) and how long it took (ms). */
  writes: { at: number; ms: number }[] = [];
  private n = 0;

  constructor(
    private readonly query: Query,
    private readonly seeded: string[],
    private readonly campaign: { userId: string; campaignId: string; contactId: string },
  ) {}

  private async timed(text: string, values: unknown[]) {
    await timed(this.writes, () => this.query(text, values));
  }

  /** One step: a call placed; every 2nd step one ends; every 3rd an old attempt changes; every 10th one goes. */
  async step() {
    const n = (this.n += 1);
    const id = uuidv7();
    await this.timed(
      `INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, to_number, created_at, updated_at)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5, 'queued', $6, now(), now())`,
      [id, this.campaign.userId, this.campaign.campaignId, this.campaign.contactId, 1000 + n, `+1999${String(n).padStart(7, '0')}`],
    );
    this.inserted.push(id);
    if (n % 2 === 0) {
      const ending = this.inserted[n / 2 - 1]!;
      await this.timed(
        `UPDATE call_attempts SET status = 'completed', outcome = 'human', duration_seconds = 30, cost_cents = 5, updated_at = now() WHERE id = $1::uuid`,
        [ending],
      );
      this.ended.add(ending);
    }
    const old = this.seeded[n % this.seeded.length]!;
    if (n % 10 === 0 && !this.updated.has(old)) {
      await this.timed('DELETE FROM call_attempts WHERE id = $1::uuid', [old]);
      this.deleted.add(old);
    } else if (n % 3 === 0 && !this.deleted.has(old)) {
      await this.timed(`UPDATE call_attempts SET summary = $2, updated_at = now() WHERE id = $1::uuid`, [old, `changed at step ${n}`]);
      this.updated.set(old, `changed at step ${n}`);
    }
  }
}

/** The conversion kept every row and every write, and what is kept from the rows (totals, calls in flight). */
async function expectConverted(query: Query, writer: Writer) {
  const [table] = await query<{ kind: string; partitions: number; stray: number; misplaced: number }>(
    `SELECT c.relkind::text AS kind, (SELECT count(*)::int FROM pg_inherits WHERE inhparent = c.oid) AS partitions,
            (SELECT count(*)::int FROM call_attempts_default) AS stray,
            (SELECT count(*)::int FROM call_attempts_default WHERE id::text LIKE '%-7000-8000-%') AS misplaced
     FROM pg_class c WHERE c.oid = 'call_attempts'::regclass`,
  );
  expect(table!.kind).toBe('p');
  // 120 days of months, the next month and the default.
  expect(table!.partitions).toBeGreaterThanOrEqual(6);
  // Every UUIDv7 in its month; the random ids in the default partition, but for the few whose first bits
  // read as a time of the months made.
  expect(table!.misplaced).toBe(0);
  expect(table!.stray).toBeGreaterThan(0);
  expect(table!.stray).toBeLessThanOrEqual(Math.floor(ROWS / 1000));
  expect(await query(`SELECT to_regclass('call_attempts_unpartitioned')::text AS old`)).toEqual([{ old: null }]);

  const [counts] = await query<{ rows: number }>('SELECT count(*)::int AS rows FROM call_attempts');
  expect(counts!.rows).toBe(ROWS + writer.inserted.length - writer.deleted.size);
  const found = await query<{ id: string; status: string; summary: string | null }>(
    'SELECT id, status::text, summary FROM call_attempts WHERE id = ANY($1::uuid[])',
    [[...writer.inserted, ...writer.updated.keys(), ...writer.deleted]],
  );
  const byId = new Map(found.map((row) => [row.id, row]));
  expect(writer.inserted.filter((id) => !byId.has(id))).toEqual([]);
  expect(writer.inserted.filter((id) => byId.get(id)!.status !== (writer.ended.has(id) ? 'completed' : 'queued'))).toEqual([]);
  expect([...writer.updated].filter(([id, summary]) => byId.get(id)?.summary !== summary)).toEqual([]);
  expect([...writer.deleted].filter((id) => byId.has(id))).toEqual([]);

  // The report's running totals count every row there is, by campaign and status.
  const mismatched = await query(
    `SELECT * FROM (SELECT campaign_id, status, count(*)::int AS calls FROM call_attempts GROUP BY 1, 2) a
     FULL JOIN (SELECT campaign_id, status, sum(calls)::int AS calls FROM campaign_call_totals GROUP BY 1, 2 HAVING sum(calls) <> 0) t
       USING (campaign_id, status)
     WHERE a.calls IS DISTINCT FROM t.calls`,
  );
  expect(mismatched).toEqual([]);
  // Every call in flight holds its number, and only those.
  const live = await query<{ missing: number; extra: number }>(
    `SELECT (SELECT count(*)::int FROM call_attempts a WHERE a.status IN ('queued', 'ringing', 'in_progress')
               AND NOT EXISTS (SELECT FROM live_calls l WHERE l.attempt_id = a.id AND l.to_number = a.to_number)) AS missing,
            (SELECT count(*)::int FROM live_calls l WHERE NOT EXISTS (
               SELECT FROM call_attempts a WHERE a.id = l.attempt_id AND a.status IN ('queued', 'ringing', 'in_progress'))) AS extra`,
  );
  expect(live).toEqual([{ missing: 0, extra: 0 }]);
  expect(await query(`SELECT conname FROM pg_constraint WHERE confrelid = 'call_attempts'::regclass AND NOT convalidated`)).toEqual([]);
}

async function writerFor(query: Query): Promise<Writer> {
  const seeded = (
    await query<{ id: string }>(
      `SELECT id FROM call_attempts WHERE status = 'completed' AND id::text LIKE '%-7000-8000-%' ORDER BY id LIMIT 5000`,
    )
  ).map((row) => row.id);
  const ids = customerIds(2);
  const [contact] = await query<{ id: string }>('SELECT id FROM contacts WHERE contact_group_id = $1::uuid LIMIT 1', [ids.groupId]);
  return new Writer(query, seeded, { userId: ids.userId, campaignId: ids.campaignId, contactId: contact!.id });
}

const conversion: LiveConversion<Writer> = {
  first: FIRST,
  copy: COPY,
  seed,
  seeded: 'call_attempts',
  writerFor,
  expectConverted,
  label: `${ROWS} rows`,
};

describe('call_attempts partitioned through live migrations', { timeout: 600_000 + ROWS / 5 }, () => {
  it.runIf(onPostgres)('on PostgreSQL, while a writer inserts, updates and deletes', () => migrateWhileWriting('postgres', conversion));

  it('on the embedded database, with writes before and after', () => migrateWhileWriting('embedded', conversion));
});
