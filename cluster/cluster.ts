import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { createNetwork, destroyNetwork, hostOf, pidsIn, removeStaleRuns, signalHost, type Network } from './hosts.js';
import {
  apiReady,
  apiUrl,
  lbUrl,
  newPostgresDataDir,
  redisReady,
  removePostgresData,
  startApi,
  startLoadBalancer,
  startPostgres,
  startRedis,
  startWorker,
  waitUntil,
  type Postgres,
  type ServiceSettings,
} from './services.js';

// The whole cluster: hosts db, redis, lb, the API instances (api1, api2, ...) and the dialer workers
// (w1, w2, ...) on one bridge. With `relayed`, the last worker reaches PostgreSQL through a relay on the
// driver's host, the link whose delay a fault turns on.

const RELAY_PORT = 15432;

export interface Topology {
  apis: number;
  workers: number;
}

/** What the fault runs build: two API instances, three workers, the third through the relay. */
export const FULL_TOPOLOGY: Topology = { apis: 2, workers: 3 };

export interface ClusterOptions {
  logDir: string;
  /** Environment of every API instance and worker beside the cluster's own. */
  env: Record<string, string>;
  topology?: Topology;
  /** Whether the last worker reaches PostgreSQL through the relay (the degraded-link fault needs it). */
  relayed?: boolean;
  /** Each API instance and worker writes a V8 CPU profile to `<logDir>/profiles` when it stops. */
  profile?: boolean;
  /** Whether each worker's simulator keeps the provider's call log (the checker's); on by default. */
  callLog?: boolean;
}

/** Clusters started and not yet stopped, which a signal to the driver removes. */
const live = new Set<Cluster>();

/** Stops every cluster still up (the driver was stopped by a signal). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((cluster) => cluster.stop()));
}

const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);

export class Cluster {
  readonly processes = new Map<string, ChildProcess>();
  /** The driver's own connection to PostgreSQL (checks and observations, never the workload). */
  db!: pg.Pool;
  relay: ChildProcess | undefined;

  private constructor(
    readonly network: Network,
    readonly postgres: Postgres,
    private readonly settings: ServiceSettings,
    readonly apis: string[],
    readonly workers: string[],
    /** The worker behind the relay, if any. */
    readonly relayed: string | null,
    private readonly callLog: boolean,
  ) {}

  static async start(options: ClusterOptions): Promise<Cluster> {
    await removeStaleRuns();
    const topology = options.topology ?? FULL_TOPOLOGY;
    const apis = numbered('api', topology.apis);
    const workers = numbered('w', topology.workers);
    const network = await createNetwork(['db', 'redis', 'lb', ...apis, ...workers], options.logDir);
    const dataDir = newPostgresDataDir();
    let cluster: Cluster | undefined;
    try {
      const postgres = await startPostgres(network, dataDir);
      const settings: ServiceSettings = {
        databaseUrl: postgres.url,
        redisUrl: `redis://${hostOf(network, 'redis').address}:6379`,
        env: options.env,
        ...(options.profile ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${resolve(options.logDir, 'profiles')}`] } : {}),
      };
      const relayed = (options.relayed ?? true) ? workers.at(-1)! : null;
      cluster = new Cluster(network, postgres, settings, apis, workers, relayed, options.callLog ?? true);
      live.add(cluster);
      cluster.db = new pg.Pool({ connectionString: postgres.url, max: 4 });
      cluster.processes.set('redis', startRedis(network));
      await redisReady(network);
      if (relayed) cluster.startRelay();
      // One instance migrates first; the others then find the schema current.
      cluster.startApi(apis[0]!);
      await apiReady(network, apis[0]!, 120_000);
      for (const name of apis.slice(1)) cluster.startApi(name);
      for (const name of workers) cluster.startWorker(name);
      for (const name of apis.slice(1)) await apiReady(network, name);
      cluster.processes.set('lb', startLoadBalancer(network, apis));
      await waitUntil('load balancer', async () => (await fetch(`${lbUrl(network)}/readyz`)).ok, 30_000);
      for (const name of workers) await cluster.workerConnected(name, 0, 60_000);
      return cluster;
    } catch (error) {
      if (cluster) await cluster.stop();
      else {
        await destroyNetwork(network);
        removePostgresData(dataDir);
      }
      throw error;
    }
  }

  get lb(): string {
    return lbUrl(this.network);
  }

  api(name: string): string {
    return apiUrl(this.network, name);
  }

  address(host: string): string {
    return hostOf(this.network, host).address;
  }

  startApi(name: string): void {
    this.processes.set(name, startApi(this.network, name, this.settings));
  }

  startWorker(name: string): void {
    const databaseUrl =
      name === this.relayed ? this.settings.databaseUrl.replace(/@[^/]+\//, `@${this.network.gateway}:${RELAY_PORT}/`) : undefined;
    // Its simulator keeps the provider's call log the checker reads.
    const env = this.callLog
      ? { ...this.settings.env, SIM_CALL_LOG: resolve(this.network.logDir, `calls-${name}.jsonl`) }
      : this.settings.env;
    this.processes.set(name, startWorker(this.network, name, { ...this.settings, env, ...(databaseUrl ? { databaseUrl } : {}) }));
  }

  private startRelay(): void {
    const log = createWriteStream(`${this.network.logDir}/relay.log`, { flags: 'a' });
    this.relay = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'cluster/relay.ts',
        this.network.gateway,
        String(RELAY_PORT),
        this.address('db'),
        '5432',
        this.network.relayAddress,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RELAY_DELAY_MS: '150' } },
    );
    this.relay.stdout!.pipe(log);
    this.relay.stderr!.pipe(log);
  }

  /**
   * Waits until PostgreSQL has seen a statement from the worker's host after `since` (ms since the
   * epoch); returns when, in ms since the epoch.
   */
  async workerConnected(name: string, since: number, timeoutMs: number): Promise<number> {
    // The relayed worker's connections come from the relay's address.
    const address = name === this.relayed ? this.network.relayAddress : this.address(name);
    let seen = 0;
    await waitUntil(
      `${name} talking to PostgreSQL`,
      async () => {
        const { rows } = await this.db.query<{ at: Date | null }>(
          `SELECT max(greatest(state_change, backend_start)) AS at FROM pg_stat_activity
            WHERE client_addr = $1::inet AND datname = 'callflow' AND state_change > to_timestamp($2 / 1000.0)`,
          [address, since],
        );
        seen = rows[0]?.at?.getTime() ?? 0;
        return seen > 0;
      },
      timeoutMs,
    );
    return seen;
  }

  /** The number a counting query of the driver's (`SELECT count(*) AS n ...`) returns. */
  async count(text: string, values: unknown[] = []): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>(text, values);
    return Number(rows[0]!.n);
  }

  async stop(): Promise<void> {
    live.delete(this);
    // The API instances and workers stop as they would in production, writing their profiles if asked.
    const services = [...this.apis, ...this.workers];
    for (const name of services) await signalHost(this.network, name, 'SIGTERM');
    await waitUntil(
      'the services to stop',
      async () => (await Promise.all(services.map((n) => pidsIn(this.network, n)))).every((p) => !p.length),
      20_000,
    ).catch(() => undefined);
    this.relay?.kill('SIGKILL');
    await this.db?.end().catch(() => undefined);
    await destroyNetwork(this.network);
    removePostgresData(this.postgres.dataDir);
  }
}
