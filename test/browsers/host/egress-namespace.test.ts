import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * A browser's way out refuses translated, tunnelled and documentation addresses. These must never
 * be dialled by a test, even against a broken policy, so the browser's egress proxy runs here in a
 * network namespace the test creates (`unshare -rn`), with no interface up
 * (test/support/egressProbe.ts): whatever the policy lets through fails to connect (502) without
 * a packet leaving, and only a refusal by the policy answers 403. The machine's own addresses,
 * which a test may reach, are tried with a real browser in test/browsers/host/egress.test.ts.
 */

const run = promisify(execFile);

type Probe = { results: Record<string, { connect: number; get: number | 'reset' }>; blocked: string[] };

async function probe(authorities: string[]): Promise<Probe> {
  const { stdout } = await run('unshare', ['-rn', process.execPath, 'test/support/egressProbe.ts', ...authorities], { timeout: 30_000 });
  return JSON.parse(stdout) as Probe;
}

describe('a browser’s egress proxy', () => {
  it('refuses NAT64, 6to4, Teredo, IPv4-compatible, SIIT and documentation targets, by CONNECT and in absolute form', async () => {
    const refused: [authority: string, reason: RegExp][] = [
      ['[64:ff9b::a9fe:a9fe]:80', /NAT64 \(RFC 6052\) of 169\.254\.169\.254/],
      ['[64:ff9b::808:808]:443', /NAT64 \(RFC 6052\) of 8\.8\.8\.8/],
      ['[64:ff9b:1::a9fe:a9fe]:443', /NAT64/],
      ['[2002:a9fe:a9fe::1]:443', /6to4 \(RFC 3056\) of 169\.254\.169\.254/],
      ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]:443', /Teredo \(RFC 4380\) of 192\.0\.2\.45/],
      ['[::a9fe:a9fe]:80', /IPv4-compatible/],
      ['[::ffff:0:a9fe:a9fe]:80', /SIIT/],
      ['192.0.2.1:443', /documentation \(TEST-NET-1\)/],
      ['198.51.100.7:80', /documentation \(TEST-NET-2\)/],
      ['203.0.113.9:443', /documentation \(TEST-NET-3\)/],
      ['198.18.0.1:443', /benchmarking/],
      ['[2001:db8::1]:443', /documentation/],
      ['[3fff::1]:443', /documentation/],
    ];
    const { results, blocked } = await probe([...refused.map(([authority]) => authority), '127.0.0.9:9']);
    for (const [authority, reason] of refused) {
      expect(results[authority], authority).toEqual({ connect: 403, get: 'reset' });
      const host = authority.replace(/^\[|\]?:\d+$/g, '');
      const reports = blocked.filter((line) => line.startsWith(`${host}:`));
      expect(reports, authority).toHaveLength(2);
      expect(reports[0]).toMatch(reason);
    }
    // What the policy lets through is dialled, and fails only for want of a way there.
    expect(results['127.0.0.9:9']?.connect).toBe(502);
  }, 60_000);
});
