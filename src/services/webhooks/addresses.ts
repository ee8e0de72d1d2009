import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Where webhooks may go: globally routable unicast addresses only, so that a customer cannot point a
// delivery at our own services or networks (loopback, private, link-local, carrier-grade NAT, multicast,
// documentation, benchmarking and every other special-purpose block). ipaddr.js classifies an address by
// IANA's special-purpose registries; an IPv6 address that carries an IPv4 one (IPv4-mapped, -translated
// and -compatible, NAT64's well-known prefix, 6to4, Teredo) is judged by the IPv4 address it reaches.
// Checked when an endpoint is saved and again at every delivery's connection, on the address actually
// dialed, so a name that resolves elsewhere later (DNS rebinding) is caught too.

/** IPv6's global unicast space (IANA's IPv6 address space registry): nothing outside it is allocated. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** NAT64's well-known prefix (RFC 6052), globally reachable; its local-use /48 (RFC 8215) is not. */
const WELL_KNOWN_NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

/** Whether an IP address (v4 or v6, with any IPv4 address it carries) is one webhooks may not reach. */
export function isPrivateAddress(address: string): boolean {
  // Node's own test first: ipaddr.js also reads legacy IPv4 forms (`127.1`, `0x7f.1`) no resolver returns.
  if (isIP(address) === 0) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return !isGlobalIPv4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  const carried = carriedIPv4(v6);
  if (carried) return !carried.every(isGlobalIPv4);
  return v6.range() !== 'unicast' || !v6.match(GLOBAL_UNICAST);
}

/** In no special-purpose block (those globally reachable included: anycast services are not receivers). */
const isGlobalIPv4 = (address: ipaddr.IPv4) => address.range() === 'unicast';

/**
 * The IPv4 addresses an IPv6 address leads to, in the forms that carry one: a Teredo address both its
 * server's and its client's (stored inverted); undefined for an address that carries none.
 */
function carriedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const bytes = address.toByteArray();
  const ipv4At = (at: number, invert = false) => new ipaddr.IPv4(bytes.slice(at, at + 4).map((b) => (invert ? b ^ 0xff : b)));
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [ipv4At(12)];
    case 'rfc6052':
      return address.match(WELL_KNOWN_NAT64) ? [ipv4At(12)] : undefined;
    case '6to4':
      return [ipv4At(2)];
    case 'teredo':
      return [ipv4At(4), ipv4At(12, true)];
    default:
      // IPv4-compatible (`::a.b.c.d`, deprecated by RFC 4291); `::` and `::1` lead to 0.0.0.0/8.
      return bytes.slice(0, 12).every((b) => b === 0) ? [ipv4At(12)] : undefined;
  }
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
  return addresses.some(isPrivateAddress)
    ? 'The host resolves to a loopback, private or link-local address, or another that is not globally routable.'
    : null;
}
