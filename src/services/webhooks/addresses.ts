import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Where webhooks may not go: addresses of this machine or its private networks (loopback, private,
// link-local, carrier-grade NAT, multicast, reserved), so that a customer cannot point a delivery at our
// own services. Checked when an endpoint is saved and again at every delivery's connection, on the address
// actually dialed, so a name that resolves elsewhere later (DNS rebinding) is caught too.

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address (v4 or v6, IPv4-mapped v6 included) is one webhooks may not reach. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The host's addresses, or why it may not be used: it does not resolve, or resolves to a private address. */
export async function checkHost(hostname: string): Promise<string | null> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return 'The host name does not resolve.';
  }
  return addresses.some(isPrivateAddress) ? 'The host resolves to a loopback, private or link-local address.' : null;
}
