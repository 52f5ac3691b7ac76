import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PAGE_HOST } from './pages.ts';

/**
 * Pages written the ways sites write them, none tuned for the analysis: a login by e-mail and one
 * by user name, both leading to an orders table; a search form with a button and one without;
 * tables with row headers, several tbodies, group rows, a caption and a footer; definition lists
 * as one record and as records; a list whose markup has classes only; a page with no data.
 */
export const FORM_EMAIL = 'ada@example.com';
export const FORM_USER = 'ada';
/** The one password of the account: every login phrasing writes it its own way. */
export const FORM_PASSWORD = 'Hunter2-pw';

export const formOrders = [
  { Order: 'B-201', Placed: '2026-03-01', Total: 18.5 },
  { Order: 'B-202', Placed: '2026-03-04', Total: 7 },
  { Order: 'B-203', Placed: '2026-03-09', Total: 42.25 },
];
export const formProducts = [
  { Product: 'Steel kettle', Price: '24.00' },
  { Product: 'Glass kettle', Price: '31.00' },
  { Product: 'Tea cup', Price: '6.50' },
  { Product: 'Milk jug', Price: '12.00' },
];
export const formBooks = [
  { title: 'Dune', author: 'Frank Herbert' },
  { title: 'Dune Messiah', author: 'Frank Herbert' },
  { title: 'Emma', author: 'Jane Austen' },
];
/** Branches in two groups (a tbody each, under a group row), staff totalled in a footer. */
export const formBranches = [
  { Branch: 'Leeds', City: 'Leeds', Staff: 12 },
  { Branch: 'York', City: 'York', Staff: 5 },
  { Branch: 'Bath', City: 'Bath', Staff: 8 },
  { Branch: 'Exeter', City: 'Exeter', Staff: 9 },
];
export const formHours = [
  ['Monday', '9:00', '17:00'],
  ['Tuesday', '9:00', '17:00'],
  ['Saturday', '10:00', '14:00'],
];
export const formStaff = [
  { name: 'Ada Lovelace', role: 'Engineer' },
  { name: 'Grace Hopper', role: 'Admiral' },
  { name: 'Alan Turing', role: 'Researcher' },
];
export const formStories = [
  { title: 'Kettles through the ages', score: 42, author: 'ada' },
  { title: 'The quiet teapot', score: 17, author: 'grace' },
  { title: 'Steam and sense', score: 8, author: 'alan' },
];

export const formTools = [
  { title: 'Spade', price: '19.00' },
  { title: 'Rake', price: '14.50' },
];
/** Each item of the catalog links to its own page, whose values a `<dl>` names. */
export const formCatalog = [
  { name: 'Oak chair', price: '120.00', weight: '7 kg' },
  { name: 'Pine table', price: '340.00', weight: '22 kg' },
  { name: 'Birch shelf', price: '89.00', weight: '5 kg' },
];
/** A table whose second column links each row to the supplier's page, whose values a `<dl>` names. */
export const formSuppliers = [
  { name: 'Northwind Mills', country: 'Norway', rating: '4.5' },
  { name: 'Southgate Paper', country: 'Spain', rating: '3.9' },
  { name: 'Eastfield Glass', country: 'Estonia', rating: '4.1' },
];
/** Parts a form finds whose words say nothing of searching: a "Keyword" field, a category, "Find parts". */
export const formParts = [
  { Part: 'Garden hose 10 m', Price: '18.00' },
  { Part: 'Hose clamp', Price: '2.40' },
  { Part: 'Brass tap', Price: '12.90' },
];

export async function startFormSite() {
  const page = (title: string, body: string) =>
    `<!doctype html><html><head><title>${title}</title></head><body><header><h1>${title}</h1></header><main>${body}</main></body></html>`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://forms');
    const send = (html: string) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(html);
    };
    const signedIn = /(?:^|;\s*)forms=ok/.test(req.headers.cookie ?? '');
    const readForm = (then: (form: URLSearchParams) => void) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => then(new URLSearchParams(body)));
    };
    const signIn = (ok: boolean, back: string) => {
      res.writeHead(303, ok ? { location: '/account/orders', 'set-cookie': 'forms=ok; Path=/' } : { location: `${back}?failed=1` });
      res.end();
    };
    switch (url.pathname) {
      case '/login':
        if (req.method === 'POST')
          return readForm((form) => signIn(form.get('mail') === FORM_EMAIL && form.get('pass') === FORM_PASSWORD, '/login'));
        return send(
          page(
            'Sign in',
            `<form method="post" action="/login" class="f1"><label>E-mail address <input name="mail" type="email"></label><label>Password <input name="pass" type="password"></label><button type="submit">Continue</button></form>`,
          ),
        );
      case '/member/login':
        if (req.method === 'POST')
          return readForm((form) => signIn(form.get('u') === FORM_USER && form.get('p') === FORM_PASSWORD, '/member/login'));
        return send(
          page(
            'Members',
            `<form method="post" action="/member/login"><label for="u">Username</label><input id="u" name="u"><label for="p">Password</label><input id="p" name="p" type="password"><input type="submit" value="Log in"></form>`,
          ),
        );
      case '/account/orders':
        if (!signedIn) {
          res.writeHead(303, { location: '/login' });
          return res.end();
        }
        return send(
          page(
            'Your account',
            `<p>Welcome back.</p><table class="t"><caption>Orders</caption><thead><tr><th>Order</th><th>Placed</th><th>Total</th></tr></thead><tbody>${formOrders
              .map((order) => `<tr><td>${order.Order}</td><td>${order.Placed}</td><td>${order.Total.toFixed(2)}</td></tr>`)
              .join('')}</tbody></table>`,
          ),
        );
      case '/search': {
        // An empty search finds everything.
        const query = (url.searchParams.get('q') ?? '').toLowerCase();
        const found = formProducts.filter((product) => product.Product.toLowerCase().includes(query));
        const form = `<form action="/search" class="s"><input name="q" placeholder="Search the shop"><button>Go</button></form>`;
        const results = url.searchParams.has('q')
          ? `<h2>Results</h2><table class="r"><thead><tr><th>Product</th><th>Price</th></tr></thead><tbody>${found
              .map((product) => `<tr><td>${product.Product}</td><td>${product.Price}</td></tr>`)
              .join('')}</tbody></table>`
          : '<p>Type a word to search.</p>';
        return send(page('Shop', form + results));
      }
      case '/books': {
        // A search box with no button: Enter submits it.
        const term = (url.searchParams.get('term') ?? '').toLowerCase();
        const found = formBooks.filter((book) => book.title.toLowerCase().includes(term));
        const form = `<form action="/books"><input type="search" name="term" aria-label="Find a book"></form>`;
        const results = term
          ? `<ul class="bk">${found.map((book) => `<li class="b"><h3>${book.title}</h3><span class="w">by ${book.author}</span></li>`).join('')}</ul>`
          : '';
        return send(page('Library', form + results));
      }
      case '/branches': {
        const group = (name: string, rows: typeof formBranches) =>
          `<tbody><tr><th colspan="3">${name}</th></tr>${rows
            .map((row) => `<tr><th scope="row">${row.Branch}</th><td>${row.City}</td><td>${row.Staff}</td></tr>`)
            .join('')}</tbody>`;
        const staff = formBranches.reduce((sum, row) => sum + row.Staff, 0);
        return send(
          page(
            'Company',
            `<p>Where we work.</p><table class="x"><caption>Branches</caption><thead><tr><th>Branch</th><th>City</th><th>Staff</th></tr></thead>${group('North', formBranches.slice(0, 2))}${group('South', formBranches.slice(2))}<tfoot><tr><th scope="row">Total</th><td></td><td>${staff}</td></tr></tfoot></table>`,
          ),
        );
      }
      case '/hours':
        // Row headers and no header row: the first row is data.
        return send(
          page(
            'Visit us',
            `<table class="h"><caption>Opening hours</caption>${formHours
              .map(([day, opens, closes]) => `<tr><th scope="row">${day}</th><td>${opens}</td><td>${closes}</td></tr>`)
              .join('')}</table>`,
          ),
        );
      case '/chair':
        return send(
          page(
            'Oak chair',
            `<p class="d">Made by hand.</p><dl class="k"><dt>Price</dt><dd>120.00</dd><dt>Weight</dt><dd>7 kg</dd><dt>Wood</dt><dd>Oak</dd></dl>`,
          ),
        );
      case '/staff':
        return send(
          page(
            'People',
            `<h2>Our staff</h2><div class="g">${formStaff
              .map((person) => `<dl class="c"><dt>Name</dt><dd>${person.name}</dd><dt>Role</dt><dd>${person.role}</dd></dl>`)
              .join('')}</div>`,
          ),
        );
      case '/news':
        // Classes say nothing (`i`, `t`, `m`); the text does: a title link, "Score:", "by …".
        return send(
          page(
            'News',
            `<ul class="l">${formStories
              .map(
                (story, index) =>
                  `<li class="i"><a class="t" href="/story/${index}">${story.title}</a> <span class="m">Score: <b class="n">${story.score}</b></span> <span class="u">by ${story.author}</span></li>`,
              )
              .join('')}</ul>`,
          ),
        );
      case '/shop':
      case '/shop/garden':
      case '/shop/garden/tools': {
        // Navigation nested two deep; only the last page lists anything.
        const top = `<nav aria-label="Departments"><a href="/shop/garden">Garden</a> <a href="/shop/kitchen">Kitchen</a></nav>`;
        const sub =
          url.pathname === '/shop'
            ? ''
            : `<nav aria-label="Garden"><a href="/shop/garden/tools">Tools</a> <a href="/shop/garden/plants">Plants</a></nav>`;
        const list =
          url.pathname === '/shop/garden/tools'
            ? `<ul class="z">${formTools.map((tool) => `<li class="y"><h3>${tool.title}</h3><span class="q">Price: <b>${tool.price}</b></span></li>`).join('')}</ul>`
            : '<p>Pick a department.</p>';
        return send(page('Shop', top + sub + list));
      }
      case '/catalog':
        return send(
          page(
            'Catalog',
            `<ul class="c">${formCatalog.map((item, index) => `<li class="p"><h2>${item.name}</h2><a href="/catalog/${index}">more</a></li>`).join('')}</ul>`,
          ),
        );
      case '/suppliers':
        return send(
          page(
            'Suppliers',
            `<table class="k"><thead><tr><th>#</th><th>Supplier</th><th>Country</th></tr></thead><tbody>${formSuppliers
              .map(
                (supplier, index) =>
                  `<tr><td>${index + 1}</td><td><a href="/suppliers/${index}">${supplier.name}</a></td><td>${supplier.country}</td></tr>`,
              )
              .join('')}</tbody></table>`,
          ),
        );
      case '/finder': {
        const keyword = url.searchParams.get('kw');
        const form = `<form action="/finder" class="g"><label for="kw">Keyword</label><input id="kw" name="kw"><label for="cat">Category</label><select id="cat" name="cat"><option value="">Any</option><option>Garden</option></select><button type="submit">Find parts</button></form>`;
        if (keyword === null) return send(page('Parts', `${form}<p>Find the part you need.</p>`));
        const found = formParts.filter((part) => part.Part.toLowerCase().includes(keyword.toLowerCase()));
        return send(
          page(
            'Parts',
            `${form}<table class="h"><thead><tr><th>Part</th><th>Price</th></tr></thead><tbody>${found
              .map((part) => `<tr><td>${part.Part}</td><td>${part.Price}</td></tr>`)
              .join('')}</tbody></table>`,
          ),
        );
      }
      case '/about':
        return send(page('About us', '<h2>Our story</h2><p>We started in 2001 with one kettle.</p><p>Write to us any time.</p>'));
    }
    const item = /^\/catalog\/(\d+)$/.exec(url.pathname);
    const product = item ? formCatalog[Number(item[1])] : undefined;
    if (product)
      return send(
        page(product.name, `<dl class="s"><dt>Price</dt><dd>${product.price}</dd><dt>Weight</dt><dd>${product.weight}</dd></dl>`),
      );
    const supplierPage = /^\/suppliers\/(\d+)$/.exec(url.pathname);
    const supplier = supplierPage ? formSuppliers[Number(supplierPage[1])] : undefined;
    if (supplier)
      return send(
        page(
          supplier.name,
          `<dl class="d"><dt>Country</dt><dd>${supplier.country}</dd><dt>Rating</dt><dd>${supplier.rating}</dd></dl><p><a href="/suppliers">All suppliers</a></p>`,
        ),
      );
    res.writeHead(404);
    res.end('not found');
  });
  return new Promise<{ url: string; close: () => Promise<void> }>((resolve) =>
    server.listen(0, PAGE_HOST, () =>
      resolve({
        url: `http://${PAGE_HOST}:${(server.address() as AddressInfo).port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      }),
    ),
  );
}
