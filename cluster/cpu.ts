import { readFile } from 'node:fs/promises';
import { pidsIn, type Network } from './hosts.js';

// CPU time by host: every process in the host's namespace, in ms.

/** CPU a process has used so far with its children that ended (a PostgreSQL backend that closed), in ms. */
async function processCpuMs(pid: number): Promise<number> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
    // utime, stime, cutime and cstime: fields 14 to 17 of proc(5), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}

/** CPU the processes running in a host have used so far, in ms. */
export async function hostCpuMs(network: Network, host: string): Promise<number> {
  let total = 0;
  for (const pid of await pidsIn(network, host)) total += await processCpuMs(pid);
  return total;
}

/** CPU of each of these hosts between now and when the returned function is called, in ms. */
export async function hostsCpu(network: Network, hosts: string[]): Promise<() => Promise<Map<string, number>>> {
  const before = new Map<string, number>();
  for (const host of hosts) before.set(host, await hostCpuMs(network, host));
  return async () => {
    const used = new Map<string, number>();
    for (const host of hosts) used.set(host, (await hostCpuMs(network, host)) - before.get(host)!);
    return used;
  };
}
