import { writeFile } from 'node:fs/promises';
import pg from 'pg';
import { pino } from 'pino';
import { chartPng, type Panel } from '../cluster/chart.js';
import { openDatabase } from '../src/db/database.js';
import { idleDialer } from '../src/services/dialer/control.js';
import { Dialer } from '../src/services/dialer/engine.js';
import { DEFAULT_DIALER_OPTIONS } from '../src/services/dialer/options.js';
import { claimCalls, lockCallHistories, readCandidates } from '../src/services/dialer/store/placing.js';
import { RULES_VERSION } from '../src/services/calling-rules/regional-hours.js';
import { uuidv7 } from '../src/services/ids.js';
import type { Sql } from '../src/db/sql.js';
import type { ServiceEnv } from '../src/services/context.js';
import { inProcessEventBus } from '../src/services/events.js';
import { defaultSettings } from '../src/services/settings.js';
import { idleVoice } from '../src/services/voice/control.js';
import { importRows } from './import.js';
import { ATTEMPTS_PER_CONTACT, contactId, customerIds, LARGE_SHARE, seedScale } from './scale-seed.js';
import { databaseUrl, postgresCpuBetween, postgresCpuMs, round, serverUrl, startServer, tokenFor, withDatabase } from './support.js';

// Issue 37: the service at 10^5, 10^6 and 10^7 contacts (5 attempts each, 1,000 customers, one of them
// with 40% of the rows), its tables built in PostgreSQL by generate_series (scale-seed.ts). At each size,
// each operation runs RUNS times (after WARMUP) and its p50 and p99 are kept; client reads go through the
// production server over HTTP, the dialer's claim and the gate's lookups through the dialer's own code.
// Prints a table and writes bench-results/scale.json and docs/scale.png (time against size).
// BENCH_SCALE_SIZES picks the sizes (default 100000,1000000); 10^7 needs about an hour and 40 GB.
// BENCH_SCALE_OPERATIONS picks operations by the start of their names, separated by `;` (e.g. `call
// history;dialer claim`); the chart and bench-results/scale.json are then left as they were.
// BENCH_SCALE_KEEP=1 keeps each size's database, named <BENCH_SCALE_DB_PREFIX>_<contacts> (callflow_scale_<contacts>
// unless set, so that two people's kept databases stay apart), and a later run with it
// reuses that database unseeded, to time a change again or EXPLAIN by hand (drop it when done); the runs
// put back what they write, except the erasure's, so pick operations when reusing it.

const SIZES = (process.env.BENCH_SCALE_SIZES ?? '100000,1000000').split(',').map(Number);
/** Runs of each timed operation: 200, so that the p99 is the third slowest, not the slowest as of 50. */
const RUNS = Number(process.env.BENCH_SCALE_RUNS ?? 200);
/** Ticks of the claim (a p50 target): each is taken back afterwards, seconds at 10^7 (keepClaimState). */
const CLAIM_RUNS = Math.min(RUNS, 50);
const WARMUP = 5;
const IMPORT_ROWS = 100_000;
const IMPORT_RUNS = Number(process.env.BENCH_SCALE_IMPORT_RUNS ?? 2);
const DEEP_OFFSET = 1_000_000;
/** The write rate: the dialer's claim statement from this many sessions at once, for this long, a tick's calls a statement. */
const WRITERS = Number(process.env.BENCH_SCALE_WRITERS ?? 4);
const WRITE_SECONDS = Number(process.env.BENCH_SCALE_WRITE_SECONDS ?? 15);
const CLAIM_BATCH = 10;
const OPERATIONS = process.env.BENCH_SCALE_OPERATIONS?.split(';').map((name) => name.trim());
const picked = (operation: string) => !OPERATIONS || OPERATIONS.some((name) => operation.startsWith(name));
const KEEP = process.env.BENCH_SCALE_KEEP === '1';
const DB_PREFIX = process.env.BENCH_SCALE_DB_PREFIX ?? 'callflow_scale';

type Timings = { p50: number; p99: number; runs: number };

function percentiles(times: number[]): Timings {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: round(at(0.5), 2), p99: round(at(0.99), 2), runs: sorted.length };
}

/**
 * Removes the groups the imports made and their contacts, which nothing else references, so that a kept
 * database's next run reads the seeded tables (seven imports of 100,000 rows are seven times the 10^5
 * size's contacts). The foreign keys' row-by-row checks are skipped, as the seed skips them: each would
 * look for the contact's calls in every month's partition.
 */
async function takeBackImports(admin: pg.Client, userId: string): Promise<void> {
  const imported = `SELECT id FROM contact_groups WHERE user_id = $1 AND name LIKE 'Import %'`;
  await admin.query('SET session_replication_role = replica');
  try {
    await admin.query(`DELETE FROM contacts WHERE contact_group_id IN (${imported})`, [userId]);
    await admin.query(`DELETE FROM contact_groups WHERE id IN (${imported})`, [userId]);
  } finally {
    await admin.query('SET session_replication_role = DEFAULT');
  }
  await admin.query('VACUUM (ANALYZE) contacts, contact_groups');
}

/** Runs `once` WARMUP + runs times; `between` (untimed) puts things back after each run. */
async function time(once: (run: number) => Promise<void>, runs = RUNS, between?: () => Promise<void>): Promise<Timings> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + runs; i += 1) {
    const started = performance.now();
    await once(i);
    if (i >= WARMUP) times.push(performance.now() - started);
    await between?.();
  }
  return percentiles(times);
}

async function fetchOk(url: string, token: string, init: RequestInit = {}): Promise<void> {
  const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
  const body = await res.text();
  if (res.status >= 300) throw new Error(`${url} answered ${res.status}: ${body.slice(0, 300)}`);
  if (body.includes('"errors"')) throw new Error(`${url} answered errors: ${body.slice(0, 300)}`);
}

const NESTED = `{ campaigns(first: 10) { edges { node { name agent { name } contactGroup { name total }
  attempts(first: 10) { edges { cursor node { id status createdAt contact { name phoneNumber } } } pageInfo { hasNextPage endCursor } } } } } }`;

/** The size's database: a new one dropped afterwards, or with BENCH_SCALE_KEEP the kept one (`seeded` when it was). */
async function sizeDatabase<T>(contacts: number, run: (url: string, seeded: boolean) => Promise<T>): Promise<T> {
  if (!KEEP) return withDatabase((url) => run(url, false));
  const name = `${DB_PREFIX}_${contacts}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    // Marked once its seed finished: a database whose seed was interrupted is made again.
    const { rows } = await admin.query<{ seeded: boolean }>(
      `SELECT shobj_description(oid, 'pg_database') = 'seeded' AS seeded FROM pg_database WHERE datname = $1`,
      [name],
    );
    if (rows[0]?.seeded) return await run(databaseUrl(name), true);
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
    const result = await run(databaseUrl(name), false);
    await admin.query(`COMMENT ON DATABASE "${name}" IS 'seeded'`);
    return result;
  } finally {
    await admin.end();
  }
}

async function measureSize(contacts: number) {
  return sizeDatabase(contacts, async (url, alreadySeeded) => {
    // An API instance: a dialer in the server would call the large customer's running campaign (through
    // the simulator, which ends and charges the calls) while the reads are timed and beside the claim's ticks.
    // Each operation's 205 requests in a few seconds are more than a customer's request rate allows.
    const server = await startServer(url, { DIALER: 'off', RATE_LIMIT: '9999999/1' });
    const db = await openDatabase({ kind: 'postgres', url });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const seeded: Record<string, number> = {};
      await admin.query('SET synchronous_commit = off');
      await admin.query("SET maintenance_work_mem = '512MB'");
      const seedStarted = performance.now();
      if (!alreadySeeded)
        await seedScale(
          (text) => admin.query(text),
          { contacts },
          (table, ms) => (seeded[table] = round(ms / 1000)),
        );
      const seedSeconds = alreadySeeded ? null : round((performance.now() - seedStarted) / 1000);
      console.log(
        alreadySeeded ? `  ${contacts} contacts: the kept database` : `  ${contacts} contacts seeded in ${seedSeconds} s`,
        seeded,
      );

      const large = customerIds(1);
      const largeAttempts = Math.floor(contacts * LARGE_SHARE) * ATTEMPTS_PER_CONTACT;
      const deepOffset = Math.min(DEEP_OFFSET, largeAttempts - 50);
      const token = await tokenFor(large.userId);
      const v1 = `${server.url}/api/v1`;
      const get = (path: string) => () => fetchOk(`${v1}${path}`, token);
      const figures: Record<string, Timings> = {};
      const measure = async (name: string, timed: () => Promise<Timings>) => {
        if (picked(name)) figures[name] = await timed();
      };

      await measure('campaign report', () => time(get(`/campaigns/${large.campaignId}/report/?limit=50`)));
      await measure('call history, first page', () => time(get('/campaigns/recordings/?limit=50')));
      // One name at every size (the table and chart line sizes up by name); the offset is in the result.
      await measure('call history, deep offset', () => time(get(`/campaigns/recordings/?limit=50&offset=${deepOffset}`)));
      // A legacy client walking the history: each run the next page (offset + 50), ending at the deep offset.
      await measure('call history, walking pages', async () => {
        const start = deepOffset - (WARMUP + RUNS) * 50;
        await get(`/campaigns/recordings/?limit=50&offset=${start}`)();
        return time((i) => get(`/campaigns/recordings/?limit=50&offset=${start + (i + 1) * 50}`)());
      });
      const graphql = (query: string) => fetchOk(`${server.url}/graphql`, token, { method: 'POST', body: JSON.stringify({ query }) });
      await measure("a contact's attempts", () =>
        time((i) =>
          graphql(`{ callAttempts(first: 20, contactId: "${contactId(1 + i * 7)}") { edges { node { id status createdAt summary } } } }`),
        ),
      );
      await measure("a customer's transactions", () => time(get('/billing/transactions/?limit=50')));
      await measure('nested GraphQL read', () => time(() => graphql(NESTED)));

      // The dialer's claim: one tick of the large customer's campaign, its waiting contacts due; each run's
      // calls are taken back (untimed) so that every tick finds the same queue.
      const log = pino({ level: 'silent' });
      const env: ServiceEnv = {
        db: db.prisma,
        sql: db.sql,
        clock: { now: () => new Date() },
        log,
        settings: { ...defaultSettings },
        dialer: idleDialer,
        voice: idleVoice,
        events: inProcessEventBus(log),
      };
      const telephony = { placeCall: async () => ({ providerCallId: `bench_${Math.random()}` }), stop: () => {} };
      const dialer = new Dialer(
        env,
        () => telephony,
        () => {},
        DEFAULT_DIALER_OPTIONS,
      );
      let writeRate: Awaited<ReturnType<typeof claimWriteRate>> | null = null;
      // What the runs before left behind, dead: the calls in flight, the month's attempts taken back, and
      // the versions of the contacts each run claims and restores (the same ten: their entries pile up
      // where the claim's index range starts). Autovacuum clears them in production, but it may be off
      // where this runs (this project's machines turn it off for tests), and a kept database carries them
      // from one bench to the next.
      const month = `call_attempts_p${new Date().toISOString().slice(0, 7).replace('-', '_')}`;
      const settle = () => admin.query(`VACUUM (ANALYZE) live_calls, ended_calls, campaign_contacts, ${month}`);
      if (picked('dialer claim')) {
        await settle();
        const ledgerBefore = await claimLedger(admin, large.campaignId, large.userId);
        const takeBack = await keepClaimState(admin, large.campaignId, large.userId);
        let placed = 0;
        figures['dialer claim'] = await time(
          async () => void (placed += await dialer.tick(large.campaignId)),
          CLAIM_RUNS,
          async () => {
            await dialer.settled();
            await takeBack();
          },
        );
        if (placed === 0) throw new Error('the dialer claimed no calls');
        writeRate = await claimWriteRate(db.sql, admin, new URL(url).pathname.slice(1), large);
        await takeBack();
        await settle();
        const ledgerAfter = await claimLedger(admin, large.campaignId, large.userId);
        if (ledgerAfter !== ledgerBefore) throw new Error(`the claim step changed the campaign:\n${ledgerBefore}\n${ledgerAfter}`);
      }
      // The gate's lookups for ten due contacts: their consents, revocations, registries and recent calls
      // (their numbers locked), in a transaction as a tick reads them.
      await measure('gate lookups', () =>
        time(() =>
          db.sql.transaction(async (tx) => {
            const { candidates } = await readCandidates(tx, large.campaignId, [], new Date(), 10, [], {
              lookUpRegistries: true,
              recallHours: 24,
            });
            await lockCallHistories(
              tx,
              large.userId,
              candidates.map((c) => c.phoneNumber!),
              new Date(Date.now() - 30 * 86_400_000),
              null,
            );
          }),
        ),
      );

      await measure(`import of ${IMPORT_ROWS} rows`, () =>
        time(
          (i) =>
            fetchOk(`${v1}/contacts/import/`, token, {
              method: 'POST',
              body: JSON.stringify({ groupName: `Import ${i}`, csvData: importRows(IMPORT_ROWS) }),
            }),
          IMPORT_RUNS,
        ),
      );
      await takeBackImports(admin, large.userId);
      // Erasure of one person a small customer's campaign called five times: their contact row, calls,
      // appointments and consents made anonymous.
      // A kept database's earlier runs erased the last ones already.
      let erased = Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM contacts WHERE erased_at IS NOT NULL')).rows[0]!.n);
      await measure('erasure of one person', () =>
        time(async () => {
          erased += 1;
          const i = contacts - erased;
          const owner = customerIds(2 + ((i - 1) % 999));
          await fetchOk(`${v1}/contacts/contacts/${contactId(i)}/`, await tokenFor(owner.userId), { method: 'DELETE' });
        }),
      );

      // Every table's size with its indexes and TOAST; a partitioned table's, its partitions' summed (its own is 0).
      const sizes = await admin.query<{ table: string; rows: string; bytes: string }>(
        `SELECT coalesce(pg_partition_root(c.oid), c.oid)::regclass::text AS table, sum(greatest(c.reltuples, 0))::bigint AS rows,
           sum(pg_total_relation_size(c.oid)) AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = current_schema() AND c.relkind = 'r'
         GROUP BY 1 ORDER BY 3 DESC`,
      );
      const tables = Object.fromEntries(
        sizes.rows.map((t) => [t.table, { rows: Number(t.rows), megabytes: round(Number(t.bytes) / 2 ** 20) }]),
      );
      const attempts = Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM call_attempts')).rows[0]!.n);
      const bytesPerAttempt = round(Number(sizes.rows.find((t) => t.table === 'call_attempts')!.bytes) / attempts, 0);
      const databaseBytesPerAttempt = round(sizes.rows.reduce((sum, t) => sum + Number(t.bytes), 0) / attempts, 0);
      return { contacts, attempts, deepOffset, seedSeconds, seeded, bytesPerAttempt, databaseBytesPerAttempt, tables, writeRate, figures };
    } finally {
      await admin.end();
      await db.close();
      await server.stop();
    }
  });
}

/**
 * What a claim tick of the campaign (its customer `userId`) may change, saved so that after each run the
 * database is put back exactly as it was: the rows it updates are restored from a copy taken before the
 * first run (only those that differ), the rows it inserts are deleted (the attempts and what hangs on
 * them: live calls, holds, charges, ended calls, appointments; blocks and webhook events made since),
 * and the report's difference rows added since are deleted, so the totals are the same rows as before.
 */
async function keepClaimState(admin: pg.Client, campaignId: string, userId: string) {
  const since = (await admin.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now;
  const kept = [
    { table: 'campaign_contacts', key: 'id', where: `campaign_id = $1 AND state <> 'done'`, values: [campaignId] },
    { table: 'campaigns', key: 'id', where: 'id = $1', values: [campaignId] },
    { table: 'campaign_spend', key: 'campaign_id', where: 'campaign_id = $1', values: [campaignId] },
    { table: 'credit_accounts', key: 'user_id', where: 'user_id = $1', values: [userId] },
    { table: 'phone_numbers', key: 'id', where: 'user_id = $1', values: [userId] },
  ];
  const columns = new Map<string, string>();
  for (const { table, key, where, values } of kept) {
    await admin.query(`CREATE TEMP TABLE kept_${table} AS SELECT * FROM ${table} WHERE ${where}`, values);
    await admin.query(`ALTER TABLE kept_${table} ADD PRIMARY KEY (${key})`);
    const names = await admin.query<{ name: string }>(
      `SELECT quote_ident(column_name) AS name FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
      [table],
    );
    columns.set(table, names.rows.map((c) => c.name).join(', '));
  }
  const lastTotals = async () =>
    (
      await admin.query<{ calls: string; dials: string }>(
        `SELECT (SELECT coalesce(max(id), 0) FROM campaign_call_totals) AS calls, (SELECT coalesce(max(id), 0) FROM campaign_dial_totals) AS dials`,
      )
    ).rows[0]!;
  const totals = await lastTotals();

  return async function takeBack(): Promise<void> {
    await admin.query('BEGIN');
    const attempts = `SELECT id FROM call_attempts WHERE campaign_id = $1 AND created_at >= $2 AND attempt_number > ${ATTEMPTS_PER_CONTACT}`;
    const events = `SELECT id FROM webhook_events WHERE user_id = $1 AND created_at >= $2`;
    for (const [statement, values] of [
      [`DELETE FROM credit_transactions WHERE call_attempt_id IN (${attempts})`, [campaignId, since]],
      [`DELETE FROM credit_holds WHERE call_attempt_id IN (${attempts})`, [campaignId, since]],
      [`DELETE FROM ended_calls WHERE attempt_id IN (${attempts})`, [campaignId, since]],
      [`DELETE FROM appointments WHERE call_attempt_id IN (${attempts})`, [campaignId, since]],
      [`DELETE FROM live_calls WHERE attempt_id IN (${attempts})`, [campaignId, since]],
      [`DELETE FROM call_attempts WHERE id IN (${attempts})`, [campaignId, since]],
      [`DELETE FROM dial_blocks WHERE campaign_id = $1 AND created_at >= $2`, [campaignId, since]],
      [`DELETE FROM webhook_messages WHERE event_id IN (${events})`, [userId, since]],
      [`DELETE FROM webhook_events WHERE id IN (${events})`, [userId, since]],
    ] as const)
      await admin.query(statement, [...values]);
    for (const { table, key } of kept) {
      const cols = columns.get(table)!;
      await admin.query(
        `UPDATE ${table} t SET (${cols}) = (SELECT ${cols} FROM kept_${table} k WHERE k.${key} = t.${key})
         WHERE t.${key} IN (SELECT k.${key} FROM kept_${table} k JOIN ${table} c ON c.${key} = k.${key} WHERE (c.*)::text IS DISTINCT FROM (k.*)::text)`,
      );
    }
    // Deleting the attempts and restoring the dial states added rows of differences: gone with the tick's own.
    await admin.query('DELETE FROM campaign_call_totals WHERE id > $1', [totals.calls]);
    await admin.query('DELETE FROM campaign_dial_totals WHERE id > $1', [totals.dials]);
    await admin.query('COMMIT');
  };
}

/**
 * What one primary writes: the dialer's claim statement (each call's attempt inserted with its number in
 * flight, the report's totals kept by the triggers, the contact's dial state updated; one commit) for the
 * large campaign's waiting contacts, CLAIM_BATCH calls a statement as a tick claims them, in a transaction
 * of its own, from WRITERS sessions at once for WRITE_SECONDS. With PostgreSQL's CPU time
 * on this database meanwhile (with the shared writers, and its backends alone), so that the rate per core
 * is known whatever else the machine was doing. The caller takes the attempts back.
 */
async function claimWriteRate(sql: Sql, admin: pg.Client, database: string, large: ReturnType<typeof customerIds>) {
  const { rows } = await admin.query<{ contactId: string; phone: string; from: string }>(
    `SELECT cc.contact_id AS "contactId", c.phone_number AS phone, p.number AS from
     FROM campaign_contacts cc JOIN contacts c ON c.id = cc.contact_id JOIN phone_numbers p ON p.agent_id = $2
     WHERE cc.campaign_id = $1 AND cc.state = 'pending' ORDER BY cc.contact_id LIMIT 200000`,
    [large.campaignId, large.agentId],
  );
  let next = 0;
  let written = 0;
  const cpuBefore = await postgresCpuMs(database);
  const backendsBefore = await postgresCpuMs(database, false);
  const started = performance.now();
  const deadline = started + WRITE_SECONDS * 1000;
  const writer = async () => {
    while (performance.now() < deadline && next + CLAIM_BATCH <= rows.length) {
      const batch = rows.slice(next, (next += CLAIM_BATCH));
      const now = new Date();
      const claim = { campaignId: large.campaignId, userId: large.userId, leaseUntil: new Date(now.getTime() + 300_000), now };
      const calls = batch.map((c) => ({
        id: uuidv7(),
        contactId: c.contactId,
        attemptNumber: ATTEMPTS_PER_CONTACT + 1,
        to: c.phone,
        from: c.from,
        agentId: large.agentId,
        agentVersion: 1,
        providerAgentId: null,
        providerAgentVersion: null,
        variables: {},
        voicemailMessage: null,
        exemptionId: null,
      }));
      const record = { requiredConsent: [], rulesVersion: RULES_VERSION };
      written += (await sql.transaction((tx) => claimCalls(tx, { ...claim, ...record }, calls))).size;
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  const seconds = (performance.now() - started) / 1000;
  const cpuMs = postgresCpuBetween(cpuBefore, await postgresCpuMs(database));
  const backendsMs = postgresCpuBetween(backendsBefore, await postgresCpuMs(database, false));
  return {
    writers: WRITERS,
    callsPerStatement: CLAIM_BATCH,
    attempts: written,
    seconds: round(seconds, 2),
    attemptsPerSecond: round(written / seconds, 0),
    postgresCpuMsPerAttempt: round(cpuMs / written, 3),
    backendsCpuMsPerAttempt: round(backendsMs / written, 3),
  };
}

/**
 * What a tick of the campaign changes, in figures: the report's totals by status and the rows they count,
 * the dial states, the customer's account, holds, charges and calls in flight. Equal before and after the
 * claim step when every run was taken back, and the totals equal to the rows they count.
 */
async function claimLedger(admin: pg.Client, campaignId: string, userId: string) {
  const { rows } = await admin.query(
    `SELECT
       (SELECT jsonb_object_agg(status, calls) FROM (SELECT status, sum(calls) AS calls FROM campaign_call_totals
          WHERE campaign_id = $1 GROUP BY status HAVING sum(calls) <> 0) t) AS totals,
       (SELECT jsonb_object_agg(status, calls) FROM (SELECT status, count(*) AS calls FROM call_attempts
          WHERE campaign_id = $1 GROUP BY status) a) AS attempts,
       (SELECT jsonb_build_object('attempted', sum(attempted), 'reached', sum(reached), 'done', sum(done)) FROM campaign_dial_totals
          WHERE campaign_id = $1) AS dials,
       (SELECT jsonb_object_agg(state, n) FROM (SELECT state, count(*) AS n FROM campaign_contacts WHERE campaign_id = $1 GROUP BY state) s) AS states,
       (SELECT to_jsonb(c) - 'updated_at' FROM credit_accounts c WHERE user_id = $2) AS account,
       (SELECT coalesce(sum(amount_cents) FILTER (WHERE status = 'held'), 0) FROM credit_holds WHERE user_id = $2) AS held,
       (SELECT count(*) FROM credit_holds WHERE user_id = $2) AS holds,
       (SELECT count(*) || ' ' || coalesce(sum(amount_cents), 0) FROM credit_transactions WHERE user_id = $2) AS charges,
       (SELECT count(*) FROM live_calls WHERE user_id = $2) AS live`,
    [campaignId, userId],
  );
  const ledger = rows[0] as {
    totals: Record<string, string>;
    attempts: Record<string, string>;
    account: { held_cents: string };
    held: string;
  };
  if (JSON.stringify(ledger.totals) !== JSON.stringify(ledger.attempts))
    throw new Error(`the report's totals ${JSON.stringify(ledger.totals)} differ from the attempts ${JSON.stringify(ledger.attempts)}`);
  if (String(ledger.account.held_cents) !== String(ledger.held))
    throw new Error(`held ${ledger.account.held_cents} cents, holds of ${ledger.held}`);
  return JSON.stringify(ledger);
}

/** Time against size: one panel per kind of operation, one line per operation (p99). */
export function panels(results: Pick<Awaited<ReturnType<typeof measureSize>>, 'contacts' | 'figures'>[]): Panel[] {
  const colours = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
  const xs = results.map((r) => r.contacts);
  const names = Object.keys(results[0]!.figures);
  const group = (title: string, pick: (name: string) => boolean): Panel => ({
    title,
    xLabel: 'contacts (5 attempts each)',
    xs,
    tick: (x) => [x >= 1e6 ? `${x / 1e6}M` : `${x / 1e3}k`],
    series: names.filter(pick).map((name, i) => ({
      label: name.length > 24 ? `${name.slice(0, 23)}…` : name,
      colour: colours[i % colours.length]!,
      points: results.map((r) => ({ x: r.contacts, y: r.figures[name]!.p99 })),
    })),
  });
  return [
    group('Lists, p99 (ms)', (n) => n.startsWith('call history') || n.includes('attempts') || n.includes('transactions')),
    group('Report and GraphQL, p99 (ms)', (n) => n.includes('report') || n.includes('GraphQL')),
    group('Dialer, p99 (ms)', (n) => n.startsWith('dialer') || n.startsWith('gate')),
    group('Writes, p99 (ms)', (n) => n.startsWith('import') || n.startsWith('erasure')),
  ];
}

export async function benchScale() {
  const results: Awaited<ReturnType<typeof measureSize>>[] = [];
  for (const contacts of SIZES) {
    console.log(`scale: ${contacts} contacts ...`);
    results.push(await measureSize(contacts));
    // Each size's figures as soon as they are in: a later size may take an hour, or fail.
    console.log(JSON.stringify(results.at(-1)));
  }
  const rows = Object.keys(results[0]!.figures).map((operation) => ({
    operation,
    ...Object.fromEntries(
      results.flatMap((r) => [
        [`${r.contacts} p50`, r.figures[operation]!.p50],
        [`${r.contacts} p99`, r.figures[operation]!.p99],
      ]),
    ),
  }));
  if (!OPERATIONS) {
    await writeFile('docs/scale.png', chartPng(panels(results)));
    await writeFile('bench-results/scale.json', `${JSON.stringify(results, null, 2)}\n`).catch(() => {});
  }
  return {
    name: 'data scale (PostgreSQL)',
    sizes: results
      .map(
        (r) =>
          `${r.contacts} contacts, ${r.attempts} attempts, ${r.bytesPerAttempt} B/attempt, seeded in ${r.seedSeconds ?? '(kept)'} s${r.writeRate ? `, claim writes ${r.writeRate.attemptsPerSecond} attempts/s (${r.writeRate.postgresCpuMsPerAttempt} ms of PostgreSQL CPU each, ${r.writeRate.backendsCpuMsPerAttempt} ms in its backends)` : ''}`,
      )
      .join('; '),
    runs: `${RUNS} per operation (after ${WARMUP}), ${CLAIM_RUNS} ticks, ${IMPORT_RUNS} imports`,
    chart: 'docs/scale.png',
    operations: rows,
  };
}
