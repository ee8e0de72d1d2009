import autocannon from 'autocannon';
import { cpuMsOf, postgresCpuBetween, postgresCpuMs, round, type Server } from './support.js';

// How the load benchmark times one request against one server: the answer fetched once (to compare bytes),
// a warm-up, and timed rounds that read the server's own CPU and PostgreSQL's around them.

export const CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 20);

/** One contender's request for one scenario. */
export interface Target {
  contender: string;
  server: Server;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  headers: Record<string, string>;
}

export async function fetchAnswer(target: Target): Promise<{ status: number; text: string }> {
  const res = await fetch(`${target.server.url}${target.path}`, { method: target.method, headers: target.headers, body: target.body });
  return { status: res.status, text: await res.text() };
}

/** Fails loudly, with where the two first differ, when a contender's answer is not ours byte for byte. */
export function assertSameBytes(scenario: string, contender: string, ours: string, theirs: string): void {
  if (ours === theirs) return;
  let at = 0;
  while (at < ours.length && ours[at] === theirs[at]) at += 1;
  const excerpt = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 120), at + 120));
  throw new Error(
    `${scenario}: ${contender}'s answer is not ours (${theirs.length} bytes against ${ours.length}), first difference at byte ${at}:\n` +
      `  ours:  ${excerpt(ours)}\n  ${contender}: ${excerpt(theirs)}`,
  );
}

function cannon(target: Target, seconds: number) {
  return autocannon({
    url: `${target.server.url}${target.path}`,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections: CONNECTIONS,
    duration: seconds,
  });
}

export async function warmUp(target: Target, seconds: number): Promise<void> {
  await cannon(target, seconds);
}

export interface RoundFigures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** The contender's own process: what one request costs it. Less noisy than throughput on a shared machine. */
  cpuMsPerRequest: number;
  /** PostgreSQL's backends on the bench database: the other half of the cost on a 2-core machine. */
  pgCpuMsPerRequest: number;
  requests: number;
}

/** One timed round; any non-2xx answer or socket error fails the benchmark. */
export async function timeRound(target: Target, seconds: number, database: string): Promise<RoundFigures> {
  const [cpuBefore, pgBefore] = [await cpuMsOf(target.server.pid), await postgresCpuMs(database)];
  const result = await cannon(target, seconds);
  const [cpuAfter, pgAfter] = [await cpuMsOf(target.server.pid), await postgresCpuMs(database)];
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${target.contender} ${target.method} ${target.path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const requests = Math.max(result.requests.total, 1);
  return {
    requestsPerSecond: round(result.requests.total / result.duration, 0),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    cpuMsPerRequest: round((cpuAfter - cpuBefore) / requests, 3),
    pgCpuMsPerRequest: round(postgresCpuBetween(pgBefore, pgAfter) / requests, 3),
    requests: result.requests.total,
  };
}

async function statementsTotal(server: Server): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(text.match(/^db_statements_total (\d+)/m)?.[1] ?? Number.NaN);
}

/** SQL statements per request, from our server's own counter over a few requests sent one at a time. */
export async function statementsPerRequest(target: Target): Promise<number> {
  const requests = 10;
  const before = await statementsTotal(target.server);
  for (let i = 0; i < requests; i += 1) await fetchAnswer(target);
  // Less the one statement the second scrape reads the dialer gauges with.
  return round(((await statementsTotal(target.server)) - before - 1) / requests, 2);
}
