import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { WarmPoolStatus } from '../../../../db/entities/BrowserHost.ts';
import type { LaunchSettings } from '../../launch/launchSettings.ts';
import { defaultLaunchSignature } from '../../launch/launchSignature.ts';
import type { LaunchedBrowser } from '../chromium/chromiumProcess.ts';
import type { HostBrowser } from './hostBrowser.ts';
import { WarmPolicy, type WarmPolicyOptions } from './warmPolicy.ts';

/**
 * A start's refill waits this long: the replacement's launch (Chromium's start-up is a burst of
 * CPU) would otherwise run beside the first navigation of the browser just handed out, and a
 * function's whole call is shorter than this (docs/benchmarks/mcp-call.md). Even when the start
 * left the pool dry: calls back to back on 2 cores then all ran beside a launch, slower than
 * the one in two that found no warm browser (docs/benchmarks/mcp-call.md, "Paced calls, and
 * calls back to back").
 */
const REFILL_AFTER_START_MS = 1_000;

/** A warm launch under way; `taker` is the cold start it was handed to (`takeLaunch`), if any. */
type WarmLaunch = {
  signature: string;
  startedAt: number;
  taker?: { resolve: (browser: LaunchedBrowser) => void; reject: (error: unknown) => void };
};

export type WarmPoolOptions = WarmPolicyOptions & {
  log: Logger;
  /**
   * Warm launches at once, at most (hostCapacity.ts, `warmLaunchConcurrency`: from the host's
   * cores). A refill launches up to this many in parallel, and the next as one ends. Unset: 1.
   */
  launchConcurrency?: number;
  /** A warm browser is ready to be claimed (the host advertises it in `warm_browsers`). */
  onWarmReady?: (warm: { warmId: string; signature: string; cdpEndpoint: string; pid: number | null }) => Promise<void>;
  /** Withdraws a warm browser's offer; false when it was no longer there (the api claimed it). */
  withdrawWarm?: (warmId: string) => Promise<boolean>;
};

/** What the warm pool needs of its host's pool: how a browser is launched, held (log and usage watched) and destroyed. */
export type WarmPoolHooks = {
  launch: (settings: LaunchSettings) => Promise<LaunchedBrowser>;
  hold: (browser: LaunchedBrowser, warmId: string) => HostBrowser;
  destroy: (browser: LaunchedBrowser | HostBrowser) => Promise<void>;
};

/**
 * The warm browsers of one host: launched before any start asks, for the settings `WarmPolicy`
 * names (of the default settings, as many as the recent rate of starts needs), and offered to the
 * api (`onWarmReady`); one leaves when the workflow of the start that claimed it has the host adopt
 * it (`take`), and the pool is refilled shortly after every start here, up to `launchConcurrency`
 * launches at once. A browser no longer wanted is retired by withdrawing its offer first (`trim`,
 * `drain`), so a browser the api claimed meanwhile stays for its adoption.
 */
export class WarmPool {
  readonly #options: WarmPoolOptions;
  readonly #hooks: WarmPoolHooks;
  readonly #policy: WarmPolicy;
  /** Warm browsers are watched from launch; their logs wait for the resource that adopts them. */
  readonly #browsers: HostBrowser[] = [];
  /** Warm launches in flight. */
  readonly #launches: WarmLaunch[] = [];
  #closed = false;
  /** Set by `drain`: no warm browser is launched or offered any more. */
  #draining = false;
  #trimming = false;
  /** The refill a start scheduled (`REFILL_AFTER_START_MS`). */
  #refillTimer: NodeJS.Timeout | undefined;

  constructor(options: WarmPoolOptions, hooks: WarmPoolHooks) {
    this.#options = options;
    this.#hooks = hooks;
    this.#policy = new WarmPolicy(options);
  }

  /** Browsers ready to hand out. */
  get count() {
    return this.#browsers.length;
  }

  /** Warm launches under way that no cold start took over. */
  get launching() {
    return this.#untaken().length;
  }

  /**
   * The pool as the host overview shows it: the floor and ceiling of the default settings' pool,
   * its target now, the browsers waiting and being launched (of every settings kept warm), what
   * the target is computed from, and the hit rate of the starts here.
   */
  status(): WarmPoolStatus {
    const ready = this.#browsers.filter((browser) => browser.signature === defaultLaunchSignature).length;
    return {
      floor: this.#policy.floor,
      max: this.#policy.max,
      target: this.#draining ? 0 : this.#policy.target(defaultLaunchSignature, ready),
      size: this.#browsers.length,
      launching: this.launching,
      startsPerMinute: Math.round(this.#policy.demandPerSecond * 60 * 10) / 10,
      launchMs: Math.round(this.#policy.launchMs),
      claims: this.#policy.claims(),
    };
  }

  /** The launch signatures kept warm here (the registry's `warm_signatures`): none while draining. */
  get signatures() {
    if (this.#draining) return [];
    return this.#policy
      .wanted()
      .map(([signature]) => signature)
      .filter((signature) => this.#policy.target(signature) > 0);
  }

  /** The browsers waiting now (a copy). */
  waiting(): HostBrowser[] {
    return [...this.#browsers];
  }

  has(browser: HostBrowser) {
    return this.#browsers.includes(browser);
  }

  some(test: (browser: HostBrowser) => boolean) {
    return this.#browsers.some(test);
  }

  /** The offer id of the warm browser listening at `cdpEndpoint`, if one waits here. */
  warmIdAt(cdpEndpoint: string) {
    return this.#browsers.find((browser) => browser.cdpEndpoint === cdpEndpoint)?.warmId;
  }

  /** Takes the warm browser offered as `warmId` out of the pool (for its adoption); undefined when it is not here. */
  take(warmId: string) {
    const index = this.#browsers.findIndex((browser) => browser.warmId === warmId);
    return index >= 0 ? this.#browsers.splice(index, 1)[0] : undefined;
  }

  /** Takes `browser` out of the pool; false when it is no longer here. */
  remove(browser: HostBrowser) {
    const index = this.#browsers.indexOf(browser);
    if (index < 0) return false;
    this.#browsers.splice(index, 1);
    return true;
  }

  /**
   * A start of `settings` here that could take a warm browser (`warm`: it did; else it launched
   * cold): counts toward the demand and the hit rate, keeps one browser of other settings warm for
   * the next start (`WarmPolicy`), refills, and retires what that pushed out.
   */
  started(settings: LaunchSettings, signature: string, warm = false) {
    this.#policy.startedWith(settings, signature, warm);
    this.#refillSoon();
    this.#trimLogged();
  }

  /**
   * Hands a warm launch of `signature` under way to a cold start that found no warm browser: the
   * browser it launches goes to that start instead of the pool, sooner than a launch of its own
   * would come and without a second launch beside it. Undefined when none is under way; the promise
   * rejects when the launch fails.
   */
  takeLaunch(signature: string): Promise<LaunchedBrowser> | undefined {
    const [launch] = this.#untaken(signature);
    if (!launch) return undefined;
    return new Promise<LaunchedBrowser>((resolve, reject) => {
      launch.taker = { resolve, reject };
    });
  }

  /** Launches under way (of `signature`, if given) that no start took. */
  #untaken(signature?: string) {
    return this.#launches.filter((launch) => !launch.taker && (signature === undefined || launch.signature === signature));
  }

  #ready(signature: string) {
    return this.#browsers.filter((browser) => browser.signature === signature).length;
  }

  /** Refills after `REFILL_AFTER_START_MS`; starts meanwhile share the one refill. */
  #refillSoon() {
    if (this.#refillTimer) return;
    this.#refillTimer = setTimeout(() => {
      this.#refillTimer = undefined;
      this.refill();
    }, REFILL_AFTER_START_MS);
    this.#refillTimer.unref();
  }

  refill() {
    if (this.#closed || this.#draining) return;
    for (const [signature, settings] of this.#policy.wanted()) this.#topUp(settings, signature);
  }

  /**
   * Retires waiting browsers their settings no longer need: those of settings not started here for
   * `recentMs` or pushed out by others, and any beyond the target. Called from the heartbeat. The
   * offer is withdrawn first and the browser destroyed only if that removed it: one the api claimed
   * meanwhile stays for its adoption (and the pool's orphan cleanup handles it if that never
   * comes). A browser whose offer is not written yet waits for a later round, so no offer outlives
   * its browser.
   */
  async trim() {
    if (this.#trimming || this.#closed) return;
    this.#trimming = true;
    try {
      this.#policy.expire();
      for (const browser of this.#policy.surplus(this.#browsers)) {
        if (!browser.offered || !browser.warmId) continue;
        if (this.#options.withdrawWarm && !(await this.#options.withdrawWarm(browser.warmId))) continue;
        // Gone: the pool closed meanwhile (nothing can claim a withdrawn offer).
        if (!this.remove(browser)) continue;
        await this.#hooks.destroy(browser);
      }
    } finally {
      this.#trimming = false;
    }
    // The target may have risen since the last refill (memory freed), and a launch that failed
    // left a place: both are filled here. A start's own refill, when one is pending, comes soon.
    if (!this.#refillTimer) this.refill();
  }

  /**
   * Keeps nothing warm any more: each waiting browser is withdrawn and destroyed, except one the
   * api claimed meanwhile (its workflow's adoption still comes, as the api already answered with it).
   */
  async drain() {
    this.#draining = true;
    for (const browser of [...this.#browsers]) {
      // Not offered yet: its offer is never written (`#topUp` checks the flag), nothing can claim it.
      if (browser.offered && browser.warmId && this.#options.withdrawWarm && !(await this.#options.withdrawWarm(browser.warmId))) continue;
      if (!this.remove(browser)) continue; // adopted meanwhile
      await this.#hooks.destroy(browser);
    }
  }

  /** Launches nothing more; answers the waiting browsers, for the caller to destroy. */
  close() {
    this.#closed = true;
    clearTimeout(this.#refillTimer);
    return this.#browsers.splice(0);
  }

  /**
   * Launches what `signature` lacks of its target, as far as the launches at once allow (a launch
   * a cold start took over is that start's now, as its own cold launch would be: it does not
   * count). The next launch starts as one ends (`#launchEnded`).
   */
  #topUp(settings: LaunchSettings, signature: string) {
    const ready = this.#ready(signature);
    const lacking = this.#policy.target(signature, ready) - ready - this.#untaken(signature).length;
    const room = Math.max(1, this.#options.launchConcurrency ?? 1) - this.#untaken().length;
    for (let i = 0; i < Math.min(lacking, room); i++) {
      const launch: WarmLaunch = { signature, startedAt: Date.now() };
      this.#launches.push(launch);
      let launchedOne = false;
      this.#hooks
        .launch(settings)
        .then(async (launched) => {
          launchedOne = true;
          // Settled here, before any wait: a start that comes now finds no launch to take over
          // (its taker would never be answered) and takes the browser once it is offered.
          this.#forget(launch);
          this.#policy.launched(Date.now() - launch.startedAt);
          // Taken by a cold start: its browser now, whatever became of the pool meanwhile.
          if (launch.taker) return launch.taker.resolve(launched);
          if (this.#closed || this.#draining) return this.#hooks.destroy(launched);
          const warmId = randomUUID();
          const browser = this.#hooks.hold(launched, warmId);
          browser.warmSince = Date.now();
          this.#browsers.push(browser);
          await this.#options.onWarmReady?.({ warmId, signature, cdpEndpoint: launched.cdpEndpoint, pid: launched.pid });
          browser.offered = true;
        })
        .catch((error) => {
          this.#forget(launch);
          if (launch.taker) return launch.taker.reject(error);
          this.#options.log.error({ err: error }, 'could not launch a warm browser');
        })
        .finally(() => {
          if (launchedOne) this.#launchEnded();
        });
    }
  }

  /**
   * A launch's place is free: the pool goes on filling, unless a start's refill is pending (it
   * waits on purpose, `REFILL_AFTER_START_MS`). A launch that failed leaves its place to the next
   * heartbeat's `trim`, so a Chromium that cannot start is not retried in a loop.
   */
  #launchEnded() {
    if (this.#refillTimer || this.#closed || this.#draining) return;
    this.refill();
  }

  #forget(launch: WarmLaunch) {
    const index = this.#launches.indexOf(launch);
    if (index >= 0) this.#launches.splice(index, 1);
  }

  #trimLogged() {
    this.trim().catch((error) => this.#options.log.warn({ err: error }, 'could not retire warm browsers'));
  }
}
