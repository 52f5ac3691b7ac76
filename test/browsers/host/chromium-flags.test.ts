import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumBinary } from '../../../server/browsers/host/chromium/browserSandbox.ts';
import { chromiumArgs } from '../../../server/browsers/host/chromium/chromiumProcess.ts';
import { findProcessesMentioning } from '../../../server/browsers/host/chromium/processes.ts';
import { CHROMIUM_FLAGS, LEAN_FEATURES, PLAYWRIGHT_FEATURES, PLAYWRIGHT_SWITCHES } from '../../../server/browsers/launch/chromiumFlags.ts';
import { CHROMIUM } from '../../support/chromium.ts';
import { startTestSite } from '../../support/pages.ts';

/**
 * The command line the browser host gives Chromium: Playwright's own feature switches survive
 * the host's (Chromium reads only the last of each), and the processes the host's features save
 * are not there.
 */

let site: Awaited<ReturnType<typeof startTestSite>>;
const folders: string[] = [];
beforeAll(async () => {
  site = await startTestSite();
});
afterAll(async () => {
  await site?.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Launches as Playwright does; the binary itself, not Debian's wrapper script, which adds flags of its own. */
async function launch(args: string[]) {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'bf-flags-'));
  folders.push(folder);
  const context = await chromium.launchPersistentContext(folder, { executablePath: chromiumBinary(CHROMIUM), headless: true, args });
  return { context, folder };
}

/**
 * The command lines of a browser's processes; the browser's own first (the one Playwright speaks
 * to over its pipe: a crash handler may mention the profile too, without a --type).
 */
function commandLines(folder: string) {
  const lines = findProcessesMentioning(`--user-data-dir=${folder}`).map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'));
  const rank = (args: string[]) => (args.includes('--remote-debugging-pipe') ? 0 : args.some((arg) => arg.startsWith('--type=')) ? 2 : 1);
  return lines.sort((a, b) => rank(a) - rank(b));
}

function features(args: string[], kind: 'enable' | 'disable') {
  const found = args.filter((arg) => arg.startsWith(`--${kind}-features=`));
  return found.flatMap((arg) => arg.slice(`--${kind}-features=`.length).split(','));
}

async function closing<T>(context: BrowserContext, work: () => Promise<T>) {
  try {
    return await work();
  } finally {
    await context.close();
  }
}

describe('the browser host’s Chromium command line', () => {
  it('repeats the feature switches Playwright passes, which its own would otherwise replace', async () => {
    const { context, folder } = await launch(CHROMIUM_FLAGS);
    await closing(context, async () => {
      const [browser] = commandLines(folder);
      if (!browser) throw new Error('no browser process found');
      expect(new Set(features(browser, 'disable'))).toEqual(new Set(PLAYWRIGHT_FEATURES.disabled));
      expect(new Set(features(browser, 'enable'))).toEqual(new Set(PLAYWRIGHT_FEATURES.enabled));
      // The host launches Chromium itself with Playwright's switches: the same as Playwright's own.
      const own = new Set([...CHROMIUM_FLAGS, '--no-sandbox', '--remote-debugging-pipe', 'about:blank']);
      const playwright = browser
        .slice(1)
        .filter((arg) => arg !== '' && !/^--(enable|disable)-features=|^--user-data-dir=/.test(arg) && !own.has(arg));
      expect(new Set(PLAYWRIGHT_SWITCHES.filter((arg) => !own.has(arg)))).toEqual(new Set(playwright));
    });
  });

  it('keeps Playwright’s and a session’s features, and runs no omnibox WebUI or network process', async () => {
    const args = chromiumArgs(
      { image: 'chromium', screen: { width: 800, height: 600 }, args: ['--disable-features=Translate'] },
      { egress: false, sandbox: false },
    );
    const { context, folder } = await launch(args);
    await closing(context, async () => {
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(`${site.url}/lean`);
      expect(await page.textContent('#greeting')).toBe('Hello from the test site');
      const lines = commandLines(folder);
      const [browser] = lines;
      if (!browser) throw new Error('no browser process found');
      // One switch of each kind: the last one is the one Chromium reads.
      expect(
        browser
          .filter((arg) => arg.startsWith('--disable-features='))
          .at(-1)
          ?.split('=')[1]
          ?.split(','),
      ).toEqual(expect.arrayContaining([...PLAYWRIGHT_FEATURES.disabled, ...LEAN_FEATURES.disabled, 'Translate']));
      expect(
        browser
          .filter((arg) => arg.startsWith('--enable-features='))
          .at(-1)
          ?.split('=')[1]
          ?.split(','),
      ).toEqual(expect.arrayContaining([...PLAYWRIGHT_FEATURES.enabled, ...LEAN_FEATURES.enabled]));
      const all = lines.flat();
      expect(all.filter((arg) => arg === '--top-chrome-webui')).toEqual([]);
      expect(all.filter((arg) => arg.includes('NetworkService') && arg.startsWith('--utility-sub-type'))).toEqual([]);
    });
  });
});
