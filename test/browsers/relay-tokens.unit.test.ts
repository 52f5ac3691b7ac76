import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { RELAY_TOKEN_SECONDS, RelayTokens } from '../../server/browsers/tokens/relayTokens.ts';
import { parseConfig } from '../../server/config.ts';

const serviceSecret = 'a'.repeat(64);
const resource = '0b8f7a3c-1d2e-4f50-8a9b-0c1d2e3f4a5b';
const other = '1c9f7a3c-1d2e-4f50-8a9b-0c1d2e3f4a5b';

describe('relay tokens', () => {
  const tokens = new RelayTokens({ serviceSecret });

  it('open one resource on one host until they expire, a minute after they were minted', () => {
    const now = Date.now();
    const token = tokens.mint(resource, 'host-a', now);
    expect(tokens.check(token, resource, 'host-a', now)).toBeNull();
    expect(tokens.check(token, resource, 'host-a', now + (RELAY_TOKEN_SECONDS - 2) * 1000)).toBeNull();
    expect(tokens.check(token, resource, 'host-a', now + (RELAY_TOKEN_SECONDS + 1) * 1000)).toBe('expired');
    expect(tokens.check(token, other, 'host-a', now)).toBe('invalid');
    expect(tokens.check(token, resource, 'host-b', now)).toBe('invalid');
    expect(tokens.check(undefined, resource, 'host-a', now)).toBe('missing');
    expect(tokens.check('', resource, 'host-a', now)).toBe('missing');
    expect(tokens.check('not-a-token', resource, 'host-a', now)).toBe('invalid');
  });

  it('are refused when forged: another key, a changed expiry, a changed MAC', () => {
    const token = tokens.mint(resource, 'host-a');
    const [expires, mac] = token.split('.') as [string, string];
    expect(tokens.check(`${Number(expires) + 600}.${mac}`, resource, 'host-a')).toBe('invalid');
    expect(tokens.check(`${expires}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`, resource, 'host-a')).toBe('invalid');
    // Nor is the same MAC spelt with other spare bits in its last character.
    const last = mac.at(-1) as string;
    const respelt = `${mac.slice(0, -1)}${String.fromCharCode(last.charCodeAt(0) ^ 1)}`;
    expect(tokens.check(`${expires}.${respelt}`, resource, 'host-a')).not.toBeNull();
    expect(tokens.check(new RelayTokens({ serviceSecret: 'b'.repeat(64) }).mint(resource, 'host-a'), resource, 'host-a')).toBe('invalid');
    // A forged token that claims an old expiry is still only "invalid": the MAC is checked first.
    expect(tokens.check(`1.${mac}`, resource, 'host-a')).toBe('invalid');
  });

  it('use BROWSER_RELAY_SECRET when it is set, the same on api and host, and otherwise a key derived from JWT_SECRET', () => {
    const relaySecret = 'r'.repeat(40);
    const api = new RelayTokens({ relaySecret, serviceSecret });
    const host = new RelayTokens({ relaySecret, serviceSecret: 'another jwt secret entirely, at least 32 chars' });
    expect(host.check(api.mint(resource, 'host-a'), resource, 'host-a')).toBeNull();
    expect(tokens.check(api.mint(resource, 'host-a'), resource, 'host-a')).toBe('invalid');
    // Derived, not the secret itself: the relay secret equal to JWT_SECRET still gives another key.
    expect(new RelayTokens({ relaySecret: serviceSecret, serviceSecret }).mint(resource, 'h', 0)).not.toBe(tokens.mint(resource, 'h', 0));
  });
});

describe('BROWSER_HOST_ADDRESS', () => {
  const hostAddress = (value: string) => parseConfig({ BROWSER_HOST_ADDRESS: value }).browsers.hostAddress;

  it('takes an IP address or a host name, and defaults to 127.0.0.1', () => {
    expect(parseConfig({}).browsers.hostAddress).toBe('127.0.0.1');
    expect(parseConfig({}).browsers.relayPort).toBe(0);
    expect(hostAddress('10.1.2.3')).toBe('10.1.2.3');
    expect(hostAddress('fd00::5')).toBe('fd00::5');
    expect(hostAddress('Browser-Host-1.internal')).toBe('browser-host-1.internal');
    expect(() => hostAddress('http://host:9000')).toThrow(/BROWSER_HOST_ADDRESS: an IP address, a host name or "auto"/);
    expect(() => parseConfig({ BROWSER_RELAY_SECRET: 'short' })).toThrow(/BROWSER_RELAY_SECRET: must be at least 32 characters/);
  });

  it('auto: the machine’s first non-internal IPv4 address', () => {
    const expected = Object.values(os.networkInterfaces())
      .flat()
      .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;
    if (expected) expect(hostAddress('auto')).toBe(expected);
    else expect(() => hostAddress('auto')).toThrow(/found no non-internal IPv4 address/);
  });
});
