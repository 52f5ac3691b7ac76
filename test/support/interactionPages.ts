import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PAGE_HOST } from './pages.ts';

/**
 * Pages whose data sits behind an interaction, or in a shape other than a table, served on an
 * address of their own (./pages.ts), for the analysis → generation → run tests of
 * test/agents/analysis-interactions.test.ts:
 *
 * - `/trails`: 26 pages of 2 trails, paged by a "Next »" link: more pages than an analysis has steps;
 * - `/seeds`: seed packets, 4 shown and a "View 4 more" button that appends 4 and is removed at the end;
 * - `/quotes`: a list and a "Show more" button that appends 3 and is hidden at the end;
 * - `/stock`: a dropdown of categories whose change event fills the list of products;
 * - `/plans`: a table per tab ("Monthly", "Yearly"), the second one's panel hidden;
 * - `/help`: accordions (`<details>`), one holding the opening hours table;
 * - `/offices`: a list of definition lists (office, phone, opens), no e-mail anywhere;
 * - `/plants`: cards whose names are their titles;
 * - `/rates`: a table of exchange rates (and nothing about savings accounts).
 */
export const trails = Array.from({ length: 52 }, (_, index) => ({
  name: `Trail ${String(index + 1).padStart(2, '0')}`,
  length: `${(index % 9) + 2} km`,
}));
export const seeds = Array.from({ length: 18 }, (_, index) => ({ name: `Seed packet ${index + 1}`, price: `$${index + 1}.50` }));
export const quotes = Array.from({ length: 11 }, (_, index) => ({
  text: `Quote number ${index + 1}`,
  author: `Author ${String.fromCharCode(65 + index)}`,
}));
export const stock: Record<string, string[][]> = {
  kitchen: [
    ['Kettle', '$30.00'],
    ['Teapot', '$18.00'],
    ['Whisk', '$4.50'],
  ],
  garden: [
    ['Rake', '$22.00'],
    ['Trowel', '$9.00'],
    ['Hose', '$35.00'],
    ['Shears', '$27.00'],
  ],
};
export const plans = {
  monthly: [
    ['Basic', '$5.00'],
    ['Team', '$15.00'],
    ['Business', '$40.00'],
  ],
  yearly: [
    ['Basic', '$50.00'],
    ['Team', '$150.00'],
    ['Business', '$400.00'],
  ],
};
export const hours = [
  ['Monday', '09:00', '17:00'],
  ['Tuesday', '09:00', '17:00'],
  ['Saturday', '10:00', '14:00'],
];
export const offices = [
  { office: 'Harbour', phone: '+44 20 7946 0101', opens: '09:00' },
  { office: 'Market Square', phone: '+44 20 7946 0102', opens: '08:30' },
  { office: 'Old Mill', phone: '+44 20 7946 0103', opens: '10:00' },
  { office: 'Station Road', phone: '+44 20 7946 0104', opens: '09:30' },
];
export const plants = [
  ['Monstera', '12', 'Large split leaves'],
  ['Pothos', '30', 'Trails from a shelf'],
  ['Calathea', '7', 'Patterned leaves that fold at night'],
  ['Fern', '15', 'Likes a damp bathroom'],
];

/** A menu in closed `<details>`, one per course; no request names a course. */
export const menu: [string, string[][]][] = [
  [
    'Starters',
    [
      ['Leek soup', '£6.00'],
      ['Smoked trout pâté', '£8.50'],
    ],
  ],
  [
    'Mains',
    [
      ['Mushroom pie', '£14.00'],
      ['Hake with greens', '£17.50'],
      ['Lamb hotpot', '£16.00'],
    ],
  ],
  [
    'Puddings',
    [
      ['Treacle tart', '£7.00'],
      ['Apple crumble', '£6.50'],
    ],
  ],
];

/** Practices a form finds, by the animal chosen, once a postcode is given. */
export const vets: Record<string, string[][]> = {
  cats: [['Whisker Clinic', '01904 960 101', '0.8 miles']],
  horses: [
    ['Ouse Equine', '01904 960 210', '2.1 miles'],
    ['Minster Farm Vets', '01904 960 322', '4.6 miles'],
    ['Vale Horse Practice', '01904 960 487', '7.9 miles'],
  ],
};

const PER_TRAIL_PAGE = 2;
const document = (title: string, body: string, script = '') =>
  `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${body}${script ? `<script>${script}</script>` : ''}</body></html>`;

export async function startInteractionSite() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    const send = (body: string, type = 'text/html; charset=utf-8') => {
      res.setHeader('content-type', type);
      res.end(body);
    };
    const later = (body: string) => setTimeout(() => send(body, 'application/json'), 120);
    switch (url.pathname) {
      case '/trails': {
        const pages = trails.length / PER_TRAIL_PAGE;
        const page = Math.min(pages, Math.max(1, Number(url.searchParams.get('page') ?? '1') || 1));
        const shown = trails.slice((page - 1) * PER_TRAIL_PAGE, page * PER_TRAIL_PAGE);
        return send(
          document(
            'Walking trails',
            `<ul class="trails">${shown.map((trail) => `<li><h3>${trail.name}</h3><span class="len">${trail.length}</span></li>`).join('')}</ul>${
              page < pages ? `<p class="pager"><a href="/trails?page=${page + 1}">Next »</a></p>` : ''
            }`,
          ),
        );
      }
      case '/seeds/more': {
        const offset = Number(url.searchParams.get('offset') ?? '0');
        return later(JSON.stringify({ items: seeds.slice(offset, offset + 4), done: offset + 4 >= seeds.length }));
      }
      case '/seeds':
        return send(
          document(
            'Seed packets',
            `<div class="packets">${seeds
              .slice(0, 4)
              .map((seed) => `<div class="packet"><h2>${seed.name}</h2><b class="price">${seed.price}</b></div>`)
              .join('')}</div><button type="button" id="more">View 4 more</button>`,
            `let offset = 4;
document.getElementById('more').addEventListener('click', async () => {
  const answer = await (await fetch('/seeds/more?offset=' + offset)).json();
  offset += answer.items.length;
  for (const seed of answer.items) {
    const card = document.createElement('div');
    card.className = 'packet';
    card.innerHTML = '<h2></h2><b class="price"></b>';
    card.querySelector('h2').textContent = seed.name;
    card.querySelector('b').textContent = seed.price;
    document.querySelector('.packets').append(card);
  }
  if (answer.done) document.getElementById('more').remove();
});`,
          ),
        );
      case '/quotes/more': {
        const offset = Number(url.searchParams.get('offset') ?? '0');
        return later(JSON.stringify({ items: quotes.slice(offset, offset + 3), done: offset + 3 >= quotes.length }));
      }
      case '/quotes':
        return send(
          document(
            'Quotes of the week',
            `<ol class="quotes">${quotes
              .slice(0, 3)
              .map((quote) => `<li><q>${quote.text}</q> <cite>${quote.author}</cite></li>`)
              .join('')}</ol><div class="foot"><button type="button" class="show">Show more</button></div>`,
            `let offset = 3;
const button = document.querySelector('button.show');
button.addEventListener('click', async () => {
  const answer = await (await fetch('/quotes/more?offset=' + offset)).json();
  offset += answer.items.length;
  for (const quote of answer.items) {
    const item = document.createElement('li');
    item.innerHTML = '<q></q> <cite></cite>';
    item.querySelector('q').textContent = quote.text;
    item.querySelector('cite').textContent = quote.author;
    document.querySelector('ol.quotes').append(item);
  }
  if (answer.done) button.style.display = 'none';
});`,
          ),
        );
      case '/stock/items':
        return later(JSON.stringify(stock[url.searchParams.get('category') ?? ''] ?? []));
      case '/stock':
        return send(
          document(
            'Shop stock',
            `<label for="category">Category</label> <select id="category"><option value="">Choose…</option><option value="kitchen">Kitchen</option><option value="garden">Garden</option></select><ul id="products"></ul>`,
            `document.getElementById('category').addEventListener('change', async (event) => {
  const rows = await (await fetch('/stock/items?category=' + event.target.value)).json();
  const list = document.getElementById('products');
  list.innerHTML = '';
  for (const [name, price] of rows) {
    const item = document.createElement('li');
    item.innerHTML = '<span class="name"></span> <span class="price"></span>';
    item.querySelector('.name').textContent = name;
    item.querySelector('.price').textContent = price;
    list.append(item);
  }
});`,
          ),
        );
      case '/plans': {
        const table = (id: string, rows: string[][]) =>
          `<table id="${id}"><thead><tr><th>Plan</th><th>Price</th></tr></thead><tbody>${rows.map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
        return send(
          document(
            'Pricing',
            `<div role="tablist"><button role="tab" id="tab-monthly" aria-selected="true" aria-controls="monthly">Monthly</button><button role="tab" id="tab-yearly" aria-selected="false" aria-controls="yearly">Yearly</button></div>
<div role="tabpanel" id="monthly">${table('monthly-plans', plans.monthly)}</div><div role="tabpanel" id="yearly" hidden>${table('yearly-plans', plans.yearly)}</div>`,
            `for (const tab of document.querySelectorAll('[role=tab]')) tab.addEventListener('click', () => {
  for (const other of document.querySelectorAll('[role=tab]')) {
    other.setAttribute('aria-selected', String(other === tab));
    document.getElementById(other.getAttribute('aria-controls')).hidden = other !== tab;
  }
});`,
          ),
        );
      }
      case '/help':
        return send(
          document(
            'Help',
            `<details><summary>Delivery</summary><p>We deliver on weekdays.</p></details><details><summary>Opening hours</summary><table id="hours"><thead><tr><th>Day</th><th>Opens</th><th>Closes</th></tr></thead><tbody>${hours
              .map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join('')}</tr>`)
              .join('')}</tbody></table></details><details><summary>Returns</summary><p>Within 30 days.</p></details>`,
          ),
        );
      case '/menu':
        return send(
          document(
            'Menu',
            `<p>Served from noon.</p>${menu
              .map(
                ([course, dishes]) =>
                  `<details><summary>${course}</summary><ul>${dishes.map(([dish, price]) => `<li><b>${dish}</b> <span>${price}</span></li>`).join('')}</ul></details>`,
              )
              .join('')}`,
          ),
        );
      case '/vets': {
        const postcode = url.searchParams.get('postcode') ?? '';
        const animal = url.searchParams.get('animal') ?? '';
        const found = postcode ? vets[animal] : undefined;
        return send(
          document(
            'Find a vet',
            `<form action="/vets"><label for="postcode">Your postcode</label> <input id="postcode" name="postcode" required> <label for="animal">Animal</label> <select id="animal" name="animal"><option value="">Choose…</option><option value="cats">Cats</option><option value="horses">Horses</option></select> <button>Search</button></form>${
              found
                ? `<h2>Vets for ${animal} near ${postcode}</h2><table><thead><tr><th>Practice</th><th>Phone</th><th>Distance</th></tr></thead><tbody>${found
                    .map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join('')}</tr>`)
                    .join('')}</tbody></table>`
                : ''
            }`,
          ),
        );
      }
      case '/offices':
        return send(
          document(
            'Our offices',
            `<section class="offices">${offices
              .map(
                (office) =>
                  `<dl><dt>Office</dt><dd>${office.office}</dd><dt>Phone</dt><dd>${office.phone}</dd><dt>Opens</dt><dd>${office.opens}</dd></dl>`,
              )
              .join('')}</section>`,
          ),
        );
      case '/plants':
        return send(
          document(
            'Plants in stock',
            `<div class="grid">${plants.map(([name, count, note]) => `<div class="card"><h3>${name}</h3><span class="count">${count}</span><p>${note}</p></div>`).join('')}</div>`,
          ),
        );
      case '/rates':
        return send(
          document(
            'Exchange rates',
            `<table id="rates"><caption>Exchange rates today</caption><thead><tr><th>Currency</th><th>Rate</th></tr></thead><tbody>${[
              ['EUR', '1.1634'],
              ['GBP', '1.2710'],
              ['JPY', '0.0068'],
              ['CHF', '1.1302'],
            ]
              .map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join('')}</tr>`)
              .join('')}</tbody></table>`,
          ),
        );
    }
    res.statusCode = 404;
    send(document('Not found', '<p>Nothing here.</p>'));
  });
  return new Promise<{ url: string; close: () => Promise<void> }>((resolve) =>
    server.listen(0, PAGE_HOST, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${PAGE_HOST}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    }),
  );
}
