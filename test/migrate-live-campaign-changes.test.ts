import { describe, expect, inject, it } from 'vitest';
import { customerIds } from '../bench/scale-seed.js';
import { migrateWhileWriting, seedCustomers, timed, type LiveConversion, type LiveWriter, type Query } from './support/live-migration.js';

// Campaign history (campaign_changes) becomes partitioned by month through four migrations that run on a
// live table, as call_attempts did (migrate-live.test.ts). On PostgreSQL a writer edits a campaign (its
// history's trigger writes each change), rewrites and deletes old entries the whole time the migrations
// run: none of its writes is lost, each entry keeps its `seq`, the campaign's changes stay in the order
// they were made (their sequence goes on after the swap, owned by the new table), and the key to the
// campaign holds and still cascades.

const FIRST = '20261129192800_campaign_changes_partitioned';
const COPY = '20261129192900_campaign_changes_copy';
const CONTACTS = 1_000;
const CUSTOMERS = 10;
const onPostgres = inject('testDatabase').kind === 'postgres';
/** CHANGES_LIVE_MIGRATION_ROWS runs it larger by hand (on PostgreSQL), e.g. 1000000. */
const ROWS = onPostgres ? Number(process.env.CHANGES_LIVE_MIGRATION_ROWS ?? 200_000) : 20_000;

/** 10 customers with a campaign each, and ROWS entries of their history over the last 120 days, as an older release left them. */
async function seed(query: Query) {
  await seedCustomers(query, CONTACTS, CUSTOMERS, false);
  // Entry g (0..ROWS-1) of campaign 1 + g % CUSTOMERS, a UUIDv7 of its time (its seq drawn in that order);
  // one in a thousand with a random id (landing in the default partition).
  await query(
    `INSERT INTO campaign_changes (id, campaign_id, actor, action, changes, created_at)
     SELECT CASE WHEN g % 1000 = 999 THEN gen_random_uuid()
                 ELSE (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid END,
            ('0000000d-0000-7000-8000-' || lpad(to_hex(1 + g % $2), 12, '0'))::uuid, 'system', 'seeded',
            jsonb_build_object('n', g), t.at
     FROM generate_series(0, $1 - 1) g
     CROSS JOIN LATERAL (SELECT now() - ($1 - g) * interval '120 days' / $1 AS at) t
     CROSS JOIN LATERAL (SELECT lpad(to_hex((extract(epoch FROM t.at) * 1000)::bigint), 12, '0') AS h) s
     ORDER BY g`,
    [ROWS, CUSTOMERS],
  );
}

/** What a writer did, to be found again afterwards. */
class Writer implements LiveWriter {
  edits: string[] = [];
  changed = new Map<string, number>();
  deleted = new Set<string>();
  writes: { at: number; ms: number }[] = [];
  private n = 0;

  constructor(
    private readonly query: Query,
    private readonly seeded: { id: string; seq: string }[],
    readonly campaignId: string,
    /** Every seeded entry's seq, by id. */
    readonly seqs: Map<string, string>,
  ) {}

  private timed(text: string, values: unknown[]) {
    return timed(this.writes, () => this.query(text, values));
  }

  /** One step: the campaign renamed (its trigger writes the entry); every 3rd an old entry rewritten; every 10th one deleted. */
  async step() {
    const n = (this.n += 1);
    await this.timed(`UPDATE campaigns SET name = $2 WHERE id = $1::uuid`, [this.campaignId, `step ${n}`]);
    this.edits.push(`step ${n}`);
    const old = this.seeded[n % this.seeded.length]!;
    if (n % 10 === 0 && !this.changed.has(old.id)) {
      await this.timed('DELETE FROM campaign_changes WHERE id = $1::uuid', [old.id]);
      this.deleted.add(old.id);
    } else if (n % 3 === 0 && !this.deleted.has(old.id)) {
      await this.timed(`UPDATE campaign_changes SET changes = jsonb_build_object('rewritten', $2::int) WHERE id = $1::uuid`, [old.id, n]);
      this.changed.set(old.id, n);
    }
  }
}

async function writerFor(query: Query): Promise<Writer> {
  const seeded = await query<{ id: string; seq: string }>(
    `SELECT id, seq::text FROM campaign_changes WHERE id::text LIKE '%-7000-8000-%' ORDER BY id LIMIT 5000`,
  );
  const all = await query<{ id: string; seq: string }>('SELECT id, seq::text FROM campaign_changes');
  return new Writer(query, seeded, customerIds(2).campaignId, new Map(all.map((row) => [row.id, row.seq])));
}

/** The conversion kept every entry and every write, each entry's seq and the order of a campaign's changes, and the key. */
async function expectConverted(query: Query, writer: Writer) {
  const [table] = await query<{ kind: string; partitions: number; stray: number; misplaced: number; sequence: string }>(
    `SELECT c.relkind::text AS kind, (SELECT count(*)::int FROM pg_inherits WHERE inhparent = c.oid) AS partitions,
            (SELECT count(*)::int FROM campaign_changes_default) AS stray,
            (SELECT count(*)::int FROM campaign_changes_default WHERE id::text LIKE '%-7000-8000-%') AS misplaced,
            pg_get_serial_sequence('campaign_changes', 'seq') AS sequence
     FROM pg_class c WHERE c.oid = 'campaign_changes'::regclass`,
  );
  expect(table!.kind).toBe('p');
  // 120 days of months, the next month and the default.
  expect(table!.partitions).toBeGreaterThanOrEqual(6);
  expect(table!.misplaced).toBe(0);
  expect(table!.stray).toBeLessThanOrEqual(Math.floor(ROWS / 1000));
  // The sequence is the new table's: dropping the old one kept it.
  expect(table!.sequence).toBe('public.campaign_changes_seq_seq');
  expect(await query(`SELECT to_regclass('campaign_changes_unpartitioned')::text AS old`)).toEqual([{ old: null }]);

  const [counts] = await query<{ rows: number; seqs: number }>(
    'SELECT count(*)::int AS rows, count(DISTINCT seq)::int AS seqs FROM campaign_changes',
  );
  expect(counts!.rows).toBe(ROWS + writer.edits.length - writer.deleted.size);
  expect(counts!.seqs).toBe(counts!.rows);
  // Every old entry kept its seq, and its content unless the writer rewrote it.
  const old = await query<{ id: string; seq: string; rewritten: number | null }>(
    `SELECT id, seq::text, (changes->>'rewritten')::int AS rewritten FROM campaign_changes WHERE action = 'seeded'`,
  );
  expect(old.length).toBe(ROWS - writer.deleted.size);
  expect(old.filter((row) => writer.seqs.get(row.id) !== row.seq)).toEqual([]);
  expect(old.filter((row) => (writer.changed.get(row.id) ?? null) !== row.rewritten)).toEqual([]);
  expect(old.filter((row) => writer.deleted.has(row.id))).toEqual([]);
  // The campaign's edits in the order they were made, after every older entry.
  const edits = await query<{ name: string; seq: string }>(
    `SELECT changes->'name'->>'to' AS name, seq::text FROM campaign_changes WHERE campaign_id = $1::uuid AND action = 'edited' ORDER BY seq`,
    [writer.campaignId],
  );
  expect(edits.map((e) => e.name)).toEqual(writer.edits);
  const newest = [...writer.seqs.values()].reduce((max, seq) => Math.max(max, Number(seq)), 0);
  expect(Number(edits[0]!.seq)).toBeGreaterThan(newest);

  expect(await query(`SELECT conname FROM pg_constraint WHERE conrelid = 'campaign_changes'::regclass AND NOT convalidated`)).toEqual([]);
  // A campaign deleted takes its history with it.
  const gone = customerIds(3).campaignId;
  await query('DELETE FROM campaigns WHERE id = $1::uuid', [gone]);
  expect(await query('SELECT count(*)::int AS left FROM campaign_changes WHERE campaign_id = $1::uuid', [gone])).toEqual([{ left: 0 }]);
}

const conversion: LiveConversion<Writer> = {
  first: FIRST,
  copy: COPY,
  seed,
  seeded: 'campaign_changes',
  writerFor,
  expectConverted,
  label: `${ROWS} campaign history entries`,
};

describe('campaign_changes partitioned through live migrations', { timeout: 600_000 + ROWS / 5 }, () => {
  it.runIf(onPostgres)('on PostgreSQL, while a writer edits a campaign and rewrites and deletes old entries', () =>
    migrateWhileWriting('postgres', conversion),
  );

  it('on the embedded database, with writes before and after', () => migrateWhileWriting('embedded', conversion));
});
