import { describe, expect, it } from 'vitest';
import { DemandRate, demandTarget, WarmPolicy } from '../../../server/browsers/host/pool/warmPolicy.ts';
import { spareBrowsers, warmLaunchConcurrency } from '../../../server/browsers/hosts/hostCapacity.ts';
import { defaultLaunchSettings, defaultLaunchSignature, launchSignature } from '../../../server/browsers/launch/launchSignature.ts';

/**
 * The warm pool's size policy (server/browsers/host/pool/warmPolicy.ts): the rate of starts over a
 * window, the target it gives within the floor, the ceiling and memory, and the way it shrinks.
 */

const MB = 2 ** 20;

describe('the rate of starts', () => {
  it('sees a burst at its own pace at once, then decays as 1/t and is 0 once the window passed', () => {
    const rate = new DemandRate(60_000);
    // 10 starts 100 ms apart.
    for (let i = 0; i < 10; i++) rate.note(1_000 + i * 100);
    expect(rate.perSecond(1_900)).toBeCloseTo(10, 5);
    // 10 s after the first: 10 starts in 10 s.
    expect(rate.perSecond(11_000)).toBeCloseTo(1, 5);
    expect(rate.perSecond(31_000)).toBeCloseTo(1 / 3, 5);
    expect(rate.count(61_000)).toBe(9);
    expect(rate.perSecond(62_000)).toBe(0);
  });

  it('counts starts paced at a steady interval at that rate', () => {
    const rate = new DemandRate(60_000);
    for (let i = 0; i < 20; i++) rate.note(i * 2_500);
    expect(rate.perSecond(19 * 2_500)).toBeCloseTo(0.4, 5);
  });

  it('counts one start alone as one per window', () => {
    const rate = new DemandRate(30_000);
    rate.note(5_000);
    expect(rate.perSecond(5_000)).toBeCloseTo(1 / 30, 5);
    expect(rate.perSecond(35_000)).toBe(0);
  });
});

describe('the target', () => {
  const base = { launchMs: 2_000, floor: 1, max: 8, ready: 0, spare: 100 };

  it('is the floor without demand, and grows with the rate of starts', () => {
    expect(demandTarget({ ...base, perSecond: 0 })).toBe(1);
    // Starts 2.5 s apart, 2 s launches: 0.8 claimed per refill → 0.8 + √0.8 → 2.
    expect(demandTarget({ ...base, perSecond: 0.4 })).toBe(2);
    // One a second: 2 + √2 → 4.
    expect(demandTarget({ ...base, perSecond: 1 })).toBe(4);
    expect(demandTarget({ ...base, perSecond: 2 })).toBe(6);
    // Slower launches need more warm browsers for the same rate.
    expect(demandTarget({ ...base, perSecond: 1, launchMs: 3_000 })).toBe(5);
  });

  it('stays within the ceiling', () => {
    expect(demandTarget({ ...base, perSecond: 50 })).toBe(8);
    // A ceiling at or below the floor: a fixed pool of the floor.
    expect(demandTarget({ ...base, floor: 2, max: 0, perSecond: 50 })).toBe(2);
  });

  it('grows above the browsers already warm only by what memory holds, never below the floor', () => {
    expect(demandTarget({ ...base, perSecond: 50, ready: 3, spare: 2 })).toBe(5);
    expect(demandTarget({ ...base, perSecond: 50, ready: 0, spare: 0 })).toBe(1);
    expect(demandTarget({ ...base, floor: 3, perSecond: 50, ready: 0, spare: 0 })).toBe(3);
  });

  it('memory room is what the machine has available beyond the share kept for the system, per browser', () => {
    // 8 GiB usable, a quarter kept: 6 GiB available leaves 4 GiB, 16 browsers of 256 MB.
    expect(spareBrowsers({ availableBytes: 6 * 1024 * MB, memoryBytes: 8 * 1024 * MB })).toBe(16);
    expect(spareBrowsers({ availableBytes: 1024 * MB, memoryBytes: 8 * 1024 * MB })).toBe(0);
  });

  it('refills launch one browser per core at once', () => {
    expect(warmLaunchConcurrency(2)).toBe(2);
    expect(warmLaunchConcurrency(16)).toBe(16);
    expect(warmLaunchConcurrency(0)).toBe(1);
  });
});

describe('the policy over time', () => {
  function policy(options: { floor?: number; max?: number; spare?: number } = {}) {
    const clock = { now: 0 };
    const warm = new WarmPolicy({
      warmSize: options.floor ?? 1,
      warmMax: options.max ?? 8,
      demandMs: 60_000,
      idleMs: 30_000,
      recentSize: 1,
      recentMs: 600_000,
      spareBrowsers: () => options.spare ?? 100,
      now: () => clock.now,
    });
    const start = (warmStart = false) => warm.startedWith(defaultLaunchSettings, defaultLaunchSignature, warmStart);
    return { warm, clock, start, target: (ready = 0) => warm.target(defaultLaunchSignature, ready) };
  }

  it('a rising rate grows the target; when starts stop it decays back to the floor', () => {
    const { clock, start, target } = policy();
    expect(target()).toBe(1);
    const seen: number[] = [];
    // Starts coming faster: every 4 s, then every 2 s, then every 0.5 s.
    for (const gap of [4_000, 4_000, 4_000, 2_000, 2_000, 2_000, 500, 500, 500, 500, 500, 500]) {
      clock.now += gap;
      start();
      seen.push(target());
    }
    // Never shrinks while the rate rises, and ends well above the floor.
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual((seen[i - 1] as number) - 1);
    expect(seen.at(-1)).toBeGreaterThanOrEqual(5);
    expect(seen.at(-1)).toBeGreaterThan(seen[2] as number);
    // Demand stops: the target falls step by step, and is the floor once the window passed.
    const after: number[] = [];
    for (let i = 0; i < 7; i++) {
      clock.now += 10_000;
      after.push(target());
    }
    for (let i = 1; i < after.length; i++) expect(after[i]).toBeLessThanOrEqual(after[i - 1] as number);
    expect(after.at(-1)).toBe(1);
  });

  it('a burst grows the target to the ceiling, or to what memory holds', () => {
    const { clock, start, target } = policy({ max: 6 });
    for (let i = 0; i < 10; i++) {
      clock.now += 50;
      start();
    }
    expect(target()).toBe(6);
    const small = policy({ max: 6, spare: 2 });
    for (let i = 0; i < 10; i++) {
      small.clock.now += 50;
      small.start();
    }
    expect(small.target(0)).toBe(2);
    expect(small.target(3)).toBe(5);
  });

  it('retires browsers above the target only once they waited unclaimed for the idle time', () => {
    const { warm, clock, start } = policy();
    for (let i = 0; i < 10; i++) {
      clock.now += 100;
      start();
    }
    const waiting = Array.from({ length: 6 }, (_, i) => ({ id: i, signature: defaultLaunchSignature, warmSince: clock.now }));
    expect(warm.surplus(waiting)).toEqual([]);
    // Past the window the target is the floor, but these waited exactly as long: all but one go.
    clock.now += 60_000;
    expect(warm.surplus(waiting).map((b) => b.id)).toEqual([1, 2, 3, 4, 5]);
    // One launched since (refilled 10 s ago) waits its idle time before it goes.
    const fresh = [...waiting.slice(0, 1), { id: 9, signature: defaultLaunchSignature, warmSince: clock.now - 10_000 }];
    expect(warm.surplus(fresh)).toEqual([]);
  });

  it('other settings keep one warm each and go as soon as they are no longer wanted', () => {
    const { warm } = policy();
    const other = { image: 'chromium', screen: { width: 800, height: 600 }, args: [] };
    const otherSignature = launchSignature(other);
    warm.startedWith(other, otherSignature, false);
    expect(warm.target(otherSignature)).toBe(1);
    const another = { ...other, args: ['--lang=de'] };
    warm.startedWith(another, launchSignature(another), false);
    // Pushed out (recentSize 1): surplus at once, whatever it waited.
    expect(warm.surplus([{ signature: otherSignature, warmSince: 0 }])).toHaveLength(1);
    // Starts of other settings are no demand for the default pool.
    expect(warm.demandPerSecond).toBe(0);
  });

  it('counts the starts served warm over all starts, recently and since the start', () => {
    const { warm, clock, start } = policy();
    start(true);
    clock.now += 1_000;
    start(false);
    clock.now += 1_000;
    start(true);
    expect(warm.claims()).toMatchObject({ recent: { claims: 3, warm: 2, windowSeconds: 60 }, sinceStart: { claims: 3, warm: 2 } });
    clock.now += 60_000;
    start(true);
    expect(warm.claims()).toMatchObject({ recent: { claims: 1, warm: 1 }, sinceStart: { claims: 4, warm: 3 } });
  });
});
