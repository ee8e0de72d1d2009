import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileSync } from 'node:fs';
import { median, round } from '../bench/support.js';
import { Cluster, type Topology } from './cluster.js';
import { hostsCpu } from './cpu.js';
import { createAccount, createCampaign, dispatch, importList, Recorder, tokenOf, type Account } from './workload.js';

// What the cluster costs per unit of work as the work grows: dialer CPU per call attempt and API CPU per
// request, at 1, 2 and 3 workers, 1 and 2 API instances, and 1,000, 10,000 and 100,000 calls in flight.
// Every point runs the same number of attempts a second (TARGET_ATTEMPTS_PER_SECOND) and requests a
// second, so what changes between points is only the topology and the size of the work: calls in
// flight = attempts a second x a call's mean length, so the simulator's calls are made longer
// (SIM_TIME_SCALE) as the calls in flight grow. The machine's two cores cannot give more throughput to
// more processes; what should hold is that each attempt and each request costs the same everywhere.

export interface CostPoint extends Topology {
  inFlight: number;
}

export interface CostFigures extends CostPoint {
  'attempts/s': number;
  'calls in flight (median)': number;
  'dialer CPU ms/attempt': number;
  'PostgreSQL CPU ms/attempt': number;
  /** Requests an API instance answered, a second. */
  'requests/s': number;
  'API CPU ms/request': number;
  /** Answers of an instance other than 2xx. */
  'non-2xx answers': number;
  /** Requests HAProxy answered itself (503: no instance ready) or nobody answered. */
  'not served': number;
}

/** The simulator's mean call, in seconds at SIM_TIME_SCALE 1, over every attempt (ringing included). */
const MEAN_CALL_SECONDS = 75;
/** Its longest call: a 300 s conversation after 2 s of ringing. */
const LONGEST_CALL_SECONDS = 302;
const TARGET_ATTEMPTS_PER_SECOND = 100;
const REQUESTS_PER_SECOND = 50;
const WINDOW_MS = 45_000;
const CUSTOMERS = 10;
/** How long after the calls in flight reach their number the windows wait for the ramp's rush to pass. */
const SETTLE_MS = 5 * 60_000;

/** The campaigns that hold `inFlight` calls: up to 1,000 at a time each, ten or more. */
function shapeOf(inFlight: number) {
  const concurrency = Math.min(1000, inFlight / CUSTOMERS);
  const campaigns = inFlight / concurrency;
  const scale = inFlight / (TARGET_ATTEMPTS_PER_SECOND * MEAN_CALL_SECONDS);
  // Enough contacts for the ramp (each slot dials until a call lasts; about one call in three ends at
  // once) and twice the window's attempts.
  const contacts = Math.ceil(concurrency * 2 + ((2 * TARGET_ATTEMPTS_PER_SECOND * WINDOW_MS) / 1000 / campaigns) * 2);
  return { concurrency, campaigns, scale, contacts };
}

/** Calls under way: attempts unfinished, less those a worker heard end whose results are not written yet. */
const IN_FLIGHT = `SELECT count(*) AS n FROM call_attempts a WHERE status IN ('queued', 'ringing', 'in_progress')
  AND NOT EXISTS (SELECT 1 FROM ended_calls e WHERE e.attempt_id = a.id)`;
const RECENT_ATTEMPTS = `SELECT count(*) AS n FROM call_attempts WHERE created_at > now() - interval '10 seconds'`;

const NESTED = `query { campaigns(first: 10) { edges { node { id name status progress { total done dialing }
  agent { id name } contactGroup { id name } } } } }`;

/** Requests at a steady rate through the load balancer for `ms`, whatever their answers take; resolves with them. */
async function steadyRequests(recorder: Recorder, base: string, customers: { account: Account; campaigns: string[] }[], ms: number) {
  const pending: Promise<unknown>[] = [];
  const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)]!;
  const started = Date.now();
  for (let n = 0; Date.now() - started < ms; n += 1) {
    const { account, campaigns } = pick(customers);
    const roll = n % 4;
    pending.push(
      roll === 0
        ? recorder.request(base, 'v1 campaigns', account.token, 'GET', '/api/v1/campaigns/')
        : roll === 1
          ? recorder.request(base, 'v1 agents', account.token, 'GET', '/api/v1/agents/active/')
          : roll === 2
            ? recorder.request(base, 'v1 report', account.token, 'GET', `/api/v1/campaigns/${pick(campaigns)}/report/`)
            : recorder.request(base, 'graphql campaigns', account.token, 'POST', '/graphql', { query: NESTED }),
    );
    const next = started + ((n + 1) * 1000) / REQUESTS_PER_SECOND;
    await sleep(Math.max(0, next - Date.now()));
  }
  await Promise.all(pending);
}

/** CPU by host, call attempts made and calls in flight (sampled every 2 s) while `work` runs. */
async function window(cluster: Cluster, ms: number, work: () => Promise<unknown>) {
  const cpu = await hostsCpu(cluster.network, ['db', ...cluster.apis, ...cluster.workers]);
  const startedAt = new Date();
  const inFlight: number[] = [];
  let sampling = true;
  const working = work().finally(() => (sampling = false));
  while (sampling) {
    inFlight.push(await cluster.count(IN_FLIGHT));
    await sleep(Math.min(2000, ms));
  }
  await working;
  const used = await cpu();
  const endedAt = new Date();
  const attempts = await cluster.count('SELECT count(*) AS n FROM call_attempts WHERE created_at >= $1 AND created_at < $2', [
    startedAt,
    endedAt,
  ]);
  return {
    seconds: (endedAt.getTime() - startedAt.getTime()) / 1000,
    attempts,
    inFlight,
    /** CPU of these hosts together, in ms. */
    cpu: (...hosts: string[]) => hosts.reduce((total, host) => total + used.get(host)!, 0),
  };
}

/** PostgreSQL's statements by the time they took since the last reset, the costliest first. */
async function writeStatements(cluster: Cluster, file: string): Promise<void> {
  const { rows } = await cluster.db.query<{ ms: number; calls: string; mean: number; query: string }>(
    `SELECT round(total_exec_time)::float AS ms, calls, round(mean_exec_time::numeric, 3)::float AS mean, left(regexp_replace(query, '\\s+', ' ', 'g'), 240) AS query
       FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`,
  );
  writeFileSync(
    file,
    rows
      .map((r) => `${String(r.ms).padStart(8)} ms ${String(r.calls).padStart(8)} calls ${String(r.mean).padStart(9)} ms each  ${r.query}`)
      .join('\n') + '\n',
  );
}

export async function measureCosts(
  point: CostPoint,
  logDir: string,
  options: { env?: Record<string, string>; profile?: boolean } = {},
): Promise<CostFigures> {
  const shape = shapeOf(point.inFlight);
  const lease = Math.ceil(2.5 * LONGEST_CALL_SECONDS * shape.scale);
  const cluster = await Cluster.start({
    logDir,
    topology: point,
    relayed: false,
    env: {
      SIM_TIME_SCALE: String(shape.scale),
      DIALER_LEASE_SECONDS: String(Math.max(60, lease)),
      RATE_LIMIT: '1000000/1',
      RATE_LIMIT_IMPORT: '1000000/1',
      RATE_LIMIT_DISPATCH: '1000000/1',
      ...options.env,
    },
    profile: options.profile ?? false,
    // The provider's call log is the checker's; a costs run would count its writes as the dialer's.
    callLog: false,
  });
  try {
    const recorder = new Recorder();
    const admin = await tokenOf('00000000-0000-4000-8000-00000000a0a0', 'admin');
    const customers = await Promise.all(
      Array.from({ length: CUSTOMERS }, async (_, c) => {
        const account = await createAccount(recorder, cluster.lb, admin, 1_000_000_000);
        const campaigns: string[] = [];
        for (let i = c; i < shape.campaigns; i += CUSTOMERS) {
          const group = await importList(recorder, cluster.lb, account, `list ${i}`, shape.contacts);
          campaigns.push(await createCampaign(recorder, cluster.lb, account, group, `Campaign ${i}`, shape.concurrency, 1));
        }
        return { account, campaigns };
      }),
    );
    await Promise.all(
      customers.map(async ({ account, campaigns }) => {
        for (const id of campaigns) await dispatch(recorder, cluster.lb, account, id);
      }),
    );

    // Until the calls in flight have grown to (nearly) their number and the rush of the ramp is over:
    // filling every slot at once dials several times the steady rate (about one call in three ends at
    // once), and a window then would measure the ramp. At 100,000 the calls placed in the ramp end in
    // waves for as long as the longest call (over an hour), so after SETTLE_MS the windows run at
    // whatever rate the cluster has reached, which the figures state.
    const rampStarted = Date.now();
    let filledAt: number | undefined;
    for (;;) {
      if (filledAt === undefined && (await cluster.count(IN_FLIGHT)) >= point.inFlight * 0.95) filledAt = Date.now();
      if (filledAt !== undefined) {
        const calm = (await cluster.count(RECENT_ATTEMPTS)) <= 10 * TARGET_ATTEMPTS_PER_SECOND * 1.5;
        if (calm || Date.now() - filledAt > SETTLE_MS) break;
      }
      if (Date.now() - rampStarted > 20 * 60_000) throw new Error(`${point.inFlight} calls in flight not reached after 20 minutes`);
      await sleep(2000);
    }

    // Two windows: calls alone, for the dialer's and PostgreSQL's cost of an attempt; then calls and
    // requests, for the API's cost of a request.
    await cluster.db.query('SELECT pg_stat_statements_reset()');
    const calling = await window(cluster, WINDOW_MS, () => sleep(WINDOW_MS));
    await writeStatements(cluster, `${logDir}/statements-calling.txt`);
    const measured = new Recorder();
    await cluster.db.query('SELECT pg_stat_statements_reset()');
    const reading = await window(cluster, WINDOW_MS, () => steadyRequests(measured, cluster.lb, customers, WINDOW_MS));
    await writeStatements(cluster, `${logDir}/statements-reading.txt`);
    // Only requests an instance answered cost it anything.
    const served = measured.answers.filter((a) => a.server !== null);
    const attempts = calling.attempts + reading.attempts;
    return {
      ...point,
      'attempts/s': Math.round(attempts / (calling.seconds + reading.seconds)),
      'calls in flight (median)': median([...calling.inFlight, ...reading.inFlight]),
      'dialer CPU ms/attempt': round((calling.cpu(...cluster.workers) + reading.cpu(...cluster.workers)) / attempts, 3),
      'PostgreSQL CPU ms/attempt': round(calling.cpu('db') / calling.attempts, 3),
      'requests/s': Math.round(served.length / reading.seconds),
      'API CPU ms/request': round(reading.cpu(...cluster.apis) / served.length, 3),
      'non-2xx answers': served.filter((a) => a.status < 200 || a.status >= 300).length,
      'not served': measured.answers.length - served.length,
    };
  } finally {
    await cluster.stop();
  }
}
