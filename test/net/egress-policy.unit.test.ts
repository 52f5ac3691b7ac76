import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { EgressPolicy, parseAddress, parseAllowedDestinations } from '../../server/net/egressPolicy.ts';

const policy = (allowed = '') => new EgressPolicy(parseAllowedDestinations(allowed) as never);

/** What the policy says of `address` as a literal destination. */
const decide = (address: string) => policy().check(address, 80, [address]);

/**
 * Every spelling a tenant could write, with the reason it must be refused (a pattern of the
 * message). Run through the URL parser too, as a browser's and a webhook's destinations are.
 */
const refused: [spelling: string, reason: RegExp][] = [
  // loopback, in the forms a resolver or URL parser accepts
  ['127.0.0.1', /this machine/],
  ['127.8.9.10', /loopback/],
  ['127.1', /this machine/],
  ['0x7f.0.0.1', /this machine/],
  ['0177.0.0.1', /this machine/],
  ['2130706433', /this machine/],
  ['0x7f000001', /this machine/],
  ['::1', /this machine/],
  ['0:0:0:0:0:0:0:1', /this machine/],
  ['[::1]', /this machine/],
  // IPv4-mapped, dotted and hex, upper case, leading zeros
  ['::ffff:127.0.0.1', /::ffff:7f00:1 is 127\.0\.0\.1 \(IPv4-mapped IPv6\), and 127\.0\.0\.1 is an address of this machine/],
  ['::ffff:7f00:1', /IPv4-mapped.*this machine/],
  ['::FFFF:7F00:0001', /IPv4-mapped.*this machine/],
  ['0000:0000:0000:0000:0000:ffff:7f00:0001', /IPv4-mapped.*this machine/],
  ['::ffff:10.0.0.1', /IPv4-mapped.*private/],
  ['::ffff:a9fe:a9fe', /IPv4-mapped.*linkLocal/],
  ['::ffff:c633:6401', /198\.51\.100\.1 .*TEST-NET-2/],
  // IPv4-compatible, SIIT: refused whatever they embed
  ['::127.0.0.1', /IPv4-compatible/],
  ['::7f00:1', /IPv4-compatible/],
  ['::8.8.8.8', /IPv4-compatible/],
  ['::ffff:0:127.0.0.1', /SIIT/],
  ['::ffff:0:7f00:1', /SIIT/],
  ['::ffff:0:8.8.8.8', /SIIT/],
  // NAT64, both prefixes: the metadata service, loopback, and a public address
  ['64:ff9b::a9fe:a9fe', /NAT64 \(RFC 6052\) of 169\.254\.169\.254/],
  ['64:ff9b::169.254.169.254', /NAT64.*169\.254\.169\.254/],
  ['64:ff9b::7f00:1', /NAT64.*127\.0\.0\.1/],
  ['64:FF9B::808:808', /NAT64.*8\.8\.8\.8/],
  ['64:ff9b:1::a9fe:a9fe', /NAT64/],
  ['64:ff9b:1:a9fe:a9fe::', /NAT64/],
  // 6to4 and Teredo
  ['2002:7f00:1::1', /6to4 \(RFC 3056\) of 127\.0\.0\.1/],
  ['2002:c000:202::', /6to4.*192\.0\.2\.2/],
  ['2002:808:808::1', /6to4.*8\.8\.8\.8/],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo \(RFC 4380\) of 192\.0\.2\.45/],
  ['2001::80ff:fffd', /Teredo.*127\.0\.0\.2/],
  // private, link-local, CGNAT, unspecified
  ['10.1.2.3', /private/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['169.254.169.254', /linkLocal/],
  ['100.64.0.1', /carrierGradeNat/],
  ['0.0.0.0', /unspecified/],
  ['0.1.2.3', /unspecified/],
  ['::', /unspecified/],
  ['fd00::1', /uniqueLocal/],
  ['FC00::1', /uniqueLocal/],
  ['fe80::1', /linkLocal/],
  ['fe80::1%eth0', /linkLocal/],
  ['fec0::1', /deprecatedSiteLocal/],
  // documentation, benchmarking, reserved, multicast, broadcast
  ['192.0.2.1', /not a globally routable address/],
  ['192.0.2.200', /not a globally routable address/],
  ['198.51.100.7', /not a globally routable address/],
  ['203.0.113.9', /not a globally routable address/],
  ['198.18.0.1', /not a globally routable address/],
  ['198.19.255.254', /not a globally routable address/],
  ['192.0.0.8', /not a globally routable address/],
  ['192.88.99.1', /not a globally routable address/],
  ['240.0.0.1', /reserved/],
  ['255.255.255.255', /broadcast/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['ff02::1', /multicast/],
  ['ff05::1:3', /multicast/],
  ['2001:db8::1', /not a globally routable address/],
  ['2001:DB8:0:0:0:0:0:1', /not a globally routable address/],
  ['3fff::1', /not a globally routable address/],
  ['2001:2::1', /benchmarking/],
  ['100::1', /discard/],
  ['5f00::1', /segment routing/],
  ['2001:10::1', /deprecatedOrchid/],
  ['2001:20::1', /orchid2/],
  ['2001:30::1', /droneRemoteIdProtocolEntityTags/],
  ['192.52.193.1', /amt/],
  ['192.175.48.1', /as112/],
  ['4000::1', /outside the global unicast/],
  ['not-an-address', /not an IP address/],
];

const allowed = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '172.32.0.1',
  '100.128.0.1',
  '192.0.3.1',
  '198.20.0.1',
  '2606:4700::1111',
  '2606:4700:0:0:0:0:0:1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
];

/** This machine's own addresses, each in the spellings a URL or a resolver gives. */
function ownSpellings() {
  const spellings: string[] = [];
  for (const entry of Object.values(os.networkInterfaces()).flat()) {
    if (!entry) continue;
    spellings.push(entry.address, entry.address.toUpperCase());
    if (entry.family === 'IPv4') {
      const [a, b, c, d] = entry.address.split('.').map(Number) as [number, number, number, number];
      spellings.push(
        `::ffff:${entry.address}`,
        `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`,
        String(((a << 24) >>> 0) + (b << 16) + (c << 8) + d),
        `0x${a.toString(16)}.${b}.${c}.${d}`,
      );
    } else {
      spellings.push(`[${entry.address}]`, (parseAddress(entry.address) as { toNormalizedString(): string }).toNormalizedString());
    }
  }
  return spellings;
}

describe('the egress policy', () => {
  it('has a table of at least 60 spellings', () => {
    expect(refused.length + allowed.length).toBeGreaterThanOrEqual(60);
  });

  it.each(refused)('refuses %s', (spelling, reason) => {
    const decision = decide(spelling);
    expect(decision.allowed, spelling).toBe(false);
    expect(decision.allowed === false && decision.reason).toMatch(reason);
  });

  it.each(allowed)('allows the public address %s', (spelling) => {
    expect(decide(spelling)).toEqual({ allowed: true });
  });

  it('refuses every spelling of this machine’s own addresses as its own, whatever their range', () => {
    const spellings = ownSpellings();
    expect(spellings.length).toBeGreaterThanOrEqual(7);
    for (const spelling of spellings) {
      const decision = decide(spelling);
      expect(decision.allowed === false && decision.reason, spelling).toMatch(/is an address of this machine/);
    }
  });

  it('judges a URL’s host as the browser and the webhook sender see it', () => {
    for (const url of [
      'http://[::ffff:192.0.2.2]/',
      'http://[::ffff:c000:202]/',
      'http://3221225986/',
      'http://0xc0.0.2.2/',
      'http://192.0.2.02/',
      'http://[0:0:0:0:0:FFFF:C000:0202]/',
      'http://[::192.0.2.2]/',
      'http://[64:ff9b::192.0.2.2]/',
      'http://127.1/',
      'http://0x7f.1/',
    ]) {
      const host = new URL(url).hostname;
      expect(decide(host).allowed, `${url} (${host})`).toBe(false);
    }
  });

  it('refuses a name when any of its addresses is refused, in any spelling', () => {
    expect(policy().check('mixed.example', 443, ['93.184.216.34', '10.0.0.1']).allowed).toBe(false);
    expect(policy().check('mixed.example', 443, ['2606:4700::1111', '::ffff:c000:202'])).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/192\.0\.2\.2/),
    });
    expect(policy().check('public.example', 443, ['93.184.216.34', '2606:4700::1111']).allowed).toBe(true);
  });

  it('opens exactly the exceptions: a host (any port or one), an address, a CIDR, in any spelling', () => {
    const allowed = policy('intranet.test:8080, 127.0.0.5, 10.1.2.0/24, [::1]:9000, ::ffff:10.8.0.0/112');
    expect(allowed.check('intranet.test', 8080, ['10.9.9.9']).allowed).toBe(true);
    expect(allowed.check('intranet.test', 8081, ['10.9.9.9']).allowed).toBe(false);
    expect(allowed.check('127.0.0.5', 1234, ['127.0.0.5']).allowed).toBe(true);
    expect(allowed.check('::ffff:7f00:5', 1234, ['::ffff:7f00:5']).allowed).toBe(true);
    expect(allowed.check('127.0.0.6', 1234, ['127.0.0.6']).allowed).toBe(false);
    expect(allowed.check('db.internal', 5432, ['10.1.2.77']).allowed).toBe(true);
    expect(allowed.check('db.internal', 5432, ['::ffff:a01:24d']).allowed).toBe(true);
    expect(allowed.check('db.internal', 5432, ['10.1.3.77']).allowed).toBe(false);
    expect(allowed.check('cache.internal', 6379, ['10.8.7.6']).allowed).toBe(true);
    expect(allowed.check('::1', 9000, ['::1']).allowed).toBe(true);
    expect(allowed.check('0:0:0:0:0:0:0:1', 9000, ['0:0:0:0:0:0:0:1']).allowed).toBe(true);
    expect(allowed.check('::1', 9001, ['::1']).allowed).toBe(false);
    // An IPv4 exception does not open the translators that would carry it.
    expect(allowed.check('64:ff9b::7f00:5', 80, ['64:ff9b::7f00:5']).allowed).toBe(false);
    expect(policy('64:ff9b::/96').check('64:ff9b::808:808', 80, ['64:ff9b::808:808']).allowed).toBe(true);
  });

  it('names the entry it cannot read', () => {
    expect(parseAllowedDestinations('ok.test, not a host')).toEqual({ invalid: 'not a host' });
    expect(parseAllowedDestinations('10.0.0.0/33')).toEqual({ invalid: '10.0.0.0/33' });
    expect(parseAllowedDestinations('host.test:99999')).toEqual({ invalid: 'host.test:99999' });
    expect(parseAllowedDestinations(undefined)).toEqual([]);
  });
});
