import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster } from './cluster.js';
import { execIn, signalHost } from './hosts.js';
import { apiReady, redisReady, startRedis, waitUntil } from './services.js';
import type { Watcher } from './subscriptions.js';

// The faults a real network and real machines bring, each bounded in time, and how long the cluster took
// to recover from each. Recovery is measured from the moment the fault ends (a partition healed, a
// process back) to the moment the thing it broke works again, as the rest of the cluster sees it.

export type FaultKind = 'partition-worker' | 'pause-postgres' | 'restart-redis' | 'kill-api' | 'kill-worker' | 'degrade-link';
export const FAULT_KINDS: FaultKind[] = ['partition-worker', 'pause-postgres', 'restart-redis', 'kill-api', 'kill-worker', 'degrade-link'];

export interface FaultRecord {
  kind: FaultKind;
  target: string;
  startedAt: number;
  endedAt: number;
  /** When what the fault broke worked again; null when it did not within the bound. */
  recoveredAt: number | null;
  recoveryMs: number | null;
  what: string;
  /** A worker's fault: the longest time the other workers placed no call meanwhile (fault-run.ts). */
  othersPausedMs?: number;
  /** Calls under way, by the provider's log, when the fault began: a fault that found none proved little. */
  underWayAtStart?: number;
}

export interface FaultTimes {
  /** How long a worker stays cut off from PostgreSQL: longer than the dialer's lease. */
  partitionMs: number;
  pausePostgresMs: number;
  degradeMs: number;
  /** How long a killed process stays down before it is started again. */
  downMs: number;
}

const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)]!;
const RECOVERY_BOUND_MS = 120_000;

async function recovered(record: Omit<FaultRecord, 'recoveredAt' | 'recoveryMs'>, until: () => Promise<number>): Promise<FaultRecord> {
  const recoveredAt = await until().then(
    (at) => Math.max(at, record.endedAt),
    () => null,
  );
  return { ...record, recoveredAt, recoveryMs: recoveredAt === null ? null : recoveredAt - record.endedAt };
}

const NFT_TABLE = 'callflow_fault';

/** Drops every packet between a worker and PostgreSQL, both ways, from inside the worker's host. */
async function cutOff(cluster: Cluster, worker: string, peer: string): Promise<void> {
  await execIn(cluster.network, worker, 'nft', ['add', 'table', 'inet', NFT_TABLE]);
  for (const [hook, field] of [
    ['output', 'daddr'],
    ['input', 'saddr'],
  ] as const) {
    await execIn(cluster.network, worker, 'nft', ['add', 'chain', 'inet', NFT_TABLE, hook, `{ type filter hook ${hook} priority 0; }`]);
    await execIn(cluster.network, worker, 'nft', ['add', 'rule', 'inet', NFT_TABLE, hook, 'ip', field, peer, 'drop']);
  }
}

/** Drops `percent` of the packets of a host's link, both ways. */
async function lossy(cluster: Cluster, host: string, percent: number): Promise<void> {
  await execIn(cluster.network, host, 'nft', ['add', 'table', 'inet', NFT_TABLE]);
  for (const hook of ['output', 'input']) {
    await execIn(cluster.network, host, 'nft', ['add', 'chain', 'inet', NFT_TABLE, hook, `{ type filter hook ${hook} priority 0; }`]);
    await execIn(cluster.network, host, 'nft', [
      'add',
      'rule',
      'inet',
      NFT_TABLE,
      hook,
      'oifname',
      '!=',
      'lo',
      'numgen',
      'random',
      'mod',
      '100',
      '<',
      String(percent),
      'drop',
    ]);
  }
}

async function heal(cluster: Cluster, host: string): Promise<void> {
  await execIn(cluster.network, host, 'nft', ['delete', 'table', 'inet', NFT_TABLE]);
}

/** The first campaign event any watcher received after `since`. */
function firstEventAfter(watchers: Watcher[], since: number, timeoutMs: number): Promise<number> {
  return waitUntil('a subscription event', async () => watchers.some((w) => w.lastAt > since), timeoutMs).then(() =>
    Math.min(...watchers.filter((w) => w.lastAt > since).map((w) => w.lastAt)),
  );
}

/** A call attempt created after `since`: the dialer is placing calls again. */
async function dialingAfter(cluster: Cluster, since: number, timeoutMs: number): Promise<number> {
  let at = 0;
  await waitUntil(
    'a new call attempt',
    async () => {
      const { rows } = await cluster.db.query<{ at: Date | null }>(
        'SELECT min(created_at) AS at FROM call_attempts WHERE created_at > to_timestamp($1 / 1000.0)',
        [since],
      );
      at = rows[0]?.at?.getTime() ?? 0;
      return at > 0;
    },
    timeoutMs,
  );
  return at;
}

export async function injectFault(cluster: Cluster, kind: FaultKind, times: FaultTimes, watchers: Watcher[]): Promise<FaultRecord> {
  const network = cluster.network;
  switch (kind) {
    case 'partition-worker': {
      const target = pick(cluster.workers.filter((w) => w !== cluster.relayed));
      const startedAt = Date.now();
      await cutOff(cluster, target, cluster.address('db'));
      await sleep(times.partitionMs);
      await heal(cluster, target);
      const endedAt = Date.now();
      return recovered({ kind, target, startedAt, endedAt, what: 'the worker sends statements to PostgreSQL again' }, () =>
        cluster.workerConnected(target, endedAt, RECOVERY_BOUND_MS),
      );
    }
    case 'pause-postgres': {
      const startedAt = Date.now();
      await signalHost(network, 'db', 'SIGSTOP');
      await sleep(times.pausePostgresMs);
      await signalHost(network, 'db', 'SIGCONT');
      const endedAt = Date.now();
      return recovered({ kind, target: 'db', startedAt, endedAt, what: 'a call attempt created after it' }, () =>
        dialingAfter(cluster, endedAt, RECOVERY_BOUND_MS),
      );
    }
    case 'restart-redis': {
      const startedAt = Date.now();
      await signalHost(network, 'redis', 'SIGKILL');
      await waitUntil(
        'Redis gone',
        async () => cluster.processes.get('redis')!.exitCode !== null || cluster.processes.get('redis')!.signalCode !== null,
        10_000,
      );
      cluster.processes.set('redis', startRedis(network));
      await redisReady(network);
      const endedAt = Date.now();
      return recovered({ kind, target: 'redis', startedAt, endedAt, what: 'a subscription event after the restart' }, () =>
        firstEventAfter(watchers, endedAt, RECOVERY_BOUND_MS),
      );
    }
    case 'kill-api': {
      const target = pick(cluster.apis);
      const startedAt = Date.now();
      await signalHost(network, target, 'SIGKILL');
      await sleep(times.downMs);
      cluster.startApi(target);
      const endedAt = Date.now();
      return recovered({ kind, target, startedAt, endedAt, what: 'the instance ready again (/readyz 200)' }, async () => {
        await apiReady(network, target, RECOVERY_BOUND_MS);
        return Date.now();
      });
    }
    case 'kill-worker': {
      const target = pick(cluster.workers);
      const startedAt = Date.now();
      await signalHost(network, target, 'SIGKILL');
      await sleep(times.downMs);
      cluster.startWorker(target);
      const endedAt = Date.now();
      return recovered({ kind, target, startedAt, endedAt, what: 'the new worker sends statements to PostgreSQL' }, () =>
        cluster.workerConnected(target, endedAt, RECOVERY_BOUND_MS),
      );
    }
    case 'degrade-link': {
      const target = cluster.relayed;
      const relay = cluster.relay;
      if (!target || !relay) throw new Error('degrading a link needs a cluster with a relayed worker');
      const startedAt = Date.now();
      await lossy(cluster, target, 5);
      relay.kill('SIGUSR1');
      await sleep(times.degradeMs);
      relay.kill('SIGUSR2');
      await heal(cluster, target);
      const endedAt = Date.now();
      return recovered({ kind, target, startedAt, endedAt, what: 'the worker sends statements to PostgreSQL' }, () =>
        cluster.workerConnected(target, endedAt, RECOVERY_BOUND_MS),
      );
    }
  }
}

/** Each kind `each` times, in random order, with random pauses between them. */
export function faultPlan(each: number): FaultKind[] {
  const plan = FAULT_KINDS.flatMap((kind) => Array.from({ length: each }, () => kind));
  for (let i = plan.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [plan[i], plan[j]] = [plan[j]!, plan[i]!];
  }
  return plan;
}
