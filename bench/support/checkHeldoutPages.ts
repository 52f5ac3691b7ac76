/**
 * `node bench/support/checkHeldoutPages.ts`: checks the held-out pages (bench/support/heldoutShapes.ts)
 * themselves, before and after the cosmetic redesign, without any analysis and without scoring
 * anything. In Chromium, it does on each page what a user would (open a tab, choose a region, click
 * "See more dates" until it is gone, scroll, post the form, follow each plot's link…), reads the
 * records with selectors of its own (no classes, so they hold after the redesign), and asserts that
 * they are the shape's expected records, in order. On the pages without what is asked, it asserts
 * that the page's whole text lacks it (and that what looks like it is there).
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { heldoutShapes, startHeldoutSite } from './heldoutShapes.ts';

const norm = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim();

/** Each row's cells' text, for `rowSelector` rows and `cellSelector` cells within each. */
async function rows(page: Page, rowSelector: string, cellSelectors: string[]) {
  return page.$$eval(
    rowSelector,
    (elements, cells) =>
      elements.map((element) => cells.map((cell) => (element.querySelector(cell)?.textContent ?? '').replace(/\s+/g, ' ').trim())),
    cellSelectors,
  );
}

async function clickUntilGone(page: Page, selector: string) {
  for (let clicks = 0; clicks < 20 && (await page.locator(selector).count()); clicks++) {
    await page.locator(selector).click();
    await page.waitForTimeout(500);
  }
}

type Read = (page: Page, url: string) => Promise<string[][]>;

/** How a user reaches each present shape's records, by shape name. */
const readers: Record<string, Read> = {
  'definition lists per plan, "cost" for the fee': async (page, url) => {
    await page.goto(`${url}/mobile/plans`);
    return page.$$eval('section[aria-labelledby]', (sections) =>
      sections.map((section) => {
        const value = (term: string) =>
          [...section.querySelectorAll('dt')].find((dt) => dt.textContent === term)?.nextElementSibling?.textContent ?? '';
        return [section.querySelector('h3')?.textContent ?? '', value('Monthly fee'), value('Data')];
      }),
    );
  },
  'cards with headings, "title" for the name': async (page, url) => {
    await page.goto(`${url}/stays`);
    return rows(page, 'main ul > li', ['h2', 'p:nth-of-type(2) > span:first-child', 'p:nth-of-type(1) > span:last-child']);
  },
  'three tables, the caption names the one asked for': async (page, url) => {
    await page.goto(`${url}/rates`);
    const table = page.locator('table', { has: page.locator('caption', { hasText: 'Fixed-rate bonds' }) });
    return table.evaluate((element) =>
      [...element.querySelectorAll('tr')]
        .filter((tr) => tr.querySelector('td'))
        .map((tr) => [...tr.cells].map((td) => td.textContent ?? '')),
    );
  },
  'tab panel filled when opened': async (page, url) => {
    await page.goto(`${url}/shop/trail-boot`);
    await page.getByRole('tab', { name: 'Sizes & stock' }).click();
    await page.locator('#panel-sizes tbody tr').first().waitFor();
    return rows(page, '#panel-sizes tbody tr', ['td:nth-child(1)', 'td:nth-child(2)']);
  },
  'accordion of course groups': async (page, url) => {
    await page.goto(`${url}/evening-classes`);
    for (const button of await page.locator('button[aria-expanded]').all()) await button.click();
    return rows(page, '[role=region]:not([hidden]) li', ['span:nth-of-type(1)', 'span:nth-of-type(2)', 'span:nth-of-type(3)']);
  },
  'list filled after a dropdown change': async (page, url) => {
    await page.goto(`${url}/garden-centres`);
    await page.getByLabel('Region').selectOption({ label: 'North West' });
    await page.locator('#centres article').first().waitFor();
    return rows(page, '#centres article', ['h3', 'p:nth-of-type(1)', 'a[href^="tel:"]']);
  },
  '"See more dates" button': async (page, url) => {
    await page.goto(`${url}/whats-on`);
    await clickUntilGone(page, 'button:has-text("See more dates")');
    return rows(page, '#gigs > li', ['h3', 'time', 'p:last-child']);
  },
  'numbered page links, cars': async (page, url) => {
    await page.goto(`${url}/used-cars`);
    const all: string[][] = [];
    const pages = await page.locator('main ol a').count();
    for (let p = 1; p <= pages; p++) {
      if (p > 1) await page.locator('main ol a', { hasText: new RegExp(`^${p}$`) }).click();
      await page.waitForLoadState();
      all.push(...(await rows(page, 'main article', ['h3', 'li:nth-child(1)', 'li:nth-child(2)', 'div'])));
    }
    return all;
  },
  '"Next" button paging in place': async (page, url) => {
    await page.goto(`${url}/podcast`);
    const all = await rows(page, '#episodes > li', ['a', 'span']);
    while (await page.locator('#next').isEnabled()) {
      const where = await page.locator('#where').textContent();
      await page.locator('#next').click();
      await page.waitForFunction((before) => document.getElementById('where')?.textContent !== before, where);
      all.push(...(await rows(page, '#episodes > li', ['a', 'span'])));
    }
    return all;
  },
  'list that grows on scroll': async (page, url) => {
    await page.goto(`${url}/jobs`);
    for (let scrolls = 0; scrolls < 20 && !(await page.locator('#jobs-status').textContent())?.includes('everything'); scrolls++) {
      await page.mouse.wheel(0, 5000);
      await page.waitForTimeout(500);
    }
    return rows(page, '#jobs > div', ['h2', 'div:nth-of-type(1)', 'div:nth-of-type(2)']);
  },
  'nested lists, "kitchen" items only': async (page, url) => {
    await page.goto(`${url}/ironmongery`);
    const kitchen = page.locator('main ul:not(li ul) > li', { has: page.locator(':scope > span', { hasText: 'Kitchen' }) });
    return kitchen.evaluate((element) =>
      [...element.querySelectorAll('li li li')].map((li) =>
        [...li.querySelectorAll(':scope > span')].map((span) => span.textContent ?? ''),
      ),
    );
  },
  'form posted before the results': async (page, url) => {
    await page.goto(`${url}/find-a-trade`);
    await page.getByLabel('Your postcode').fill('LS6 2AB');
    await page.getByLabel('Trade').selectOption({ label: 'Electricians' });
    await page.getByRole('button', { name: 'Find tradespeople' }).click();
    await page.locator('table tbody tr').first().waitFor();
    return rows(page, 'table tbody tr', ['td:nth-child(1)', 'td:nth-child(2)', 'td:nth-child(3)']);
  },
  'list of plots, values on each plot page': async (page, url) => {
    await page.goto(`${url}/allotments`);
    const links = await page.$$eval('main ul a', (anchors) => anchors.map((anchor) => (anchor as HTMLAnchorElement).href));
    const all: string[][] = [];
    for (const link of links) {
      await page.goto(link);
      const value = (label: string) =>
        page
          .locator('tr', { has: page.locator('th', { hasText: label }) })
          .locator('td')
          .textContent();
      all.push([norm(await page.locator('h1').textContent()), norm(await value('Size')), norm(await value('Annual rent'))]);
    }
    return all;
  },
  'microdata events without classes, "place" for the venue': async (page, url) => {
    await page.goto(`${url}/events`);
    return rows(page, '[aria-label="Upcoming events"] > [itemtype$="Event"]', [
      ':scope > a [itemprop=name]',
      '[itemprop=startDate]',
      '[itemprop=location] [itemprop=name]',
    ]);
  },
};

/** On each page without what is asked: where it is, what its text must not hold, and what must look like it. */
const absent: Record<string, { path: string; lacks: RegExp; holds: RegExp }> = {
  'savings rates asked, mortgages shown': { path: '/home-loans', lacks: /sav(e|ing)|isa\b|deposit/i, holds: /\d\.\d\d%/ },
  'e-mail addresses asked, phones shown': { path: '/surgery/contact', lacks: /@|e-?mail/i, holds: /0161 496 0100/ },
  'managers asked, staff without managers': { path: '/bakery/team', lacks: /manag/i, holds: /Rosa Lindgren/ },
  'prices in US dollars asked, pounds shown': { path: '/museum/tickets', lacks: /\$|usd|dollar|\bus\b/i, holds: /£18\.00/ },
  'kitchen appliances asked, shop without a kitchen section': { path: '/outlet', lacks: /kitchen|applian/i, holds: /£79\.00/ },
  'star ratings asked, hotels without ratings': { path: '/hotels', lacks: /star|rating|rated|★|\/ ?10\b|score|review/i, holds: /£129/ },
};

const site = await startHeldoutSite();
const browser: Browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true });
const failures: string[] = [];
try {
  for (const cosmetic of [false, true]) {
    site.setCosmetic(cosmetic);
    for (const shape of heldoutShapes) {
      const label = `${shape.name}${cosmetic ? ' (redesign)' : ''}`;
      const context = await browser.newContext();
      const page = await context.newPage();
      try {
        if (shape.goalMissing) {
          const check = absent[shape.name];
          if (!check) throw new Error('no check for this page');
          await page.goto(`${site.url}${check.path}`);
          // The whole document's text, hidden parts, attributes and the title included.
          const text = `${await page.title()} ${await page.evaluate(() => document.documentElement.outerHTML.replace(/<script[\s\S]*?<\/script>/g, ''))}`;
          if (check.lacks.test(text)) throw new Error(`the page holds ${check.lacks.exec(text)?.[0]}`);
          if (!check.holds.test(text)) throw new Error(`the page lacks what looks like it: ${check.holds}`);
        } else {
          const read = readers[shape.name];
          if (!read) throw new Error('no reader for this page');
          const got = (await read(page, site.url)).map((record) => record.map(norm));
          const want = shape.expected.map((record) => record.map(norm));
          if (JSON.stringify(got) !== JSON.stringify(want))
            throw new Error(`expected ${JSON.stringify(want)}\n  got ${JSON.stringify(got)}`);
        }
        console.log(`ok   ${label}${shape.goalMissing ? ': not on the page' : `: ${shape.expected.length} records`}`);
      } catch (error) {
        failures.push(label);
        console.log(`FAIL ${label}: ${(error as Error).message}`);
      } finally {
        await context.close();
      }
    }
  }
} finally {
  await browser.close();
  await site.close();
}
console.log(failures.length ? `${failures.length} check(s) failed` : `all ${heldoutShapes.length * 2} checks passed`);
process.exit(failures.length ? 1 : 0);
