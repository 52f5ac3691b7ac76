import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { LaunchedBrowser } from '../../../server/browsers/host/chromium/chromiumProcess.ts';
import type { HostBrowser } from '../../../server/browsers/host/pool/hostBrowser.ts';
import { WarmPool } from '../../../server/browsers/host/pool/warmPool.ts';
import { defaultLaunchSettings, defaultLaunchSignature } from '../../../server/browsers/launch/launchSignature.ts';

/**
 * The warm pool's launches (server/browsers/host/pool/warmPool.ts): a cold start takes over a warm
 * launch under way, and a start's refill waits. The launches are ours to settle here, one by one.
 */

type Pending = { resolve: (browser: LaunchedBrowser) => void; reject: (error: Error) => void; id: number };

function poolWith(warmSize: number, writeOffer: () => Promise<void> = async () => {}) {
  const pending: Pending[] = [];
  const offered: string[] = [];
  const destroyed: unknown[] = [];
  let launched = 0;
  const pool = new WarmPool(
    {
      warmSize,
      recentSize: 0,
      recentMs: 60_000,
      log: pino({ level: 'silent' }),
      onWarmReady: async ({ cdpEndpoint }) => {
        await writeOffer();
        offered.push(cdpEndpoint);
      },
    },
    {
      launch: () =>
        new Promise<LaunchedBrowser>((resolve, reject) => {
          pending.push({ resolve, reject, id: ++launched });
        }),
      hold: (browser, warmId) => ({ ...browser, warmId }) as unknown as HostBrowser,
      destroy: async (browser) => {
        destroyed.push(browser);
      },
    },
  );
  const browser = (id: number) => ({ cdpEndpoint: `ws://browser-${id}`, signature: defaultLaunchSignature }) as unknown as LaunchedBrowser;
  const settle = async (index: number) => {
    const launch = pending[index] as Pending;
    launch.resolve(browser(launch.id));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { pool, pending, offered, destroyed, settle };
}

describe('warm launches', () => {
  it('a cold start takes over a warm launch under way: the browser goes to it, not to the pool', async () => {
    const { pool, pending, offered, settle } = poolWith(1);
    pool.refill();
    expect(pending).toHaveLength(1);
    const taken = pool.takeLaunch(defaultLaunchSignature);
    expect(taken).toBeDefined();
    // Only one launch was under way: a second cold start launches its own.
    expect(pool.takeLaunch(defaultLaunchSignature)).toBeUndefined();
    await settle(0);
    expect((await taken)?.cdpEndpoint).toBe('ws://browser-1');
    expect(pool.count).toBe(0);
    expect(offered).toEqual([]);
  });

  it('a taken launch that fails fails its cold start, which then launches its own', async () => {
    const { pool, pending } = poolWith(1);
    pool.refill();
    const taken = pool.takeLaunch(defaultLaunchSignature);
    pending[0]?.reject(new Error('chromium did not start'));
    await expect(taken).rejects.toThrow('chromium did not start');
    // Nothing is left under way for the next start to wait on.
    await new Promise((resolve) => setImmediate(resolve));
    expect(pool.takeLaunch(defaultLaunchSignature)).toBeUndefined();
  });

  it('a taken launch no longer counts: a refill launches a browser for the pool beside it', async () => {
    const { pool, pending } = poolWith(1);
    pool.refill();
    void pool.takeLaunch(defaultLaunchSignature);
    pool.refill();
    expect(pending).toHaveLength(2);
  });

  it("a start's refill waits, even when the start left the pool dry", async () => {
    const { pool, pending, settle } = poolWith(1);
    pool.refill();
    await settle(0);
    pool.take(pool.waiting()[0]?.warmId as string);
    pool.started(defaultLaunchSettings, defaultLaunchSignature);
    // REFILL_AFTER_START_MS: nothing launches beside the first navigation of the browser handed out.
    expect(pending).toHaveLength(1);
    expect(pool.takeLaunch(defaultLaunchSignature)).toBeUndefined();
    pool.close();
  });

  it('a launch that has finished, its offer still being written, is not taken over: the start waits for the offer', async () => {
    let offerWritten: () => void = () => {};
    const { pool, pending } = poolWith(1, () => new Promise<void>((resolve) => (offerWritten = resolve)));
    pool.refill();
    pending[0]?.resolve({ cdpEndpoint: 'ws://browser-1', signature: defaultLaunchSignature } as unknown as LaunchedBrowser);
    await new Promise((resolve) => setImmediate(resolve));
    // The browser is the pool's now: nothing is under way to hand over, and nothing hangs.
    expect(pool.takeLaunch(defaultLaunchSignature)).toBeUndefined();
    expect(pool.count).toBe(1);
    offerWritten();
    pool.close();
  });
});
