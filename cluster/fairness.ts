import { setTimeout as sleep } from 'node:timers/promises';
import { readCallLogs, type ProviderCall } from './checker.js';
import { Cluster, FULL_TOPOLOGY } from './cluster.js';
import { machineCpuMs } from '../bench/support.js';
import { createAccount, createCampaign, dispatch, importList, Recorder, tokenOf, type Account } from './workload.js';

// Is the dialer fair to a small customer while a huge one calls? One customer's small campaign runs
// twice on the cluster: once alone, and once beside another customer's 100,000-contact campaign that
// keeps every worker busy. For each, the delay from a free slot (a call of the campaign ends, in the
// provider's log) to the next call the campaign places: with contacts waiting, the k-th end frees the
// slot that the (concurrency + k)-th call fills.

export interface FairnessProfile {
  /** The big customer's one campaign in the first test. */
  bigContacts: number;
  /** The big customer's campaigns in the second test, and the contacts of each. */
  manyCampaigns: number;
  manyContacts: number;
  bigConcurrency: number;
  smallContacts: number;
  smallConcurrency: number;
  env: Record<string, string>;
  /**
   * The bounds the run holds the small campaign to beside the big customer: its refills, its first call
   * after dispatch, and how much longer than alone it may take.
   */
  bound: { p99Ms: number; maxMs: number; firstCallMs: number; slowerThanAlone: number };
}

export const FAIRNESS: FairnessProfile = {
  bigContacts: 100_000,
  // Twenty campaigns place calls about four times as fast as one at its limit of 1,000 (the machine is
  // the limit then), so they have more contacts, to be still calling when the small campaign ends.
  manyCampaigns: 20,
  manyContacts: 20_000,
  bigConcurrency: 1000,
  smallContacts: 300,
  smallConcurrency: 5,
  // Calls a fiftieth of their length (a conversation 0.6 to 6 s): the big customer asks for more calls
  // than the cluster can place, so every worker is busy with it.
  env: {
    SIM_TIME_SCALE: '0.02',
    DIALER_LEASE_SECONDS: '60',
    DIALER_SWEEP_SECONDS: '5',
    RATE_LIMIT: '1000000/1',
    RATE_LIMIT_IMPORT: '1000000/1',
    RATE_LIMIT_DISPATCH: '1000000/1',
  },
  bound: { p99Ms: 3000, maxMs: 5000, firstCallMs: 2000, slowerThanAlone: 1.25 },
};

export interface DelayFigures {
  slots: number;
  'dispatch answered in (ms)'?: number;
  'first call after (ms)'?: number;
  'small campaign took (s)'?: number;
  'p50 (ms)': number;
  'p90 (ms)': number;
  'p99 (ms)': number;
  'max (ms)': number;
}

export interface LoadFigures {
  'attempts/s': number;
  'calls in flight (median)': number;
  'machine busy (cores)': number;
}

/** The delays from each slot freed before `until` (ms since the epoch) to the call that filled it, in ms. */
export function refillDelays(calls: ProviderCall[], concurrency: number, until = Infinity): number[] {
  const starts = calls.map((c) => c.placedAt.getTime()).sort((a, b) => a - b);
  const ends = calls.flatMap((c) => (c.endedAt ? [c.endedAt.getTime()] : [])).sort((a, b) => a - b);
  const delays: number[] = [];
  for (let k = 0; k < ends.length && concurrency + k < starts.length && ends[k]! < until; k += 1)
    delays.push(Math.max(0, starts[concurrency + k]! - ends[k]!));
  return delays;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

export function delayFigures(delays: number[]): DelayFigures {
  const sorted = [...delays].sort((a, b) => a - b);
  return {
    slots: sorted.length,
    'p50 (ms)': percentile(sorted, 50),
    'p90 (ms)': percentile(sorted, 90),
    'p99 (ms)': percentile(sorted, 99),
    'max (ms)': sorted.at(-1) ?? 0,
  };
}

async function statusOf(cluster: Cluster, campaignId: string): Promise<string | undefined> {
  const { rows } = await cluster.db.query<{ status: string }>('SELECT status::text FROM campaigns WHERE id = $1', [campaignId]);
  return rows[0]?.status;
}

async function untilDone(cluster: Cluster, campaignId: string, boundMs: number): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < boundMs) {
    if ((await statusOf(cluster, campaignId)) === 'completed') return;
    await sleep(500);
  }
  throw new Error(`campaign ${campaignId} not completed within ${boundMs / 1000} s`);
}

const IN_FLIGHT = `SELECT count(*) AS n FROM call_attempts WHERE campaign_id = ANY($1::uuid[]) AND status IN ('queued', 'ringing', 'in_progress')`;
const ATTEMPTS = 'SELECT count(*) AS n FROM call_attempts WHERE campaign_id = ANY($1::uuid[])';

async function callsOf(cluster: Cluster, logDir: string, campaignId: string): Promise<ProviderCall[]> {
  const { rows } = await cluster.db.query<{ id: string }>('SELECT id FROM call_attempts WHERE campaign_id = $1', [campaignId]);
  const ids = new Set(rows.map((r) => r.id));
  return readCallLogs(logDir, cluster.workers).filter((c) => ids.has(c.attemptId));
}

export interface FairnessResult {
  delays: Record<string, DelayFigures>;
  load: Record<string, LoadFigures>;
  withinBound: boolean;
}

const graphql = (query: string, variables: Record<string, unknown>) => ({ query, variables });

export async function runFairness(profile: FairnessProfile, logDir: string): Promise<FairnessResult> {
  const cluster = await Cluster.start({ logDir, env: profile.env, topology: FULL_TOPOLOGY, relayed: false });
  try {
    const recorder = new Recorder();
    const base = cluster.lb;
    const admin = await tokenOf('00000000-0000-4000-8000-00000000a0a0', 'admin');
    const big = await createAccount(recorder, base, admin, 1_000_000_000);
    const small = await createAccount(recorder, base, admin);
    const campaignOn = async (account: Account, name: string, contacts: number, concurrency: number) =>
      createCampaign(recorder, base, account, await importList(recorder, base, account, name, contacts), name, concurrency, 1);
    const smallCampaign = (name: string) => campaignOn(small, name, profile.smallContacts, profile.smallConcurrency);

    /** Runs the small campaign to its end beside the big customer's campaigns (none: alone), which are then cancelled. */
    const smallBeside = async (name: string, bigs: string[]) => {
      const campaign = await smallCampaign(name);
      await Promise.all(bigs.map((id) => dispatch(recorder, base, big, id)));
      // The big campaigns at their limits, or as close as the machine lets them come.
      for (let i = 0, last = -1; i < 60; i += 1) {
        await sleep(1000);
        const now = bigs.length ? await cluster.count(IN_FLIGHT, [bigs]) : 0;
        if (now >= bigs.length * profile.bigConcurrency * 0.9 || (i >= 10 && now <= last)) break;
        last = now;
      }
      const attemptsBefore = bigs.length ? await cluster.count(ATTEMPTS, [bigs]) : 0;
      const cpuBefore = await machineCpuMs();
      const startedAt = Date.now();
      await dispatch(recorder, base, small, campaign);
      const answeredMs = Date.now() - startedAt;
      const samples: number[] = [];
      let sampling = true;
      const done = untilDone(cluster, campaign, 10 * 60_000).finally(() => (sampling = false));
      while (sampling) {
        samples.push(bigs.length ? await cluster.count(IN_FLIGHT, [bigs]) : 0);
        await sleep(1000);
      }
      await done;
      const seconds = (Date.now() - startedAt) / 1000;
      const cpu = (await machineCpuMs()) - cpuBefore;
      const attempts = (bigs.length ? await cluster.count(ATTEMPTS, [bigs]) : 0) - attemptsBefore;
      // Only the slots freed while every big campaign was still calling count.
      const { rows: ended } = await cluster.db.query<{ at: Date | null }>(
        'SELECT min(completed_at) AS at FROM campaigns WHERE id = ANY($1::uuid[])',
        [bigs],
      );
      const until = ended[0]?.at?.getTime() ?? Infinity;
      if (until <= startedAt) throw new Error(`the big customer's campaigns ended before the small one began: give them more contacts`);
      for (const id of bigs) {
        await recorder.request(
          base,
          'cancel',
          big.token,
          'POST',
          '/graphql',
          graphql('mutation($id: UUID!) { cancelCampaign(id: $id) { id } }', { id }),
        );
      }
      // The big campaigns' calls under way end before the next test.
      for (let i = 0; i < 120 && bigs.length && (await cluster.count(IN_FLIGHT, [bigs])) > 0; i += 1) await sleep(1000);
      samples.sort((a, b) => a - b);
      const loadSeconds = Math.min(seconds, (until - startedAt) / 1000);
      const calls = await callsOf(cluster, logDir, campaign);
      const firstCall = Math.min(...calls.map((c) => c.placedAt.getTime()));
      return {
        delays: {
          ...delayFigures(refillDelays(calls, profile.smallConcurrency, until)),
          'dispatch answered in (ms)': answeredMs,
          'first call after (ms)': firstCall - startedAt,
          'small campaign took (s)': Math.round(seconds),
        },
        load: {
          'attempts/s': Math.round(attempts / loadSeconds),
          'calls in flight (median)': samples[Math.floor(samples.length / 2)] ?? 0,
          'machine busy (cores)': Math.round((cpu / 1000 / seconds) * 100) / 100,
        },
      };
    };

    const contacts = profile.bigContacts.toLocaleString('en');
    const one = [await campaignOn(big, 'Huge', profile.bigContacts, profile.bigConcurrency)];
    const many: string[] = [];
    for (let i = 0; i < profile.manyCampaigns; i += 1)
      many.push(await campaignOn(big, `Part ${i + 1}`, profile.manyContacts, profile.bigConcurrency));
    const tests: [string, string[]][] = [
      ['alone', []],
      [`beside one ${contacts}-contact campaign`, one],
      [`beside ${profile.manyCampaigns} campaigns of ${profile.manyContacts.toLocaleString('en')} contacts`, many],
    ];
    const result: FairnessResult = { delays: {}, load: {}, withinBound: true };
    let alone = 0;
    for (const [name, bigs] of tests) {
      console.log(`fairness: the small campaign ${name}`);
      const { delays, load } = await smallBeside(name, bigs);
      result.delays[name] = delays;
      const took = delays['small campaign took (s)']!;
      if (bigs.length) {
        result.load[name] = load;
        result.withinBound &&=
          delays['p99 (ms)'] <= profile.bound.p99Ms &&
          delays['max (ms)'] <= profile.bound.maxMs &&
          delays['first call after (ms)']! <= profile.bound.firstCallMs &&
          took <= alone * profile.bound.slowerThanAlone;
      } else alone = took;
    }
    return result;
  } finally {
    await cluster.stop();
  }
}
