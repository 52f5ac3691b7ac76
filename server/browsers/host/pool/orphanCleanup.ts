import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { findProcessesMentioning } from '../chromium/processes.ts';
import type { HostBrowser } from './hostBrowser.ts';
import type { WarmPool } from './warmPool.ts';

/**
 * Browsers nothing can use any more, found and destroyed: those a previous run of this host left
 * behind (`killLeftoverBrowsers`, at start), and those the database no longer wants
 * (`OrphanCleanup`, on every heartbeat).
 */

/**
 * Kills the browsers a previous run of this host left behind (their user-data-dir is below
 * `browsersDir`) and empties that folder.
 */
export function killLeftoverBrowsers(browsersDir: string, log: Logger) {
  mkdirSync(browsersDir, { recursive: true });
  const orphans = findProcessesMentioning(`--user-data-dir=${browsersDir}${path.sep}`);
  for (const pid of orphans) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (orphans.length) log.warn({ count: orphans.length }, 'killed browsers left by a previous run of this host');
  rmSync(browsersDir, { recursive: true, force: true });
  mkdirSync(browsersDir, { recursive: true });
}

/**
 * Which of these browsers can still be used, answered from one snapshot: warm ones still offered
 * in `warm_browsers` or whose endpoint an active resource holds (claimed, adoption pending), and
 * running ones whose resource is still active.
 */
export type StillWanted = (browsers: { warm: { warmId: string; cdpEndpoint: string }[]; resourceIds: string[] }) => Promise<{
  warmIds: Set<string>;
  resourceIds: Set<string>;
}>;

/**
 * Destroys the browsers of a host that nothing can use any more. A start that claimed a warm
 * browser (deleting its offer) and then failed before its workflow adopted it would otherwise
 * leave it here for good; so would a running browser whose workflow ended without stopping it
 * (terminated, then its row settled by the sweeper) or a launch that finished after its workflow
 * gave up on it — each holding a place of this host's capacity. A browser must be found unwanted
 * twice, `graceMs` apart, which also covers an offer not yet written. A normal stop is not raced:
 * the pool drops the browser before its workflow settles the row.
 */
export class OrphanCleanup {
  readonly #stillWanted: StillWanted;
  readonly #graceMs: number;
  readonly #log: Logger;
  #reconciling = false;

  constructor(options: { stillWanted: StillWanted; graceMs: number; log: Logger }) {
    this.#stillWanted = options.stillWanted;
    this.#graceMs = options.graceMs;
    this.#log = options.log;
  }

  /**
   * Takes the orphans out of `warm` and `running` and destroys them; answers whether warm ones
   * went (the warm pool then needs refilling).
   */
  async reconcile(warm: WarmPool, running: Map<string, HostBrowser>, destroy: (browser: HostBrowser) => Promise<void>) {
    if (this.#reconciling || (!warm.count && !running.size)) return false;
    this.#reconciling = true;
    try {
      const waiting = warm.waiting();
      const inUse = [...running.values()];
      const wanted = await this.#stillWanted({
        warm: waiting.map((browser) => ({ warmId: browser.warmId as string, cdpEndpoint: browser.cdpEndpoint })),
        resourceIds: inUse.map((browser) => browser.resourceId),
      });
      const now = Date.now();
      /** Marks the time a browser was first found unwanted; true once that is `graceMs` ago. */
      const orphaned = (browser: HostBrowser, isWanted: boolean) => {
        if (isWanted) {
          browser.unwantedSince = undefined;
          return false;
        }
        browser.unwantedSince ??= now;
        return now - browser.unwantedSince >= this.#graceMs;
      };

      // Out of the pool and the map before any await, so an adoption, a check or a stop arriving
      // now finds them gone.
      const warmOrphans: HostBrowser[] = [];
      for (const browser of waiting) {
        if (!warm.has(browser)) continue; // adopted while the database answered
        if (!orphaned(browser, wanted.warmIds.has(browser.warmId as string))) continue;
        warm.remove(browser);
        warmOrphans.push(browser);
      }
      const runningOrphans: HostBrowser[] = [];
      for (const browser of inUse) {
        if (running.get(browser.resourceId) !== browser) continue; // stopped while the database answered
        if (!orphaned(browser, wanted.resourceIds.has(browser.resourceId))) continue;
        running.delete(browser.resourceId);
        runningOrphans.push(browser);
      }

      if (warmOrphans.length) {
        this.#log.warn(
          { warmIds: warmOrphans.map((browser) => browser.warmId) },
          'destroying warm browsers that are neither offered nor held by a resource',
        );
      }
      if (runningOrphans.length) {
        this.#log.warn(
          { resourceIds: runningOrphans.map((browser) => browser.resourceId) },
          'destroying browsers whose resource is no longer active (their workflow is gone)',
        );
        for (const browser of runningOrphans) {
          browser.log.push({
            context: 'browser',
            severity: 'warn',
            message: 'the browser host destroyed the browser: its resource is no longer active',
            area: 'lifecycle',
          });
        }
      }
      await Promise.all([...warmOrphans, ...runningOrphans].map((browser) => destroy(browser)));
      return warmOrphans.length > 0;
    } finally {
      this.#reconciling = false;
    }
  }
}
