import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { startScript } from './contenders/spawn.js';
import { oursBody, postgraphileBody } from './contenders/nested.js';
import { AGENTS, CAMPAIGNS, CONTACTS, GROUPS, seedCustomer } from './load-seed.js';
import {
  assertSameBytes,
  CONNECTIONS,
  fetchAnswer,
  statementsPerRequest,
  timeRound,
  warmUp,
  type RoundFigures,
  type Target,
} from './load-measure.js';
import { median, memoryOf, round, startServer, tokenFor, withDatabase, type Server } from './support.js';

// The read endpoints under load, against contenders, on one seeded PostgreSQL database in one run. Six
// customers (10 agents, 10 groups of 200 contacts, 25 campaigns each, through the public API); one of them
// is measured. Contenders:
// - ours: the server as production starts it (`npm run build`, node dist/main.js, NODE_ENV=production).
// - postgraphile: PostGraphile v4 in a process of its own (bench/contenders/postgraphile.ts), production
//   options, a pool of 20, answering the nested GraphQL read through aliases with the same bytes as ours.
//   The off-the-shelf alternative: our server should beat it clearly, in throughput and CPU per request.
// - raw: node:http and pg (bench/contenders/raw-server.ts), one hand-written statement per request that
//   builds the answer, no auth: the floor for the nested read and the v1 lists.
// Every contender's answer is first checked to be ours byte for byte. Then, per scenario, a warm-up each
// and BENCH_LOAD_ROUNDS interleaved rounds (ours, postgraphile, raw, ours, ...) of BENCH_LOAD_SECONDS at
// BENCH_LOAD_CONNECTIONS: req/s, p50/p99, CPU per request of the contender's process and of PostgreSQL.
// Compare only ratios taken in one run: the machine is shared. Neither contender checks a token (ours
// verifies one per request), and ours has its fixed pool of 10. About 13 minutes at the defaults.

const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_LOAD_ROUNDS ?? 3);
const WARM_UP_SECONDS = 2;
// Only the scenarios whose name contains this text (`BENCH_LOAD_ONLY=/api/v1` times the v1 lists alone).
const ONLY = process.env.BENCH_LOAD_ONLY ?? '';
const NEIGHBOURS = 5;
const PAGE_SIZES = [5, 25, 50];
const PAGE_CONTACTS = 20;
// How the cost grows with the contacts read per group, at one page of 25 campaigns (groups hold 200).
const GROWTH_PAGE = 25;
const GROWTH_CONTACTS = [5, 25, 100];

// Issue targets, printed next to the ratios (the run does not fail on them).
const TARGETS = { nestedRpsVsPostgraphile: 1.5, nestedCpuVsPostgraphile: 0.6, v1RpsVsRaw: 0.8 };

const postgraphileVersion = JSON.parse(readFileSync(new URL('../node_modules/postgraphile/package.json', import.meta.url), 'utf8')).version;

interface Scenario {
  name: string;
  kind: 'nested page' | 'nested growth' | 'v1 list';
  /** Ours first: the others are checked against its answer. */
  targets: Target[];
}

interface Contenders {
  ours: Server;
  postgraphile: Server;
  raw: Server;
  token: string;
  userId: string;
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

function scenarios({ ours, postgraphile, raw, token, userId }: Contenders): Scenario[] {
  const auth = { ...JSON_HEADERS, authorization: `Bearer ${token}` };
  const nested = (kind: Scenario['kind'], first: number, contacts: number): Scenario => ({
    name: `nested ${first} campaigns x ${contacts} contacts`,
    kind,
    targets: [
      { contender: 'ours', server: ours, method: 'POST', path: '/graphql', headers: auth, body: oursBody(first, contacts) },
      {
        contender: 'postgraphile',
        server: postgraphile,
        method: 'POST',
        path: '/graphql',
        headers: JSON_HEADERS,
        body: postgraphileBody(first, contacts, userId),
      },
      { contender: 'raw', server: raw, method: 'POST', path: '/graphql', headers: JSON_HEADERS, body: oursBody(first, contacts) },
    ],
  });
  const list = (path: string): Scenario => ({
    name: `GET /api/v1${path}`,
    kind: 'v1 list',
    targets: [
      { contender: 'ours', server: ours, method: 'GET', path: `/api/v1${path}`, headers: auth },
      { contender: 'raw', server: raw, method: 'GET', path: `/api/v1${path}`, headers: JSON_HEADERS },
    ],
  });
  return [
    ...PAGE_SIZES.map((first) => nested('nested page', first, PAGE_CONTACTS)),
    ...GROWTH_CONTACTS.map((contacts) => nested('nested growth', GROWTH_PAGE, contacts)),
    list('/campaigns/'),
    list('/agents/active/'),
  ];
}

/** Our answer's GraphQL errors (a refusal such as QUERY_TOO_COSTLY), as one line; undefined when it has none. */
function refusalOf(status: number, text: string): string | undefined {
  let parsed: { errors?: { message: string; extensions?: { code?: string } }[] } | undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `HTTP ${status}, not JSON: ${text.slice(0, 200)}`;
  }
  if (parsed?.errors?.length) return parsed.errors.map((e) => `${e.extensions?.code ?? 'ERROR'}: ${e.message}`).join(' | ');
  if (status >= 300) return `HTTP ${status}: ${text.slice(0, 200)}`;
  return undefined;
}

const ratio = (a: number, b: number) => (b > 0 ? round(a / b, 2) : Number.NaN);
const verdict = (met: boolean) => (met ? 'met' : 'NOT met');

export async function benchLoad() {
  return withDatabase(async (url) => {
    const database = new URL(url).pathname.slice(1);
    // Off: the dialer's sweep would add statements of its own; the limit: one user sends all the load.
    const ours = await startServer(url, { DIALER: 'off', RATE_LIMIT: '9999999/1' });
    const others: Server[] = [];
    try {
      const token = await tokenFor(randomUUID());
      for (let n = 0; n < NEIGHBOURS; n += 1) await seedCustomer(ours, await tokenFor(randomUUID()));
      await seedCustomer(ours, token);
      const idle = await memoryOf(ours.pid);

      // A token's `sub` is its user's id (users.id): read back, so that the contenders are pointed at a user that exists.
      const sub = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sub as string;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const userId = (await client.query<{ id: string }>('SELECT id FROM users WHERE id = $1::uuid', [sub])).rows[0]?.id;
      await client.end();
      if (!userId) throw new Error(`no user row for the measured customer ${sub}`);

      const postgraphile = await startScript('bench/contenders/postgraphile.ts', { DATABASE_URL: url });
      others.push(postgraphile);
      const raw = await startScript('bench/contenders/raw-server.ts', { DATABASE_URL: url, BENCH_USER_ID: userId });
      others.push(raw);

      const rounds: Record<string, unknown>[] = [];
      const medians: Record<string, unknown>[] = [];
      const comparisons: Record<string, unknown>[] = [];
      const refused: Record<string, unknown>[] = [];
      for (const scenario of scenarios({ ours, postgraphile, raw, token, userId }).filter((s) => s.name.includes(ONLY))) {
        const [oursTarget, ...rest] = scenario.targets as [Target, ...Target[]];
        const reference = await fetchAnswer(oursTarget);
        const refusal = refusalOf(reference.status, reference.text);
        if (refusal) {
          console.log(`${scenario.name}: our server refused it (${refusal}); not timed`);
          refused.push({ scenario: scenario.name, answer: refusal });
          comparisons.push({ scenario: scenario.name, 'ours/pgl req/s': 'refused by ours' });
          continue;
        }
        for (const target of rest) assertSameBytes(scenario.name, target.contender, reference.text, (await fetchAnswer(target)).text);
        const statements = await statementsPerRequest(oursTarget);

        for (const target of scenario.targets) await warmUp(target, WARM_UP_SECONDS);
        const figures = new Map<string, RoundFigures[]>(scenario.targets.map((t) => [t.contender, []]));
        for (let r = 1; r <= ROUNDS; r += 1) {
          for (const target of scenario.targets) {
            const measured = await timeRound(target, SECONDS, database);
            figures.get(target.contender)!.push(measured);
            rounds.push({ scenario: scenario.name, round: r, contender: target.contender, ...measured });
          }
        }

        const mid = new Map<string, RoundFigures>();
        for (const [contender, list] of figures) {
          const of = (key: keyof RoundFigures) => median(list.map((f) => f[key]));
          const row = {
            requestsPerSecond: of('requestsPerSecond'),
            p50Ms: of('p50Ms'),
            p99Ms: of('p99Ms'),
            cpuMsPerRequest: of('cpuMsPerRequest'),
            pgCpuMsPerRequest: of('pgCpuMsPerRequest'),
            requests: of('requests'),
          };
          mid.set(contender, row);
          medians.push({ scenario: scenario.name, contender, ...row, sqlStatementsPerRequest: contender === 'ours' ? statements : '' });
        }

        const o = mid.get('ours')!;
        const p = mid.get('postgraphile');
        const w = mid.get('raw')!;
        const paged = scenario.kind === 'nested page';
        const rpsVsPostgraphile = p ? ratio(o.requestsPerSecond, p.requestsPerSecond) : Number.NaN;
        const cpuVsPostgraphile = p ? ratio(o.cpuMsPerRequest, p.cpuMsPerRequest) : Number.NaN;
        const rpsVsRaw = ratio(o.requestsPerSecond, w.requestsPerSecond);
        const isList = scenario.kind === 'v1 list';
        const check = (applies: boolean, met: boolean) => (applies ? verdict(met) : '');
        // Ratios of medians, each next to its issue target where one applies.
        comparisons.push({
          scenario: scenario.name,
          'ours/pgl req/s': p ? rpsVsPostgraphile : '',
          [`>= ${TARGETS.nestedRpsVsPostgraphile}`]: check(paged, rpsVsPostgraphile >= TARGETS.nestedRpsVsPostgraphile),
          'ours/pgl cpu': p ? cpuVsPostgraphile : '',
          [`<= ${TARGETS.nestedCpuVsPostgraphile}`]: check(paged, cpuVsPostgraphile <= TARGETS.nestedCpuVsPostgraphile),
          'ours/raw req/s': rpsVsRaw,
          [`>= ${TARGETS.v1RpsVsRaw}`]: check(isList, rpsVsRaw >= TARGETS.v1RpsVsRaw),
          'ours/raw cpu': ratio(o.cpuMsPerRequest, w.cpuMsPerRequest),
          'ours p99 < 50 ms': check(isList, o.p99Ms < 50),
          'ours 1 statement': check(!isList, statements === 1),
        });
      }

      return {
        name: `read endpoints against contenders (${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, PostgreSQL)`,
        dataset: `${NEIGHBOURS + 1} customers x (${AGENTS} agents, ${GROUPS} groups x ${CONTACTS} contacts, ${CAMPAIGNS} campaigns)`,
        contenders: `ours (pool 10), postgraphile ${postgraphileVersion} (pool 20), raw node:http + pg (pool 20)`,
        oursIdleRssMb: round(idle.rssMb),
        oursPeakRssMb: round((await memoryOf(ours.pid)).peakMb),
        postgraphilePeakRssMb: round((await memoryOf(postgraphile.pid)).peakMb),
        rawPeakRssMb: round((await memoryOf(raw.pid)).peakMb),
        targets:
          `nested pages: ours >= ${TARGETS.nestedRpsVsPostgraphile}x postgraphile req/s and <= ${TARGETS.nestedCpuVsPostgraphile}x its CPU ` +
          `per request; v1 lists >= ${TARGETS.v1RpsVsRaw}x raw req/s and p99 under 50 ms; nested: 1 SQL statement per request`,
        refused: refused.length ? refused : 'none',
        rounds,
        medians,
        comparisons,
      };
    } finally {
      for (const server of others) await server.stop();
      await ours.stop();
    }
  });
}
