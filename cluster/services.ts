import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostOf, sh, spawnIn, type Network } from './hosts.js';

// The cluster's processes, each on its host: a PostgreSQL instance of the run's own, Redis, HAProxy in
// front of the API instances, the API instances and the dialer workers (the production build, dist/).

export const API_PORT = 4000;
export const LB_PORT = 8080;
export const JWT_SECRET = 'cluster-secret-that-is-long-enough-for-hs256-0123456789';
const POSTGRES_UID = 'postgres';

const postgresBin = () => `/usr/lib/postgresql/${readdirSync('/usr/lib/postgresql').sort().at(-1)}/bin`;

/** Polls `check` until it resolves true, or fails with `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await check().catch(() => false)) return Date.now() - started;
    await sleep(100);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

export async function httpOk(url: string, timeoutMs = 1000): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  await res.arrayBuffer();
  return res.ok;
}

export interface Postgres {
  dataDir: string;
  url: string;
}

/** A new folder for a PostgreSQL instance's data; the caller removes it (removePostgresData) when done. */
export function newPostgresDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'callflow-cluster-pg-'));
}

/** A PostgreSQL instance of the run's own on host `db`: a new cluster, durable writes off (the disk is not under test). */
export async function startPostgres(network: Network, dataDir: string): Promise<Postgres> {
  const host = hostOf(network, 'db');
  chownSync(dataDir, Number(await sh('id', ['-u', POSTGRES_UID])), Number(await sh('id', ['-g', POSTGRES_UID])));
  await sh('runuser', ['-u', POSTGRES_UID, '--', `${postgresBin()}/initdb`, '-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  // Every host of the run's own bridge, and nothing else can reach it.
  appendFileSync(join(dataDir, 'pg_hba.conf'), 'host all all 10.203.0.0/16 trust\n');
  const settings = {
    listen_addresses: host.address,
    port: '5432',
    unix_socket_directories: dataDir,
    max_connections: '400',
    shared_buffers: '512MB',
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    // What each statement costs, for the costs run's report of where PostgreSQL's time goes.
    shared_preload_libraries: 'pg_stat_statements',
    // Statements run by triggers and functions too, with the time spent planning them.
    'pg_stat_statements.track': 'all',
    'pg_stat_statements.track_planning': 'on',
    // A wait for a lock longer than a second is logged with its statement: what a fault held up, and on what.
    log_lock_waits: 'on',
  };
  spawnPostgres(network, dataDir, settings);
  await waitUntil('PostgreSQL', async () => await sh('pg_isready', ['-q', '-h', host.address, '-p', '5432']).then(() => true), 30_000);
  await sh('psql', ['-q', '-h', host.address, '-U', 'postgres', '-c', 'CREATE DATABASE callflow']);
  await sh('psql', ['-q', '-h', host.address, '-U', 'postgres', '-d', 'callflow', '-c', 'CREATE EXTENSION pg_stat_statements']);
  return { dataDir, url: `postgresql://postgres@${host.address}:5432/callflow` };
}

function spawnPostgres(network: Network, dataDir: string, settings: Record<string, string>): ChildProcess {
  const args = Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  return spawnIn(network, 'db', 'postgres', [`${postgresBin()}/postgres`, '-D', dataDir, ...args], { user: POSTGRES_UID });
}

export function removePostgresData(dataDir: string): void {
  rmSync(dataDir, { recursive: true, force: true });
}

export function startRedis(network: Network): ChildProcess {
  const { address } = hostOf(network, 'redis');
  return spawnIn(network, 'redis', 'redis', [
    'redis-server',
    '--bind',
    address,
    '--port',
    '6379',
    '--save',
    '',
    '--appendonly',
    'no',
    '--protected-mode',
    'no',
  ]);
}

export async function redisReady(network: Network): Promise<number> {
  const { address } = hostOf(network, 'redis');
  return waitUntil('Redis', async () => (await sh('redis-cli', ['-h', address, 'ping'])).trim() === 'PONG', 15_000);
}

/** HAProxy on host `lb`, round robin over the API instances, each checked on /readyz twice a second (2 s to answer). */
export function startLoadBalancer(network: Network, apis: string[]): ChildProcess {
  const lb = hostOf(network, 'lb');
  const servers = apis.map((name) => `  server ${name} ${hostOf(network, name).address}:${API_PORT} check`).join('\n');
  const config = `global
  maxconn 4000

defaults
  mode http
  timeout connect 2s
  timeout client 1h
  timeout server 1h
  timeout http-request 10s
  # Only a connection that failed is tried again, on the other instance: nothing was sent yet.
  retries 2
  option redispatch

frontend api
  bind ${lb.address}:${LB_PORT}
  default_backend apis

backend apis
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  http-response set-header X-Served-By %s
  # A busy instance may take longer than the interval to answer; a dead one is refused at once.
  timeout check 2s
  default-server inter 500ms fall 2 rise 2
${servers}
`;
  const file = join(network.logDir, 'haproxy.cfg');
  writeFileSync(file, config);
  return spawnIn(network, 'lb', 'haproxy', ['haproxy', '-db', '-f', file]);
}

export const lbUrl = (network: Network) => `http://${hostOf(network, 'lb').address}:${LB_PORT}`;
export const apiUrl = (network: Network, name: string) => `http://${hostOf(network, name).address}:${API_PORT}`;

export interface ServiceSettings {
  databaseUrl: string;
  redisUrl: string;
  /** Extra environment of every API instance and worker (the dialer's lease, the simulator's time scale). */
  env: Record<string, string>;
  /** Node's options of every API instance and worker (a CPU profile's). */
  nodeArgs?: string[];
}

function serviceEnv(settings: ServiceSettings, own: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    DATABASE_URL: settings.databaseUrl,
    REDIS_URL: settings.redisUrl,
    JWT_SECRET,
    LOG_LEVEL: 'warn',
    ...settings.env,
    ...own,
  };
}

/** An API instance (no dialer of its own: the workers dial). */
export function startApi(network: Network, name: string, settings: ServiceSettings): ChildProcess {
  const env = serviceEnv(settings, { HOST: hostOf(network, name).address, PORT: String(API_PORT), DIALER: 'off' });
  return spawnIn(network, name, name, [process.execPath, ...(settings.nodeArgs ?? []), 'dist/main.js'], { env });
}

export function startWorker(network: Network, name: string, settings: ServiceSettings): ChildProcess {
  return spawnIn(network, name, name, [process.execPath, ...(settings.nodeArgs ?? []), 'dist/worker.js'], {
    env: serviceEnv(settings, {}),
  });
}

export async function apiReady(network: Network, name: string, timeoutMs = 60_000): Promise<number> {
  return waitUntil(`${name} /readyz`, () => httpOk(`${apiUrl(network, name)}/readyz`), timeoutMs);
}
