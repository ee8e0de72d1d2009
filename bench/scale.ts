import { writeFile } from 'node:fs/promises';
import pg from 'pg';
import { pino } from 'pino';
import { chartPng, type Panel } from '../cluster/chart.js';
import { openDatabase } from '../src/db/database.js';
import { idleDialer } from '../src/services/dialer/control.js';
import { Dialer } from '../src/services/dialer/engine.js';
import { DEFAULT_DIALER_OPTIONS } from '../src/services/dialer/options.js';
import { readCallHistories, readCandidates } from '../src/services/dialer/store/placing.js';
import type { ServiceEnv } from '../src/services/context.js';
import { inProcessEventBus } from '../src/services/events.js';
import { defaultSettings } from '../src/services/settings.js';
import { idleVoice } from '../src/services/voice/control.js';
import { importRows } from './import.js';
import { ATTEMPTS_PER_CONTACT, contactId, customerIds, LARGE_SHARE, seedScale } from './scale-seed.js';
import { round, startServer, tokenFor, withDatabase } from './support.js';

// Issue 37: the service at 10^5, 10^6 and 10^7 contacts (5 attempts each, 1,000 customers, one of them
// with 40% of the rows), its tables built in PostgreSQL by generate_series (scale-seed.ts). At each size,
// each operation runs RUNS times (after WARMUP) and its p50 and p99 are kept; client reads go through the
// production server over HTTP, the dialer's claim and the gate's lookups through the dialer's own code.
// Prints a table and writes bench-results/scale.json and docs/scale.png (time against size).
// BENCH_SCALE_SIZES picks the sizes (default 100000,1000000); 10^7 needs about an hour and 40 GB.

const SIZES = (process.env.BENCH_SCALE_SIZES ?? '100000,1000000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_SCALE_RUNS ?? 50);
const WARMUP = 5;
const IMPORT_ROWS = 100_000;
const IMPORT_RUNS = Number(process.env.BENCH_SCALE_IMPORT_RUNS ?? 2);
const DEEP_OFFSET = 1_000_000;

type Timings = { p50: number; p99: number; runs: number };

function percentiles(times: number[]): Timings {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: round(at(0.5), 2), p99: round(at(0.99), 2), runs: sorted.length };
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

async function measureSize(contacts: number) {
  return withDatabase(async (url) => {
    const server = await startServer(url);
    const db = await openDatabase({ kind: 'postgres', url });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const seeded: Record<string, number> = {};
      await admin.query('SET synchronous_commit = off');
      await admin.query("SET maintenance_work_mem = '512MB'");
      const seedStarted = performance.now();
      await seedScale(
        (text) => admin.query(text),
        { contacts },
        (table, ms) => (seeded[table] = round(ms / 1000)),
      );
      const seedSeconds = round((performance.now() - seedStarted) / 1000);
      console.log(`  ${contacts} contacts seeded in ${seedSeconds} s`, seeded);

      const large = customerIds(1);
      const largeAttempts = Math.floor(contacts * LARGE_SHARE) * ATTEMPTS_PER_CONTACT;
      const deepOffset = Math.min(DEEP_OFFSET, largeAttempts - 50);
      const token = await tokenFor(large.userId);
      const v1 = `${server.url}/api/v1`;
      const get = (path: string) => () => fetchOk(`${v1}${path}`, token);
      const figures: Record<string, Timings> = {};

      figures['campaign report'] = await time(get(`/campaigns/${large.campaignId}/report/?limit=50`));
      figures['call history, first page'] = await time(get('/campaigns/recordings/?limit=50'));
      figures[`call history, offset ${deepOffset}`] = await time(get(`/campaigns/recordings/?limit=50&offset=${deepOffset}`));
      const graphql = (query: string) => fetchOk(`${server.url}/graphql`, token, { method: 'POST', body: JSON.stringify({ query }) });
      figures["a contact's attempts"] = await time((i) =>
        graphql(`{ callAttempts(first: 20, contactId: "${contactId(1 + i * 7)}") { edges { node { id status createdAt summary } } } }`),
      );
      figures["a customer's transactions"] = await time(get('/billing/transactions/?limit=50'));
      figures['nested GraphQL read'] = await time(() => graphql(NESTED));

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
      let placed = 0;
      figures['dialer claim'] = await time(
        async () => void (placed += await dialer.tick(large.campaignId)),
        RUNS,
        async () => {
          await dialer.settled();
          await takeBackCalls(admin, large.campaignId);
        },
      );
      if (placed === 0) throw new Error('the dialer claimed no calls');
      // The gate's lookups for ten due contacts: their consents, revocations, registries and recent calls.
      figures['gate lookups'] = await time(async () => {
        const { candidates } = await readCandidates(db.sql, large.campaignId, [], new Date(), 10, [], {
          lookUpRegistries: true,
          recallHours: 24,
        });
        await readCallHistories(
          db.sql,
          large.userId,
          candidates.map((c) => c.phoneNumber!),
          new Date(Date.now() - 30 * 86_400_000),
          null,
        );
      });

      figures[`import of ${IMPORT_ROWS} rows`] = await time(
        (i) =>
          fetchOk(`${v1}/contacts/import/`, token, {
            method: 'POST',
            body: JSON.stringify({ groupName: `Import ${i}`, csvData: importRows(IMPORT_ROWS) }),
          }),
        IMPORT_RUNS,
      );
      // Erasure of one person a small customer's campaign called five times: their contact row, calls,
      // appointments and consents made anonymous.
      let erased = 0;
      figures['erasure of one person'] = await time(async () => {
        erased += 1;
        const i = contacts - erased;
        const owner = customerIds(2 + ((i - 1) % 999));
        await fetchOk(`${v1}/contacts/contacts/${contactId(i)}/`, await tokenFor(owner.userId), { method: 'DELETE' });
      });

      const sizes = await admin.query<{ attempts: string; bytes: string }>(
        `SELECT (SELECT count(*) FROM call_attempts) AS attempts, pg_total_relation_size('call_attempts') AS bytes`,
      );
      const attempts = Number(sizes.rows[0]!.attempts);
      const bytesPerAttempt = round(Number(sizes.rows[0]!.bytes) / attempts, 0);
      return { contacts, attempts, seedSeconds, bytesPerAttempt, figures };
    } finally {
      await admin.end();
      await db.close();
      await server.stop();
    }
  });
}

/** Puts the campaign's claimed calls back as they were before the tick: pending, nothing held. */
async function takeBackCalls(admin: pg.Client, campaignId: string): Promise<void> {
  await admin.query('BEGIN');
  await admin.query(
    `DELETE FROM credit_holds WHERE call_attempt_id IN (SELECT id FROM call_attempts WHERE campaign_id = $1 AND attempt_number > $2)`,
    [campaignId, ATTEMPTS_PER_CONTACT],
  );
  await admin.query(
    `DELETE FROM ended_calls WHERE attempt_id IN (SELECT id FROM call_attempts WHERE campaign_id = $1 AND attempt_number > $2)`,
    [campaignId, ATTEMPTS_PER_CONTACT],
  );
  await admin.query(`DELETE FROM call_attempts WHERE campaign_id = $1 AND attempt_number > $2`, [campaignId, ATTEMPTS_PER_CONTACT]);
  await admin.query(
    `UPDATE campaign_contacts SET state = 'pending', attempts = $2, lease_expires_at = NULL WHERE campaign_id = $1 AND state = 'dialing'`,
    [campaignId, ATTEMPTS_PER_CONTACT],
  );
  await admin.query(`UPDATE credit_accounts SET held_cents = 0`);
  await admin.query('COMMIT');
}

/** Time against size: one panel per kind of operation, one line per operation (p99). */
function panels(results: Awaited<ReturnType<typeof measureSize>>[]): Panel[] {
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
  await writeFile('docs/scale.png', chartPng(panels(results)));
  await writeFile('bench-results/scale.json', `${JSON.stringify(results, null, 2)}\n`).catch(() => {});
  return {
    name: 'data scale (PostgreSQL)',
    sizes: results
      .map((r) => `${r.contacts} contacts, ${r.attempts} attempts, ${r.bytesPerAttempt} B/attempt, seeded in ${r.seedSeconds} s`)
      .join('; '),
    runs: `${RUNS} per read (after ${WARMUP}), ${IMPORT_RUNS} imports`,
    chart: 'docs/scale.png',
    operations: rows,
  };
}
