import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamicStatement, type Sql, type Statement } from '../src/db/sql.js';
import { serviceContext, systemClock, type ServiceEnv } from '../src/services/context.js';
import { DEEP_OFFSET, MAX_SHIFT, OffsetMemory } from '../src/services/offset-pages.js';
import { listCallAttempts } from '../src/services/results/calls.js';
import { startTestApp, type TestApp } from './support/app.js';
import { seedResults, type Results } from './support/results.js';
import { testSql } from './support/sql.js';

// v1 pages at deep offsets continue from where the previous page ended (src/services/offset-pages.ts).
// Every page a walking client reads is compared, byte for byte, with the same request to a server that
// skips from the top (no memory), over the same database, while rows come and go at the head between pages.

const HISTORY = 8_000;
const LEDGER = 3_000;
const APPOINTMENTS = 2_000;

let app: TestApp;
let plain: TestApp;
let token: string;
let userId: string;
let seeded: Results;

const sqlOf = (a: TestApp) => testSql(a.sql);

/** `count` calls of the seeded campaign made at `createdAt` (their ids made then too, as the service makes them). */
async function insertCalls(count: number, createdAt: string, owner: { userId: string; results: Results } = { userId, results: seeded }) {
  const { spring } = owner.results;
  await sqlOf(app).query(
    `INSERT INTO call_attempts (id, user_id, campaign_id, contact_id, attempt_number, status, to_number, sentiment, created_at, updated_at)
     SELECT uuidv7_of(gen_random_uuid(), ${createdAt}), $1::uuid, $2::uuid, $3::uuid, 1, 'completed', '+14155550101', 'neutral', ${createdAt}, now()
     FROM generate_series(1, $4::int) i`,
    [owner.userId, spring.campaign.id, spring.contacts[0]!.id, count],
  );
}

const headCalls = (count: number) => insertCalls(count, `now() - make_interval(secs => i)`);

async function insertLedger(count: number, createdAt: string) {
  await sqlOf(app).query(
    `INSERT INTO credit_transactions (id, user_id, kind, amount_cents, balance_after_cents, included_after_cents, description, created_at)
     SELECT uuidv7_of(gen_random_uuid(), ${createdAt}), $1::uuid, 'adjustment', i, 0, 0, 'Row ' || i, ${createdAt} FROM generate_series(1, $2::int) i`,
    [userId, count],
  );
}

async function insertAppointments(count: number, createdAt: string) {
  await sqlOf(app).query(
    `INSERT INTO appointments (id, user_id, contact_id, campaign_id, status, scheduled_at, timezone, contact_snapshot, appointment_data, created_at, updated_at)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, $3::uuid, 'scheduled', now() + interval '1 day', 'UTC', '{}', '{}', ${createdAt}, now()
     FROM generate_series(1, $4::int) i`,
    [userId, seeded.spring.contacts[0]!.id, seeded.spring.campaign.id, count],
  );
}

beforeAll(async () => {
  app = await startTestApp();
  plain = await startTestApp({ offsetMemory: false, database: { ...app.db, close: async () => {} } });
  userId = randomUUID();
  token = await app.token(userId);
  seeded = await seedResults(app, userId);
  await insertCalls(HISTORY, `now() - interval '2 hours' - make_interval(secs => (i / 2) * 60)`);
  await insertLedger(LEDGER, `now() - interval '2 hours' - make_interval(secs => (i / 2) * 60)`);
  await insertAppointments(APPOINTMENTS, `now() - interval '2 hours' - make_interval(secs => (i / 2) * 60)`);
  // As autovacuum does after so many inserts: unanalyzed, the planner takes the ledger for one row and sorts it whole.
  await sqlOf(app).query('ANALYZE call_attempts, credit_transactions, appointments');
}, 120_000);

afterAll(async () => {
  await plain?.close();
  await app?.close();
});

/** The statements sent through the stores' SQL session while `run` runs. */
async function captured(sql: Sql, run: () => Promise<unknown>): Promise<{ statement: Statement<unknown>; values: unknown[] }[]> {
  const seen: { statement: Statement<unknown>; values: unknown[] }[] = [];
  const original = sql.run;
  sql.run = ((statement: Statement<unknown>, values: unknown[] = []) => {
    seen.push({ statement, values });
    return original.call(sql, statement, values);
  }) as Sql['run'];
  try {
    await run();
  } finally {
    sql.run = original;
  }
  return seen;
}

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The most rows any one scan of `table` (or a partition of it) read, index entries included. */
function mostRowsRead(node: PlanNode, table: string): number {
  const here = node['Relation Name']?.startsWith(table)
    ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1)
    : 0;
  return Math.max(here, ...(node.Plans ?? []).map((p) => mostRowsRead(p, table)));
}

async function rowsRead(sql: Sql, s: { statement: Statement<unknown>; values: unknown[] }, table: string): Promise<number> {
  const [row] = await sql.run(dynamicStatement('test.explain', `EXPLAIN (ANALYZE, FORMAT JSON) ${s.statement.text}`), s.values);
  const plan = (row as { 'QUERY PLAN': { Plan: PlanNode }[] | string })['QUERY PLAN'];
  return mostRowsRead((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan, table);
}

/** The same request to the walking server and to the one that skips from the top: the same bytes. */
async function expectSame(path: string): Promise<string> {
  return (await walk(path)).text;
}

/** expectSame, with the statements the walking server sent for it. */
async function walk(path: string, as = token) {
  let walked: Awaited<ReturnType<TestApp['request']>> | undefined;
  const statements = await captured(app.sql, async () => (walked = await app.request('GET', path, { token: as })));
  const skipped = await plain.request('GET', path, { token: as });
  expect(walked!.status).toBe(200);
  expect(walked!.text).toBe(skipped.text);
  return { text: walked!.text, statements };
}

describe('call history walked page by page', () => {
  it('gives the offset’s rows while calls arrive and go at the head, with the page size changing', async () => {
    const limits = [50, 50, 20, 100, 7, 50, 500, 50];
    let offset = DEEP_OFFSET;
    let continued = 0;
    for (let page = 0; page < 24; page++) {
      const limit = limits[page % limits.length]!;
      const { text, statements } = await walk(`/api/v1/campaigns/recordings/?limit=${limit}&offset=${offset}`);
      expect(JSON.parse(text)).toHaveLength(limit);
      if (statements.some((s) => s.statement.name === 'results.callHistory.continuedPage')) continued++;
      // New calls at the head between pages (the page's rows move down), and one taken back (put back by the dialer).
      if (page % 3 === 0) await headCalls(1 + page);
      if (page % 5 === 4)
        await sqlOf(app).query(
          `DELETE FROM call_attempts WHERE id = (SELECT id FROM call_attempts WHERE user_id = $1::uuid ORDER BY created_at DESC LIMIT 1)`,
          [userId],
        );
      offset += limit;
    }
    // Every page after the first continued from the one before.
    expect(continued).toBe(23);
  });

  it('reads a continued page from the previous page’s end: about its own rows, where skipping reads every row before it', async () => {
    const limit = 50;
    const offset = 6_000; // more than MAX_SHIFT past where the first walk ended: read from the top
    const first = (await walk(`/api/v1/campaigns/recordings/?limit=${limit}&offset=${offset}`)).statements;
    const skipped = first.find((s) => s.statement.name === 'results.callHistory.skippedPage')!;
    expect(skipped).toBeDefined();
    expect(await rowsRead(app.sql, skipped, 'call_attempts')).toBeGreaterThanOrEqual(offset);
    await headCalls(3);
    const next = (await walk(`/api/v1/campaigns/recordings/?limit=${limit}&offset=${offset + limit}`)).statements;
    expect(next.map((s) => s.statement.name)).toEqual(['results.callHistory.continuedPage']);
    const read = await rowsRead(app.sql, next[0]!, 'call_attempts');
    expect(read).toBeLessThanOrEqual(2 * limit + 20);
  });

  it('a burst of calls past the shift it continues over: read from the top again, the same rows', async () => {
    const offset = 2_000;
    await expectSame(`/api/v1/campaigns/recordings/?limit=50&offset=${offset}`);
    await headCalls(MAX_SHIFT + 200);
    const next = (await walk(`/api/v1/campaigns/recordings/?limit=50&offset=${offset + 50}`)).statements;
    expect(next.map((s) => s.statement.name)).toEqual(['results.callHistory.continuedPage', 'results.callHistory.skippedPage']);
  });

  it('past the end: an empty page, as skipping gives', async () => {
    const [row] = await sqlOf(app).query<{ n: number }>('SELECT count(*)::int AS n FROM call_attempts WHERE user_id = $1::uuid', [userId]);
    const n = row!.n;
    await expectSame(`/api/v1/campaigns/recordings/?limit=50&offset=${n - 30}`);
    expect(await expectSame(`/api/v1/campaigns/recordings/?limit=50&offset=${n + 20}`)).toBe('[]');
  });
});

describe('call history with a year between its calls', () => {
  // A continued page is looked for among the ids made near the remembered row first (src/db/offset-pages.ts),
  // as near as the rows of the page before lay to each other; a page across the gap is not all there, and
  // is read again over every month.
  it('a page across the gap and one past it: read among all the months, the same rows', async () => {
    const owner = randomUUID();
    const ownerToken = await app.token(owner);
    const results = await seedResults(app, owner);
    await insertCalls(1_100, `now() - interval '2 hours' - make_interval(secs => i * 10)`, { userId: owner, results });
    await insertCalls(300, `now() - interval '400 days' - make_interval(secs => i * 10)`, { userId: owner, results });
    await sqlOf(app).query('ANALYZE call_attempts');
    const names = async (offset: number) => {
      const { text, statements } = await walk(`/api/v1/campaigns/recordings/?limit=50&offset=${offset}`, ownerToken);
      expect(JSON.parse(text)).toHaveLength(50);
      return statements.map((s) => s.statement.name).filter((name) => name.startsWith('results.callHistory'));
    };
    expect(await names(1_000)).toEqual(['results.callHistory.skippedPage']);
    // Within the week about the row: found there.
    expect(await names(1_030)).toEqual(['results.callHistory.continuedPage']);
    // Twenty of its rows this side of the gap, thirty past it.
    expect(await names(1_080)).toEqual(['results.callHistory.continuedPage', 'results.callHistory.continuedPageAnywhere']);
    // That page spanned the year: the next is looked for as far away, and found.
    expect(await names(1_130)).toEqual(['results.callHistory.continuedPage']);
    expect(await names(1_180)).toEqual(['results.callHistory.continuedPage']);
  });
});

describe('call history filtered, through the service', () => {
  it('a campaign’s calls and a time range walked page by page as skipping reads them', async () => {
    const env = { db: app.prisma, sql: app.sql, clock: systemClock } as ServiceEnv;
    const walking = serviceContext({ ...env, offsets: new OffsetMemory() }, { id: userId, isAdmin: false });
    const skipping = serviceContext(env, { id: userId, isAdmin: false });
    const filters = [
      { campaign_id: seeded.spring.campaign.id },
      { campaign_id: seeded.spring.campaign.id, from: new Date(Date.now() - 200 * 24 * 3600_000), to: new Date(Date.now() - 3 * 3600_000) },
    ];
    for (const filter of filters) {
      for (let offset = DEEP_OFFSET, page = 0; page < 8; page++, offset += 40) {
        const [a, b] = await Promise.all([walking, skipping].map((ctx) => listCallAttempts(ctx, filter, { skip: offset, take: 40 })));
        expect(a!.length).toBe(40);
        expect(a).toEqual(b);
        if (page % 2 === 0) await headCalls(2);
      }
    }
  });
});

describe('transactions walked page by page', () => {
  it('gives the offset’s rows and has_more while rows are appended', async () => {
    let offset = DEEP_OFFSET;
    for (const limit of [50, 50, 10, 200, 50, 50]) {
      const text = await expectSame(`/api/v1/billing/transactions/?limit=${limit}&offset=${offset}`);
      expect(JSON.parse(text).transactions).toHaveLength(limit);
      await insertLedger(2, 'now()');
      offset += limit;
    }
    const next = (await walk(`/api/v1/billing/transactions/?limit=50&offset=${offset}`)).statements;
    expect(next.map((s) => s.statement.name)).toEqual(['billing.ledger.continuedPage']);
    expect(await rowsRead(app.sql, next[0]!, 'credit_transactions')).toBeLessThanOrEqual(2 * 51 + 20);
  });
});

describe('appointments walked page by page', () => {
  it('gives the offset’s rows while bookings are made', async () => {
    let offset = DEEP_OFFSET;
    let continued = 0;
    for (const limit of [50, 100, 30, 50, 50]) {
      const { text, statements } = await walk(`/api/v1/appointments/?limit=${limit}&offset=${offset}`);
      expect(JSON.parse(text)).toHaveLength(limit);
      if (statements.some((s) => s.statement.name === 'results.appointments.continuedPage')) continued++;
      await insertAppointments(3, 'now()');
      offset += limit;
    }
    expect(continued).toBe(4);
  });
});

describe('the memory', () => {
  it('keeps at most its number of lists, whatever clients send', () => {
    const memory = new OffsetMemory(100);
    const key = { id: randomUUID(), createdAt: new Date(0) };
    for (let i = 0; i < 1_000; i++) {
      for (let end = 1_000; end < 1_100; end += 10)
        memory.remember(`list ${i}`, { key, end, settled: end, settledBefore: new Date(1), at: 0, msPerRow: 0 });
    }
    expect(memory.size).toBe(100);
    expect(memory.nearest('list 999', 1_095, 0)?.end).toBe(1_090);
    expect(memory.nearest('list 0', 1_095, 0)).toBeUndefined();
  });
});
