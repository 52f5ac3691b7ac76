/**
 * `node bench/support/checkHeldout3Pages.ts`: checks the third held-out set's pages
 * (bench/support/heldoutShapes3.ts) themselves, before and after the cosmetic redesign, without any
 * analysis and without scoring anything. In Chromium it does on each page what a user would (step
 * through the carousel until it comes round again, scroll the virtualised grid, open each course's
 * dialog, fill in the parcel wizard, look into the shadow root and the iframe, page by the address,
 * scroll to the end, press "Load more results" until it is gone, expand the tree's areas with the
 * keyboard…), reads the records with selectors of its own (no classes, so they hold after the
 * redesign) and asserts that they are the shape's expected records, in order. On the pages without
 * what is asked, it asserts that the page's whole text lacks it, and holds what looks like it. It
 * also checks the set itself (bench/support/heldoutPageCheck.ts).
 */
import { type Absence, checkHeldoutPages, norm, type Read, rows } from './heldoutPageCheck.ts';
import { heldoutShapes } from './heldoutShapes.ts';
import { heldoutShapes2 } from './heldoutShapes2.ts';
import { heldoutShapes3, startHeldout3Site } from './heldoutShapes3.ts';
import { shapes as tunedShapes } from './shapes.ts';

/** How a user reaches each present shape's records, by shape name. */
const readers: Record<string, Read> = {
  'tide table under merged header rows': async (page, url) => {
    await page.goto(`${url}/tides/port-elsworth`);
    if ((await page.locator('thead tr').count()) !== 2 || (await page.locator('thead th[colspan="2"]').count()) !== 2)
      throw new Error('the header is not two rows of merged cells');
    return rows(page, 'tbody tr', ['th', 'td:nth-of-type(1)', 'td:nth-of-type(2)']);
  },
  'board games cloned from a <template>': async (page, url) => {
    await page.goto(`${url}/cafe/games`);
    if ((await page.locator('template').count()) !== 1) throw new Error('no <template>');
    return rows(page, '#library > li', ['h3', '[data-field=players]', '[data-field=time]']);
  },
  'walking routes as cards and JSON-LD': async (page, url) => {
    await page.goto(`${url}/walks/peak-district`);
    const visible = await page.$$eval('main article', (articles) =>
      articles.map((article) => {
        const value = (term: string) =>
          [...article.querySelectorAll('dt')].find((dt) => dt.textContent === term)?.nextElementSibling?.textContent ?? '';
        return [article.querySelector('h2')?.textContent ?? '', value('Distance'), value('Ascent')];
      }),
    );
    const linked = await page.$eval('script[type="application/ld+json"]', (script) =>
      (
        JSON.parse(script.textContent ?? '{}') as {
          itemListElement: { item: { name: string; additionalProperty: { name: string; value: string }[] } }[];
        }
      ).itemListElement.map(({ item }) => [
        item.name,
        ...['Distance', 'Ascent'].map((name) => item.additionalProperty.find((property) => property.name === name)?.value ?? ''),
      ]),
    );
    if (JSON.stringify(visible) !== JSON.stringify(linked)) throw new Error('the JSON-LD and the cards disagree');
    return visible;
  },
  'exhibitions in a looping one-slide carousel': async (page, url) => {
    await page.goto(`${url}/gallery/whats-showing`);
    const all: string[][] = [];
    const slide = () => page.locator('[aria-roledescription=slide]');
    for (let i = 0; i < 20; i++) {
      if ((await slide().count()) !== 1) throw new Error('not one slide at a time');
      const position = await slide().getAttribute('aria-label');
      if (i > 0 && position === '1 of 5') break;
      all.push(await rows(page, '[aria-roledescription=slide]', ['h2', 'h2 + p']).then((found) => found[0] ?? []));
      await page.getByRole('button', { name: 'Next exhibition' }).click();
      await page.waitForFunction(
        (was) => document.querySelector('[aria-roledescription=slide]')?.getAttribute('aria-label') !== was,
        position,
      );
    }
    return all;
  },
  'seed varieties in a virtualised grid': async (page, url) => {
    await page.goto(`${url}/seeds/varieties`);
    const byIndex = new Map<number, string[]>();
    const total = Number(await page.getByRole('grid').getAttribute('aria-rowcount')) - 1;
    for (let step = 0; step < 100; step++) {
      const found = await page.$$eval('#seed-rows [role=row]', (found) =>
        found.map((row) => [
          row.getAttribute('aria-rowindex') ?? '',
          ...[...row.querySelectorAll('[role=gridcell]')].map((cell) => cell.textContent ?? ''),
        ]),
      );
      for (const [index, variety, crop, sow] of found) byIndex.set(Number(index), [variety ?? '', crop ?? '', sow ?? '']);
      if (step === 0 && found.length >= total) throw new Error('every row is in the DOM: the grid is not virtualised');
      const done = await page.$eval(
        '#seed-viewport',
        (viewport) => viewport.scrollTop + viewport.clientHeight >= viewport.scrollHeight - 1,
      );
      if (done) break;
      await page.$eval('#seed-viewport', (viewport) => {
        viewport.scrollTop += 200;
      });
      // The grid renders on the next animation frame after the scroll event.
      await page.waitForTimeout(150);
    }
    return [...byIndex.keys()].sort((a, b) => a - b).map((index) => byIndex.get(index) as string[]);
  },
  'climbing workshops, price and length in a modal dialog': async (page, url) => {
    await page.goto(`${url}/climbing/workshops`);
    const all: string[][] = [];
    for (const button of await page.getByRole('button', { name: 'View details' }).all()) {
      await button.click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      all.push([
        norm(await dialog.locator('h2').textContent()),
        norm(await dialog.locator('#dialog-price').textContent()),
        norm(await dialog.locator('#dialog-duration').textContent()),
      ]);
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'hidden' });
    }
    return all;
  },
  'parcel quote wizard, destination then size': async (page, url) => {
    await page.goto(`${url}/send-a-parcel`);
    await page.getByRole('button', { name: 'Continue' }).click();
    if (!(await page.getByRole('alert').isVisible())) throw new Error('the wizard went on without a country');
    await page.getByLabel('Destination country').selectOption({ label: 'Spain' });
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('radio', { name: /^Medium \(/ }).check();
    await page.getByRole('button', { name: 'See prices' }).click();
    await page.locator('#quote-options li').first().waitFor();
    return rows(page, '#quote-options li', ['h3', 'p:nth-of-type(1)', 'p:nth-of-type(2)']);
  },
  'bike-share stations in a shadow root': async (page, url) => {
    await page.goto(`${url}/bikes/stations`);
    if (await page.evaluate(() => document.querySelectorAll('li').length)) throw new Error('the stations are in the light DOM');
    // Playwright's CSS selectors look into open shadow roots.
    return rows(page, 'station-list li', ['h3', 'p:nth-of-type(1) data', 'p:nth-of-type(2) data']);
  },
  'term dates in a same-origin iframe': async (page, url) => {
    await page.goto(`${url}/school/term-dates`);
    if (await page.locator('main table').count()) throw new Error('the table is in the page, not in the iframe');
    const frame = page.frame({ url: /\/school\/embed\/term-dates$/ });
    if (!frame) throw new Error('no iframe of term dates');
    await frame.waitForLoadState();
    return rows(frame, 'tbody tr', ['td:nth-child(1)', 'td:nth-child(2)', 'td:nth-child(3)']);
  },
  'second-hand records paged by ?offset=': async (page, url) => {
    await page.goto(`${url}/records/second-hand`);
    const all: string[][] = [];
    for (let pages = 0; pages < 10; pages++) {
      all.push(...(await rows(page, 'main ul > li', ['p:first-of-type', 'h2', 'p:last-of-type'])));
      const next = page.getByRole('link', { name: 'Next page' });
      if (!(await next.count())) break;
      await next.click();
      await page.waitForURL(new RegExp(`offset=${(pages + 1) * 8}$`));
    }
    // The page select's form lands on the same pages.
    await page.getByLabel('Page', { exact: true }).selectOption({ label: '2' });
    await page.getByRole('button', { name: 'Go' }).click();
    await page.waitForURL(/offset=8$/);
    const second = await rows(page, 'main ul > li', ['p:first-of-type', 'h2', 'p:last-of-type']);
    if (JSON.stringify(second) !== JSON.stringify(all.slice(8, 16))) throw new Error('the page select lands elsewhere');
    return all;
  },
  'planning applications behind an infinite-scroll sentinel': async (page, url) => {
    await page.setViewportSize({ width: 1000, height: 700 });
    await page.goto(`${url}/planning/applications`);
    const first = await page.locator('#applications > li').count();
    for (let i = 0; i < 30 && !(await page.getByText('You have reached the end of the list.').count()); i++) {
      await page.mouse.wheel(0, 2000);
      await page.waitForTimeout(300);
    }
    if (!(await page.getByText('You have reached the end of the list.').count())) throw new Error('the list never ended');
    const all = await rows(page, '#applications > li', ['h2', 'h2 + p', 'strong']);
    if (first >= all.length) throw new Error('nothing was added on scrolling');
    return all;
  },
  'race results grown by "Load more results"': async (page, url) => {
    await page.goto(`${url}/results/riverside-marathon`);
    const more = page.getByRole('button', { name: 'Load more results' });
    for (let i = 0; i < 20 && (await more.count()); i++) {
      const before = await page.locator('tbody tr').count();
      await more.click();
      await page.waitForFunction((was) => document.querySelectorAll('tbody tr').length > was, before);
    }
    return rows(page, 'tbody tr', ['td:nth-child(1)', 'td:nth-child(3)', 'td:nth-child(4)']);
  },
  'ski lifts in an ARIA tree loaded per area': async (page, url) => {
    await page.goto(`${url}/resort/lift-status`);
    if (await page.locator('[role=group] > li').count()) throw new Error('the lifts are there before an area is expanded');
    const areas = page.locator('[role=tree] > [role=treeitem]');
    await areas.first().focus();
    const count = await areas.count();
    for (let i = 0; i < count; i++) {
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction((n) => {
        const area = document.querySelectorAll('[role=tree] > [role=treeitem]')[n];
        return area?.getAttribute('aria-busy') === 'false' && area.querySelector('[role=group] > li');
      }, i);
      if (i + 1 < count) await page.keyboard.press('ArrowDown');
    }
    return page.$$eval('[role=tree] > [role=treeitem]', (items) =>
      items.flatMap((item) => {
        const area = item.querySelector(':scope > span:nth-of-type(2)')?.textContent ?? '';
        return [...item.querySelectorAll('[role=group] > li')].map((lift) => [
          area,
          lift.querySelector('span:first-child')?.textContent ?? '',
          lift.querySelector('span:last-child')?.textContent ?? '',
        ]);
      }),
    );
  },
  'energy tariffs, column names only in ::before': async (page, url) => {
    await page.goto(`${url}/energy/compare`);
    if (await page.locator('th').count()) throw new Error('the table has header cells');
    const label = await page.$eval('td[data-label="Unit rate"]', (td) => getComputedStyle(td, '::before').content);
    if (!/Unit rate|attr\(data-label\)/.test(label)) throw new Error(`the ::before content is ${label}`);
    if ((await page.locator('main').textContent())?.includes('Unit rate')) throw new Error('the column name is in the text');
    return rows(page, 'tbody tr', [
      'td[data-label=Supplier]',
      'td[data-label=Tariff]',
      'td[data-label="Unit rate"]',
      'td[data-label="Standing charge"]',
    ]);
  },
  'French campsite prices in French number formats': async (page, url) => {
    await page.goto(`${url}/camping/tarifs`);
    if ((await page.locator('html').getAttribute('lang')) !== 'fr') throw new Error('the page is not in French');
    if (norm(await page.locator('main table:first-of-type caption').textContent()) !== 'Emplacements et locations')
      throw new Error('the first table is not the pitches');
    return rows(page, 'main table:first-of-type tbody tr', ['th', 'td:nth-of-type(2)']);
  },
};

/** On each page without what is asked: where it is, what its text must not hold, and what must look like it. */
const absent: Record<string, Absence> = {
  'directors asked, cinema showtimes without them': {
    path: '/cinema/whats-on',
    lacks: /direct|\bby\b|film-?maker/i,
    holds: /Paddington in Peru[\s\S]*13:45/,
  },
  'price per kWh asked, chargers listed with their power': {
    path: '/ev/charging-sites',
    lacks: /kwh|£|€|\$|price|tariff|cost|pence|\d\s*p\b/i,
    holds: /<th>Maximum power<\/th>[\s\S]*150 kW/,
  },
  'average waiting time asked, emergency departments with patient counts': {
    path: '/nhs/emergency-now',
    lacks: /\bmins?\b|minute|hour|\bhrs?\b|average|median|wait(ing)? time/i,
    holds: /Patients waiting to be seen[\s\S]*Royal Infirmary<\/td><td>34/,
  },
  'observers asked, bird sightings without who saw them': {
    path: '/reserve/sightings',
    lacks: /observer|report|spotted|recorded|seen by|\bby\b|birder/i,
    holds: /Bittern[\s\S]*Reedbed hide/,
  },
  'alcohol content asked, wine list without it': {
    path: '/wine-bar/list',
    lacks: /abv|alcohol|%|\bvol\b|proof/i,
    holds: /<th>175 ml<\/th>[\s\S]*Rioja Reserva/,
  },
};

await checkHeldoutPages({
  shapes: heldoutShapes3,
  earlier: [tunedShapes, heldoutShapes, heldoutShapes2],
  minMissing: 5,
  startSite: startHeldout3Site,
  readers,
  absent,
});
