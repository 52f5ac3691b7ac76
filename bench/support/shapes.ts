/**
 * Ten page shapes for the analysis benchmark (bench/analysis.ts), served by one local site: each
 * with a prompt and the data a correct pipeline extracts. `setCosmetic(true)` serves the same
 * content with other classes and layout (wrappers), as a redesign that keeps the content would.
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BENCH_PAGE_HOST } from './stack.ts';

export const SECRET = 'pa55-bench-7731';

export type Shape = {
  name: string;
  prompt: (url: string) => string;
  /** Arguments a run of the accepted version needs (secret ones are not in the version). */
  args: Record<string, string>;
  /** The records the pipeline must extract (compared by their values, in order). */
  expected: unknown[];
};

const orders = Array.from({ length: 7 }, (_, i) => [`A-${100 + i}`, (10 + i * 2.5).toFixed(2), i % 2 ? 'shipped' : 'open']);
const articles = Array.from({ length: 6 }, (_, i) => [`Article ${i + 1}`, `2026-0${(i % 9) + 1}-1${i}`]);
const books = [
  ['Dune', 'Frank Herbert', '1965'],
  ['Dune Messiah', 'Frank Herbert', '1969'],
  ['Emma', 'Jane Austen', '1815'],
];
const products = [
  ['Red kettle', '24.00'],
  ['Red mug', '8.50'],
  ['Red teapot', '31.00'],
  ['Blue kettle', '26.00'],
];
const catalog = [
  ['Oak chair', '120.00', '7 kg'],
  ['Pine table', '340.00', '22 kg'],
  ['Birch shelf', '89.00', '5 kg'],
];
const inventory = [
  ['Screws', '1200', 'A1'],
  ['Nails', '800', 'A2'],
  ['Bolts', '350', 'B1'],
  ['Washers', '990', 'B2'],
  ['Hinges', '75', 'C1'],
];
const tools = [
  ['Spade', '19.00'],
  ['Rake', '14.50'],
  ['Hoe', '12.00'],
];
const team = [
  ['Ada Lovelace', 'Engineering'],
  ['Grace Hopper', 'Compilers'],
  ['Alan Turing', 'Research'],
  ['Edsger Dijkstra', 'Algorithms'],
];
const messages = [
  ['Welcome aboard', 'Ops'],
  ['Your invoice', 'Billing'],
  ['Meeting moved', 'Calendar'],
];
const sales = [
  ['North', '1200'],
  ['South', '900'],
];
const returns = [
  ['R-1', 'North', '2'],
  ['R-2', 'East', '5'],
  ['R-3', 'South', '1'],
];

const num = (text: string) => (/^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text);

export const shapes: Shape[] = [
  {
    name: 'login → paged orders table',
    prompt: (url) =>
      `Open ${url}/login, log in with email "ada@example.com" and password "${SECRET}", and extract the orders from every page`,
    args: { password: SECRET },
    expected: orders.map((row) => row.map(num)),
  },
  {
    name: 'table',
    prompt: (url) => `Open ${url}/inventory and extract the inventory table`,
    args: {},
    expected: inventory.map((row) => row.map(num)),
  },
  { name: 'paginated list', prompt: (url) => `Open ${url}/articles and list the articles from all pages`, args: {}, expected: articles },
  {
    name: 'search form → results list',
    prompt: (url) => `Open ${url}/search, search for "red" and list the results`,
    args: {},
    expected: products.slice(0, 3),
  },
  { name: 'detail pages', prompt: (url) => `Open ${url}/catalog and read the details of each product`, args: {}, expected: catalog },
  {
    name: 'nested navigation',
    prompt: (url) => `Open ${url}/departments, go to "Garden" then "Tools" and list the products`,
    args: {},
    expected: tools,
  },
  {
    name: 'two tables, one asked for',
    prompt: (url) => `Open ${url}/report and extract the returns table`,
    args: {},
    expected: returns.map((row) => row.map(num)),
  },
  { name: 'cards grid', prompt: (url) => `Open ${url}/team and list the team members`, args: {}, expected: team },
  {
    name: 'username login → message list',
    prompt: (url) => `Open ${url}/portal/login, sign in as username "grace" with password "${SECRET}", and list the messages`,
    args: { password: SECRET },
    expected: messages,
  },
  {
    name: 'search without a button → results table',
    prompt: (url) => `Open ${url}/lookup, search for "dune" and extract the matching books`,
    args: {},
    expected: books.slice(0, 2).map((row) => row.map(num)),
  },
];

export async function startShapesSite() {
  let cosmetic = false;
  const cls = (name: string) => (cosmetic ? `v2-${name} t-${name.length}` : name);
  const page = (title: string, body: string) =>
    `<!doctype html><html><head><title>${title}</title></head><body><h1 class="${cls('title')}">${title}</h1>${
      cosmetic ? `<div class="shell"><section class="content">${body}</section></div>` : `<main>${body}</main>`
    }</body></html>`;
  const table = (id: string, caption: string | null, headers: string[], rows: string[][]) =>
    `<table id="${id}" class="${cls('grid')}">${caption ? `<caption>${caption}</caption>` : ''}<thead><tr>${headers.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows
      .map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join('')}</tr>`)
      .join('')}</tbody></table>`;
  const pager = (path: string, pages: number) =>
    `<nav aria-label="Pagination" class="${cls('pager')}">${Array.from({ length: pages }, (_, i) => `<a href="${path}?page=${i + 1}">${i + 1}</a>`).join(' ')}</nav>`;
  const signedIn = (req: http.IncomingMessage, cookie: string) => String(req.headers.cookie ?? '').includes(cookie);
  const readForm = (req: http.IncomingMessage) =>
    new Promise<URLSearchParams>((resolve) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => resolve(new URLSearchParams(body)));
    });

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    const n = Number(url.searchParams.get('page') ?? '1');
    const send = (html: string) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(html);
    };
    const redirect = (location: string, cookie?: string) => {
      res.writeHead(303, { location, ...(cookie ? { 'set-cookie': `${cookie}; Path=/` } : {}) });
      res.end();
    };
    switch (url.pathname) {
      case '/login':
        return send(
          page(
            'Sign in',
            `<form method="post" action="/session" class="${cls('login')}"><label for="email">E-mail</label><input id="email" name="email" type="email"><label for="password">Password</label><input id="password" name="password" type="password"><button type="submit" class="${cls('btn')}">Sign in</button></form>`,
          ),
        );
      case '/session': {
        const form = await readForm(req);
        const ok = form.get('email') === 'ada@example.com' && form.get('password') === SECRET;
        return ok ? redirect('/orders?page=1', 'shop=ok') : redirect('/login?failed=1');
      }
      case '/orders':
        if (!signedIn(req, 'shop=ok')) return redirect('/login');
        return send(
          page('Your orders', table('orders', null, ['Order', 'Total', 'Status'], orders.slice((n - 1) * 3, n * 3)) + pager('/orders', 3)),
        );
      case '/inventory':
        return send(
          page(
            'Stock',
            `<p class="${cls('intro')}">Counted daily.</p>${table('stock', 'Inventory', ['Item', 'Count', 'Shelf'], inventory)}`,
          ),
        );
      case '/articles':
        return send(
          page(
            'Articles',
            `<ul id="articles" class="${cls('feed')}">${articles
              .slice((n - 1) * 2, n * 2)
              .map(([title, date]) => `<li class="${cls('item')}"><h2>${title}</h2><time>${date}</time></li>`)
              .join('')}</ul>${pager('/articles', 3)}`,
          ),
        );
      case '/search': {
        const query = (url.searchParams.get('q') ?? '').toLowerCase();
        const form = `<form action="/search" role="search" class="${cls('search')}"><input type="search" name="q" aria-label="Search products"><button type="submit">Search</button></form>`;
        const found = products.filter(([title]) => title?.toLowerCase().includes(query));
        return send(
          page(
            'Search',
            query
              ? `${form}<ul id="results" class="${cls('list')}">${found.map(([title, price]) => `<li class="${cls('card')}"><h3>${title}</h3><span data-testid="price">${price}</span></li>`).join('')}</ul>`
              : form,
          ),
        );
      }
      case '/catalog':
        return send(
          page(
            'Catalog',
            `<ul id="catalog" class="${cls('products')}">${catalog.map(([name], i) => `<li class="${cls('product')}"><h2>${name}</h2><a href="/catalog/${i}">details</a></li>`).join('')}</ul>`,
          ),
        );
      case '/departments':
      case '/departments/garden':
      case '/departments/garden/tools': {
        const nav = `<nav aria-label="Departments" class="${cls('menu')}"><a href="/departments/garden">Garden</a> <a href="/departments/kitchen">Kitchen</a></nav>`;
        const sub =
          url.pathname !== '/departments'
            ? `<nav aria-label="Garden" class="${cls('submenu')}"><a href="/departments/garden/tools">Tools</a> <a href="/departments/garden/plants">Plants</a></nav>`
            : '';
        const list =
          url.pathname === '/departments/garden/tools'
            ? `<ul id="products" class="${cls('products')}">${tools.map(([name, price]) => `<li class="${cls('p')}"><h3>${name}</h3><span data-testid="price">${price}</span></li>`).join('')}</ul>`
            : '<p>Pick a department.</p>';
        return send(page('Departments', nav + sub + list));
      }
      case '/report':
        return send(
          page(
            'Quarterly report',
            table('sales', 'Sales', ['Region', 'Amount'], sales) + table('returns', 'Returns', ['Return', 'Region', 'Items'], returns),
          ),
        );
      case '/team':
        return send(
          page(
            'Our team',
            `<div id="team" class="${cls('grid')}">${team.map(([name, role]) => `<div class="${cls('member')}"><h3>${name}</h3><p>${role}</p></div>`).join('')}</div>`,
          ),
        );
      case '/portal/login':
        return send(
          page(
            'Portal',
            `<form method="post" action="/portal/session"><input name="username" aria-label="Username"><input name="secret" type="password" aria-label="Password"><button type="submit">Log in</button></form>`,
          ),
        );
      case '/portal/session': {
        const form = await readForm(req);
        const ok = form.get('username') === 'grace' && form.get('secret') === SECRET;
        return ok ? redirect('/portal/messages', 'portal=ok') : redirect('/portal/login');
      }
      case '/portal/messages':
        if (!signedIn(req, 'portal=ok')) return redirect('/portal/login');
        return send(
          page(
            'Inbox',
            `<ol id="inbox" class="${cls('inbox')}">${messages.map(([subject, from]) => `<li class="${cls('msg')}"><strong>${subject}</strong><em>${from}</em></li>`).join('')}</ol>`,
          ),
        );
      case '/lookup': {
        const term = (url.searchParams.get('term') ?? '').toLowerCase();
        const form = `<form action="/lookup"><input name="term" aria-label="Find a book"></form>`;
        const found = books.filter(([title]) => title?.toLowerCase().includes(term));
        return send(page('Library', term ? form + table('books', null, ['Title', 'Author', 'Year'], found) : form));
      }
    }
    if (url.pathname.startsWith('/catalog/')) {
      const item = catalog[Number(url.pathname.split('/')[2])];
      if (item) {
        const [name, price, weight] = item;
        return send(
          `<!doctype html><html><head><title>${name}</title></head><body>${cosmetic ? '<div class="shell">' : ''}<h1 class="${cls('name')}">${name}</h1><dl class="${cls('specs')}"><dt>Price</dt><dd>${price}</dd><dt>Weight</dt><dd>${weight}</dd></dl>${cosmetic ? '</div>' : ''}</body></html>`,
        );
      }
    }
    res.writeHead(404);
    res.end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, BENCH_PAGE_HOST, resolve));
  return {
    url: `http://${BENCH_PAGE_HOST}:${(server.address() as AddressInfo).port}`,
    setCosmetic: (value: boolean) => {
      cosmetic = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
