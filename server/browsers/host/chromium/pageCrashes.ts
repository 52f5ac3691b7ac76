import type { BrowserContext, Page } from 'playwright-core';
import { NodeError } from '../../../pipelines/engine/nodeErrors.ts';

/**
 * `work` (a node on `context`'s pages), failed with `renderer_crashed` as soon as one of the run's
 * pages (`owns`) crashes while it runs: another run's tab or a CDP client's in the same browser is
 * not this node's business. The page's renderer process died (killed, out of memory, a Chromium
 * bug) and the browser lives on. A crashed page is unusable, and Playwright's calls on it either
 * hang (a wait) or fail with a navigation's `net::ERR_ABORTED`, which says nothing of the cause.
 * Not retried: the page the node's input names is gone for good.
 */
export async function failOnPageCrash<T>(context: BrowserContext, work: Promise<T>, owns: (page: Page) => boolean): Promise<T> {
  let crashed!: (page: Page) => void;
  const crash = new Promise<never>((_resolve, reject) => {
    crashed = (page) => {
      if (!owns(page)) return;
      reject(
        new NodeError('renderer_crashed', `the page’s renderer crashed while the node ran (${page.url() || 'about:blank'})`, {
          retryable: false,
        }),
      );
    };
  });
  // Its failure after the node settled has nobody to tell.
  crash.catch(() => {});
  const watched = new Set<Page>();
  const watch = (page: Page) => {
    watched.add(page);
    page.once('crash', crashed);
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  try {
    return await Promise.race([work, crash]);
  } finally {
    context.off('page', watch);
    for (const page of watched) page.off('crash', crashed);
  }
}
