import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { createNetwork, destroyNetwork, hostOf, removeStaleRuns, type Network } from './hosts.js';
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

// The whole cluster: hosts db, redis, lb, api1, api2, w1, w2, w3 on one bridge; worker w3 reaches
// PostgreSQL through a relay on the driver's host, the link whose delay a fault turns on.

export const APIS = ['api1', 'api2'];
export const WORKERS = ['w1', 'w2', 'w3'];
export const RELAYED_WORKER = 'w3';
const RELAY_PORT = 15432;

export interface ClusterOptions {
  logDir: string;
  /** Environment of every API instance and worker beside the cluster's own. */
  env: Record<string, string>;
}

export class Cluster {
  readonly processes = new Map<string, ChildProcess>();
  /** The driver's own connection to PostgreSQL (checks and observations, never the workload). */
  db!: pg.Pool;
  relay!: ChildProcess;

  private constructor(
    readonly network: Network,
    readonly postgres: Postgres,
    private readonly settings: ServiceSettings,
  ) {}

  static async start(options: ClusterOptions): Promise<Cluster> {
    await removeStaleRuns();
    const network = await createNetwork(['db', 'redis', 'lb', ...APIS, ...WORKERS], options.logDir);
    const dataDir = newPostgresDataDir();
    try {
      const postgres = await startPostgres(network, dataDir);
      const settings: ServiceSettings = {
        databaseUrl: postgres.url,
        redisUrl: `redis://${hostOf(network, 'redis').address}:6379`,
        env: options.env,
      };
      const cluster = new Cluster(network, postgres, settings);
      cluster.db = new pg.Pool({ connectionString: postgres.url, max: 4 });
      cluster.processes.set('redis', startRedis(network));
      await redisReady(network);
      cluster.startRelay();
      // One instance migrates first; the others then find the schema current.
      cluster.startApi('api1');
      await apiReady(network, 'api1', 120_000);
      for (const name of APIS.slice(1)) cluster.startApi(name);
      for (const name of WORKERS) cluster.startWorker(name);
      for (const name of APIS.slice(1)) await apiReady(network, name);
      cluster.processes.set('lb', startLoadBalancer(network, APIS));
      await waitUntil('load balancer', async () => (await fetch(`${lbUrl(network)}/readyz`)).ok, 30_000);
      for (const name of WORKERS) await cluster.workerConnected(name, 0, 60_000);
      return cluster;
    } catch (error) {
      await destroyNetwork(network);
      removePostgresData(dataDir);
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
      name === RELAYED_WORKER ? this.settings.databaseUrl.replace(/@[^/]+\//, `@${this.network.gateway}:${RELAY_PORT}/`) : undefined;
    // Its simulator keeps the provider's call log the checker reads.
    const env = { ...this.settings.env, SIM_CALL_LOG: resolve(this.network.logDir, `calls-${name}.jsonl`) };
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
    const address = name === RELAYED_WORKER ? this.network.relayAddress : this.address(name);
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

  async stop(): Promise<void> {
    this.relay?.kill('SIGKILL');
    await this.db?.end().catch(() => undefined);
    await destroyNetwork(this.network);
    removePostgresData(this.postgres.dataDir);
  }
}
