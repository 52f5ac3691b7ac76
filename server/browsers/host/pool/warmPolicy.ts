import type { LaunchSettings } from '../../launch/launchSettings.ts';
import { defaultLaunchSettings, defaultLaunchSignature } from '../../launch/launchSignature.ts';

export type WarmPolicyOptions = {
  /**
   * The floor: browsers of the default launch settings kept warm whatever the demand, memory
   * permitting or not (BROWSER_WARM_POOL).
   */
  warmSize: number;
  /**
   * The most browsers of the default settings demand may keep warm (BROWSER_WARM_POOL_MAX); at or
   * below `warmSize` the pool is fixed at `warmSize`. Unset: `warmSize` (a fixed pool).
   */
  warmMax?: number;
  /** The window over which starts are counted for the demand (BROWSER_WARM_DEMAND_SECONDS), in ms. */
  demandMs?: number;
  /** How long a warm browser above the target waits before it is closed (BROWSER_WARM_IDLE_SECONDS), in ms. */
  idleMs?: number;
  /** Other launch settings kept warm, one browser each, after a start of them here (BROWSER_WARM_RECENT). */
  recentSize: number;
  /** How long after their last start here such settings stay warm (ms). */
  recentMs: number;
  /**
   * How many more browsers the host's memory holds now (hostCapacity.ts, `spareBrowsers`): demand
   * grows the pool above the floor only into that room. Unset: no bound but `warmMax`.
   */
  spareBrowsers?: () => number;
  /** The clock (tests). */
  now?: () => number;
};

/** What a launch is taken to take before one was measured here: a sandboxed cold launch on 2 busy cores. */
export const ASSUMED_LAUNCH_MS = 2_000;
/** Weight of the newest launch in the running average of launch times. */
const LAUNCH_TIME_WEIGHT = 0.3;
/** The most starts the demand window remembers; more in one window count as this many. */
const MAX_REMEMBERED_STARTS = 1_000;
const DEFAULT_DEMAND_MS = 60_000;
/** The fewest recent starts whose pace alone sets the rate (`DemandRate`): fewer are noise. */
const MIN_STARTS_FOR_A_PACE = 3;

/**
 * Starts per second over a sliding window. For the last k starts of the window (k from 3, or all
 * when fewer), the rate is their count over their span while they keep coming, and over the time
 * since the first of them once they stop (so it decays as 1/t); the rate is the highest of these.
 * So starts that speed up are seen at their new pace after three of them, not diluted over the
 * whole window, and a rate falls back to the window's average, then to 0 when the last start
 * leaves the window. One start alone counts as one per window.
 */
export class DemandRate {
  readonly #windowMs: number;
  /** Start times within the window, oldest first. */
  readonly #starts: number[] = [];

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  note(now: number) {
    this.#starts.push(now);
    if (this.#starts.length > MAX_REMEMBERED_STARTS) this.#starts.shift();
  }

  /** Starts within the window ending `now`. */
  count(now: number) {
    this.#forget(now);
    return this.#starts.length;
  }

  perSecond(now: number) {
    this.#forget(now);
    const n = this.#starts.length;
    const last = this.#starts[n - 1];
    if (last === undefined) return 0;
    if (n === 1) return 1000 / this.#windowMs;
    let highest = 0;
    for (let k = Math.min(n, MIN_STARTS_FOR_A_PACE); k <= n; k++) {
      const first = this.#starts[n - k] as number;
      // At least a millisecond: starts at the same instant are a burst, not an infinite rate.
      const whileComing = (k - 1) / Math.max(1, last - first);
      const sinceFirst = k / Math.max(1, now - first);
      highest = Math.max(highest, Math.min(whileComing, sinceFirst));
    }
    return highest * 1000;
  }

  #forget(now: number) {
    while (this.#starts.length && (this.#starts[0] as number) <= now - this.#windowMs) this.#starts.shift();
  }
}

/**
 * How many browsers of the default settings to keep warm: enough that the starts coming while the
 * claimed ones are replaced find one. Starts arrive at `perSecond` and each replacement takes
 * `launchMs`, so about `x = perSecond × launchMs` are claimed during a refill (Little's law); their
 * number varies as a Poisson count does, so the pool keeps `x + √x` (a start then finds a warm
 * browser about 85–90 % of the time at a steady rate). Then bounded: at most `max`, and only as many
 * above the browsers already warm (`ready`) as memory has room for (`spare`); never below `floor`.
 */
export function demandTarget(input: { perSecond: number; launchMs: number; floor: number; max: number; ready: number; spare: number }) {
  const x = (input.perSecond * input.launchMs) / 1000;
  const wanted = x > 0 ? Math.ceil(x + Math.sqrt(x) - 1e-9) : 0;
  const byMemory = input.ready + Math.max(0, input.spare);
  return Math.max(input.floor, Math.min(wanted, Math.max(input.floor, input.max), byMemory));
}

/** Starts that could take a warm browser (no proxy, not external), and how many did: the pool's hit rate. */
export class ClaimStats {
  readonly #windowMs: number;
  readonly #since: number;
  #all = 0;
  #warm = 0;
  /** Recent starts within the window: time and whether it was served warm, oldest first. */
  readonly #recent: { at: number; warm: boolean }[] = [];

  constructor(windowMs: number, now: number) {
    this.#windowMs = windowMs;
    this.#since = now;
  }

  note(warm: boolean, now: number) {
    this.#all++;
    if (warm) this.#warm++;
    this.#recent.push({ at: now, warm });
    if (this.#recent.length > MAX_REMEMBERED_STARTS) this.#recent.shift();
  }

  summary(now: number) {
    while (this.#recent.length && (this.#recent[0] as { at: number }).at <= now - this.#windowMs) this.#recent.shift();
    const recentWarm = this.#recent.filter((claim) => claim.warm).length;
    return {
      recent: { claims: this.#recent.length, warm: recentWarm, windowSeconds: Math.round(this.#windowMs / 1000) },
      sinceStart: { claims: this.#all, warm: this.#warm, since: new Date(this.#since).toISOString() },
    };
  }
}

/**
 * Which warm browsers a host keeps, by launch settings: of the default settings, a number that
 * follows the recent rate of starts (`demandTarget`, between `warmSize` and `warmMax`), and one of
 * each other settings started here lately. Pure bookkeeping; the warm pool (./warmPool.ts)
 * launches and retires the browsers.
 */
export class WarmPolicy {
  readonly #options: WarmPolicyOptions;
  readonly #now: () => number;
  readonly #demand: DemandRate;
  readonly #claims: ClaimStats;
  /** Running average of warm launch times here (ms). */
  #launchMs = ASSUMED_LAUNCH_MS;
  /**
   * Launch settings other than the default started here within `recentMs`, by signature, least
   * recently started first (an entry is moved to the end on each start); at most `recentSize`.
   */
  readonly #recent = new Map<string, { settings: LaunchSettings; lastStart: number }>();

  constructor(options: WarmPolicyOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#demand = new DemandRate(options.demandMs ?? DEFAULT_DEMAND_MS);
    this.#claims = new ClaimStats(options.demandMs ?? DEFAULT_DEMAND_MS, this.#now());
  }

  get floor() {
    return this.#options.warmSize;
  }

  /** The most browsers of the default settings kept warm (never below the floor). */
  get max() {
    return Math.max(this.#options.warmSize, this.#options.warmMax ?? this.#options.warmSize);
  }

  get idleMs() {
    return this.#options.idleMs ?? DEFAULT_DEMAND_MS;
  }

  get launchMs() {
    return this.#launchMs;
  }

  /** Starts of the default settings per second, over the demand window. */
  get demandPerSecond() {
    return this.#demand.perSecond(this.#now());
  }

  /**
   * Notes a start of `settings` here (`warm`: it took a warm browser; else it launched cold), for
   * the hit rate. A start of the default settings counts toward the demand; one of other settings
   * keeps one browser of them warm for `recentMs`. At most `recentSize` such settings are kept: the
   * least recently started gives way (`WarmPool.trim` then retires its browser).
   */
  startedWith(settings: LaunchSettings, signature: string, warm = false) {
    const now = this.#now();
    this.#claims.note(warm, now);
    if (signature === defaultLaunchSignature) {
      this.#demand.note(now);
      return;
    }
    if (this.#options.recentSize === 0) return;
    this.#recent.delete(signature); // re-inserted at the end: the map's order is least recently started first
    this.#recent.set(signature, { settings, lastStart: now });
    for (const oldest of this.#recent.keys()) {
      if (this.#recent.size <= this.#options.recentSize) break;
      this.#recent.delete(oldest);
    }
  }

  /** A warm launch took `ms` (from its start to its browser ready): the demand target uses the running average. */
  launched(ms: number) {
    this.#launchMs = this.#launchMs * (1 - LAUNCH_TIME_WEIGHT) + ms * LAUNCH_TIME_WEIGHT;
  }

  /**
   * How many browsers of `signature` should wait warm. `ready`: how many of the default settings
   * wait warm now (the memory bound lets the pool grow only by what memory holds beyond them).
   */
  target(signature: string, ready = 0) {
    const recent = this.#recent.has(signature) ? 1 : 0;
    if (signature !== defaultLaunchSignature) return recent;
    return (
      recent +
      demandTarget({
        perSecond: this.demandPerSecond,
        launchMs: this.#launchMs,
        floor: this.#options.warmSize,
        max: this.max,
        ready,
        spare: this.#options.spareBrowsers?.() ?? Number.POSITIVE_INFINITY,
      })
    );
  }

  /** Starts that could take a warm browser, and how many did, recently and since the host started. */
  claims() {
    return this.#claims.summary(this.#now());
  }

  /** The settings warm browsers are kept of, with their signatures: the default first. */
  wanted(): [signature: string, settings: LaunchSettings][] {
    return [
      [defaultLaunchSignature, defaultLaunchSettings],
      ...[...this.#recent].map(([signature, { settings }]) => [signature, settings] as [string, LaunchSettings]),
    ];
  }

  /** Forgets settings not started here for `recentMs`: their warm browser is no longer wanted. */
  expire(now = this.#now()) {
    for (const [signature, { lastStart }] of this.#recent) {
      if (now - lastStart >= this.#options.recentMs) this.#recent.delete(signature);
    }
  }

  /**
   * Of `waiting` (in order), the browsers beyond their settings' target. Those of the default
   * settings only once they have waited `idleMs` (`warmSince`): a pool that demand grew shrinks
   * when the browsers above the target go unclaimed for that long, not at the first dip of the rate.
   */
  surplus<T extends { signature: string; warmSince?: number }>(waiting: readonly T[]): T[] {
    const now = this.#now();
    const ready = waiting.filter((browser) => browser.signature === defaultLaunchSignature).length;
    const kept = new Map<string, number>();
    return waiting.filter((browser) => {
      const count = (kept.get(browser.signature) ?? 0) + 1;
      kept.set(browser.signature, count);
      if (count <= this.target(browser.signature, ready)) return false;
      return browser.signature !== defaultLaunchSignature || now - (browser.warmSince ?? 0) >= this.idleMs;
    });
  }
}
