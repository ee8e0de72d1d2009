import { describe, expect, inject, it } from 'vitest';
import { customerIds } from '../bench/scale-seed.js';
import { uuidv7 } from '../src/services/ids.js';
import { migrateWhileWriting, seedCustomers, timed, type LiveConversion, type LiveWriter, type Query } from './support/live-migration.js';

// dial_blocks becomes partitioned by month through four migrations that run on a live table, as
// call_attempts did (migrate-live.test.ts). Its ids were not all UUIDv7s: enrolment gave random ones,
// which the twin holds under a UUIDv7 of their time. On PostgreSQL a writer records blocks as the dialer
// does (UUIDv7s) and as an older release's enrolment did (random ids), changes and deletes old ones the
// whole time the migrations run: none of its writes is lost, each random-id block is found in its month
// under its new id, the report's counts of blocks by campaign and reason are exact, and the keys hold.

const FIRST = '20261129192400_dial_blocks_partitioned';
/** The first 13 characters of a UUIDv7 of `at`: its milliseconds. */
const uuidv7AtMs = (at: Date) => {
  const ms = at.getTime().toString(16).padStart(12, '0');
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}`;
};
const COPY = '20261129192500_dial_blocks_copy';
const CONTACTS = 10_000;
const CUSTOMERS = 10;
const onPostgres = inject('testDatabase').kind === 'postgres';
/** DIAL_BLOCKS_LIVE_MIGRATION_ROWS runs it larger by hand (on PostgreSQL), e.g. 1000000. */
const ROWS = onPostgres ? Number(process.env.DIAL_BLOCKS_LIVE_MIGRATION_ROWS ?? 200_000) : 20_000;

/** 10 customers, their contacts and campaigns, and ROWS blocks over the last 120 days, as an older release left them. */
async function seed(query: Query) {
  await seedCustomers(query, CONTACTS, CUSTOMERS);
  // Block g (0..ROWS-1) of contact 1 + g % CONTACTS; every third a do-not-call block of enrolment with a
  // random id, the others the dialer's with a UUIDv7 of its time.
  await query(
    `INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason, detail, created_at)
     SELECT CASE WHEN g % 3 = 0 THEN gen_random_uuid()
                 ELSE (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid END,
            c.user_id, k.id, c.id, (CASE g % 3 WHEN 0 THEN 'do_not_call' WHEN 1 THEN 'regional_hours' ELSE 'consent_missing' END)::"DialBlockReason",
            'seeded', t.at
     FROM generate_series(0, $1 - 1) g
     CROSS JOIN LATERAL (SELECT now() - ($1 - g) * interval '120 days' / $1 AS at) t
     CROSS JOIN LATERAL (SELECT lpad(to_hex((extract(epoch FROM t.at) * 1000)::bigint), 12, '0') AS h) s
     JOIN contacts c ON c.id = ('00000001-0000-7000-8000-' || lpad(to_hex(1 + g % $2), 12, '0'))::uuid
     JOIN campaigns k ON k.contact_group_id = c.contact_group_id`,
    [ROWS, CONTACTS],
  );
}

/** What a writer did, to be found again afterwards. */
class Writer implements LiveWriter {
  inserted: string[] = [];
  changed = new Map<string, string>();
  deleted = new Set<string>();
  writes: { at: number; ms: number }[] = [];
  private n = 0;

  constructor(
    private readonly query: Query,
    private readonly seeded: { id: string; campaign_id: string; reason: string; created_at: Date }[],
    /** Old blocks with random ids, to be found under their new ones. */
    readonly random: { id: string; created_at: Date }[],
    private readonly campaign: { userId: string; campaignId: string; contactId: string },
    /** Blocks by `campaign reason`, as the report counts them. */
    readonly counts: Map<string, number>,
  ) {}

  private timed(text: string, values: unknown[]) {
    return timed(this.writes, () => this.query(text, values));
  }

  private count(campaignId: string, reason: string, by: number) {
    const key = `${campaignId} ${reason}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + by);
  }

  /**
   * One step: a block recorded by the dialer (a UUIDv7); every 2nd step one by an older release's
   * enrolment (a random id); every 3rd an old block's detail changes; every 10th an old block goes.
   */
  async step() {
    const n = (this.n += 1);
    const { userId, campaignId, contactId } = this.campaign;
    await this.timed(
      `INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason, detail, created_at) VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, 'regional_hours', $5, now())`,
      [uuidv7(), userId, campaignId, contactId, `live ${n}`],
    );
    this.inserted.push(`live ${n}`);
    this.count(campaignId, 'regional_hours', 1);
    if (n % 2 === 0) {
      await this.timed(
        `INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason, detail, created_at) VALUES (gen_random_uuid(), $1::uuid, $2::uuid, $3::uuid, 'do_not_call', $4, now())`,
        [userId, campaignId, contactId, `enrolled ${n}`],
      );
      this.inserted.push(`enrolled ${n}`);
      this.count(campaignId, 'do_not_call', 1);
    }
    const old = this.seeded[n % this.seeded.length]!;
    if (n % 10 === 0 && !this.changed.has(old.id)) {
      await this.timed('DELETE FROM dial_blocks WHERE id = $1::uuid', [old.id]);
      this.deleted.add(old.id);
      this.count(old.campaign_id, old.reason, -1);
    } else if (n % 3 === 0 && !this.deleted.has(old.id)) {
      await this.timed('UPDATE dial_blocks SET detail = $2 WHERE id = $1::uuid', [old.id, `changed ${n}`]);
      this.changed.set(old.id, `changed ${n}`);
    }
  }
}

async function writerFor(query: Query): Promise<Writer> {
  // Old blocks the writer changes (by id: the UUIDv7s, whose ids stay), and old blocks with random ids.
  const seeded = await query<{ id: string; campaign_id: string; reason: string; created_at: Date }>(
    `SELECT id, campaign_id, reason::text, created_at FROM dial_blocks WHERE id::text LIKE '%-7000-8000-%' ORDER BY id LIMIT 5000`,
  );
  const random = await query<{ id: string; created_at: Date }>(
    `SELECT id, created_at FROM dial_blocks WHERE id::text NOT LIKE '%-7000-8000-%' ORDER BY id LIMIT 5000`,
  );
  const counts = await query<{ key: string; blocks: number }>(
    `SELECT campaign_id || ' ' || reason AS key, count(*)::int AS blocks FROM dial_blocks GROUP BY 1`,
  );
  const ids = customerIds(2);
  const [contact] = await query<{ id: string }>('SELECT id FROM contacts WHERE contact_group_id = $1::uuid LIMIT 1', [ids.groupId]);
  return new Writer(
    query,
    seeded,
    random,
    { userId: ids.userId, campaignId: ids.campaignId, contactId: contact!.id },
    new Map(counts.map((c) => [c.key, c.blocks])),
  );
}

/** The conversion kept every row and every write, each in its month (random ids under their UUIDv7), the counts and the keys. */
async function expectConverted(query: Query, writer: Writer) {
  const [table] = await query<{ kind: string; partitions: number; stray: number; random: number; randomInMonths: number }>(
    `SELECT c.relkind::text AS kind, (SELECT count(*)::int FROM pg_inherits WHERE inhparent = c.oid) AS partitions,
            (SELECT count(*)::int FROM dial_blocks_default) AS stray,
            (SELECT count(*)::int FROM dial_blocks WHERE substr(id::text, 15, 1) <> '7') AS random,
            (SELECT count(*)::int FROM dial_blocks WHERE substr(id::text, 15, 1) <> '7' AND tableoid <> 'dial_blocks_default'::regclass) AS "randomInMonths"
     FROM pg_class c WHERE c.oid = 'dial_blocks'::regclass`,
  );
  expect(table!.kind).toBe('p');
  // 120 days of months, the next month and the default.
  expect(table!.partitions).toBeGreaterThanOrEqual(6);
  // Every block copied is in its month; the only random ids left are those an older release's enrolment
  // wrote after the swap (in the default partition, whose attaching checks keep them out of the months).
  expect(table!.randomInMonths).toBe(0);
  expect(table!.stray).toBe(table!.random);
  expect(table!.random).toBeLessThanOrEqual(writer.inserted.filter((d) => d.startsWith('enrolled')).length);
  expect(await query(`SELECT to_regclass('dial_blocks_unpartitioned')::text AS old`)).toEqual([{ old: null }]);

  const [counts] = await query<{ rows: number }>('SELECT count(*)::int AS rows FROM dial_blocks');
  expect(counts!.rows).toBe(ROWS + writer.inserted.length - writer.deleted.size);
  const found = await query<{ detail: string }>('SELECT detail FROM dial_blocks WHERE detail = ANY($1)', [writer.inserted]);
  expect(found.map((row) => row.detail).sort()).toEqual([...writer.inserted].sort());
  // Old blocks changed and deleted; those with random ids each found under the UUIDv7 of its time.
  const kept = await query<{ id: string; detail: string }>('SELECT id, detail FROM dial_blocks WHERE id = ANY($1::uuid[])', [
    [...writer.changed.keys(), ...writer.deleted],
  ]);
  const byId = new Map(kept.map((row) => [row.id, row.detail]));
  expect([...writer.changed].filter(([id, detail]) => byId.get(id) !== detail)).toEqual([]);
  expect([...writer.deleted].filter((id) => byId.has(id))).toEqual([]);
  const renamed = await query<{ id: string; detail: string; at: Date }>(
    `SELECT b.id, b.detail, b.created_at AS at FROM unnest($1::uuid[], $2::timestamptz[]) AS o(id, at)
     JOIN dial_blocks b ON b.id = uuidv7_of(o.id, o.at)`,
    [writer.random.map((row) => row.id), writer.random.map((row) => row.created_at)],
  );
  expect(renamed).toHaveLength(writer.random.length);
  expect(renamed.filter((row) => row.detail !== 'seeded' || row.id[14] !== '7')).toEqual([]);
  expect(renamed.map((row) => row.id.slice(0, 13)).sort()).toEqual(writer.random.map((row) => uuidv7AtMs(row.created_at)).sort());

  // The report's counts of blocks by campaign and reason.
  const after = await query<{ key: string; blocks: number }>(
    `SELECT campaign_id || ' ' || reason AS key, count(*)::int AS blocks FROM dial_blocks GROUP BY 1`,
  );
  expect(new Map(after.map((c) => [c.key, c.blocks]))).toEqual(new Map([...writer.counts].filter(([, blocks]) => blocks !== 0)));

  expect(await query(`SELECT conname FROM pg_constraint WHERE conrelid = 'dial_blocks'::regclass AND NOT convalidated`)).toEqual([]);
  expect(
    (
      await query<{ conname: string }>(
        `SELECT conname FROM pg_constraint WHERE conrelid = 'dial_blocks'::regclass AND contype = 'f' AND conparentid = 0 ORDER BY 1`,
      )
    ).map((c) => c.conname),
  ).toEqual(['dial_blocks_campaign_id_fkey', 'dial_blocks_contact_id_fkey', 'dial_blocks_user_id_fkey']);
  const ids = customerIds(2);
  await expect(
    query(
      `INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason) VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, 'regional_hours')`,
      [uuidv7(), ids.userId, ids.campaignId, uuidv7()],
    ),
  ).rejects.toThrow(/dial_blocks_contact_id_fkey/);
}

const conversion: LiveConversion<Writer> = {
  first: FIRST,
  copy: COPY,
  seed,
  seeded: 'dial_blocks',
  writerFor,
  expectConverted,
  label: `${ROWS} dial blocks`,
};

describe('dial_blocks partitioned through live migrations', { timeout: 600_000 + ROWS / 5 }, () => {
  it.runIf(onPostgres)('on PostgreSQL, while a writer records, changes and deletes blocks', () =>
    migrateWhileWriting('postgres', conversion),
  );

  it('on the embedded database, with writes before and after', () => migrateWhileWriting('embedded', conversion));
});
