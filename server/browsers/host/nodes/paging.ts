/**
 * Reading a listing across its pages (the `pages` input of extract.list and extract.table): pager
 * links, a "more" button or infinite scroll.
 */
import type { Page } from 'playwright-core';
import { NodeError } from '../../../pipelines/engine/nodeErrors.ts';
import { PAGING_MAX_PAGES, type Paging } from '../../../pipelines/engine/nodes/extract.ts';
import { evaluateIsolated, evaluateMatches } from '../../page/isolatedWorld.ts';
import type { BrowserNodeContext } from './browserNode.ts';
import { attempt, log } from './pageCalls.ts';

/** How long a "more" click or a scroll may take to add items before the listing counts as complete. */
const GROWTH_WAIT_MS = 4_000;
/** How long a page reached by a pager link may take to show the listing (it may be past the end). */
export const LATER_PAGE_WAIT_MS = 5_000;

/** A listing the paging reads: its items counted and the last one shown, and its records read. */
export type Listing<R> = {
  count: () => Promise<number>;
  revealLast: () => Promise<void>;
  /** The records the page shows now; `later`: a page reached by paging, where no match means none. */
  read: (later: boolean) => Promise<R[]>;
};

/** Waits until the listing has more than `before` items; false when the wait ends first. */
async function grew(listing: Listing<unknown>, before: number, ms: number) {
  const until = Date.now() + ms;
  for (;;) {
    if ((await listing.count()) > before) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(150, Math.max(1, until - Date.now()))));
  }
}

/**
 * The records of a listing across its pages (the `pages` input): without paging, the page as it
 * is. `links` visits each address its links lead to once, in the order found, and drops a page whose
 * records equal an earlier page's (a "1" link back to the start, a "newer" link); `more` and
 * `scroll` grow the page until it stops growing, then read it once. Every wait is bounded by the
 * node's budget; a listing that needs longer fails with `timeout` rather than coming back cut short.
 */
export async function readPaged<R>(
  page: Page,
  paging: Paging | undefined,
  listing: Listing<R>,
  left: () => number,
  ctx: BrowserNodeContext,
) {
  if (!paging) return listing.read(false);
  const max = paging.max ?? PAGING_MAX_PAGES;
  const outOfTime = () => {
    if (left() <= 1) throw new NodeError('timeout', 'paging: the node’s timeout ended before the last page; raise `timeoutMs`');
  };
  if (paging.more) {
    const button = page.locator(paging.more).first();
    let clicks = 0;
    while (clicks < max) {
      outOfTime();
      const ready = await attempt('finding the "more" button', async () => (await button.isVisible()) && (await button.isEnabled()));
      if (!ready) break;
      const before = await attempt('counting the items', listing.count);
      await attempt(`clicking \`${paging.more}\``, () => button.click({ timeout: left() }));
      clicks++;
      if (!(await grew(listing, before, Math.min(GROWTH_WAIT_MS, left())))) break;
    }
    log(ctx, page, `clicked ${paging.more} ${clicks} time(s)`);
    return listing.read(false);
  }
  if (paging.scroll) {
    let scrolls = 0;
    while (scrolls < max) {
      outOfTime();
      const before = await attempt('counting the items', listing.count);
      await attempt('scrolling', async () => {
        await listing.revealLast();
        await evaluateIsolated(page, () => window.scrollTo(0, document.documentElement.scrollHeight));
      });
      scrolls++;
      if (!(await grew(listing, before, Math.min(GROWTH_WAIT_MS, left())))) break;
    }
    log(ctx, page, `scrolled ${scrolls} time(s)`);
    return listing.read(false);
  }
  const selector = paging.links as string;
  const address = (url: string) => url.split('#')[0] as string;
  const visited = new Set([address(page.url())]);
  const queue: string[] = [];
  const findLinks = async () => {
    const hrefs = await attempt(`reading the links \`${selector}\``, () =>
      evaluateMatches(page.locator(selector), (elements) =>
        elements.map((element) => (element instanceof HTMLAnchorElement ? element.href : element.closest('a')?.href) ?? null),
      ),
    );
    for (const href of hrefs) {
      if (!href || !/^https?:/i.test(href)) continue;
      const url = address(href);
      if (!visited.has(url) && !queue.includes(url)) queue.push(url);
    }
  };
  const pages = new Set<string>();
  const records: R[] = [];
  const add = (found: R[]) => {
    const key = JSON.stringify(found);
    if (pages.has(key)) return;
    pages.add(key);
    records.push(...found);
  };
  // A page the pager leads to may be past the listing's end: no match there is no records.
  const readLater = () =>
    listing.read(true).catch((error: unknown) => {
      if (error instanceof NodeError && error.code === 'not_found') return [];
      throw error;
    });
  add(await listing.read(false));
  await findLinks();
  let read = 1;
  while (queue.length && read < max) {
    outOfTime();
    const url = queue.shift() as string;
    visited.add(url);
    await attempt(`opening ${url}`, () => page.goto(url, { waitUntil: 'load', timeout: left() }));
    read++;
    add(await readLater());
    await findLinks();
  }
  log(ctx, page, `read ${read} page(s) of the listing, ${pages.size} with records of their own`);
  return records;
}
