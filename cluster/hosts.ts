import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';

// Hosts as Linux network namespaces on one machine: each has its own loopback and one interface (eth0)
// on a bridge in the machine's own namespace, where the driver runs. Needs root (as CI runs).

const run = promisify(execFile);

export async function sh(command: string, args: string[]): Promise<string> {
  const { stdout } = await run(command, args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** `ip` with its arguments; ignores a failure when `quiet` (teardown of something already gone). */
async function ip(args: string[], quiet = false): Promise<void> {
  try {
    await sh('ip', args);
  } catch (error) {
    if (!quiet) throw error;
  }
}

export interface Host {
  name: string;
  /** The network namespace's name. */
  netns: string;
  address: string;
}

export interface Network {
  /** Prefix of every namespace and interface this run made; a run's own, so two runs never meet. */
  prefix: string;
  bridge: string;
  /** The driver's address on the bridge. */
  gateway: string;
  /** A second address of the driver's host, which the relay connects from (told apart from the driver's own). */
  relayAddress: string;
  hosts: Map<string, Host>;
  logDir: string;
}

// Each run writes its prefix and process id here, so that a run killed before its cleanup is removed by the next.
const RUNS_DIR = '/run/callflow-cluster';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes what runs that died without cleaning up left: their namespaces' processes, namespaces and bridge. */
export async function removeStaleRuns(): Promise<string[]> {
  mkdirSync(RUNS_DIR, { recursive: true });
  const removed: string[] = [];
  const namespaces = (await sh('ip', ['netns', 'list'])).split('\n').map((line) => line.split(' ')[0]!);
  for (const file of readdirSync(RUNS_DIR)) {
    const prefix = file.replace(/\.pid$/, '');
    if (alive(Number(readFileSync(`${RUNS_DIR}/${file}`, 'utf8')))) continue;
    for (const netns of namespaces.filter((n) => n.startsWith(`${prefix}-`))) {
      const pids = (await sh('ip', ['netns', 'pids', netns]).catch(() => '')).split('\n').filter(Boolean);
      for (const pid of pids) process.kill(Number(pid), 'SIGKILL');
      await ip(['netns', 'del', netns], true);
    }
    await ip(['link', 'del', `${prefix}br`], true);
    rmSync(`${RUNS_DIR}/${file}`, { force: true });
    removed.push(prefix);
  }
  return removed;
}

/** Picks a subnet (10.203.N.0/24) and prefix no other run uses, from the process id. */
async function freeSlot(): Promise<number> {
  const links = await sh('ip', ['-o', 'link']);
  for (let i = 0; i < 250; i += 1) {
    const slot = (process.pid + i) % 250;
    if (!links.includes(`cf${slot}br`)) return slot;
  }
  throw new Error('no free cluster slot: remove old cf*br bridges');
}

/** Makes the bridge and one namespace per host name, numbered from .2 in the given order. */
export async function createNetwork(names: string[], logDir: string): Promise<Network> {
  const slot = await freeSlot();
  const prefix = `cf${slot}`;
  const subnet = `10.203.${slot}`;
  const network: Network = {
    prefix,
    bridge: `${prefix}br`,
    gateway: `${subnet}.1`,
    relayAddress: `${subnet}.250`,
    hosts: new Map(),
    logDir,
  };
  mkdirSync(logDir, { recursive: true });
  writeFileSync(`${RUNS_DIR}/${prefix}.pid`, String(process.pid));
  await ip(['link', 'add', network.bridge, 'type', 'bridge']);
  await ip(['addr', 'add', `${network.gateway}/24`, 'dev', network.bridge]);
  await ip(['addr', 'add', `${network.relayAddress}/24`, 'dev', network.bridge]);
  await ip(['link', 'set', network.bridge, 'up']);
  for (const [i, name] of names.entries()) {
    const host: Host = { name, netns: `${prefix}-${name}`, address: `${subnet}.${i + 2}` };
    const outside = `${prefix}v${i}`;
    await ip(['netns', 'add', host.netns]);
    await ip(['link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.netns]);
    await ip(['link', 'set', outside, 'master', network.bridge]);
    await ip(['link', 'set', outside, 'up']);
    await ip(['-n', host.netns, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0']);
    await ip(['-n', host.netns, 'link', 'set', 'eth0', 'up']);
    await ip(['-n', host.netns, 'link', 'set', 'lo', 'up']);
    await ip(['-n', host.netns, 'route', 'add', 'default', 'via', network.gateway]);
    network.hosts.set(name, host);
  }
  return network;
}

export function hostOf(network: Network, name: string): Host {
  const host = network.hosts.get(name);
  if (!host) throw new Error(`no host ${name}`);
  return host;
}

/** Runs a command inside a host's namespace, its output appended to <logDir>/<label>.log. */
export function spawnIn(
  network: Network,
  host: string,
  label: string,
  command: string[],
  options: { env?: NodeJS.ProcessEnv; user?: string; cwd?: string } = {},
): ChildProcess {
  const inner = options.user ? ['runuser', '-u', options.user, '--', ...command] : command;
  const child = spawn('ip', ['netns', 'exec', hostOf(network, host).netns, ...inner], {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(`${network.logDir}/${label}.log`, { flags: 'a' });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  return child;
}

/** Runs a command inside a host's namespace to completion. */
export function execIn(network: Network, host: string, command: string, args: string[]): Promise<string> {
  return sh('ip', ['netns', 'exec', hostOf(network, host).netns, command, ...args]);
}

/** Process ids of everything running in a host's namespace. */
export async function pidsIn(network: Network, host: string): Promise<number[]> {
  const out = await sh('ip', ['netns', 'pids', hostOf(network, host).netns]).catch(() => '');
  return out
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

export async function signalHost(network: Network, host: string, signal: NodeJS.Signals): Promise<number> {
  const pids = await pidsIn(network, host);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone between the listing and the signal.
    }
  }
  return pids.length;
}

/** Kills every process in every namespace of the run, then removes the namespaces and the bridge. */
export async function destroyNetwork(network: Network): Promise<void> {
  for (const host of network.hosts.values()) {
    await signalHost(network, host.name, 'SIGCONT');
    await signalHost(network, host.name, 'SIGKILL');
  }
  for (const host of network.hosts.values()) {
    for (let i = 0; i < 50 && (await pidsIn(network, host.name)).length > 0; i += 1) await new Promise((r) => setTimeout(r, 100));
    await ip(['netns', 'del', host.netns], true);
  }
  await ip(['link', 'del', network.bridge], true);
  rmSync(`${RUNS_DIR}/${network.prefix}.pid`, { force: true });
}
