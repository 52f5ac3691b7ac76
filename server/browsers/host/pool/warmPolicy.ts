import type { LaunchSettings } from '../../launch/launchSettings.ts';
import { defaultLaunchSettings, defaultLaunchSignature } from '../../launch/launchSignature.ts';

export type WarmPolicyOptions = {
  /** Browsers of the default launch settings kept warm (BROWSER_WARM_POOL). */
  warmSize: number;
  /** Other launch settings kept warm, one browser each, after a start of them here (BROWSER_WARM_RECENT). */
  recentSize: number;
  /** How long after their last start here such settings stay warm (ms). */
  recentMs: number;
};

/**
 * Which warm browsers a host keeps, by launch settings: `warmSize` of the default settings, and
 * one of each other settings started here lately. Pure bookkeeping; the warm pool (./warmPool.ts)
 * launches and retires the browsers.
 */
export class WarmPolicy {
  readonly #options: WarmPolicyOptions;
  /**
   * Launch settings other than the default started here within `recentMs`, by signature, least
   * recently started first (an entry is moved to the end on each start); at most `recentSize`.
   */
  readonly #recent = new Map<string, { settings: LaunchSettings; lastStart: number }>();

  constructor(options: WarmPolicyOptions) {
    this.#options = options;
  }

  /**
   * Notes a start of `settings` here (cold, or a warm browser of them adopted), so that one browser
   * of them stays warm for `recentMs`. At most `recentSize` settings are kept: the least recently
   * started gives way (`WarmPool.trim` then retires its browser). The default settings have their own pool.
   */
  startedWith(settings: LaunchSettings, signature: string) {
    if (signature === defaultLaunchSignature || this.#options.recentSize === 0) return;
    this.#recent.delete(signature); // re-inserted at the end: the map's order is least recently started first
    this.#recent.set(signature, { settings, lastStart: Date.now() });
    for (const oldest of this.#recent.keys()) {
      if (this.#recent.size <= this.#options.recentSize) break;
      this.#recent.delete(oldest);
    }
  }

  /** How many browsers of `signature` should wait warm. */
  target(signature: string) {
    return (signature === defaultLaunchSignature ? this.#options.warmSize : 0) + (this.#recent.has(signature) ? 1 : 0);
  }

  /** The settings warm browsers are kept of, with their signatures: the default first. */
  wanted(): [signature: string, settings: LaunchSettings][] {
    return [
      [defaultLaunchSignature, defaultLaunchSettings],
      ...[...this.#recent].map(([signature, { settings }]) => [signature, settings] as [string, LaunchSettings]),
    ];
  }

  /** Forgets settings not started here for `recentMs`: their warm browser is no longer wanted. */
  expire(now = Date.now()) {
    for (const [signature, { lastStart }] of this.#recent) {
      if (now - lastStart >= this.#options.recentMs) this.#recent.delete(signature);
    }
  }

  /** Of `waiting` (in order), the browsers beyond their settings' target. */
  surplus<T extends { signature: string }>(waiting: readonly T[]): T[] {
    const kept = new Map<string, number>();
    return waiting.filter((browser) => {
      const count = (kept.get(browser.signature) ?? 0) + 1;
      kept.set(browser.signature, count);
      return count > this.target(browser.signature);
    });
  }
}
