import { describe, expect, it } from 'vitest';
import { defaultBrowsersPerHost } from '../../server/browsers/hosts/hostCapacity.ts';
import { parseConfig } from '../../server/config.ts';

const GiB = 2 ** 30;

describe('how many browsers a host runs when BROWSERS_PER_HOST is unset', () => {
  it('follows the machine: memory for small hosts, cores for large ones, never below one', () => {
    expect(defaultBrowsersPerHost({ memoryBytes: 4 * GiB, cores: 2 })).toBe(12);
    expect(defaultBrowsersPerHost({ memoryBytes: 24 * GiB, cores: 2 })).toBe(64);
    expect(defaultBrowsersPerHost({ memoryBytes: 64 * GiB, cores: 16 })).toBe(192);
    expect(defaultBrowsersPerHost({ memoryBytes: 1 * GiB, cores: 1 })).toBe(3);
    expect(defaultBrowsersPerHost({ memoryBytes: 256 * 2 ** 20, cores: 1 })).toBe(1);
    expect(defaultBrowsersPerHost({ memoryBytes: 1024 * GiB, cores: 128 })).toBe(500);
  });

  it('is what the config holds unless BROWSERS_PER_HOST is given', () => {
    const env = { NODE_ENV: 'test', DATABASE_URL: 'postgres://x@127.0.0.1/x', JWT_SECRET: 'x'.repeat(64) };
    expect(parseConfig(env).browsers.perHost).toBe(defaultBrowsersPerHost());
    expect(parseConfig({ ...env, BROWSERS_PER_HOST: '6' }).browsers.perHost).toBe(6);
  });
});
