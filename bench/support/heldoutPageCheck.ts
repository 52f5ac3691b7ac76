/**
 * What the page checkers of the later held-out sets share (bench/support/checkHeldout2Pages.ts,
 * bench/support/checkHeldout3Pages.ts): they check a set's pages themselves, before and after the
 * cosmetic redesign, without any analysis and without scoring anything. A checker gives, per shape,
 * how a user reaches the records (a `Read`, with selectors of its own and no classes, so that they hold
 * after the redesign) or, on the pages without what is asked, what the page's text must lack and what
 * must look like it. `checkHeldoutPages` checks the set itself too (its size, two prompts per shape
 * naming a page of the site, names new to the benchmark), prints a line per page and exits 0 or 1.
 */
import { type Browser, chromium, type Frame, type Page } from 'playwright-core';
import type { Shape } from './shapes.ts';

export const norm = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim();

/** Each row's cells' text, for `rowSelector` rows and `cellSelectors` cells within each. */
export async function rows(page: Page | Frame, rowSelector: string, cellSelectors: string[]) {
  return page.$$eval(
    rowSelector,
    (elements, cells) =>
      elements.map((element) => cells.map((cell) => (element.querySelector(cell)?.textContent ?? '').replace(/\s+/g, ' ').trim())),
    cellSelectors,
  );
}

/** How a user reaches a present shape's records, from the site's address. */
export type Read = (page: Page, url: string) => Promise<string[][]>;
/** On a page without what is asked: where it is, what its text must not hold, and what must look like it. */
export type Absence = { path: string; lacks: RegExp; holds: RegExp };

type Site = { url: string; setCosmetic: (value: boolean) => void; close: () => Promise<void> };

/** The set itself: its size, two prompts per shape that name the page, names the earlier sets have not used. */
function checkSet(options: {
  shapes: Shape[];
  earlier: Shape[][];
  minMissing: number;
  readers: Record<string, Read>;
  absent: Record<string, Absence>;
  url: string;
}) {
  const { shapes, earlier, minMissing, readers, absent, url } = options;
  const problems: string[] = [];
  if (shapes.length !== 20) problems.push(`${shapes.length} shapes, not 20`);
  if (shapes.filter((shape) => shape.goalMissing).length < minMissing)
    problems.push(`fewer than ${minMissing} pages without what is asked`);
  const used = new Set(earlier.flat().map((shape) => shape.name));
  const names = new Set<string>();
  for (const shape of shapes) {
    if (used.has(shape.name)) problems.push(`${shape.name}: the name is an earlier set's`);
    if (names.has(shape.name)) problems.push(`${shape.name}: the name is twice in the set`);
    names.add(shape.name);
    for (const phrasing of ['careful', 'hurried'] as const) {
      const prompt = shape.prompts[phrasing]?.(url);
      if (!prompt?.includes(`${url}/`)) problems.push(`${shape.name}: no ${phrasing} prompt naming a page of the site`);
    }
    if (!shape.goalMissing && !shape.expected.length) problems.push(`${shape.name}: no expected records`);
    if (!shape.goalMissing && !readers[shape.name]) problems.push(`${shape.name}: no reader`);
    if (shape.goalMissing && !absent[shape.name]) problems.push(`${shape.name}: no absence check`);
    if (shape.expected.some((record) => record.length !== shape.expected[0]?.length))
      problems.push(`${shape.name}: records of different lengths`);
  }
  return problems;
}

/** Checks a set and its pages in Chromium, prints a line per check, and exits 0 when all passed, else 1. */
export async function checkHeldoutPages(options: {
  shapes: Shape[];
  /** The earlier sets, whose shape names this set must not reuse. */
  earlier: Shape[][];
  /** The fewest pages without what is asked that the set must have. */
  minMissing: number;
  startSite: () => Promise<Site>;
  readers: Record<string, Read>;
  absent: Record<string, Absence>;
}): Promise<never> {
  const { shapes, readers, absent } = options;
  const site = await options.startSite();
  const browser: Browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true });
  const failures: string[] = [];
  try {
    for (const problem of checkSet({ ...options, url: site.url })) {
      failures.push(problem);
      console.log(`FAIL the set: ${problem}`);
    }
    for (const cosmetic of [false, true]) {
      site.setCosmetic(cosmetic);
      for (const shape of shapes) {
        const label = `${shape.name}${cosmetic ? ' (redesign)' : ''}`;
        const context = await browser.newContext();
        const page = await context.newPage();
        try {
          if (shape.goalMissing) {
            const check = absent[shape.name];
            if (!check) throw new Error('no check for this page');
            const response = await page.goto(`${site.url}${check.path}`);
            if (response?.status() !== 200) throw new Error(`the page answered ${response?.status()}`);
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
  console.log(failures.length ? `${failures.length} check(s) failed` : `all ${shapes.length * 2} page checks and the set's checks passed`);
  process.exit(failures.length ? 1 : 0);
}
