/**
 * The page shapes of the analysis benchmark (bench/analysis.ts), served by one local site. Each
 * shape has two prompts (one written with care, one as a hurried user types it) and the records a
 * correct pipeline extracts, or `goalMissing` when the page does not hold what the prompts ask for.
 * `setCosmetic(true)` serves the same content with other classes and layout (wrappers), as a
 * redesign that keeps the content, ids, test ids and labels would.
 *
 * The first ten shapes are the benchmark's original ones (their careful prompts unchanged); the
 * fifteen after them are the patterns of issue 22: pagers of every kind, buttons and scrolling that
 * load more, logins written without quotes or with single ones, tables with row headers or several
 * bodies, detail pages, class names that say nothing, an empty search, and a page without the data.
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BENCH_PAGE_HOST } from './stack.ts';

export const SECRET = 'pa55-bench-7731';

export type Phrasing = 'careful' | 'hurried';

export type Shape = {
  name: string;
  /** The prompts, by phrasing: both on the tuned shapes, one on each held-out shape (bench/support/heldoutShapes.ts). */
  prompts: Partial<Record<Phrasing, (url: string) => string>>;
  /**
   * The password the prompts give. A version holds no secret value, so a run passes it to each
   * secret parameter of the version, as its user would.
   */
  secret?: string;
  /** The records the pipeline must extract, in order; each record's values, compared as text. */
  expected: string[][];
  /**
   * Where the page names the fields in visible text (labels), the names the records' fields must
   * have, in any case and spacing: each entry lists the names accepted for one field.
   */
  fields?: string[][];
  /** The page does not hold what the prompts ask for: the right outcome is a loud error. */
  goalMissing?: boolean;
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

// The shapes of issue 22.
const parts = [
  ['Brass valve', '12.40', '14'],
  ['Copper pipe', '7.80', '40'],
  ['Steel valve', '9.90', '3'],
  ['Pipe clamp', '0.90', '500'],
  ['Valve gasket', '1.20', '250'],
  ['Ball valve', '15.00', '8'],
];
const stories = [
  'Harbour bridge reopens',
  'Library extends opening hours',
  'New cycle lane on Mill Road',
  'Council approves park budget',
  'Local bakery wins award',
  'School choir tours abroad',
  'Market moves to Saturdays',
  'Museum opens night gallery',
  'River clean-up draws 300',
  'Tram line survey begins',
].map((title, i) => [title, `2026-11-${String(27 - i * 2).padStart(2, '0')}`]);
const STORIES_PER_PAGE = 4;
const picks = [
  ['Dune', 'Frank Herbert', '1965'],
  ['Emma', 'Jane Austen', '1815'],
  ['Beloved', 'Toni Morrison', '1987'],
  ['Solaris', 'Stanisław Lem', '1961'],
  ['Kindred', 'Octavia E. Butler', '1979'],
  ['Middlemarch', 'George Eliot', '1871'],
  ['Ubik', 'Philip K. Dick', '1969'],
  ['Possession', 'A. S. Byatt', '1990'],
];
const PICKS_PER_CLICK = 3;
const homeware = [
  ['Desk lamp', '34.00'],
  ['Floor lamp', '89.00'],
  ['Wall clock', '25.50'],
  ['Table fan', '42.00'],
  ['Kettle', '29.90'],
  ['Toaster', '39.00'],
  ['Rice cooker', '55.00'],
  ['Blender', '64.50'],
  ['Coffee grinder', '47.00'],
  ['Hand mixer', '31.00'],
];
const HOMEWARE_PER_LOAD = 4;
const topics = ['Morning run by the river', 'Sourdough, third try', 'New desk setup', 'Trip to the coast', 'Reading list for winter'];
const people = ['ada', 'grace', 'alan', 'edsger', 'barbara', 'ken', 'margaret'];
const posts = Array.from({ length: 20 }, (_, i) => [`${topics[i % topics.length]} (${i + 1})`, people[i % people.length] as string]);
const POSTS_PER_CHUNK = 6;
const history = Array.from({ length: 15 }, (_, i) => [
  `H-${2001 + i}`,
  `2026-10-${String(i + 1).padStart(2, '0')}`,
  (19.5 + i * 3.25).toFixed(2),
]);
const HISTORY_PER_PAGE = 5;
const subjects = [
  'Cannot reset password',
  'Invoice shows wrong VAT',
  'Export to CSV times out',
  'Add a second admin',
  'Dark mode request',
  'Webhook retries twice',
  'Mobile login loop',
  'Change billing e-mail',
  'Report is empty',
  'API key rotation',
  'Slow search',
  'Delete old projects',
  'Typo on pricing page',
];
const tickets = subjects.map((subject, i) => [`T-${301 + i}`, subject, ['open', 'pending', 'closed'][i % 3] as string]);
const TICKETS_PER_PAGE = 5;
const blogPosts = [
  ['Why we moved to Postgres', 'Two years of one database, and what it cost us.'],
  ['Our on-call rota', 'Fewer pages, shorter shifts.'],
  ['The new editor', 'Keyboard first, mouse welcome.'],
  ['Pricing, simplified', 'One plan per team size.'],
  ['A faster search', 'From 900 ms to 90.'],
  ['Hiring in Lisbon', 'Three roles, one office.'],
  ['Offline mode', 'It works on the train now.'],
  ['Hello, world', 'The first post of this blog.'],
];
const BLOG_PER_PAGE = 3;
const storeOrders = [
  ['S-501', '2026-09-02', '48.00', 'delivered'],
  ['S-502', '2026-09-15', '12.50', 'delivered'],
  ['S-503', '2026-10-01', '230.00', 'returned'],
  ['S-504', '2026-10-19', '19.99', 'delivered'],
  ['S-505', '2026-11-03', '75.40', 'shipped'],
  ['S-506', '2026-11-20', '8.00', 'processing'],
];
const events = [
  ['Chess night', '2026-12-03', 'Room 4'],
  ['Book swap', '2026-12-07', 'Library'],
  ['Quiz evening', '2026-12-12', 'Main hall'],
  ['Winter walk', '2026-12-20', 'Front gate'],
];
const planets = [
  ['Mercury', '0', '2440'],
  ['Venus', '0', '6052'],
  ['Earth', '1', '6371'],
  ['Mars', '2', '3390'],
  ['Jupiter', '95', '69911'],
  ['Saturn', '146', '58232'],
  ['Uranus', '28', '25362'],
  ['Neptune', '16', '24622'],
];
const staffByDepartment: [string, string[][]][] = [
  [
    'Sales',
    [
      ['Mina Patel', 'Sales', '555-0101'],
      ['Tom Berg', 'Sales', '555-0102'],
      ['Lea Roth', 'Sales', '555-0103'],
    ],
  ],
  [
    'Support',
    [
      ['Omar Haddad', 'Support', '555-0201'],
      ['Ines Costa', 'Support', '555-0202'],
    ],
  ],
  [
    'Research',
    [
      ['Yuki Sato', 'Research', '555-0301'],
      ['Piet de Vries', 'Research', '555-0302'],
    ],
  ],
];
const hours = [
  ['Monday', '9:00', '17:00'],
  ['Tuesday', '9:00', '17:00'],
  ['Wednesday', '9:00', '19:00'],
  ['Thursday', '9:00', '17:00'],
  ['Friday', '9:00', '15:00'],
];
const companies = [
  ['Acme Ltd', 'Berlin', '1998', '120'],
  ['Borealis AG', 'Zurich', '2004', '45'],
  ['Cobalt Works', 'Leeds', '1987', '310'],
  ['Delta Foods', 'Lyon', '2011', '78'],
];
const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
const recipes = [
  ['Tomato soup', '25 min'],
  ['Lentil curry', '40 min'],
  ['Pancakes', '20 min'],
  ['Greek salad', '10 min'],
  ['Mushroom risotto', '45 min'],
  ['Apple crumble', '50 min'],
];
const forecast = [
  ['Monday', '12', '5', 'Cloudy'],
  ['Tuesday', '14', '6', 'Sunny'],
  ['Wednesday', '11', '4', 'Rain'],
  ['Thursday', '9', '2', 'Showers'],
  ['Friday', '10', '3', 'Cloudy'],
];

export const shapes: Shape[] = [
  {
    name: 'login → paged orders table',
    prompts: {
      careful: (url) =>
        `Open ${url}/login, log in with email "ada@example.com" and password "${SECRET}", and extract the orders from every page`,
      hurried: (url) => `orders pls from every page, ${url}/login login ada@example.com pw ${SECRET}`,
    },
    secret: SECRET,
    expected: orders,
  },
  {
    name: 'table',
    prompts: {
      careful: (url) => `Open ${url}/inventory and extract the inventory table`,
      hurried: (url) => `grab the inventory table at ${url}/inventory`,
    },
    expected: inventory,
  },
  {
    name: 'paginated list',
    prompts: {
      careful: (url) => `Open ${url}/articles and list the articles from all pages`,
      hurried: (url) => `${url}/articles all articles, every page`,
    },
    expected: articles,
  },
  {
    name: 'search form → results list',
    prompts: {
      careful: (url) => `Open ${url}/search, search for "red" and list the results`,
      hurried: (url) => `search red on ${url}/search and gimme the results`,
    },
    expected: products.slice(0, 3),
  },
  {
    name: 'detail pages',
    prompts: {
      careful: (url) => `Open ${url}/catalog and read the details of each product`,
      hurried: (url) => `${url}/catalog open every product n get its details`,
    },
    expected: catalog,
  },
  {
    name: 'nested navigation',
    prompts: {
      careful: (url) => `Open ${url}/departments, go to "Garden" then "Tools" and list the products`,
      hurried: (url) => `${url}/departments → Garden → Tools, list the products`,
    },
    expected: tools,
  },
  {
    name: 'two tables, one asked for',
    prompts: {
      careful: (url) => `Open ${url}/report and extract the returns table`,
      hurried: (url) => `returns table only from ${url}/report`,
    },
    expected: returns,
  },
  {
    name: 'cards grid',
    prompts: {
      careful: (url) => `Open ${url}/team and list the team members`,
      hurried: (url) => `who's on the team? ${url}/team`,
    },
    expected: team,
  },
  {
    name: 'username login → message list',
    prompts: {
      careful: (url) => `Open ${url}/portal/login, sign in as username "grace" with password "${SECRET}", and list the messages`,
      hurried: (url) => `${url}/portal/login user grace pw ${SECRET}, list msgs`,
    },
    secret: SECRET,
    expected: messages,
  },
  {
    name: 'search without a button → results table',
    prompts: {
      careful: (url) => `Open ${url}/lookup, search for "dune" and extract the matching books`,
      hurried: (url) => `${url}/lookup find dune books`,
    },
    expected: books.slice(0, 2),
  },
  // Issue 22.
  {
    name: 'search form in front of a results table',
    prompts: {
      careful: (url) => `Open ${url}/parts, search the parts for "valve" and extract the results table`,
      hurried: (url) => `${url}/parts search valve, table of results pls`,
    },
    expected: parts.filter(([name]) => name?.toLowerCase().includes('valve')),
  },
  {
    name: 'news paged by "Older stories"',
    prompts: {
      careful: (url) => `Open ${url}/news and list the news stories from every page`,
      hurried: (url) => `${url}/news - all stories, keep going to the oldest`,
    },
    expected: stories,
  },
  {
    name: '"Show more" list, short class names',
    prompts: {
      careful: (url) => `Open ${url}/picks and list all the staff picks with their title, author and year`,
      hurried: (url) => `${url}/picks every pick (theres a show more btn)`,
    },
    expected: picks,
    fields: [['title', 'name'], ['author'], ['year']],
  },
  {
    name: '"Load more" button',
    prompts: {
      careful: (url) => `Open ${url}/products and list all the products with their prices`,
      hurried: (url) => `${url}/products all products + prices, load more till the end`,
    },
    expected: homeware,
  },
  {
    name: 'infinite scroll',
    prompts: {
      careful: (url) => `Open ${url}/feed and collect every post in the feed`,
      hurried: (url) => `scrape ${url}/feed, all posts (it loads more as u scroll)`,
    },
    expected: posts,
  },
  {
    name: 'numbered pager, current page a <span>',
    prompts: {
      careful: (url) => `Open ${url}/history and extract the orders from every page`,
      hurried: (url) => `${url}/history orders pls from every page`,
    },
    expected: history,
  },
  {
    name: 'pager with only "Next"',
    prompts: {
      careful: (url) => `Open ${url}/tickets and extract all the tickets, following the pages to the last one`,
      hurried: (url) => `${url}/tickets all tickets all pages`,
    },
    expected: tickets,
  },
  {
    name: 'rel=next links',
    prompts: {
      careful: (url) => `Open ${url}/blog and list every blog post from all pages`,
      hurried: (url) => `${url}/blog posts, all of em`,
    },
    expected: blogPosts,
  },
  {
    name: 'login without quotes → orders',
    prompts: {
      careful: (url) => `Open ${url}/store/signin, sign in as ada@example.com with password ${SECRET}, and extract my orders`,
      hurried: (url) => `${url}/store/signin login ada@example.com pw ${SECRET} orders pls`,
    },
    secret: SECRET,
    expected: storeOrders,
  },
  {
    name: 'single-quoted username login → events',
    prompts: {
      careful: (url) => `Open ${url}/club/login, log in as user 'grace' with the password '${SECRET}', and list the upcoming events`,
      hurried: (url) => `${url}/club/login user 'grace' pwd '${SECRET}' events`,
    },
    secret: SECRET,
    expected: events,
  },
  {
    name: 'table with row headers',
    prompts: {
      careful: (url) => `Open ${url}/planets and extract the planets table`,
      hurried: (url) => `planets table from ${url}/planets`,
    },
    expected: planets,
  },
  {
    name: 'several tbodies, a caption names the table',
    prompts: {
      careful: (url) => `Open ${url}/directory and extract the staff table`,
      hurried: (url) => `${url}/directory staff phone list`,
    },
    expected: staffByDepartment.flatMap(([, rows]) => rows),
  },
  {
    name: 'detail pages from a table (definition lists)',
    prompts: {
      careful: (url) => `Open ${url}/companies and read the details page of each company`,
      hurried: (url) => `${url}/companies open each company and grab its details`,
    },
    expected: companies,
  },
  {
    name: 'search with no keyword → all results',
    prompts: {
      careful: (url) => `Open ${url}/recipes, run the search with the search box left empty, and list all the recipes it finds`,
      hurried: (url) => `${url}/recipes search with nothing typed, all recipes`,
    },
    expected: recipes,
  },
  {
    name: 'page without what is asked',
    prompts: {
      careful: (url) => `Open ${url}/weather and extract the share prices table`,
      hurried: (url) => `${url}/weather stock prices pls`,
    },
    expected: [],
    goalMissing: true,
  },
];

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

export async function startShapesSite() {
  let cosmetic = false;
  const cls = (name: string) => (cosmetic ? `v2-${name} t-${name.length}` : name);
  /** A CSS selector for the class `cls(name)` gives (for the pages' own scripts). */
  const dot = (name: string) => `.${cosmetic ? `v2-${name}` : name}`;
  const page = (title: string, body: string, head = '') =>
    `<!doctype html><html><head><title>${title}</title>${head}</head><body><h1 class="${cls('title')}">${title}</h1>${
      cosmetic ? `<div class="shell"><section class="content">${body}</section></div>` : `<main>${body}</main>`
    }</body></html>`;
  const cells = (row: string[]) => row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('');
  const table = (id: string | null, caption: string | null, headers: string[], rows: string[][]) =>
    `<table${id ? ` id="${id}"` : ''} class="${cls('grid')}">${caption ? `<caption>${caption}</caption>` : ''}<thead><tr>${headers.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows
      .map((row) => `<tr>${cells(row)}</tr>`)
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

  // Items that pages add with their scripts: markup made here, with the classes of the moment.
  const pickItem = ([title, author, year]: string[]) =>
    `<li class="${cls('a')}"><b class="${cls('t')}">${escapeHtml(title as string)}</b><div class="${cls('r')}"><span class="${cls('k')}">Author</span> <span class="${cls('v')}">${escapeHtml(author as string)}</span></div><div class="${cls('r')}"><span class="${cls('k')}">Year</span> <span class="${cls('v')}">${escapeHtml(year as string)}</span></div></li>`;
  const homewareCard = ([name, price]: string[]) =>
    `<div class="${cls('card')}"><h3>${escapeHtml(name as string)}</h3><span class="${cls('price')}">${price}</span></div>`;
  const postItem = ([title, author]: string[]) =>
    `<article class="${cls('post')}" style="min-height:150px"><h2>${escapeHtml(title as string)}</h2><p class="${cls('author')}">${escapeHtml(author as string)}</p></article>`;

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    const n = Number(url.searchParams.get('page') ?? '1');
    const send = (html: string) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(html);
    };
    const sendJson = (value: unknown) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(value));
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

      // A form whose words say nothing of searching (keyword, category, "Find parts"); the results
      // table appears under it once it is submitted.
      case '/parts': {
        const keyword = url.searchParams.get('kw');
        const form = `<form action="/parts" class="${cls('finder')}"><label for="kw">Keyword</label><input id="kw" name="kw"><label for="cat">Category</label><select id="cat" name="cat"><option value="">All categories</option><option>Plumbing</option></select><button type="submit">Find parts</button></form>`;
        if (keyword === null) return send(page('Parts', `${form}<p class="${cls('hint')}">Find the part you need.</p>`));
        const found = parts.filter(([name]) => name?.toLowerCase().includes(keyword.toLowerCase()));
        return send(
          page(
            'Parts',
            `${form}<p class="${cls('count')}">${found.length} results</p>${table(null, null, ['Part', 'Price', 'In stock'], found)}`,
          ),
        );
      }
      // Paged by "Older stories" / "Newer stories" links, with no page numbers.
      case '/news': {
        const from = Math.max(0, Number(url.searchParams.get('from') ?? '0') || 0);
        const shown = stories.slice(from, from + STORIES_PER_PAGE);
        const newer = from > 0 ? `<a href="/news?from=${Math.max(0, from - STORIES_PER_PAGE)}">← Newer stories</a>` : '';
        const older = from + STORIES_PER_PAGE < stories.length ? `<a href="/news?from=${from + STORIES_PER_PAGE}">Older stories →</a>` : '';
        return send(
          page(
            'City news',
            `<div class="${cls('stories')}">${shown.map(([title, date]) => `<article class="${cls('story')}"><h2>${title}</h2><time datetime="${date}">${date}</time></article>`).join('')}</div><div class="${cls('more')}">${newer} ${older}</div>`,
          ),
        );
      }
      // Items with one-letter classes; the fields are named only by the labels in each item. The
      // "Show more" button fetches the next items and is removed when there are none left.
      case '/picks':
        return send(
          page(
            'Staff picks',
            `<ul class="${cls('l')}">${picks.slice(0, PICKS_PER_CLICK).map(pickItem).join('')}</ul><button type="button" class="${cls('b')}">Show more</button><script>
(() => {
  const list = document.querySelector(${JSON.stringify(dot('l'))});
  const button = document.querySelector(${JSON.stringify(dot('b'))});
  let shown = ${PICKS_PER_CLICK};
  button.addEventListener('click', async () => {
    button.disabled = true;
    const html = await (await fetch('/picks/more?offset=' + shown)).text();
    list.insertAdjacentHTML('beforeend', html);
    shown += ${PICKS_PER_CLICK};
    if (shown >= ${picks.length}) button.remove();
    else button.disabled = false;
  });
})();
</script>`,
          ),
        );
      case '/picks/more': {
        await delay(150);
        const offset = Number(url.searchParams.get('offset') ?? '0');
        return send(
          picks
            .slice(offset, offset + PICKS_PER_CLICK)
            .map(pickItem)
            .join(''),
        );
      }
      // A "Load more" button that appends cards from JSON, and hides itself after the last ones.
      case '/products':
        return send(
          page(
            'Home and kitchen',
            `<div id="products" class="${cls('cards')}">${homeware.slice(0, HOMEWARE_PER_LOAD).map(homewareCard).join('')}</div><button id="load-more" type="button" class="${cls('btn')}">Load more</button><script>
(() => {
  const grid = document.getElementById('products');
  const button = document.getElementById('load-more');
  let offset = ${HOMEWARE_PER_LOAD};
  button.addEventListener('click', async () => {
    const { html, more } = await (await fetch('/products/more?offset=' + offset)).json();
    grid.insertAdjacentHTML('beforeend', html);
    offset += ${HOMEWARE_PER_LOAD};
    if (!more) button.hidden = true;
  });
})();
</script>`,
          ),
        );
      case '/products/more': {
        await delay(150);
        const offset = Number(url.searchParams.get('offset') ?? '0');
        return sendJson({
          html: homeware
            .slice(offset, offset + HOMEWARE_PER_LOAD)
            .map(homewareCard)
            .join(''),
          more: offset + HOMEWARE_PER_LOAD < homeware.length,
        });
      }
      // Infinite scroll: the next posts load when the end of the feed scrolls into view.
      case '/feed':
        return send(
          page(
            'Feed',
            `<div id="feed" class="${cls('posts')}">${posts.slice(0, POSTS_PER_CHUNK).map(postItem).join('')}</div><p id="feed-end" class="${cls('end')}">Loading more…</p><script>
(() => {
  const feed = document.getElementById('feed');
  const end = document.getElementById('feed-end');
  let offset = ${POSTS_PER_CHUNK};
  let loading = false;
  const observer = new IntersectionObserver(async (entries) => {
    if (loading || !entries.some((entry) => entry.isIntersecting)) return;
    loading = true;
    const { html, more } = await (await fetch('/feed/more?offset=' + offset)).json();
    feed.insertAdjacentHTML('beforeend', html);
    offset += ${POSTS_PER_CHUNK};
    if (!more) {
      observer.disconnect();
      end.textContent = 'You are all caught up';
    }
    loading = false;
  });
  observer.observe(end);
})();
</script>`,
          ),
        );
      case '/feed/more': {
        await delay(200);
        const offset = Number(url.searchParams.get('offset') ?? '0');
        return sendJson({
          html: posts
            .slice(offset, offset + POSTS_PER_CHUNK)
            .map(postItem)
            .join(''),
          more: offset + POSTS_PER_CHUNK < posts.length,
        });
      }
      // Numbered pages; the current one is a <span>, not a link.
      case '/history': {
        const pages = Math.ceil(history.length / HISTORY_PER_PAGE);
        const numbers = Array.from({ length: pages }, (_, i) =>
          i + 1 === n
            ? `<span aria-current="page" class="${cls('current')}">${i + 1}</span>`
            : `<a href="/history?page=${i + 1}">${i + 1}</a>`,
        );
        return send(
          page(
            'Order history',
            `${table(null, null, ['Order', 'Placed', 'Total'], history.slice((n - 1) * HISTORY_PER_PAGE, n * HISTORY_PER_PAGE))}<nav class="${cls('pagination')}" aria-label="Pages">${numbers.join(' ')}</nav>`,
          ),
        );
      }
      // Only a "Next" link, which the last page does not have.
      case '/tickets': {
        const p = Number(url.searchParams.get('p') ?? '1');
        const next = p * TICKETS_PER_PAGE < tickets.length ? `<a href="/tickets?p=${p + 1}">Next</a>` : '';
        return send(
          page(
            'Support tickets',
            `${table('tickets', null, ['ID', 'Subject', 'Status'], tickets.slice((p - 1) * TICKETS_PER_PAGE, p * TICKETS_PER_PAGE))}<div class="${cls('pager')}">${next}</div>`,
          ),
        );
      }
    }
    // The blog: an arrow link marked rel=next (and a <link rel=next>) leads to the older posts.
    const blog = /^\/blog(?:\/page\/(\d+))?$/.exec(url.pathname);
    if (blog) {
      const p = Number(blog[1] ?? '1');
      const pages = Math.ceil(blogPosts.length / BLOG_PER_PAGE);
      if (p < 1 || p > pages) {
        res.writeHead(404);
        return res.end('not found');
      }
      const nextUrl = p < pages ? `/blog/page/${p + 1}` : null;
      const shown = blogPosts.slice((p - 1) * BLOG_PER_PAGE, p * BLOG_PER_PAGE);
      return send(
        page(
          'The blog',
          `${shown.map(([title, summary]) => `<article class="${cls('entry')}"><h2>${title}</h2><p>${summary}</p></article>`).join('')}${
            nextUrl ? `<a rel="next" href="${nextUrl}" class="${cls('arrow')}">→</a>` : ''
          }`,
          nextUrl ? `<link rel="next" href="${nextUrl}">` : '',
        ),
      );
    }
    switch (url.pathname) {
      case '/store/signin':
        return send(
          page(
            'Sign in to the store',
            `<form method="post" action="/store/session" class="${cls('signin')}"><label for="store-email">Email address</label><input id="store-email" name="email" type="email"><label for="store-password">Password</label><input id="store-password" name="password" type="password"><button type="submit">Continue</button></form>`,
          ),
        );
      case '/store/session': {
        const form = await readForm(req);
        const ok = form.get('email') === 'ada@example.com' && form.get('password') === SECRET;
        return ok ? redirect('/store/orders', 'store=ok') : redirect('/store/signin?failed=1');
      }
      case '/store/orders':
        if (!signedIn(req, 'store=ok')) return redirect('/store/signin');
        return send(page('My orders', table(null, null, ['Order', 'Date', 'Amount', 'Status'], storeOrders)));
      case '/club/login':
        return send(
          page(
            'Members',
            `<form method="post" action="/club/session" class="${cls('members')}"><label>User name <input name="user"></label><label>Password <input name="pass" type="password"></label><button type="submit">Enter</button></form>`,
          ),
        );
      case '/club/session': {
        const form = await readForm(req);
        const ok = form.get('user') === 'grace' && form.get('pass') === SECRET;
        return ok ? redirect('/club/events', 'club=ok') : redirect('/club/login?failed=1');
      }
      case '/club/events':
        if (!signedIn(req, 'club=ok')) return redirect('/club/login');
        return send(
          page(
            'Upcoming events',
            `<ul class="${cls('events')}">${events.map(([name, date, room]) => `<li class="${cls('event')}"><h3>${name}</h3><time>${date}</time><span class="${cls('room')}">${room}</span></li>`).join('')}</ul>`,
          ),
        );
      // The first cell of each row is a row header (<th scope=row>); the corner cell is empty.
      case '/planets':
        return send(
          page(
            'The planets',
            `<table class="${cls('data')}"><thead><tr><td></td><th scope="col">Moons</th><th scope="col">Mean radius (km)</th></tr></thead><tbody>${planets
              .map(([name, ...rest]) => `<tr><th scope="row">${name}</th>${cells(rest)}</tr>`)
              .join('')}</tbody></table>`,
          ),
        );
      // Two tables told apart by their captions; the staff table has one tbody per department.
      case '/directory':
        return send(
          page(
            'Directory',
            `${table(null, 'Opening hours', ['Day', 'Opens', 'Closes'], hours)}<table class="${cls('grid')}"><caption>Staff by department</caption><thead><tr><th>Name</th><th>Department</th><th>Phone</th></tr></thead>${staffByDepartment
              .map(([, rows]) => `<tbody>${rows.map((row) => `<tr>${cells(row)}</tr>`).join('')}</tbody>`)
              .join('')}</table>`,
          ),
        );
      // A table whose names link to detail pages, each a definition list.
      case '/companies':
        return send(
          page(
            'Companies',
            `<table id="companies" class="${cls('grid')}"><thead><tr><th>Company</th><th>City</th></tr></thead><tbody>${companies
              .map(([name, city]) => `<tr><td><a href="/companies/${slug(name as string)}">${name}</a></td><td>${city}</td></tr>`)
              .join('')}</tbody></table>`,
          ),
        );
      // A search that, submitted empty, lists every recipe; nothing is listed before it is submitted.
      case '/recipes': {
        const query = url.searchParams.get('q');
        const form = `<form action="/recipes" role="search" class="${cls('search')}"><input type="search" name="q" aria-label="Search recipes"><button type="submit">Search</button></form>`;
        if (query === null) return send(page('Recipes', `${form}<p>Leave the box empty to see every recipe.</p>`));
        const found = recipes.filter(([name]) => name?.toLowerCase().includes(query.toLowerCase()));
        return send(
          page(
            'Recipes',
            `${form}<ul id="recipes" class="${cls('recipes')}">${found.map(([name, time]) => `<li class="${cls('recipe')}"><h3>${name}</h3><span class="${cls('time')}">${time}</span></li>`).join('')}</ul>`,
          ),
        );
      }
      // No share prices here: a forecast table and a newsletter form.
      case '/weather':
        return send(
          page(
            'Weather',
            `${table('forecast', 'Five-day forecast', ['Day', 'High (°C)', 'Low (°C)', 'Sky'], forecast)}<form method="post" action="/weather/subscribe" class="${cls('newsletter')}"><label for="news-email">Email</label><input id="news-email" name="email" type="email"><button type="submit">Subscribe</button></form>`,
          ),
        );
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
    if (url.pathname.startsWith('/companies/')) {
      const company = companies.find(([name]) => slug(name as string) === url.pathname.split('/')[2]);
      if (company) {
        const [name, city, founded, staff] = company;
        return send(
          page(
            name as string,
            `<dl class="${cls('facts')}"><dt>City</dt><dd>${city}</dd><dt>Founded</dt><dd>${founded}</dd><dt>Employees</dt><dd>${staff}</dd></dl><p><a href="/companies">All companies</a></p>`,
          ),
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
