/**
 * `node bench/support/checkHeldout2Pages.ts`: checks the second held-out set's pages
 * (bench/support/heldoutShapes2.ts) themselves, before and after the cosmetic redesign, without any
 * analysis and without scoring anything. In Chromium it does on each page what a user would (switch
 * to yearly billing, tick filters, open every colour, dismiss the cookie dialog, search, sign in,
 * page on…), reads the records with selectors of its own (no classes, so they hold after the
 * redesign) and asserts that they are the shape's expected records, in order. On the pages without
 * what is asked, it asserts that the page's whole text lacks it, and holds what looks like it.
 * It also checks the set itself: 20 shapes, two prompts each naming the page, names new to the
 * benchmark. What it shares with the next sets' checkers is bench/support/heldoutPageCheck.ts.
 */
import { type Absence, checkHeldoutPages, norm, type Read, rows } from './heldoutPageCheck.ts';
import { heldoutShapes } from './heldoutShapes.ts';
import { heldoutShapes2, startHeldout2Site } from './heldoutShapes2.ts';
import { SECRET, shapes as tunedShapes } from './shapes.ts';

/** How a user reaches each present shape's records, by shape name. */
const readers: Record<string, Read> = {
  'plan cards, yearly prices behind a billing switch': async (page, url) => {
    await page.goto(`${url}/pricing`);
    await page.getByLabel('Yearly').check();
    await page.waitForFunction(() => document.querySelector('[data-per]')?.textContent === '/year');
    return rows(page, 'main h2 + p', ['span:first-child']).then(async (prices) => {
      const names = await page.$$eval('main h2', (headings) => headings.map((heading) => heading.textContent ?? ''));
      return names.map((name, i) => [name, prices[i]?.[0] ?? '']);
    });
  },
  'job board, remote engineering roles by filters': async (page, url) => {
    await page.goto(`${url}/careers`);
    await page.getByLabel('Engineering').check();
    await page.getByLabel('Remote only').check();
    return rows(page, '#job-list > li', ['h3', 'p:nth-of-type(1)', 'p:nth-of-type(2)']);
  },
  'changelog, fixes under their version heading': async (page, url) => {
    await page.goto(`${url}/changelog`);
    return page.$$eval('main section', (sections) =>
      sections.flatMap((section) => {
        const version = section.querySelector('h2 > span')?.textContent ?? '';
        return [...section.querySelectorAll('li')]
          .filter((li) => li.querySelector('span:first-child')?.textContent === 'Fixed')
          .map((li) => [version, li.querySelector('span:last-child')?.textContent ?? '']);
      }),
    );
  },
  'FAQ of closed <details> elements': async (page, url) => {
    await page.goto(`${url}/help/faq`);
    for (const summary of await page.locator('summary').all()) await summary.click();
    if (await page.locator('details:not([open])').count()) throw new Error('a question did not open');
    return rows(page, 'details', ['summary', 'p']);
  },
  'product colours, each swatch sets price and stock': async (page, url) => {
    await page.goto(`${url}/home/nordic-wool-throw`);
    const all: string[][] = [];
    for (const swatch of await page.getByRole('group', { name: 'Colour' }).getByRole('button').all()) {
      await swatch.click();
      const name = await swatch.getAttribute('aria-label');
      await page.waitForFunction((colour) => document.getElementById('colour-name')?.textContent === colour, name);
      all.push([
        norm(await page.locator('#colour-name').textContent()),
        norm(await page.locator('#price').textContent()),
        norm(await page.locator('#stock').textContent()),
      ]);
    }
    return all;
  },
  'forum thread with nested replies': async (page, url) => {
    await page.goto(`${url}/forum/t/8841`);
    return rows(page, 'article', [':scope > header > a', ':scope > header > time', ':scope > div > p']);
  },
  'league standings under a cloned sticky header': async (page, url) => {
    await page.goto(`${url}/league/table`);
    if ((await page.locator('table thead').count()) !== 2) throw new Error('the cloned header is missing');
    return rows(page, 'table:not([aria-hidden]) tbody tr', ['td:nth-child(1)', 'th', 'td:nth-child(3)', 'td:nth-child(8)']);
  },
  'property grid paged by "Next →" links': async (page, url) => {
    await page.goto(`${url}/property/for-sale`);
    const all: string[][] = [];
    for (let pages = 0; pages < 10; pages++) {
      all.push(...(await rows(page, 'main a[href^="/property/"]:has(h3)', ['h3', 'p', 'li:first-child'])));
      const next = page.getByRole('link', { name: 'Next →' });
      if (!(await next.count())) break;
      const before = page.url();
      await next.click();
      await page.waitForURL((address) => address.toString() !== before);
    }
    return all;
  },
  'statement table split by month rows': async (page, url) => {
    await page.goto(`${url}/banking/statement`);
    return rows(page, 'tbody tr:has(td)', ['td:nth-child(1)', 'td:nth-child(2)', 'td:nth-child(3)']);
  },
  'exchange rates fetched after a delay': async (page, url) => {
    await page.goto(`${url}/travel-money/rates`);
    if (await page.locator('#rates table').count()) throw new Error('the table is there before its answer');
    await page.locator('#rates tbody tr').first().waitFor({ timeout: 10_000 });
    return rows(page, '#rates tbody tr', ['td:nth-child(1)', 'td:nth-child(2)', 'td:nth-child(3)', 'td:nth-child(4)']);
  },
  'cookie dialog over a "Show all" button': async (page, url) => {
    await page.goto(`${url}/recipes/weeknight`);
    const showAll = page.getByRole('button', { name: /^Show all/ });
    // The dialog covers the button: a click without dismissing it fails.
    const blocked = await showAll.click({ timeout: 1500 }).then(
      () => false,
      () => true,
    );
    if (!blocked) throw new Error('the cookie dialog did not block the "Show all" button');
    await page.getByRole('button', { name: 'Reject non-essential' }).click();
    await showAll.click();
    await showAll.waitFor({ state: 'detached' });
    return rows(page, '#recipes > li', ['a', ':scope > span > span:last-child']);
  },
  'catalogue search, results on a new address': async (page, url) => {
    await page.goto(`${url}/library`);
    await page.getByLabel('Search the catalogue').fill('orchids');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/library\/search\?q=orchids/);
    // The search is as forgiving as a catalogue's: the singular finds the same books.
    const plural = await rows(page, 'main ol > li', ['h3', 'p:nth-of-type(1) > span', 'p:nth-of-type(2) > span']);
    await page.goto(`${url}/library/search?q=Orchid`);
    const singular = await rows(page, 'main ol > li', ['h3', 'p:nth-of-type(1) > span', 'p:nth-of-type(2) > span']);
    if (JSON.stringify(plural) !== JSON.stringify(singular)) throw new Error('"Orchid" and "orchids" find other books');
    return plural;
  },
  'e-mail sign-in, then a dashboard of subscriptions': async (page, url) => {
    await page.goto(`${url}/account/dashboard`);
    if (!page.url().endsWith('/account/sign-in')) throw new Error('the dashboard is open without signing in');
    await page.getByLabel('Email').fill('noor@example.com');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    if (!(await page.getByRole('alert').count())) throw new Error('a wrong password signed in');
    await page.getByLabel('Password').fill(SECRET);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/account\/dashboard$/);
    return rows(page, 'section:has(#subs-h) tbody tr', ['td:nth-child(1)', 'td:nth-child(2)', 'td:nth-child(3)']);
  },
  'one profile as a definition list': async (page, url) => {
    await page.goto(`${url}/directory/amara-osei`);
    const value = (term: string) => page.locator('dt', { hasText: term }).locator('xpath=following-sibling::dd[1]').textContent();
    return [
      [
        norm(await page.locator('h1').textContent()),
        norm(await value('Job title')),
        norm(await value('Email')),
        norm(await value('Phone')),
      ],
    ];
  },
  'tickets paged by icon buttons and "Page 1 of 5"': async (page, url) => {
    await page.goto(`${url}/helpdesk/tickets`);
    const ready = () => page.locator('#tickets[aria-busy=false]').waitFor();
    await ready();
    if (norm(await page.locator('main div:has(#page-number) > span').textContent()) !== 'Page of 5')
      throw new Error('the pager does not read "Page … of 5"');
    const all = await rows(page, '#tickets > li', ['span:first-child', 'a', 'span:last-child']);
    while (await page.getByRole('button', { name: 'Next page' }).isEnabled()) {
      const before = await page.locator('#page-number').inputValue();
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.waitForFunction((was) => (document.getElementById('page-number') as HTMLInputElement).value !== was, before);
      await ready();
      all.push(...(await rows(page, '#tickets > li', ['span:first-child', 'a', 'span:last-child'])));
    }
    return all;
  },
  'comparison table, the items are its columns': async (page, url) => {
    await page.goto(`${url}/compare/phones`);
    return page.$eval('main table', (table) => {
      const names = [...table.querySelectorAll('thead th')].map((th) => th.textContent ?? '');
      const row = (label: string) =>
        [...table.querySelectorAll('tbody tr')].find((tr) => tr.querySelector('th')?.textContent === label)?.querySelectorAll('td') ?? [];
      const prices = [...row('Price')].map((td) => td.textContent ?? '');
      const batteries = [...row('Battery')].map((td) => td.textContent ?? '');
      return names.map((name, i) => [name, prices[i] ?? '', batteries[i] ?? '']);
    });
  },
  'menu tabs, each replacing the one panel': async (page, url) => {
    await page.goto(`${url}/restaurant/menu`);
    const all: string[][] = [];
    for (const tab of await page.getByRole('tab').all()) {
      await tab.click();
      await page.waitForFunction(
        (id) => document.getElementById('menu-panel')?.getAttribute('aria-labelledby') === id,
        await tab.getAttribute('id'),
      );
      all.push(...(await rows(page, '#menu-panel li', ['div > span:first-child', 'div > span:last-child'])));
    }
    if ((await page.locator('#menu-panel li').count()) === all.length) throw new Error('the tabs do not replace the panel');
    return all;
  },
};

/** On each page without what is asked: where it is, what its text must not hold, and what must look like it. */
const absent: Record<string, Absence> = {
  'gate numbers asked, arrivals board with baggage belts': { path: '/airport/arrivals', lacks: /gate/i, holds: /<th>Belt<\/th>/ },
  'calories asked, recipe without nutrition': {
    path: '/recipes/red-lentil-soup',
    lacks: /calor|kcal|\bkj\b|joule|nutrition|energy|\bfat\b|protein/i,
    holds: /Serves 4[\s\S]*400 g dried red lentils/,
  },
  'social handles asked, speakers without them': {
    path: '/conference/speakers',
    lacks: /twitter|x\.com|@|handle|mastodon|bluesky|linkedin|social/i,
    holds: /Ruth Okonkwo[\s\S]*Tidewater Labs/,
  },
};

await checkHeldoutPages({
  shapes: heldoutShapes2,
  earlier: [tunedShapes, heldoutShapes],
  minMissing: 3,
  startSite: startHeldout2Site,
  readers,
  absent,
});
