import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { BrowserContext, Page } from 'playwright-core';
import { SessionResource } from '../../../../db/entities/index.ts';
import type { BrowserPool } from '../pool/browserPool.ts';
import type { NodeContext } from './executeNode.ts';

/**
 * What this host keeps of the pipeline runs whose browser nodes it executes: the tabs each run
 * holds (behind its page handles), the browser calls still under way, the release of its secrets
 * from the browser's log, and when it last marked its browser as used. A run's state is dropped
 * by `release` when the run ends.
 */
export class RunPages {
  readonly #pool: BrowserPool;
  readonly #orm: MikroORM;
  readonly #log: Logger;
  readonly #touchEveryMs: number;
  /** Pages of each run on this host, by handle id (the path of the node that opened it). */
  readonly #pages = new Map<string, Map<string, Page>>();
  /** Per run on this host: releases the run's secrets from its browser's log redactor. */
  readonly #redactions = new Map<string, () => Promise<void>>();
  /**
   * Per run on this host: browser calls still under way. A stopped node's Playwright call runs on
   * to its own timeout (Playwright cannot abort it); until it settles the run keeps its tabs, so
   * no other run is handed a page something still drives, and keeps its secrets hidden.
   */
  readonly #calls = new Map<string, Set<Promise<unknown>>>();
  /**
   * When a run last marked its browser as used (ms, by resource). Nodes count as activity, so a
   * long run does not lose its browser to the idle timeout; written at most this often per browser,
   * and well within the timeout.
   */
  readonly #lastTouched = new Map<string, number>();

  constructor({ pool, orm, log, idleTimeoutSeconds }: { pool: BrowserPool; orm: MikroORM; log: Logger; idleTimeoutSeconds: number }) {
    this.#pool = pool;
    this.#orm = orm;
    this.#log = log;
    this.#touchEveryMs = Math.min(30_000, (idleTimeoutSeconds * 1000) / 3);
  }

  /** Marks the browser as used by a run, at most once per `touchEveryMs`. */
  touch(resourceId: string) {
    // A call has no resource (docs/browsers.md, Contexts for calls).
    if (!resourceId) return;
    const now = Date.now();
    if (now - (this.#lastTouched.get(resourceId) ?? 0) < this.#touchEveryMs) return;
    this.#lastTouched.set(resourceId, now);
    this.#orm.em
      .fork()
      .nativeUpdate(SessionResource, { id: resourceId }, { lastActivity: new Date(now) })
      .catch(() => this.#lastTouched.delete(resourceId));
  }

  /**
   * The page handling of one node of a run against `context`, its browser: the tab it opens is
   * held by the run, under the node's path, from the moment it is chosen.
   */
  nodePages(runId: string, path: string, context: BrowserContext): Required<Pick<NodeContext, 'openPage' | 'newPageHandle' | 'getPage'>> {
    const pages = this.#pages.get(runId) ?? new Map<string, Page>();
    this.#pages.set(runId, pages);
    return {
      openPage: async ({ newTab }) => {
        const page = (!newTab && this.#freeTab(context.pages(), runId)) || (await context.newPage());
        pages.set(path, page); // held from now on, before the node navigates it
        return page;
      },
      newPageHandle: (page) => {
        pages.set(path, page);
        return { pageId: path };
      },
      getPage: async (handle) => {
        const page = pages.get(handle.pageId);
        if (!page) throw new Error(`unknown page ${handle.pageId}`);
        return page;
      },
    };
  }

  /** Whether `page` is one of the run's tabs (opened or taken by one of its nodes). */
  holds(runId: string, page: Page) {
    return [...(this.#pages.get(runId)?.values() ?? [])].includes(page);
  }

  /**
   * The browser's own log (console, navigations, failed requests) hides the run's secrets while
   * the run lasts: a URL made from one would otherwise show there in clear.
   */
  hideSecrets(runId: string, resourceId: string, hidden: readonly string[]) {
    if (!this.#redactions.has(runId)) this.#redactions.set(runId, this.#pool.hideInLogs(resourceId, hidden));
  }

  /** Counts a browser call of the run as under way until it settles (see `release`). */
  track(runId: string, work: Promise<unknown>) {
    const calls = this.#calls.get(runId) ?? new Set<Promise<unknown>>();
    this.#calls.set(runId, calls);
    calls.add(work);
    work.then(
      () => calls.delete(work),
      () => calls.delete(work),
    );
  }

  /**
   * Forgets a run's page handles, freeing its tabs for other runs (the pages stay: they belong
   * to the browser), and stops hiding the run's secrets in the browser's log; once its browser
   * calls still under way have settled.
   */
  async release(runId: string) {
    const forget = async () => {
      this.#pages.delete(runId);
      this.#calls.delete(runId);
      const release = this.#redactions.get(runId);
      this.#redactions.delete(runId);
      await release?.();
    };
    const pending = [...(this.#calls.get(runId) ?? [])];
    if (pending.length === 0) return forget();
    // Not awaited: the calls end within their node's timeout, past the releasing activity's own.
    void Promise.allSettled(pending)
      .then(forget)
      .catch((error) => this.#log.warn({ err: error, runId }, 'releasing a stopped run’s pages failed'));
  }

  /**
   * The tab a run takes when it does not ask for a new one: the browser's first tab that no other
   * run of this browser holds, so two runs at once never drive the same page.
   */
  #freeTab(tabs: Page[], runId: string) {
    const held = new Set([...this.#pages].flatMap(([otherRun, pages]) => (otherRun === runId ? [] : [...pages.values()])));
    return tabs.find((tab) => !held.has(tab) && !tab.isClosed());
  }
}
