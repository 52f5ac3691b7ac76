import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PAGE_HOST } from './pages.ts';

/**
 * Listings of 15 records, 5 per page or per load, behind each common kind of pager, served on an
 * address of their own (see ./pages.ts): what analysis, generation and the run must read whole.
 *
 * - `/orders`: a table; numbered links, the current page a `<span>` (the start page has no number
 *   in its address, and page 2 links back to it as `?page=1`);
 * - `/products`: a list whose pager has only "Next" (and "Previous" past the first page);
 * - `/news`: stories paged by "Older stories" / "Newer stories";
 * - `/blog`: posts paged by an `a[rel=next]` whose text names no pager word;
 * - `/catalog`: cards and a "Load more" button that appends 5 and is removed at the end;
 * - `/events`: a list and a "Show more" button that appends 5 and is disabled at the end;
 * - `/feed`: an infinite scroll that appends 5 when the bottom comes into view;
 * - `/journal`: entries paged by a bare "→" `a[rel=next]` that sits among the entries themselves;
 * - `/archive`: numbered links only, "1" among them (`?page=1`, the start page's own content at
 *   another address);
 * - `/shelf`: books whose items have no heading, a bold title, and values named by labels without
 *   a colon (`<span>Author</span> <span>…</span>`), and a "Show more" button.
 */
export const PER_PAGE = 5;
const range = (count: number) => Array.from({ length: count }, (_, index) => index);

export const pagerOrders = range(15).map((index) => ({
  Order: `A-${1001 + index}`,
  Total: 10 + index * 3.25,
  Status: index % 3 === 0 ? 'shipped' : index % 3 === 1 ? 'packed' : 'paid',
}));
const named = (noun: string) =>
  range(15).map((index) => ({ title: `${noun} ${String.fromCharCode(65 + index)}${index + 1}`, note: `${noun} note ${index + 1}` }));
export const pagerProducts = named('Kettle');
export const pagerStories = named('Story');
export const pagerPosts = named('Post');
export const pagerCards = named('Lamp');
export const pagerEvents = named('Concert');
export const pagerFeed = named('Update');
export const pagerJournal = named('Entry');
export const pagerArchive = named('Report');
export const pagerShelf = range(15).map((index) => ({
  title: `Book ${String.fromCharCode(65 + index)}${index + 1}`,
  author: `Writer ${index + 1}`,
  year: String(1950 + index),
}));

const pageOf = (number: number) => ({ from: (number - 1) * PER_PAGE, to: number * PER_PAGE });
const PAGES = 3;

const document = (title: string, body: string, script = '') =>
  `<!doctype html><html><head><title>${title}</title><meta name="viewport" content="width=device-width"></head><body><header><h1>${title}</h1><nav aria-label="Site"><a href="/">Home</a> <a href="/about">About</a></nav></header><main>${body}</main><footer><p>© Pager test site</p></footer>${script ? `<script>${script}</script>` : ''}</body></html>`;

const storyItem = (record: { title: string; note: string }, index: number) =>
  `<li class="story"><a class="headline" href="/story/${index + 1}">${record.title}</a><span class="byline">${record.note}</span></li>`;
const productItem = (record: { title: string; note: string }) =>
  `<li class="product"><h3>${record.title}</h3><p class="blurb">${record.note}</p></li>`;

/** Script of a page that appends the next items from `/…/items?offset=n` when `trigger` runs. */
const appendScript = (path: string, container: string, onDone: string) => `
let offset = ${PER_PAGE};
async function loadMore() {
  const response = await fetch('${path}/items?offset=' + offset);
  const { html, done } = await response.json();
  document.querySelector('${container}').insertAdjacentHTML('beforeend', html);
  offset += ${PER_PAGE};
  if (done) { ${onDone} }
  return done;
}`;

export async function startPagerSite() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pager');
    const number = Math.min(PAGES, Math.max(1, Number(url.searchParams.get('page') ?? '1') || 1));
    const { from, to } = pageOf(number);
    const send = (html: string, type = 'text/html; charset=utf-8') => {
      res.setHeader('content-type', type);
      res.end(html);
    };
    const items = (path: string, records: { title: string; note: string }[], item: (record: { title: string; note: string }) => string) => {
      if (url.pathname !== `${path}/items`) return false;
      const offset = Number(url.searchParams.get('offset') ?? '0');
      const html = records
        .slice(offset, offset + PER_PAGE)
        .map((record) => item(record))
        .join('');
      // A little latency, as a real listing has.
      setTimeout(() => send(JSON.stringify({ html, done: offset + PER_PAGE >= records.length }), 'application/json'), 150);
      return true;
    };
    const catalogCard = (record: { title: string; note: string }) =>
      `<div class="card"><h3>${record.title}</h3><p class="price">${record.note}</p></div>`;
    const eventItem = (record: { title: string; note: string }) =>
      `<li class="event"><strong>${record.title}</strong> <em class="venue">${record.note}</em></li>`;
    const feedEntry = (record: { title: string; note: string }) =>
      `<li class="entry" style="min-height: 260px"><h2>${record.title}</h2><p class="text">${record.note}</p></li>`;
    const shelfItem = (record: { title: string; note: string }) => {
      const book = pagerShelf.find((candidate) => candidate.title === record.title);
      return `<li class="x"><b class="y">${record.title}</b><div class="r"><span class="k">Author</span> <span class="v">${book?.author}</span></div><div class="r"><span class="k">Year</span> <span class="v">${book?.year}</span></div></li>`;
    };
    const shelfRecords = pagerShelf.map((book) => ({ title: book.title, note: book.author }));
    if (
      items('/catalog', pagerCards, catalogCard) ||
      items('/events', pagerEvents, eventItem) ||
      items('/feed', pagerFeed, feedEntry) ||
      items('/shelf', shelfRecords, shelfItem)
    )
      return;
    const journal = /^\/journal(?:\/page\/(\d+))?$/.exec(url.pathname);
    if (journal) {
      const page = Number(journal[1] ?? '1');
      const entries = pagerJournal
        .slice((page - 1) * PER_PAGE, page * PER_PAGE)
        .map((entry) => `<article><h2>${entry.title}</h2><p>${entry.note}</p></article>`)
        .join('');
      const next = page < PAGES ? `<a rel="next" href="/journal/page/${page + 1}">→</a>` : '';
      return send(document('Journal', `<section>${entries}${next}</section>`));
    }
    switch (url.pathname) {
      case '/orders': {
        const rows = pagerOrders
          .slice(from, to)
          .map((order) => `<tr><td>${order.Order}</td><td>${order.Total.toFixed(2)}</td><td>${order.Status}</td></tr>`)
          .join('');
        const pager = range(PAGES)
          .map((index) =>
            index + 1 === number ? `<span class="current">${index + 1}</span>` : `<a href="/orders?page=${index + 1}">${index + 1}</a>`,
          )
          .join(' ');
        return send(
          document(
            'Orders',
            `<table class="orders"><thead><tr><th>Order</th><th>Total</th><th>Status</th></tr></thead><tbody>${rows}</tbody></table><div class="pagination">${pager}</div>`,
          ),
        );
      }
      case '/products': {
        const links = [
          number > 1 ? `<a href="/products?page=${number - 1}">Previous</a>` : '',
          number < PAGES ? `<a href="/products?page=${number + 1}">Next</a>` : '',
        ].join(' ');
        return send(
          document(
            'Products',
            `<ul class="products">${pagerProducts.slice(from, to).map(productItem).join('')}</ul><div class="pager">${links}</div>`,
          ),
        );
      }
      case '/news': {
        const links = [
          number > 1 ? `<a href="/news?page=${number - 1}">« Newer stories</a>` : '',
          number < PAGES ? `<a href="/news?page=${number + 1}">Older stories »</a>` : '',
        ].join(' ');
        return send(
          document(
            'News',
            `<ol class="stories" start="${from + 1}">${pagerStories
              .slice(from, to)
              .map((story, index) => storyItem(story, from + index))
              .join('')}</ol><p class="older">${links}</p>`,
          ),
        );
      }
      case '/blog': {
        const posts = pagerPosts
          .slice(from, to)
          .map((post) => `<article class="post"><h2>${post.title}</h2><p class="summary">${post.note}</p></article>`)
          .join('');
        const links = [
          number > 1 ? `<a rel="prev" href="/blog?page=${number - 1}">See the 5 posts before these</a>` : '',
          number < PAGES ? `<a rel="next" href="/blog?page=${number + 1}">See the 5 posts after these</a>` : '',
        ].join(' ');
        return send(document('Blog', `<section class="posts">${posts}</section><div class="continue">${links}</div>`));
      }
      case '/archive': {
        const links = range(PAGES)
          .map((index) => `<a href="/archive?page=${index + 1}">${index + 1}</a>`)
          .join(' ');
        return send(
          document(
            'Archive',
            `<ul class="reports">${pagerArchive
              .slice(from, to)
              .map((report) => `<li><h3>${report.title}</h3><p>${report.note}</p></li>`)
              .join('')}</ul><nav aria-label="Pages">${links}</nav>`,
          ),
        );
      }
      case '/shelf': {
        return send(
          document(
            'Book picks',
            `<ul class="l">${shelfRecords.slice(0, PER_PAGE).map(shelfItem).join('')}</ul><button type="button" class="b" onclick="loadMore()">Show more</button>`,
            appendScript('/shelf', 'ul.l', "document.querySelector('button.b').remove();"),
          ),
        );
      }
      case '/catalog': {
        return send(
          document(
            'Catalog',
            `<div id="cards">${pagerCards.slice(0, PER_PAGE).map(catalogCard).join('')}</div><button type="button" class="load" onclick="loadMore()">Load more</button>`,
            appendScript('/catalog', '#cards', "document.querySelector('button.load').remove();"),
          ),
        );
      }
      case '/events': {
        return send(
          document(
            'Events',
            `<ul class="events">${pagerEvents.slice(0, PER_PAGE).map(eventItem).join('')}</ul><div class="actions"><button type="button" id="show-more" onclick="loadMore()">Show more</button></div>`,
            appendScript('/events', 'ul.events', "document.getElementById('show-more').disabled = true;"),
          ),
        );
      }
      case '/feed': {
        // Loads the next batch when the end of the list comes within 200 px of the window's bottom.
        const script = `${appendScript('/feed', '#feed', 'finished = true;')}
let finished = false, loading = false;
addEventListener('scroll', async () => {
  if (finished || loading) return;
  if (document.getElementById('feed').getBoundingClientRect().bottom - innerHeight > 200) return;
  loading = true;
  await loadMore();
  loading = false;
});`;
        return send(document('Feed', `<ul id="feed">${pagerFeed.slice(0, PER_PAGE).map(feedEntry).join('')}</ul>`, script));
      }
    }
    res.statusCode = 404;
    send(document('Not found', '<p>Nothing here.</p>'));
  });
  await new Promise<void>((resolve) => server.listen(0, PAGE_HOST, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${PAGE_HOST}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
