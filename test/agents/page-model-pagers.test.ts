import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPageModel } from '../../server/agents/page/readPageModel.ts';
import { openServedPage } from '../support/servedPage.ts';

/**
 * What the page model says about a listing's pager, for the markup pagers are written in: its kind,
 * the selector a paging step uses (checked against the live page), the current page.
 */

let served: Awaited<ReturnType<typeof openServedPage>>;

beforeAll(async () => {
  served = await openServedPage('/list', (body) => `<!doctype html><title>List</title><main>${body}</main>`);
}, 60_000);
afterAll(() => served?.close());

const items = (count: number) =>
  `<ul class="items">${Array.from({ length: count }, (_, i) => `<li><h3>Item ${i + 1}</h3><p>Note ${i + 1}</p></li>`).join('')}</ul>`;

async function paginationOf(body: string) {
  await served.show(body, '?page=2');
  const model = await readPageModel(served.page);
  const matched = model.pagination?.selector
    ? await served.page.locator(model.pagination.selector).evaluateAll((elements) => elements.map((element) => element.textContent?.trim()))
    : null;
  return { pagination: model.pagination, matched };
}

describe('the page model names the pager of a listing', () => {
  it('numbered links with the current page as plain text, as aria-current, or as the link to this address', async () => {
    for (const current of [
      '<span>2</span>',
      '<strong>2</strong>',
      '<a href="/list?page=2" aria-current="page">2</a>',
      '<a href="/list?page=2">2</a>',
    ]) {
      const { pagination, matched } = await paginationOf(
        `${items(5)}<div class="pages"><a href="/list?page=1">1</a> ${current} <a href="/list?page=3">3</a></div>`,
      );
      expect(pagination, current).toMatchObject({ kind: 'links', current: '2' });
      expect(matched, current).toEqual(expect.arrayContaining(['1', '3']));
    }
  });

  it('"Next", "Older posts" and arrows, alone or beside "Previous"/"Newer"', async () => {
    for (const pager of [
      '<a href="/list?page=3">Next ›</a>',
      '<a href="/list?page=1">« Previous</a> <a href="/list?page=3">Next page</a>',
      '<a href="/list?page=1">Newer posts</a> | <a href="/list?page=3">Older posts →</a>',
    ]) {
      const { pagination, matched } = await paginationOf(`${items(5)}<p class="nav-links">${pager}</p>`);
      expect(pagination, pager).toMatchObject({ kind: 'links', next: { href: `${served.url}/list?page=3` } });
      expect(
        matched?.some((text) => /next|older/i.test(text ?? '')),
        pager,
      ).toBe(true);
    }
  });

  it('a rel=next link whatever its text, and a lone "More" link', async () => {
    const relNext = await paginationOf(`${items(5)}<div><a rel="next" href="/list?page=3">Keep going</a></div>`);
    expect(relNext).toMatchObject({ pagination: { kind: 'links', selector: 'a[rel~=next]' }, matched: ['Keep going'] });
    const more = await paginationOf(`${items(5)}<div class="footer-links"><a class="morelink" href="/list?page=3">More</a></div>`);
    expect(more).toMatchObject({ pagination: { kind: 'links', next: { text: 'More' } }, matched: ['More'] });
  });

  it('"Load more", "Show more results" and "More" buttons', async () => {
    for (const button of [
      '<button type="button">Load more</button>',
      '<button>Show more results</button>',
      '<div role="button" tabindex="0">More</div>',
    ]) {
      const { pagination, matched } = await paginationOf(`${items(5)}${button}`);
      expect(pagination, button).toMatchObject({ kind: 'more' });
      expect(matched, button).toHaveLength(1);
    }
  });

  it('a listing taller than the window with no pager may scroll; a short one, or a page with pager words elsewhere, has no pagination', async () => {
    const tall = await paginationOf(items(5).replaceAll('<li>', '<li style="height: 300px">'));
    expect(tall.pagination).toMatchObject({ kind: 'scroll' });
    expect((await paginationOf(items(5))).pagination).toBeNull();
    // A "1" that is an item's number and links that are not a pager.
    expect(
      (await paginationOf(`${items(3)}<p>Step <a href="/docs/1">1</a> of the guide, see <a href="/help">help</a></p>`)).pagination,
    ).toBeNull();
  });
});
