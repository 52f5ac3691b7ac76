import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PAGE_HOST } from './pages.ts';

/**
 * A small shop served by the test itself, for analysis and generation: a login form that leads to
 * an orders table paged over three pages, and a search form with a results list. `cosmetic`
 * serves the same content with other classes and layout (what a proposal should survive).
 */
export const SHOP_EMAIL = 'ada@example.com';
export const SHOP_PASSWORD = 's3cret-pw-991';

export const shopOrders = Array.from({ length: 7 }, (_, index) => ({
  Order: `A-${100 + index}`,
  Total: 10 + index * 2.5,
  Status: index % 2 ? 'shipped' : 'open',
}));
export const shopProducts = [
  { title: 'Red kettle', price: '24.00' },
  { title: 'Red mug', price: '8.50' },
  { title: 'Red teapot', price: '31.00' },
  { title: 'Blue kettle', price: '26.00' },
];

const PER_PAGE = 3;

export async function startShopSite(options: { cosmetic?: boolean; host?: string } = {}) {
  const hits: string[] = [];
  const cls = (name: string) => (options.cosmetic ? `x-${name}-v2 wrap` : name);
  const page = (title: string, body: string) =>
    `<!doctype html><html><head><title>${title}</title></head><body><header class="${cls('top')}"><h1>${title}</h1></header>${
      options.cosmetic ? `<div class="layout"><div class="col">${body}</div></div>` : `<main>${body}</main>`
    }</body></html>`;
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://shop');
    const send = (html: string) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(html);
    };
    if (url.pathname === '/login') {
      return send(
        page(
          'Sign in',
          `<form method="post" action="/session" class="${cls('login')}"><label for="email">E-mail</label><input id="email" name="email" type="email" required><label for="password">Password</label><input id="password" name="password" type="password" required><button type="submit" class="${cls('btn')}">Sign in</button></form>`,
        ),
      );
    }
    if (url.pathname === '/session' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const ok = form.get('email') === SHOP_EMAIL && form.get('password') === SHOP_PASSWORD;
        res.writeHead(303, ok ? { location: '/orders?page=1', 'set-cookie': 'shop=ok; Path=/' } : { location: '/login?failed=1' });
        res.end();
      });
      return;
    }
    if (url.pathname === '/orders') {
      if (!String(req.headers.cookie ?? '').includes('shop=ok')) {
        res.writeHead(303, { location: '/login' });
        return res.end();
      }
      const number = Number(url.searchParams.get('page') ?? '1');
      const rows = shopOrders
        .slice((number - 1) * PER_PAGE, number * PER_PAGE)
        .map((order) => `<tr class="${cls('row')}"><td>${order.Order}</td><td>${order.Total.toFixed(2)}</td><td>${order.Status}</td></tr>`)
        .join('');
      const pages = Math.ceil(shopOrders.length / PER_PAGE);
      const links = Array.from(
        { length: pages },
        (_, index) => `<a class="${cls('page')}" href="/orders?page=${index + 1}">${index + 1}</a>`,
      ).join(' ');
      return send(
        page(
          'Your orders',
          `<table id="orders" class="${cls('grid')}"><thead><tr><th>Order</th><th>Total</th><th>Status</th></tr></thead><tbody>${rows}</tbody></table><nav aria-label="Pagination" class="${cls('pager')}">${links}</nav>`,
        ),
      );
    }
    if (url.pathname === '/search') {
      const query = (url.searchParams.get('q') ?? '').toLowerCase();
      const form = `<form action="/search" role="search" class="${cls('search')}"><input type="search" name="q" aria-label="Search products" value=""><button type="submit">Search</button></form>`;
      if (!query) return send(page('Search', form));
      const found = shopProducts.filter((product) => product.title.toLowerCase().includes(query));
      const items = found
        .map(
          (product, index) =>
            `<li class="${cls('card')}"><h3>${product.title}</h3><span class="${cls('price')}" data-testid="price">${product.price}</span><a href="/product/${index}">details</a></li>`,
        )
        .join('');
      return send(page('Results', `${form}<ul id="results" class="${cls('list')}">${items}</ul>`));
    }
    send(page('Shop', '<a href="/login">Sign in</a> <a href="/search">Search</a>'));
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? PAGE_HOST, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? PAGE_HOST}:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
