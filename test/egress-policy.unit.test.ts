import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { EgressPolicy, parseAllowedDestinations } from '../server/browsers/host/egressPolicy.ts';

const policy = (allowed = '') => new EgressPolicy(parseAllowedDestinations(allowed) as never);

describe('the egress policy', () => {
  it('refuses loopback, private, link-local, CGNAT, reserved and mapped addresses; public ones pass', () => {
    const refused = [
      '127.0.0.1',
      '127.8.9.10',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '224.0.0.1',
    ];
    for (const address of refused) expect(policy().check(address, 80, [address]).allowed, address).toBe(false);
    for (const address of ['93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700::1111']) {
      expect(policy().check(address, 443, [address]).allowed, address).toBe(true);
    }
  });

  it('refuses a name when any of its addresses is refused, and the host’s own addresses', () => {
    expect(policy().check('mixed.example', 443, ['93.184.216.34', '10.0.0.1']).allowed).toBe(false);
    const own = Object.values(os.networkInterfaces())
      .flat()
      .find((entry) => entry && !entry.internal && entry.family === 'IPv4');
    if (own)
      expect(policy().check(own.address, 80, [own.address])).toMatchObject({
        allowed: false,
        reason: expect.stringMatching(/host itself|private/),
      });
  });

  it('opens exactly the exceptions: a host (any port or one), an address, a CIDR', () => {
    const allowed = policy('intranet.test:8080, 127.0.0.5, 10.1.2.0/24, [::1]:9000');
    expect(allowed.check('intranet.test', 8080, ['10.9.9.9']).allowed).toBe(true);
    expect(allowed.check('intranet.test', 8081, ['10.9.9.9']).allowed).toBe(false);
    expect(allowed.check('127.0.0.5', 1234, ['127.0.0.5']).allowed).toBe(true);
    expect(allowed.check('127.0.0.6', 1234, ['127.0.0.6']).allowed).toBe(false);
    expect(allowed.check('db.internal', 5432, ['10.1.2.77']).allowed).toBe(true);
    expect(allowed.check('db.internal', 5432, ['10.1.3.77']).allowed).toBe(false);
    expect(allowed.check('::1', 9000, ['::1']).allowed).toBe(true);
    expect(allowed.check('::1', 9001, ['::1']).allowed).toBe(false);
  });

  it('names the entry it cannot read', () => {
    expect(parseAllowedDestinations('ok.test, not a host')).toEqual({ invalid: 'not a host' });
    expect(parseAllowedDestinations('10.0.0.0/33')).toEqual({ invalid: '10.0.0.0/33' });
    expect(parseAllowedDestinations('host.test:99999')).toEqual({ invalid: 'host.test:99999' });
    expect(parseAllowedDestinations(undefined)).toEqual([]);
  });
});
