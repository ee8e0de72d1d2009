import { describe, expect, inject, it } from 'vitest';
import { uuidv7 } from '../src/services/ids.js';
import { migrateWhileWriting, timed, type LiveConversion, type LiveWriter, type Query } from './support/live-migration.js';

// The ledger (credit_transactions) becomes partitioned by month through four migrations that run on a
// live table, as call_attempts did (migrate-live.test.ts): on PostgreSQL a writer charges and credits
// accounts (each ledger row written with its account's change in one statement, as the service moves
// money), tries to credit payments again, changes and deletes old rows the whole time the migrations
// run. None of its writes is lost, every balance is still the sum of its ledger, a payment is in the
// ledger once (a repeat refused as a unique violation before the swap and after it), and the keys hold.

const FIRST = '20261129192000_credit_transactions_partitioned';
const COPY = '20261129192100_credit_transactions_copy';
const CUSTOMERS = 10;
const onPostgres = inject('testDatabase').kind === 'postgres';
/** LEDGER_LIVE_MIGRATION_ROWS runs it larger by hand (on PostgreSQL), e.g. 1000000. */
const ROWS = onPostgres ? Number(process.env.LEDGER_LIVE_MIGRATION_ROWS ?? 200_000) : 20_000;

const customer = (n: number) => `0000000b-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;

/** CUSTOMERS accounts and ROWS ledger rows over the last 120 days, as an older release left them. */
async function seed(query: Query) {
  const users = Array.from({ length: CUSTOMERS }, (_, i) => customer(i + 1));
  await query('INSERT INTO users (id) SELECT unnest($1::uuid[])', [users]);
  // Row g (0..ROWS-1) of customer 1 + g % CUSTOMERS, a UUIDv7 of its time; one in a thousand with a random
  // id (landing in the default partition); every 7th a top-up with its payment's id, the others charges.
  await query(
    `INSERT INTO credit_transactions (id, user_id, kind, amount_cents, balance_after_cents, included_after_cents, description,
       external_id, created_at)
     SELECT CASE WHEN g % 1000 = 999 THEN gen_random_uuid()
                 ELSE (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid END,
            ('0000000b-0000-7000-8000-' || lpad(to_hex(1 + g % $2), 12, '0'))::uuid,
            (CASE WHEN g % 7 = 0 THEN 'top_up' ELSE 'call_charge' END)::"CreditTransactionKind",
            CASE WHEN g % 7 = 0 THEN 2500 ELSE -10 END, 0, 0, 'Seeded',
            CASE WHEN g % 7 = 0 THEN 'pi_seed_' || g END, t.at
     FROM generate_series(0, $1 - 1) g
     CROSS JOIN LATERAL (SELECT now() - ($1 - g) * interval '120 days' / $1 AS at) t
     CROSS JOIN LATERAL (SELECT lpad(to_hex((extract(epoch FROM t.at) * 1000)::bigint), 12, '0') AS h) s`,
    [ROWS, CUSTOMERS],
  );
  await query(
    `INSERT INTO credit_accounts (user_id, balance_cents, updated_at)
     SELECT user_id, sum(amount_cents), now() FROM credit_transactions GROUP BY user_id`,
  );
}

/** A ledger row and its account's change, in one statement as the service writes them. */
const MOVE = `WITH l AS (
    INSERT INTO credit_transactions (id, user_id, kind, amount_cents, balance_after_cents, included_after_cents, description, external_id)
    VALUES ($1::uuid, $2::uuid, $3::"CreditTransactionKind", $4, 0, 0, 'Live', $5) RETURNING user_id, amount_cents
  )
  UPDATE credit_accounts a SET balance_cents = a.balance_cents + l.amount_cents, updated_at = now() FROM l WHERE a.user_id = l.user_id`;

/** What a writer did, to be found again afterwards. */
class Writer implements LiveWriter {
  inserted: string[] = [];
  payments: string[] = [];
  changed = new Map<string, string>();
  deleted = new Set<string>();
  repeats = 0;
  refused = 0;
  writes: { at: number; ms: number }[] = [];
  private n = 0;

  constructor(
    private readonly query: Query,
    private readonly seeded: { id: string; user_id: string; amount_cents: string }[],
  ) {}

  private timed(text: string, values: unknown[]) {
    return timed(this.writes, () => this.query(text, values));
  }

  /**
   * One step: a call charged; every 5th step a payment credited; every 7th a payment credited again
   * (refused); every 3rd an old row's description changes; every 10th an old row goes with its amount.
   */
  async step() {
    const n = (this.n += 1);
    const userId = customer(1 + (n % CUSTOMERS));
    const charge = uuidv7();
    await this.timed(MOVE, [charge, userId, 'call_charge', -7, null]);
    this.inserted.push(charge);
    if (n % 5 === 0) {
      const topUp = uuidv7();
      await this.timed(MOVE, [topUp, userId, 'top_up', 1000, `pi_live_${n}`]);
      this.inserted.push(topUp);
      this.payments.push(`pi_live_${n}`);
    }
    if (n % 7 === 0 && this.payments.length) {
      this.repeats += 1;
      const again = this.payments[this.payments.length - 1]!;
      const refused = await this.timed(MOVE, [uuidv7(), userId, 'top_up', 1000, again]).then(
        () => false,
        (error: { code?: string }) => {
          if (error.code !== '23505') throw error;
          return true;
        },
      );
      if (refused) this.refused += 1;
    }
    const old = this.seeded[n % this.seeded.length]!;
    if (n % 10 === 0 && !this.changed.has(old.id)) {
      await this.timed(
        `WITH d AS (DELETE FROM credit_transactions WHERE id = $1::uuid RETURNING user_id, amount_cents)
         UPDATE credit_accounts a SET balance_cents = a.balance_cents - d.amount_cents FROM d WHERE a.user_id = d.user_id`,
        [old.id],
      );
      this.deleted.add(old.id);
    } else if (n % 3 === 0 && !this.deleted.has(old.id)) {
      await this.timed('UPDATE credit_transactions SET description = $2 WHERE id = $1::uuid', [old.id, `changed at step ${n}`]);
      this.changed.set(old.id, `changed at step ${n}`);
    }
  }
}

async function writerFor(query: Query): Promise<Writer> {
  const seeded = await query<{ id: string; user_id: string; amount_cents: string }>(
    `SELECT id, user_id, amount_cents::text FROM credit_transactions WHERE id::text LIKE '%-7000-8000-%' ORDER BY id LIMIT 5000`,
  );
  return new Writer(query, seeded);
}

/** The conversion kept every row and every write, every balance the sum of its ledger, each payment once, and the keys. */
async function expectConverted(query: Query, writer: Writer) {
  const [table] = await query<{ kind: string; partitions: number; stray: number; misplaced: number }>(
    `SELECT c.relkind::text AS kind, (SELECT count(*)::int FROM pg_inherits WHERE inhparent = c.oid) AS partitions,
            (SELECT count(*)::int FROM credit_transactions_default) AS stray,
            (SELECT count(*)::int FROM credit_transactions_default WHERE id::text LIKE '%-7000-8000-%') AS misplaced
     FROM pg_class c WHERE c.oid = 'credit_transactions'::regclass`,
  );
  expect(table!.kind).toBe('p');
  // 120 days of months, the next month and the default.
  expect(table!.partitions).toBeGreaterThanOrEqual(6);
  expect(table!.misplaced).toBe(0);
  expect(table!.stray).toBeLessThanOrEqual(Math.floor(ROWS / 1000));
  expect(await query(`SELECT to_regclass('credit_transactions_unpartitioned')::text AS old`)).toEqual([{ old: null }]);

  const [counts] = await query<{ rows: number; payments: number; distinct: number }>(
    `SELECT count(*)::int AS rows, count(external_id)::int AS payments, count(DISTINCT external_id)::int AS distinct FROM credit_transactions`,
  );
  expect(counts!.rows).toBe(ROWS + writer.inserted.length - writer.deleted.size);
  expect(counts!.distinct).toBe(counts!.payments);
  expect(writer.refused).toBe(writer.repeats);
  const found = await query<{ id: string; description: string }>(
    'SELECT id, description FROM credit_transactions WHERE id = ANY($1::uuid[])',
    [[...writer.inserted, ...writer.changed.keys(), ...writer.deleted]],
  );
  const byId = new Map(found.map((row) => [row.id, row]));
  expect(writer.inserted.filter((id) => !byId.has(id))).toEqual([]);
  expect([...writer.changed].filter(([id, description]) => byId.get(id)?.description !== description)).toEqual([]);
  expect([...writer.deleted].filter((id) => byId.has(id))).toEqual([]);

  // Every account's balance is still the sum of its ledger.
  expect(
    await query(
      `SELECT a.user_id FROM credit_accounts a LEFT JOIN (SELECT user_id, sum(amount_cents) AS cents FROM credit_transactions GROUP BY 1) l
         USING (user_id) WHERE a.balance_cents IS DISTINCT FROM l.cents`,
    ),
  ).toEqual([]);

  // The keys are the table's, checked, and still refuse; the payment's id is refused again after the swap.
  expect(await query(`SELECT conname FROM pg_constraint WHERE conrelid = 'credit_transactions'::regclass AND NOT convalidated`)).toEqual(
    [],
  );
  expect(
    (
      await query<{ conname: string }>(
        `SELECT DISTINCT conname FROM pg_constraint WHERE conrelid = 'credit_transactions'::regclass AND contype = 'f' AND conparentid = 0 ORDER BY 1`,
      )
    ).map((c) => c.conname),
  ).toEqual(['credit_transactions_call_attempt_id_fkey', 'credit_transactions_campaign_id_fkey', 'credit_transactions_user_id_fkey']);
  await expect(query(MOVE, [uuidv7(), uuidv7(), 'call_charge', -1, null])).rejects.toThrow(/credit_transactions_user_id_fkey/);
  await expect(query(MOVE, [uuidv7(), customer(1), 'top_up', 1, writer.payments[0]])).rejects.toThrow(/in the ledger already/);
  await expect(query(MOVE, [uuidv7(), customer(1), 'top_up', 1, 'pi_seed_14000'])).rejects.toThrow(/in the ledger already/);
}

const conversion: LiveConversion<Writer> = {
  first: FIRST,
  copy: COPY,
  seed,
  seeded: 'credit_transactions, credit_accounts',
  writerFor,
  expectConverted,
  label: `${ROWS} ledger rows`,
};

describe('credit_transactions partitioned through live migrations', { timeout: 600_000 + ROWS / 5 }, () => {
  it.runIf(onPostgres)('on PostgreSQL, while a writer charges, credits, changes and deletes', () =>
    migrateWhileWriting('postgres', conversion),
  );

  it('on the embedded database, with writes before and after', () => migrateWhileWriting('embedded', conversion));
});
