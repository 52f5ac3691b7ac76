import { mkdirSync } from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/** Where the console tests save a picture of each page they check (docs/console.md); unset, nowhere. */
const SHOTS_DIR = process.env.CONSOLE_SCREENSHOTS_DIR;

/** The sizes every console page is checked at: a laptop, and a phone (docs/console.md). */
export const consoleSizes = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** The key Mantine keeps the chosen theme under (console/src/main.tsx). */
const SCHEME_KEY = 'browserflow-color-scheme';

/**
 * A console page as a user has it now, at 1280×800 and at 390×844, in the light and the dark
 * theme: no horizontal overflow, no link or button covered by another element, and no serious or
 * critical accessibility violation (axe-core, frames included). With CONSOLE_SCREENSHOTS_DIR set,
 * its pictures are saved as `<name>.<size>.png` (light theme). The page's own viewport and theme
 * are put back afterwards.
 */
export async function checkPage(page: Page, name: string) {
  const before = page.viewportSize();
  const problems: string[] = [];
  try {
    for (const size of consoleSizes) {
      await page.setViewportSize({ width: size.width, height: size.height });
      for (const scheme of ['light', 'dark'] as const) {
        await setScheme(page, scheme);
        await page.evaluate(() => window.scrollTo(0, 0));
        const where = `${name} at ${size.width}×${size.height}, ${scheme}`;
        problems.push(...(await layoutProblems(page)).map((problem) => `${where}: ${problem}`));
        const results = await new AxeBuilder({ page }).analyze();
        problems.push(
          ...results.violations
            .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
            .map(
              (violation) =>
                `${where}: ${violation.id} (${violation.help}) at ${violation.nodes
                  .slice(0, 3)
                  .map((node) => node.target.join(' '))
                  .join(', ')}`,
            ),
        );
      }
      await setScheme(page, 'light');
      if (SHOTS_DIR) {
        mkdirSync(SHOTS_DIR, { recursive: true });
        await page.screenshot({
          path: path.join(SHOTS_DIR, `${name}.${size.name}.png`),
          fullPage: false,
          animations: 'disabled',
          caret: 'hide',
        });
      }
    }
  } finally {
    await setScheme(page, 'light');
    if (before) await page.setViewportSize(before);
  }
  expect(problems).toEqual([]);
}

/** The theme as the toggle sets it: kept in localStorage, shown through `<html data-mantine-color-scheme>`. */
async function setScheme(page: Page, scheme: 'light' | 'dark') {
  await page.evaluate(
    ([key, value]) => {
      localStorage.setItem(key as string, value as string);
      document.documentElement.setAttribute('data-mantine-color-scheme', value as string);
    },
    [SCHEME_KEY, scheme],
  );
  // A frame for the styles to apply before anything is measured.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await settled(page);
}

/**
 * Waits until no CSS transition runs: what is measured is the page as it comes to rest, not a
 * sidebar halfway out after a resize or colours halfway to the other theme. Endless animations
 * (a skeleton's pulse, a loader) are not transitions and do not hold it up.
 */
async function settled(page: Page) {
  await page.waitForFunction(
    () => document.getAnimations().every((animation) => !(animation instanceof CSSTransition) || animation.playState !== 'running'),
    undefined,
    { polling: 'raf', timeout: 15_000 },
  );
}

/**
 * What is wrong with the page's layout: it is wider than the window, or a link or button whose
 * middle is on screen is covered there by something else (what `elementFromPoint` finds is neither
 * it nor inside it). What a scrolling box clips is not on screen; with a modal dialog open, only
 * its own links and buttons are checked.
 */
export function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const { scrollWidth } = document.documentElement;
    if (scrollWidth > window.innerWidth) {
      const widest = [...document.querySelectorAll('body *')]
        .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1)
        .slice(-3)
        .map(
          (element) =>
            `${element.tagName.toLowerCase()}${element.className && typeof element.className === 'string' ? `.${element.className.split(' ')[0]}` : ''}`,
        );
      problems.push(`${scrollWidth} px wide in a ${window.innerWidth} px window (widest: ${widest.join(', ')})`);
    }
    const describe = (element: Element) =>
      `${element.tagName.toLowerCase()} "${(element.getAttribute('aria-label') ?? element.textContent ?? '').trim().slice(0, 40)}"`;
    // With a modal dialog open, what is behind it is out of reach by design (its overlay takes the
    // clicks): the dialog's own links and buttons are the ones to check.
    const modal = [...document.querySelectorAll('[role="dialog"][aria-modal="true"]')].at(-1);
    for (const target of (modal ?? document).querySelectorAll('a[href], button, [role="button"]')) {
      if (!(target as HTMLElement).checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
      const box = target.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      const x = box.left + box.width / 2;
      const y = box.top + box.height / 2;
      if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) continue;
      // Clipped away by a scrolling or hiding ancestor: not on screen to click.
      let clipped = false;
      for (let parent = target.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
        const style = getComputedStyle(parent);
        if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
        const clip = parent.getBoundingClientRect();
        if (x < clip.left || x > clip.right || y < clip.top || y > clip.bottom) {
          clipped = true;
          break;
        }
      }
      if (clipped) continue;
      const found = document.elementFromPoint(x, y);
      if (found && found !== target && !target.contains(found)) problems.push(`${describe(target)} is covered by ${describe(found)}`);
    }
    return problems;
  });
}
