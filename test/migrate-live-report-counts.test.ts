import { describe, expect, inject, it } from 'vitest';
import { customerIds, SEED, withValues } from '../bench/scale-seed.js';
import { uuidv7 } from '../src/services/ids.js';
import { migrateWhileWriting, timed, type LiveConversion, type LiveWriter, type Query } from './support/live-migration.js';
import { COUNTED, nonZero, TOTALLED } from './support/report-counts.js';

// The report's counts (campaign_report_counts) start on a live database: the first migration adds the
// triggers, the second counts the rows already there in batches that commit. On PostgreSQL a writer books
// and deletes appointments, records and corrects dial blocks, places calls that ask for callbacks and
// changes the callbacks pending the whole time, before the triggers exist, while they are made and while
// the backfill counts: the counts must equal the rows at the end, none of the writer's changes counted
// twice or missed. The embedded database has one connection: there the writes come before and after.

const FIRST = '20261129200000_report_counts';
const COPY = '20261129200100_report_counts_backfill';
const CONTACTS = 10_000;
const CUSTOMERS = 10;
const onPostgres = inject('testDatabase').kind === 'postgres';
/** REPORT_COUNTS_LIVE_MIGRATION_ROWS runs it larger by hand (on PostgreSQL), e.g. 1000000. */
const ROWS = onPostgres ? Number(process.env.REPORT_COUNTS_LIVE_MIGRATION_ROWS ?? 200_000) : 20_000;
const VARIANTS = ['00000000-0000-7000-8000-00000000000a', '00000000-0000-7000-8000-00000000000b'];

/** 10 customers with their contacts, dial states, calls, appointments and blocks, as an older release left them. */
async function seed(query: Query) {
  await query(
    `INSERT INTO agent_templates (id, template_key, name, system_prompt_template, placeholder_schema, updated_at)
     VALUES (gen_random_uuid(), 'plain', 'Plain', 'Hello', '{}', now())`,
  );
  await query('SET session_replication_role = replica');
  for (const table of ['users', 'agents', 'phone_numbers', 'contact_groups', 'campaigns', 'contacts', 'campaign_contacts']) {
    await query(withValues(SEED.find((s) => s.table === table)!.sql, [CONTACTS, CUSTOMERS, 0, `now()`]));
  }
  await query('SET session_replication_role = DEFAULT');
  // Customer 1's campaign runs two variants; some contacts of every campaign wait for a callback.
  const one = customerIds(1);
  await query(
    `INSERT INTO campaign_variants (id, campaign_id, agent_id, name, weight, position)
     VALUES ($2::uuid, $1::uuid, $4::uuid, 'A', 50, 0), ($3::uuid, $1::uuid, $4::uuid, 'B', 50, 1)`,
    [one.campaignId, ...VARIANTS, one.agentId],
  );
  await query(
    `UPDATE campaign_contacts SET variant_id = CASE WHEN right(contact_id::text, 1) < '8' THEN $2::uuid ELSE $3::uuid END
     WHERE campaign_id = $1::uuid`,
    [one.campaignId, ...VARIANTS],
  );
  await query(`UPDATE campaign_contacts SET callback_at = now() WHERE right(contact_id::text, 1) = '3'`);
  // Call g of contact 1 + g % CONTACTS: every ninth asked for a callback; an appointment for every fourth,
  // a block for every second.
  const each = `FROM generate_series(0, $1 - 1) g
     JOIN contacts c ON c.id = ('00000001-0000-7000-8000-' || lpad(to_hex(1 + g % $2), 12, '0'))::uuid
     JOIN campaigns k ON k.contact_group_id = c.contact_group_id`;
  await query(
    `INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, outcome, duration_seconds, cost_cents,
       callback_at, created_at, updated_at)
     SELECT gen_random_uuid(), c.user_id, k.id, c.id, g / $2 + 1, 'completed', 'human', g % 90, g % 13,
            CASE WHEN g % 9 = 0 THEN now() END, now(), now() ${each}`,
    [ROWS, CONTACTS],
  );
  await query(
    `INSERT INTO appointments (id, user_id, contact_id, campaign_id, status, scheduled_at, timezone, contact_snapshot, updated_at)
     SELECT gen_random_uuid(), c.user_id, c.id, k.id, 'scheduled', now(), 'UTC', '{}', now() ${each}`,
    [ROWS / 4, CONTACTS],
  );
  await query(
    `INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason, detail, created_at)
     SELECT gen_random_uuid(), c.user_id, k.id, c.id, (CASE g % 3 WHEN 0 THEN 'do_not_call' WHEN 1 THEN 'regional_hours' ELSE 'holiday' END)::"DialBlockReason",
            'seeded', now() ${each}`,
    [ROWS / 2, CONTACTS],
  );
}

/** Writes every table the counts follow, on customer 1's campaign (with variants) and on others. */
class Writer implements LiveWriter {
  writes: { at: number; ms: number }[] = [];
  private n = 0;

  constructor(
    private readonly query: Query,
    private readonly appointments: string[],
    private readonly blocks: string[],
    private readonly calls: string[],
    private readonly contacts: { campaign_id: string; contact_id: string; user_id: string }[],
  ) {}

  private timed(text: string, values: unknown[]) {
    return timed(this.writes, () => this.query(text, values));
  }

  async step() {
    const n = (this.n += 1);
    const at = this.contacts[n % this.contacts.length]!;
    await this.timed(
      `INSERT INTO appointments (id, user_id, contact_id, campaign_id, status, scheduled_at, timezone, contact_snapshot, updated_at)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, 'scheduled', now(), 'UTC', '{}', now())`,
      [uuidv7(), at.user_id, at.contact_id, at.campaign_id],
    );
    await this.timed(
      `INSERT INTO dial_blocks (id, user_id, campaign_id, contact_id, reason, detail, created_at)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, 'frequency_cap', 'live', now())`,
      [uuidv7(), at.user_id, at.campaign_id, at.contact_id],
    );
    if (n % 2 === 0) {
      await this.timed(
        `UPDATE campaign_contacts SET callback_at = CASE WHEN callback_at IS NULL THEN now() END WHERE contact_id = $1::uuid`,
        [at.contact_id],
      );
    }
    if (n % 3 === 0) await this.timed('DELETE FROM appointments WHERE id = $1::uuid', [this.appointments.pop()]);
    if (n % 4 === 0) await this.timed(`UPDATE dial_blocks SET reason = 'consent_missing' WHERE id = $1::uuid`, [this.blocks.pop()]);
    if (n % 5 === 0) {
      await this.timed(
        `INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, outcome, duration_seconds, cost_cents,
           callback_at, created_at, updated_at)
         VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, 9, 'completed', 'human', 45, 7, now(), now(), now())`,
        [uuidv7(), at.user_id, at.campaign_id, at.contact_id],
      );
    }
    if (n % 7 === 0)
      await this.timed('UPDATE call_attempts SET callback_at = NULL, cost_cents = 1 WHERE id = $1::uuid', [this.calls.pop()]);
    if (n % 11 === 0) await this.timed('DELETE FROM call_attempts WHERE id = $1::uuid', [this.calls.pop()]);
  }
}

async function writerFor(query: Query): Promise<Writer> {
  const ids = async (table: string) => (await query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id LIMIT 5000`)).map((r) => r.id);
  const contacts = await query<{ campaign_id: string; contact_id: string; user_id: string }>(
    `SELECT cc.campaign_id, cc.contact_id, c.user_id FROM campaign_contacts cc JOIN contacts c ON c.id = cc.contact_id
     WHERE cc.campaign_id IN ($1::uuid, $2::uuid) ORDER BY cc.id LIMIT 200`,
    [customerIds(1).campaignId, customerIds(3).campaignId],
  );
  return new Writer(query, await ids('appointments'), await ids('dial_blocks'), await ids('call_attempts'), contacts);
}

async function expectConverted(query: Query) {
  const counted = await query<Record<string, unknown>>(nonZero(COUNTED), [null]);
  expect(await query(nonZero(TOTALLED), [null])).toEqual(counted);
  // Every campaign's appointments and blocks, its callbacks, and the variants' figures.
  expect(counted.filter((r) => r.variantId !== null).map((r) => r.variantId)).toEqual(expect.arrayContaining(VARIANTS));
  expect(counted.filter((r) => r.reason === 'frequency_cap').length).toBeGreaterThan(0);
  expect(counted.filter((r) => (r.appointments as number) > 0 && (r.requested as number) > 0).length).toBeGreaterThan(0);
}

const conversion: LiveConversion<Writer> = {
  first: FIRST,
  copy: COPY,
  seed,
  seeded: 'call_attempts, appointments, dial_blocks, campaign_contacts',
  writerFor,
  expectConverted,
  label: `${ROWS} calls, ${ROWS / 4} appointments, ${ROWS / 2} blocks`,
};

describe('report counts started on a live database', { timeout: 600_000 + ROWS / 5 }, () => {
  it.runIf(onPostgres)('on PostgreSQL, while a writer writes every table they count', () => migrateWhileWriting('postgres', conversion));

  it('on the embedded database, with writes before and after', () => migrateWhileWriting('embedded', conversion));
});
