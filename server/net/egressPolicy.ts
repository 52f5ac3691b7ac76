import { isIP } from 'node:net';
import os from 'node:os';
import ipaddr from 'ipaddr.js';

/**
 * Where the service may connect for a tenant (docs/browsers.md, Egress; docs/webhooks.md,
 * Destinations): a browser's egress proxy (server/browsers/host/egress/egressProxy.ts) for every
 * connection of its browser and of the session's own proxy, and webhook deliveries
 * (server/webhooks/destination.ts). Both resolve names themselves and connect to the address
 * checked here, so a DNS name or a redirect leads nowhere a literal could not.
 *
 * Only globally routable unicast passes. Addresses are classified by ipaddr.js's range names and
 * IANA's special-purpose registries, after every IPv4 embedded in IPv6 is unwrapped, and this
 * machine's own addresses are refused whatever their range, compared as parsed addresses.
 * Operators open exact exceptions (`BROWSER_ALLOWED_PRIVATE_DESTINATIONS`).
 */

export type AllowedDestination =
  | { kind: 'host'; host: string; port?: number }
  | { kind: 'subnet'; address: string; prefix: number; family: 'ipv4' | 'ipv6' };

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Ranges IANA lists as not globally reachable (or reserved for documentation) that ipaddr.js
 * 2.5 folds into others or lacks. Most repeat its own `reserved`, `benchmarking` and `discard`
 * on purpose: these are the ranges this machine's network is, or could be, numbered from, and
 * their refusal must not rest on a library's grouping.
 */
const specialPurpose: [range: string, name: string][] = [
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['198.18.0.0/15', 'benchmarking'],
  ['192.88.99.0/24', 'the old 6to4 relay anycast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['2001:2::/48', 'benchmarking'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy prefix'],
  ['5f00::/16', 'segment routing'],
];
const specialRanges = specialPurpose.map(([range, name]) => ({ cidr: ipaddr.parseCIDR(range), name }));

/** IANA's IPv6 global unicast space: everything outside it is reserved, local or multicast. */
const globalUnicastV6 = ipaddr.parseCIDR('2000::/3');

/**
 * IPv6 addresses that carry an IPv4 address inside. Only the mapped form (`::ffff:a.b.c.d`) *is*
 * that IPv4 address to this machine's own sockets; it is judged as the IPv4 it names. The others
 * reach their IPv4 through a translator, relay or tunnel somewhere on the network (NAT64 on the
 * host's own network reaches `64:ff9b::a9fe:a9fe` = the metadata service), where this policy can
 * no longer see where the packet ends: they are refused whatever they embed. A public IPv4
 * address is reachable as itself, so nothing a tenant needs is lost.
 */
type Embedding = { name: string; ipv4: ipaddr.IPv4 | null; translated: boolean };

function embeddedIn(address: ipaddr.IPv6): Embedding | null {
  const parts = address.parts;
  const tail = ipv4From(parts[6] as number, parts[7] as number);
  switch (address.range()) {
    case 'ipv4Mapped':
      return { name: 'IPv4-mapped IPv6', ipv4: tail, translated: false };
    case 'rfc6145':
      return { name: 'SIIT (RFC 6145)', ipv4: tail, translated: true };
    case 'rfc6052':
      // 64:ff9b:1::/48 leaves the IPv4's position to the network's prefix length (RFC 8215).
      return { name: 'NAT64 (RFC 6052)', ipv4: parts[2] === 0 ? tail : null, translated: true };
    case '6to4':
      return { name: '6to4 (RFC 3056)', ipv4: ipv4From(parts[1] as number, parts[2] as number), translated: true };
    case 'teredo':
      // The client's address, obscured (RFC 4380); the server's is bits 32-63.
      return { name: 'Teredo (RFC 4380)', ipv4: ipv4From(~(parts[6] as number), ~(parts[7] as number)), translated: true };
  }
  // IPv4-compatible (`::a.b.c.d`, deprecated by RFC 4291); `::` and `::1` are their own ranges.
  if (parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || (parts[7] as number) > 1)) {
    return { name: 'IPv4-compatible IPv6 (deprecated)', ipv4: tail, translated: true };
  }
  return null;
}

function ipv4From(high: number, low: number) {
  return new ipaddr.IPv4([(high >> 8) & 0xff, high & 0xff, (low >> 8) & 0xff, low & 0xff]);
}

/**
 * An address as the service would connect to it: Node's forms, and also what `inet_aton` reads
 * (`127.1`, `0x7f.0.0.1`, `2130706433`), since a name handed to the resolver is read that way.
 * A zone id (`fe80::1%eth0`) names an interface, not another address: it is dropped. An IPv6 with
 * a dotted tail is rewritten in hex first: ipaddr.js reads `::a.b.c.d` as mapped, which it is not.
 */
export function parseAddress(text: string): Address | null {
  let bare = text
    .trim()
    .replace(/^\[|\]$/g, '')
    .replace(/%[^%]*$/, '');
  const dotted = /^(.*:)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(bare);
  if (dotted) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(dotted[2] as string)) return null;
    const [a, b, c, d] = ipaddr.IPv4.parse(dotted[2] as string).octets as [number, number, number, number];
    bare = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  if (bare.includes(':')) return ipaddr.IPv6.isValid(bare) ? ipaddr.IPv6.parse(bare) : null;
  return ipaddr.IPv4.isValid(bare) ? ipaddr.IPv4.parse(bare) : null;
}

/** Whether two parsed addresses are one: the same family and all the same bits. */
function sameAddress(a: Address, b: Address) {
  return a.kind() === b.kind() && a.match(b, a.kind() === 'ipv4' ? 32 : 128);
}

/** The IPv4 an IPv4-mapped address names, else the address itself. */
function direct(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

/** Why `address` (not embedding any IPv4) is not globally routable unicast; null when it is. */
function notRoutable(address: Address): string | null {
  for (const special of specialRanges) {
    if (special.cidr[0].kind() === address.kind() && address.match(special.cidr)) return special.name;
  }
  const range = address.range();
  if (range !== 'unicast') return range;
  if (address.kind() === 'ipv6' && !address.match(globalUnicastV6)) return 'outside the global unicast 2000::/3';
  return null;
}

/**
 * Whether `address` is one of this machine's, on any interface: they are re-read at every check,
 * so an address added or changed since start counts at once (reading them costs some 40 µs, next
 * to a connection's milliseconds). Asked before the ranges, so that the reason says so.
 */
function isOwnAddress(address: Address) {
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      const own = parseAddress(entry.address);
      if (own && sameAddress(direct(own), address)) return true;
    }
  }
  return false;
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

function portMatches(allowed: number | undefined, port: number) {
  return allowed === undefined || allowed === port;
}

export type EgressDecision = { allowed: true } | { allowed: false; reason: string };

export class EgressPolicy {
  /** Exceptions by address: CIDRs and single addresses. */
  readonly #subnets: [Address, number][] = [];
  /** Exceptions by name, with their port if any. */
  readonly #names: { name: string; port?: number }[] = [];
  /** Exceptions by address with a port (`127.0.0.1:8080`, `[::1]:9000`). */
  readonly #addressPorts: { address: Address; port?: number }[] = [];

  constructor(allowed: AllowedDestination[]) {
    for (const entry of allowed) {
      if (entry.kind === 'subnet') {
        const base = parseAddress(entry.address) as Address;
        // A mapped exception (`::ffff:10.0.0.0/104`) is the IPv4 range it names.
        const mapped = base.kind() === 'ipv6' && (base as ipaddr.IPv6).isIPv4MappedAddress() && entry.prefix >= 96;
        this.#subnets.push(mapped ? [direct(base), entry.prefix - 96] : [base, entry.prefix]);
        continue;
      }
      const literal = isIP(entry.host) ? parseAddress(entry.host) : null;
      if (literal) this.#addressPorts.push({ address: direct(literal), port: entry.port });
      else this.#names.push({ name: entry.host, port: entry.port });
    }
  }

  /**
   * Whether a connection to `host:port` may go to `addresses` (what `host` resolved to, or the
   * literal itself). Every address must be allowed: a name with one public and one private record
   * is refused, since the connection could go to either.
   */
  check(host: string, port: number, addresses: string[]): EgressDecision {
    const name = host.toLowerCase().replace(/^\[|\]$/g, '');
    if (this.#names.some((entry) => entry.name === name && portMatches(entry.port, port))) return { allowed: true };
    for (const text of addresses) {
      const reason = this.#refusal(text, port);
      if (reason) return { allowed: false, reason };
    }
    return { allowed: true };
  }

  #excepted(address: Address, port: number) {
    return (
      this.#addressPorts.some((entry) => sameAddress(entry.address, address) && portMatches(entry.port, port)) ||
      this.#subnets.some(([base, prefix]) => base.kind() === address.kind() && address.match(base, prefix))
    );
  }

  /** Why a connection to `text` is refused; null when it may go. */
  #refusal(text: string, port: number): string | null {
    const written = parseAddress(text);
    if (!written) return `${text} is not an IP address`;
    if (this.#excepted(written, port)) return null;
    const embedding = written.kind() === 'ipv6' ? embeddedIn(written as ipaddr.IPv6) : null;
    if (embedding?.translated) {
      const inside = embedding.ipv4 ? ` of ${embedding.ipv4}` : '';
      return `${written} is ${embedding.name}${inside}: addresses that reach IPv4 through a translator or tunnel are refused`;
    }
    const address = embedding?.ipv4 ?? written;
    if (embedding && this.#excepted(address, port)) return null;
    const spelled = embedding ? `${written} is ${address} (${embedding.name}), and ` : '';
    if (isOwnAddress(address)) return `${spelled}${address} is an address of this machine`;
    const range = notRoutable(address);
    if (range) return `${spelled}${address} is not a globally routable address (${range})`;
    return null;
  }
}
