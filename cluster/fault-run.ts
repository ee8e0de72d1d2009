import { setTimeout as sleep } from 'node:timers/promises';
import { peakUnderWay, readCallLogs, runChecks, underWayAt, type Check, type ProviderCall } from './checker.js';
import { Cluster } from './cluster.js';
import { faultPlan, injectFault, type FaultKind, type FaultRecord, type FaultTimes } from './faults.js';
import { watch, type Watcher } from './subscriptions.js';
import { createCustomer, dispatchAll, Recorder, runTraffic, tokenOf, type Customer, type WorkloadShape } from './workload.js';

// A run of the workload on the cluster, with faults at random moments when asked, then the checker.

export interface RunOptions {
  faults: boolean;
  /** How many times each kind of fault is injected (the profile's own by default). */
  faultRounds?: number;
}

export interface Profile {
  shape: WorkloadShape;
  /** Reading loops through the load balancer. */
  readers: number;
  /** How many times each kind of fault is injected. */
  faultRounds: number;
  times: FaultTimes;
  env: Record<string, string>;
  /** How long the campaigns may take to finish after the last fault. */
  finishMs: number;
}

// Calls last their simulated duration times SIM_TIME_SCALE (a conversation 30 to 300 s: 3 to 30 s at
// 0.1). A worker places a claim only within the first half of its lease, so the lease is more than twice
// the longest call: an attempt whose worker is cut off is then failed only once its call has surely
// ended. A partition lasts longer than the lease. The calls outlast the faults (each must find calls
// to break): FULL's twelve take about five minutes, its calls six and a half.
export const FULL: Profile = {
  shape: { customers: 50, contacts: 400, concurrentCalls: 20, maxAttempts: 2 },
  readers: 8,
  faultRounds: 2,
  times: { partitionMs: 70_000, pausePostgresMs: 10_000, degradeMs: 20_000, downMs: 3_000 },
  env: { SIM_TIME_SCALE: '0.1', DIALER_LEASE_SECONDS: '65', DIALER_SWEEP_SECONDS: '5' },
  finishMs: 15 * 60_000,
};

export const SHORT: Profile = {
  shape: { customers: 10, contacts: 250, concurrentCalls: 10, maxAttempts: 1 },
  readers: 4,
  faultRounds: 1,
  times: { partitionMs: 24_000, pausePostgresMs: 10_000, degradeMs: 8_000, downMs: 2_000 },
  env: { SIM_TIME_SCALE: '0.03', DIALER_LEASE_SECONDS: '20', DIALER_SWEEP_SECONDS: '3' },
  finishMs: 6 * 60_000,
};

const seconds = (ms: number | null) => (ms === null ? 'not recovered' : `${(ms / 1000).toFixed(1)} s`);

export interface RunResult {
  checks: Check[];
  faults: FaultRecord[];
  figures: Record<string, string | number>;
}

async function inBatches<T, R>(items: T[], size: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(each))));
  return out;
}

/** Polls until every campaign has completed (or the bound passes). */
async function untilCompleted(cluster: Cluster, boundMs: number): Promise<boolean> {
  const started = Date.now();
  while (Date.now() - started < boundMs) {
    const { rows } = await cluster.db.query<{ open: string }>(`SELECT count(*) AS open FROM campaigns WHERE status <> 'completed'`);
    if (Number(rows[0]!.open) === 0) return true;
    await sleep(1000);
  }
  return false;
}

/**
 * The most attempts unfinished in the database across the cluster (calls under way, and ended calls
 * whose results are not written yet), sampled twice a second until `stop` is set.
 */
async function peakInFlight(cluster: Cluster, stop: { now: boolean }): Promise<number> {
  let peak = 0;
  while (!stop.now) {
    const { rows } = await cluster.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM call_attempts WHERE status IN ('queued', 'ringing', 'in_progress')`,
    );
    peak = Math.max(peak, Number(rows[0]!.n));
    await sleep(500);
  }
  return peak;
}

export async function oneRun(run: number, profile: Profile, logDir: string, options: RunOptions): Promise<RunResult> {
  console.log(`run ${run}: starting the cluster (logs in ${logDir})`);
  const cluster = await Cluster.start({ logDir, env: { RATE_LIMIT: '1000000/1', ...profile.env } });
  const stopWatching = new AbortController();
  const traffic = { now: false };
  const recorder = new Recorder();
  try {
    const admin = await tokenOf('00000000-0000-4000-8000-00000000a0a0', 'admin');
    const customers: Customer[] = await inBatches(Array.from({ length: profile.shape.customers }), 10, () =>
      createCustomer(recorder, cluster.lb, admin, profile.shape),
    );
    const watching = customers.map((customer, i) => {
      const name = cluster.apis[i % cluster.apis.length]!;
      return watch({ name, url: cluster.api(name) }, cluster.lb, customer, stopWatching.signal);
    });
    const watchers: Watcher[] = watching.map((w) => w.watcher);
    await sleep(1000);
    const dispatchedAt = Date.now();
    await dispatchAll(recorder, cluster.lb, customers);
    console.log(`run ${run}: ${customers.length} customers dispatched ${customers.length * 3} campaigns`);
    const reading = runTraffic(recorder, cluster.lb, customers, profile.readers, traffic);
    const sampling = peakInFlight(cluster, traffic);

    const faults: FaultRecord[] = [];
    if (options.faults) {
      const plan = faultPlan(options.faultRounds ?? profile.faultRounds);
      for (const kind of plan) {
        await sleep(2000 + Math.random() * 4000);
        const record = await injectFault(cluster, kind, profile.times, watchers);
        faults.push(record);
        console.log(
          `run ${run}: ${record.kind} ${record.target}: ${seconds(record.endedAt - record.startedAt)}, recovered in ${seconds(record.recoveryMs)}`,
        );
      }
    }
    const completed = await untilCompleted(cluster, profile.finishMs);
    const finishedAt = Date.now();
    traffic.now = true;
    await reading;
    const peak = await sampling;
    // The last events of the campaigns that finished last are on their way.
    await sleep(3000);
    stopWatching.abort();
    await Promise.all(watching.map((w) => w.done));

    const calls = readCallLogs(logDir, cluster.workers);
    for (const fault of faults) {
      fault.underWayAtStart = underWayAt(calls, faults, fault.startedAt);
      if (WORKER_FAULTS.has(fault.kind)) fault.othersPausedMs = othersPause(calls, fault);
    }
    const checks = await runChecks(cluster.db, calls, watchers, recorder.answers, faults);
    if (!completed) checks.push({ name: 'campaigns completed', violations: [`not within ${profile.finishMs / 1000} s`], looked: '' });
    const { rows } = await cluster.db.query<{ attempts: string }>('SELECT count(*) AS attempts FROM call_attempts');
    const attempts = Number(rows[0]!.attempts);
    return {
      checks,
      faults,
      figures: {
        customers: customers.length,
        campaigns: customers.length * 3,
        attempts,
        'attempts/s': Math.round(attempts / ((finishedAt - dispatchedAt) / 1000)),
        'peak calls under way (provider log)': peakUnderWay(calls, faults),
        'peak attempts unfinished (database)': peak,
        requests: recorder.answers.length,
        subscriptions: watchers.length,
        'calling took (s)': Math.round((finishedAt - dispatchedAt) / 1000),
        ...(faults.length
          ? { 'faults that found calls under way': `${faults.filter((f) => f.underWayAtStart! > 0).length} of ${faults.length}` }
          : {}),
      },
    };
  } finally {
    traffic.now = true;
    stopWatching.abort();
    await cluster.stop();
  }
}

/** Faults of one worker, while which the others should go on dialing. */
const WORKER_FAULTS = new Set<FaultKind>(['partition-worker', 'kill-worker', 'degrade-link']);

/**
 * The longest time during the fault in which no worker but its target placed a call, in ms: how long
 * one worker's trouble held up the others (a lock it kept while cut off held up every one of them).
 */
export function othersPause(calls: ProviderCall[], fault: Pick<FaultRecord, 'target' | 'startedAt' | 'endedAt'>): number {
  const placed = calls
    .filter((c) => c.worker !== fault.target)
    .map((c) => c.placedAt.getTime())
    .filter((at) => at >= fault.startedAt && at <= fault.endedAt)
    .sort((a, b) => a - b);
  const marks = [fault.startedAt, ...placed, fault.endedAt];
  let longest = 0;
  for (let i = 1; i < marks.length; i += 1) longest = Math.max(longest, marks[i]! - marks[i - 1]!);
  return longest;
}

export function report(results: RunResult[]): { passed: number; failed: number } {
  let passed = 0;
  let failed = 0;
  for (const [i, result] of results.entries()) {
    console.log(`\nrun ${i + 1}`);
    console.table(result.figures);
    if (result.faults.length)
      console.table(
        result.faults.map((f) => ({
          fault: f.kind,
          target: f.target,
          'lasted (s)': Number(((f.endedAt - f.startedAt) / 1000).toFixed(1)),
          'recovered in (s)': f.recoveryMs === null ? 'no' : Number((f.recoveryMs / 1000).toFixed(1)),
          'calls under way at its start': f.underWayAtStart ?? '',
          'recovered when': f.what,
          "others' longest pause (s)": f.othersPausedMs === undefined ? '' : Number((f.othersPausedMs / 1000).toFixed(1)),
        })),
      );
    for (const check of result.checks) {
      if (check.violations.length) failed += 1;
      else passed += 1;
      console.log(`${check.violations.length ? 'FAIL' : 'ok  '} ${check.name} (${check.looked})`);
      for (const v of check.violations) console.log(`       ${v}`);
    }
  }
  const faults = results.reduce((n, r) => n + r.faults.length, 0);
  const violations = results.reduce((n, r) => n + r.checks.reduce((m, c) => m + c.violations.length, 0), 0);
  console.log(`\nruns: ${results.length}, faults: ${faults}, violations: ${violations}`);
  return { passed, failed };
}
