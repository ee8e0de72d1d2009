import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median, round } from './support.js';

// Issue 36 §3: how soon `npm start` is ready, run exactly as a newcomer runs it: `npm start` in the
// repository, no settings but a data folder and a free port. "first" is a fresh data folder, with what
// `npm install` leaves (the transpiled `.run/start/` and the embedded database's template, both made by
// postinstall); "later" is the same folder again. Each is timed from the spawn of npm to the banner (printed
// once the service listens and is ready), and the CPU time of the process tree (npm, the launcher, the
// server and its children) is read at that moment: less sensitive to a busy machine than the wall time.
// Targets: first at most 3 s, later at most 1.5 s, on a quiet machine.

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);
const root = new URL('..', import.meta.url).pathname;
const TARGETS = { first: 3, later: 1.5 };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime of the process and of its children it has reaped, in ms. */
  cpuMs: number;
}

async function processes(): Promise<ProcStat[]> {
  const found: ProcStat[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command (proc(5)): state, ppid, ..., utime, stime, cutime, cstime (14-17), in ticks of 10 ms.
      const fields = (await readFile(`/proc/${entry}/stat`, 'utf8')).split(') ')[1]!.split(' ');
      const cpuMs = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
      found.push({ pid: Number(entry), ppid: Number(fields[1]), cpuMs });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** The processes of the tree under `pid` (itself included). */
async function treeOf(pid: number): Promise<ProcStat[]> {
  const all = await processes();
  const tree = all.filter((p) => p.pid === pid);
  for (let i = 0; i < tree.length; i += 1) tree.push(...all.filter((p) => p.ppid === tree[i]!.pid));
  return tree;
}

interface Start {
  seconds: number;
  cpuSeconds: number;
  /** Lines the start printed before its banner that say what it is doing (slow steps only). */
  progress: string[];
}

/** `npm start` on `dataDir`: times it until the banner, checks /healthz, reads the tree's CPU, stops the server. */
async function startOnce(dataDir: string): Promise<Start> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/REST v1:\s+http/.test(output)) resolve((performance.now() - started) / 1000);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
  });
  const tree = await treeOf(child.pid!);
  const cpuSeconds = tree.reduce((sum, p) => sum + p.cpuMs, 0) / 1000;
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  if (health.status !== 200) throw new Error(`/healthz answered ${health.status} after the banner`);
  // The server itself, not npm or the shell that runs it: SIGTERM, and npm exits when it has.
  const servers = await Promise.all(
    tree.map(async (p) =>
      (await readFile(`/proc/${p.pid}/cmdline`, 'utf8').catch(() => '')).startsWith('node\0scripts/run.mjs') ? p.pid : 0,
    ),
  );
  const server = servers.find(Boolean);
  if (server) process.kill(server, 'SIGTERM');
  else child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`npm start did not stop cleanly (exit ${code}):\n${output}`);
  const progress = output
    .slice(0, output.indexOf('Service ready'))
    .split('\n')
    .filter((line) => line.endsWith('…'))
    .map((line) => line.replace(dataDir, 'DATA_DIR'));
  return { seconds, cpuSeconds, progress };
}

export async function benchStartup() {
  // What `npm install` leaves: the same preparation postinstall runs, so "first" meets a current `.run/`.
  await promisify(execFile)('npm', ['run', '--silent', 'prepare:start'], { cwd: root });
  const load = loadavg()[0]!;
  const first: Start[] = [];
  const later: Start[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const dir = await mkdtemp(join(tmpdir(), 'callflow-startup-bench-'));
    try {
      first.push(await startOnce(join(dir, 'data')));
      later.push(await startOnce(join(dir, 'data')));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const summary = (name: 'first' | 'later', starts: Start[]) => ({
    start: name,
    medianSeconds: round(median(starts.map((s) => s.seconds)), 2),
    minSeconds: round(Math.min(...starts.map((s) => s.seconds)), 2),
    maxSeconds: round(Math.max(...starts.map((s) => s.seconds)), 2),
    medianCpuSeconds: round(median(starts.map((s) => s.cpuSeconds)), 2),
    targetSeconds: TARGETS[name],
    met: median(starts.map((s) => s.seconds)) <= TARGETS[name],
    progressLines: [...new Set(starts.flatMap((s) => s.progress))].join(' | '),
  });
  return {
    name: 'startup',
    runs: RUNS,
    loadAverageBefore: round(load, 2),
    loadAverageAfter: round(loadavg()[0]!, 2),
    starts: [summary('first', first), summary('later', later)],
  };
}
