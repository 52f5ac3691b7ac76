import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeNode, type NodeContext } from '../../server/browsers/host/nodes/executeNode.ts';
import { compilePipeline } from '../../server/pipelines/compiler.ts';
import { launchChromium } from '../support/chromium.ts';
import {
  pagerCards,
  pagerEvents,
  pagerFeed,
  pagerOrders,
  pagerPosts,
  pagerProducts,
  pagerStories,
  startPagerSite,
} from '../support/pagerPages.ts';

/**
 * The `pages` input of extract.table and extract.list against real Chromium on the pager site:
 * every kind of pager read whole, and the `page` output left where the paging ended.
 */

let site: Awaited<ReturnType<typeof startPagerSite>>;
let browser: Browser;

beforeAll(async () => {
  site = await startPagerSite();
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function openOn(path: string) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await page.goto(`${site.url}${path}`);
  const ctx: NodeContext = { page, log: () => undefined, timeoutMs: 60_000 };
  return { page, run: (type: string, inputs: Record<string, unknown>) => executeNode(type, { page: { pageId: 'p' }, ...inputs }, ctx) };
}

const listFields = (title: string, note: string) => ({ title, note });
const titled = (records: { title: string; note: string }[]) => records.map(({ title, note }) => ({ title, note }));

describe('reading every page of a listing with `pages`', () => {
  it('numbered links whose current page is a span: every row once, though page 2 links back to page 1 by another address', async () => {
    const { page, run } = await openOn('/orders');
    const result = await run('extract.table', { selector: 'table', pages: { links: '.pagination a' } });
    expect(result.records).toEqual(pagerOrders);
    expect(result.count).toBe(15);
    // The page output is the page where the paging ended, not the start page.
    expect(new URL((page as Page).url()).search).toMatch(/^\?page=\d$/);
  }, 60_000);

  it('a next-only pager, older/newer links and a rel=next link', async () => {
    const products = await openOn('/products');
    expect(
      (
        await products.run('extract.list', {
          selector: 'ul.products > li',
          fields: listFields('h3', '.blurb'),
          pages: { links: '.pager a' },
        })
      ).records,
    ).toEqual(titled(pagerProducts));
    const news = await openOn('/news');
    expect(
      (await news.run('extract.list', { selector: 'ol.stories > li', fields: listFields('a', '.byline'), pages: { links: 'p.older a' } }))
        .records,
    ).toEqual(titled(pagerStories));
    const blog = await openOn('/blog');
    expect(
      (
        await blog.run('extract.list', {
          selector: 'article.post',
          fields: listFields('h2', '.summary'),
          pages: { links: 'a[rel~=next]' },
        })
      ).records,
    ).toEqual(titled(pagerPosts));
  }, 90_000);

  it('`max` stops a links paging after that many pages', async () => {
    const { run } = await openOn('/products');
    const result = await run('extract.list', {
      selector: 'ul.products > li',
      fields: listFields('h3', '.blurb'),
      pages: { links: '.pager a', max: 2 },
    });
    expect(result.records).toEqual(titled(pagerProducts.slice(0, 10)));
  }, 60_000);

  it('a "Load more" button that goes away, and a "Show more" button that is disabled at the end', async () => {
    const catalog = await openOn('/catalog');
    expect(
      (await catalog.run('extract.list', { selector: '#cards > div', fields: listFields('h3', '.price'), pages: { more: 'button.load' } }))
        .records,
    ).toEqual(titled(pagerCards));
    const events = await openOn('/events');
    expect(
      (
        await events.run('extract.list', {
          selector: 'ul.events > li',
          fields: listFields('strong', '.venue'),
          pages: { more: '#show-more' },
        })
      ).records,
    ).toEqual(titled(pagerEvents));
  }, 90_000);

  it('an infinite scroll, and a page that does not grow when scrolled (read once)', async () => {
    const feed = await openOn('/feed');
    expect(
      (await feed.run('extract.list', { selector: '#feed > li', fields: listFields('h2', '.text'), pages: { scroll: true } })).records,
    ).toEqual(titled(pagerFeed));
    const products = await openOn('/products');
    expect(
      (await products.run('extract.list', { selector: 'ul.products > li', fields: listFields('h3', '.blurb'), pages: { scroll: true } }))
        .records,
    ).toEqual(titled(pagerProducts.slice(0, 5)));
  }, 90_000);

  it('a pipeline with a `pages` value of the wrong shape does not compile, and says what the shape is', () => {
    for (const pages of [{ links: '' }, { links: 'a', more: 'b' }, { scroll: false }, { more: 'b', max: 0 }, ['a'], { next: 'a' }]) {
      const { errors } = compilePipeline({
        nodes: {
          page: { type: 'browser.page' },
          rows: { type: 'extract.table', inputs: { page: { $ref: 'page.page' }, selector: 'table', pages } },
        },
      });
      expect(errors, JSON.stringify(pages)).toEqual([
        expect.objectContaining({ node: 'rows', input: 'pages', message: expect.stringMatching(/pages/) }),
      ]);
    }
  });
});
