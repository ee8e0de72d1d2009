import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import pg from 'pg';
import { signToken } from '../src/services/auth.js';

// What every benchmark needs: its own PostgreSQL database, the server started as production starts
// it, a token, and the server's memory read from /proc.

export const BENCH_SECRET = 'bench-secret-that-is-long-enough-for-hs256-0123456789';
export const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const root = new URL('..', import.meta.url).pathname;

export function databaseUrl(database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withDatabase<T>(run: (url: string) => Promise<T>): Promise<T> {
  const name = `callflow_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  try {
    return await run(databaseUrl(name));
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

export interface Server {
  url: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** With BENCH_CPU_PROFILE=1, every server writes a V8 CPU profile there when it stops (open it in Chrome's DevTools). */
export const profileArgs = process.env.BENCH_CPU_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=bench-results/profiles'] : [];

let built: Promise<void> | undefined;

/** `npm run build`, once per benchmark run; tsc's incremental build makes it quick when dist/ is current. */
export function buildOnce(): Promise<void> {
  built ??= new Promise((resolve, reject) => {
    execFile('npm', ['run', 'build'], { cwd: root }, (error, stdout) =>
      error ? reject(new Error(`npm run build failed:\n${stdout}`)) : resolve(),
    );
  });
  return built;
}

/**
 * `npm run start:prod`'s environment, node options and script, run without npm so that the process
 * measured is the server's own.
 */
const productionCommand = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')).scripts['start:prod'] as string).split(' ');
const productionEnv = Object.fromEntries(productionCommand.filter((word) => /^[A-Z_]+=/.test(word)).map((word) => word.split('=')));
const productionArgs = productionCommand.filter((word) => !/^[A-Z_]+=/.test(word)).slice(1);

/**
 * Resolves once `child` prints the line `ready` matches (its first group is the server's URL); rejects,
 * with what the process printed, if it exits first.
 */
export function serverReady(child: ChildProcess, ready: RegExp, label: string): Promise<Server> {
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = ready.exec(output)?.[1];
      if (!url) return;
      child.stdout!.off('data', onData);
      child.removeListener('exit', onExit);
      resolve({
        url,
        pid: child.pid!,
        child,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    const onExit = (code: number | null) => reject(new Error(`${label} exited with ${code}:\n${output}`));
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', onExit);
  });
}

/** The server as production runs it (`npm run start:prod`, NODE_ENV=production) on the given database. */
export async function startServer(databaseUrlValue: string, extraEnv: Record<string, string> = {}): Promise<Server> {
  await buildOnce();
  const child = spawn(process.execPath, [...profileArgs, ...productionArgs], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...productionEnv,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrlValue,
      JWT_SECRET: BENCH_SECRET,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return serverReady(child, /REST v1:\s+(http:\/\/\S+)\/api\/v1\//, 'server');
}

export const tokenFor = (sub: string) => signToken(BENCH_SECRET, { sub, ttlSeconds: 3600 });

/** Resident memory of a process in MB, and its peak since it started (VmHWM). */
export async function memoryOf(pid: number): Promise<{ rssMb: number; peakMb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(status.match(new RegExp(`${name}:\\s+(\\d+) kB`))?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** Forgets a process's peak memory (VmHWM), so that the next reading is the peak of what follows. */
export async function resetPeak(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

/** CPU time a process has used so far (user and system), in ms; less noisy than wall time on a busy machine. */
export async function cpuMsOf(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  // utime and stime, fields 14 and 15 of proc(5), in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU time the whole machine has spent busy so far (every process, every core), in ms. */
export async function machineCpuMs(): Promise<number> {
  // The first line of /proc/stat sums all cores, in ticks of 10 ms: user nice system idle iowait irq softirq steal.
  const [user, nice, system, , , irq, softirq, steal] = (await readFile('/proc/stat', 'utf8'))
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) * 10;
}

/** PostgreSQL's processes that write for every database: their work is shared by all. */
const SHARED_WRITERS = /: (checkpointer|background writer|walwriter)\s*$/;

/**
 * CPU time each PostgreSQL process on this machine has used so far, in ms, by pid. With `database`, only
 * the processes working on that database (backends, autovacuum) and the shared writers count, so that
 * another benchmark on the same server does not count towards this one; without `sharedWriters`, only
 * that database's own processes (the shared writers also serve whatever else the server runs).
 */
export async function postgresCpuMs(database?: string, sharedWriters = true): Promise<Map<number, number>> {
  const byPid = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if ((await readFile(`/proc/${entry}/comm`, 'utf8')).trim() !== 'postgres') continue;
      if (database) {
        // A backend's title names its database: "postgres: 15/main: user database host(port) state".
        const title = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).replace(/\0/g, ' ');
        if (!title.includes(` ${database} `) && !(sharedWriters && SHARED_WRITERS.test(title))) continue;
      }
      byPid.set(Number(entry), await cpuMsOf(Number(entry)));
    } catch {
      // The process ended while we looked.
    }
  }
  return byPid;
}

/** PostgreSQL's CPU between two readings, over the processes alive at the second (backends that came and went are missed). */
export function postgresCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
