import { mkdirSync } from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/** Where the console tests save a picture of each page they check (docs/console.md); unset, nowhere. */
const SHOTS_DIR = process.env.CONSOLE_SCREENSHOTS_DIR;

/**
 * A console page as a user has it now: no serious or critical accessibility violation (axe-core,
 * frames included), and, with CONSOLE_SCREENSHOTS_DIR set, its picture saved as `<name>.png`.
 */
export async function checkPage(page: Page, name: string) {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${name}: ${violation.id} (${violation.help}) at ${violation.nodes
          .slice(0, 3)
          .map((node) => node.target.join(' '))
          .join(', ')}`,
    );
  expect(serious).toEqual([]);
  if (SHOTS_DIR) {
    mkdirSync(SHOTS_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS_DIR, `${name}.png`), fullPage: false, animations: 'disabled', caret: 'hide' });
  }
}
