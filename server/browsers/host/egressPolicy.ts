import { BlockList, isIP } from 'node:net';
import os from 'node:os';

/**
 * Where a tenant's browser may connect (docs/browsers.md, Egress). Not to loopback, private
 * (RFC 1918, RFC 4193), link-local, CGNAT or unspecified addresses, nor to this machine's own
 * addresses: the service, its Temporal UI and the hosts' neighbours live there. Operators open
 * exact exceptions (`BROWSER_ALLOWED_PRIVATE_DESTINATIONS`). The browser host's egress proxy
 * (server/browsers/host/egressProxy.ts) asks this for every connection, after resolving the name
 * itself, so a DNS name or a redirect leads nowhere a literal could not.
 */

export type AllowedDestination =
  | { kind: 'host'; host: string; port?: number }
  | { kind: 'subnet'; address: string; prefix: number; family: 'ipv4' | 'ipv6' };

/** The ranges no browser may reach. */
const forbidden = new BlockList();
for (const [address, prefix] of [
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
  forbidden.addSubnet(address, prefix, 'ipv4');
}
for (const [address, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  forbidden.addSubnet(address, prefix, 'ipv6');
}

/** An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is checked as the IPv4 it is. */
function unwrap(address: string) {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? (mapped[1] as string) : address;
}

/** This machine's own addresses, public ones included (the api listens on every interface). */
function ownAddresses() {
  const own = new Set<string>();
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) own.add(unwrap(entry.address.toLowerCase()));
  }
  return own;
}

/**
 * `BROWSER_ALLOWED_PRIVATE_DESTINATIONS`: comma-separated `host`, `host:port`, `[v6]:port`, an IP
 * address or a CIDR. Answers the entries, or the first entry it cannot read.
 */
export function parseAllowedDestinations(text: string | undefined): AllowedDestination[] | { invalid: string } {
  const entries: AllowedDestination[] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    const cidr = /^([0-9a-f:.]+)\/(\d{1,3})$/.exec(entry);
    if (cidr) {
      const family = isIP(cidr[1] as string);
      const prefix = Number(cidr[2]);
      if (!family || prefix > (family === 4 ? 32 : 128)) return { invalid: raw.trim() };
      entries.push({ kind: 'subnet', address: cidr[1] as string, prefix, family: family === 4 ? 'ipv4' : 'ipv6' });
      continue;
    }
    if (isIP(entry)) {
      entries.push({ kind: 'subnet', address: entry, prefix: isIP(entry) === 4 ? 32 : 128, family: isIP(entry) === 4 ? 'ipv4' : 'ipv6' });
      continue;
    }
    const withPort = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/.exec(entry);
    const host = (withPort ? (withPort[1] as string) : entry).replace(/^\[|\]$/g, '');
    const port = withPort ? Number(withPort[2]) : undefined;
    if (
      !(isIP(host) || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)) ||
      (port !== undefined && (port < 1 || port > 65535))
    ) {
      return { invalid: raw.trim() };
    }
    entries.push({ kind: 'host', host, port });
  }
  return entries;
}

export type EgressDecision = { allowed: true } | { allowed: false; reason: string };

export class EgressPolicy {
  readonly #exceptions: BlockList;
  readonly #hosts: { host: string; port?: number }[];
  readonly #own = ownAddresses();

  constructor(allowed: AllowedDestination[]) {
    this.#exceptions = new BlockList();
    this.#hosts = [];
    for (const entry of allowed) {
      if (entry.kind === 'subnet') this.#exceptions.addSubnet(entry.address, entry.prefix, entry.family);
      else this.#hosts.push({ host: entry.host, port: entry.port });
    }
  }

  /**
   * Whether a connection to `host:port` may go to `addresses` (what `host` resolved to, or the
   * literal itself). Every address must be allowed: a name with one public and one private record
   * is refused, since the connection could go to either.
   */
  check(host: string, port: number, addresses: string[]): EgressDecision {
    const name = host.toLowerCase().replace(/^\[|\]$/g, '');
    if (this.#hosts.some((entry) => entry.host === name && (entry.port === undefined || entry.port === port))) return { allowed: true };
    for (const raw of addresses) {
      const address = unwrap(raw.toLowerCase());
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (this.#exceptions.check(address, family)) continue;
      if (this.#hosts.some((entry) => entry.host === address && (entry.port === undefined || entry.port === port))) continue;
      if (forbidden.check(address, family)) return { allowed: false, reason: `${address} is a loopback, private or reserved address` };
      if (this.#own.has(address)) return { allowed: false, reason: `${address} is an address of the browser host itself` };
    }
    return { allowed: true };
  }
}
