/// <reference lib="dom" />
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WarmBrowser } from '../../../db/entities/index.ts';
import { createProject, registerUser } from '../../support/accounts.ts';
import { launchChromium } from '../../support/chromium.ts';
import { OTHER_SITE_HOST, PAGE_HOST, startTestSite } from '../../support/pages.ts';
import { stopAndWait } from '../../support/resources.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

/**
 * A session's browser as a site sees it: FingerprintJS's open-source bot detector (BotD, served
 * from a page of the test's own, monitoring off) does not flag it, and what it shows follows the
 * session (locale, timezone, screen) and stays the same across starts. Driven over the session's
 * remoteUrl, on pages the client opens itself, as a user would; plain headless Playwright on the
 * same page is flagged. `fingerprint: "automation"` keeps the honest headless browser.
 */

const require = createRequire(import.meta.url);
const botdBundle = readFileSync(path.join(path.dirname(require.resolve('@fingerprintjs/botd/package.json')), 'dist/botd.esm.js'));

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let other: Awaited<ReturnType<typeof startTestSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };

const html = (res: import('node:http').ServerResponse, body: string) => {
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.end(`<!doctype html><title>page</title>${body}`);
};

/** What a document (or worker) says about itself; the same function runs in each. */
const probeSource = `(() => {
  const gl = (typeof document !== 'undefined' ? document.createElement('canvas') : new OffscreenCanvas(8, 8)).getContext('webgl');
  return {
    userAgent: navigator.userAgent,
    webdriver: navigator.webdriver,
    languages: [...navigator.languages],
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    hardwareConcurrency: navigator.hardwareConcurrency,
    deviceMemory: navigator.deviceMemory,
    renderer: gl ? gl.getParameter(0x9246) : null,
    vendor: gl ? gl.getParameter(0x9245) : null,
  };
})()`;

beforeAll(async () => {
  stack = await startTestStack(
    // One warm browser of the default settings: a default session's start takes it.
    { RATE_LIMITS: 'off', BROWSER_ALLOWED_PRIVATE_DESTINATIONS: `${PAGE_HOST},${OTHER_SITE_HOST}`, BROWSER_WARM_POOL: '1' },
    { browserHost: true },
  );
  other = await startTestSite(
    {
      '/frame': (_req, res) => html(res, `<p>framed</p>`),
    },
    OTHER_SITE_HOST,
  );
  site = await startTestSite({
    '/botd.js': (_req, res) => {
      res.setHeader('content-type', 'text/javascript');
      res.end(botdBundle);
    },
    '/botd': (_req, res) =>
      html(
        res,
        `<script type="module">
          import { load } from '/botd.js';
          const detector = await load({ monitoring: false });
          window.botResult = detector.detect();
          document.title = 'detected';
        </script>`,
      ),
    '/headers': (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          acceptLanguage: req.headers['accept-language'],
          userAgent: req.headers['user-agent'],
          clientHints: req.headers['sec-ch-ua'],
        }),
      );
    },
    '/worker.js': (_req, res) => {
      res.setHeader('content-type', 'text/javascript');
      res.end(`postMessage(${probeSource});`);
    },
    '/framed': (_req, res) => html(res, `<iframe src="${other.url}/frame"></iframe>`),
  });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
}, 120_000);
afterAll(async () => {
  await site?.close();
  await other?.close();
  await stack?.close();
});

const as = () => ({ token: owner.token });

async function createSession(body: Record<string, unknown>) {
  const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: `fp-${Date.now()}`, ...body }, as());
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

async function start(sessionId: string) {
  const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, as());
  expect(started.status, started.text).toBe(200);
  return started.body as { id: string; remoteUrl: string; warm: boolean };
}

/** BotD's verdict on the page it runs in. */
async function botVerdict(page: Page) {
  await page.goto(`${site.url}/botd`);
  await page.waitForFunction(() => document.title === 'detected', undefined, { timeout: 30_000 });
  return page.evaluate(() => (window as unknown as { botResult: { bot: boolean; botKind?: string } }).botResult);
}

/** A user's own page in the session's browser, over its remoteUrl. */
async function userPage(remoteUrl: string): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.connectOverCDP(remoteUrl);
  const context = browser.contexts()[0] ?? (await browser.newContext());
  return { browser, page: await context.newPage() };
}

/** What the page, a worker it starts and a cross-site (out-of-process) frame in it say. */
async function observe(page: Page) {
  await page.goto(`${site.url}/framed`);
  const inPage = await page.evaluate(probeSource);
  const inWorker = await page.evaluate(
    () => new Promise((resolve) => Object.assign(new Worker('/worker.js'), { onmessage: (event: MessageEvent) => resolve(event.data) })),
  );
  const frame = page.frames().find((candidate) => candidate.url().startsWith(other.url));
  if (!frame) throw new Error('the cross-site frame did not load');
  await frame.waitForLoadState();
  const inFrame = await frame.evaluate(probeSource);
  const headers = JSON.parse((await (await page.goto(`${site.url}/headers`))?.text()) ?? '{}');
  const looks = await page.evaluate(() => ({
    intlLocale: Intl.DateTimeFormat().resolvedOptions().locale,
    screen: [screen.width, screen.height, screen.availWidth, screen.availHeight],
    outer: [outerWidth, outerHeight],
    brands: (navigator as unknown as { userAgentData: { brands: { brand: string }[] } }).userAgentData.brands.map((brand) => brand.brand),
    plugins: navigator.plugins.length,
    chrome: typeof (window as unknown as { chrome?: object }).chrome,
    getterSource: Object.getOwnPropertyDescriptor(Navigator.prototype, 'hardwareConcurrency')?.get?.toString(),
    methodSource: WebGLRenderingContext.prototype.getParameter.toString(),
    toStringSource: Function.prototype.toString.toString(),
    foreignReceiver: (() => {
      try {
        Object.getOwnPropertyDescriptor(Navigator.prototype, 'hardwareConcurrency')?.get?.call({});
        return 'no error';
      } catch (error) {
        return (error as Error).constructor.name;
      }
    })(),
  }));
  return { inPage, inWorker, inFrame, headers, looks } as {
    inPage: Record<string, unknown>;
    inWorker: Record<string, unknown>;
    inFrame: Record<string, unknown>;
    headers: Record<string, string>;
    looks: Record<string, unknown>;
  };
}

describe('a session’s browser by default', () => {
  it('is not flagged by BotD, follows the session’s locale, timezone and screen everywhere, and keeps its fingerprint across starts', async () => {
    const sessionId = await createSession({ locale: 'de-DE', timezone: 'Europe/Berlin', screen: { width: 1366, height: 768 } });
    const view = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}`, as());
    expect(view.body).toMatchObject({ locale: 'de-DE', timezone: 'Europe/Berlin', fingerprint: 'desktop' });

    const first = await start(sessionId);
    const { browser, page } = await userPage(first.remoteUrl);
    expect(await botVerdict(page)).toMatchObject({ bot: false });
    const seen = await observe(page);
    await browser.close();

    for (const where of [seen.inPage, seen.inWorker, seen.inFrame]) {
      expect(where.userAgent).toMatch(/ Chrome\/\d+\.0\.0\.0 /);
      expect(where.userAgent).not.toMatch(/headless/i);
      expect(where.languages).toEqual(['de-DE', 'de']);
      expect(where.timeZone).toBe('Europe/Berlin');
      // One fingerprint: the worker and the out-of-process frame tell what the page tells.
      expect(where.hardwareConcurrency).toBe(seen.inPage.hardwareConcurrency);
      expect(where.renderer).toBe(seen.inPage.renderer);
    }
    expect(seen.inPage.webdriver).toBe(false);
    expect(seen.inFrame.webdriver).toBe(false);
    expect(String(seen.inPage.renderer)).not.toMatch(/swiftshader/i);
    expect(seen.headers.acceptLanguage).toMatch(/^de-DE,de;q=0\.9/);
    expect(seen.headers.userAgent).not.toMatch(/headless/i);
    expect(seen.headers.clientHints).not.toMatch(/headless/i);
    expect(seen.looks).toMatchObject({
      intlLocale: 'de-DE',
      screen: [1366, 768, 1366, 768],
      chrome: 'object',
      getterSource: 'function get hardwareConcurrency() { [native code] }',
      methodSource: 'function getParameter() { [native code] }',
      toStringSource: 'function toString() { [native code] }',
      foreignReceiver: 'TypeError',
    });
    expect(seen.looks.brands).not.toContain('HeadlessChrome');
    expect(seen.looks.plugins).toBeGreaterThan(0);
    const [outerWidth, outerHeight] = seen.looks.outer as number[];
    expect(outerWidth).toBeLessThanOrEqual(1366);
    expect(outerHeight).toBeLessThanOrEqual(768);
    await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${first.id}`, as());

    // The next start (a new browser) shows the same fingerprint.
    const second = await start(sessionId);
    const again = await userPage(second.remoteUrl);
    const seenAgain = await observe(again.page);
    await again.browser.close();
    expect(seenAgain.inPage).toEqual(seen.inPage);
    await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${second.id}`, as());
  }, 240_000);

  it('is so on a warm browser too: a page opened before the host adopted it waits for the fingerprint', async () => {
    const deadline = Date.now() + 60_000;
    while ((await stack.orm.em.fork().count(WarmBrowser, {})) < 1) {
      if (Date.now() > deadline) throw new Error('no warm browser was offered');
      await sleep(100);
    }
    const sessionId = await createSession({});
    const resource = await start(sessionId);
    expect(resource.warm).toBe(true);
    // At once, as a client would: the api answered before the host adopted the browser.
    const { browser, page } = await userPage(resource.remoteUrl);
    expect(await botVerdict(page)).toMatchObject({ bot: false });
    const seen = await observe(page);
    await browser.close();
    expect(seen.inPage).toMatchObject({ languages: ['en-US', 'en'], timeZone: 'UTC', webdriver: false });
    expect(String(seen.inPage.renderer)).not.toMatch(/swiftshader/i);
    expect(seen.inWorker.hardwareConcurrency).toBe(seen.inPage.hardwareConcurrency);
    expect(seen.inFrame.renderer).toBe(seen.inPage.renderer);
    await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${resource.id}`, as());
  }, 120_000);

  it('while plain headless Playwright on the same page is flagged', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      expect(await botVerdict(page)).toMatchObject({ bot: true });
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe('fingerprint "automation"', () => {
  it('keeps Chromium’s honest headless defaults', async () => {
    const sessionId = await createSession({ fingerprint: 'automation' });
    const resource = await start(sessionId);
    const { browser, page } = await userPage(resource.remoteUrl);
    await page.goto(`${site.url}/headers`);
    const said = await page.evaluate(() => ({ userAgent: navigator.userAgent, webdriver: navigator.webdriver }));
    expect(await botVerdict(page)).toMatchObject({ bot: true });
    await browser.close();
    expect(said.userAgent).toMatch(/HeadlessChrome/);
    expect(said.webdriver).toBe(true);
    await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${resource.id}`, as());
  }, 120_000);
});

describe('the session’s fields', () => {
  it('refuse what is not a locale, a time zone or a fingerprint, naming the field', async () => {
    for (const [field, value] of [
      ['locale', 'not a locale'],
      ['timezone', 'Mars/Olympus_Mons'],
      ['fingerprint', 'invisible'],
    ] as const) {
      const refused = await stack.http.put(`/${project.slug}/api/sessions`, { name: `bad-${field}`, [field]: value }, as());
      expect(refused.status, refused.text).toBe(400);
      expect(JSON.stringify(refused.body.issues)).toContain(field);
    }
  });

  it('default to en-US, UTC and desktop, are stored canonical, and change with PATCH', async () => {
    const sessionId = await createSession({});
    const created = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}`, as());
    expect(created.body).toMatchObject({ locale: 'en-US', timezone: 'UTC', fingerprint: 'desktop' });
    const changed = await stack.http.patch(
      `/${project.slug}/api/sessions/${sessionId}`,
      { locale: 'pt-br', timezone: 'america/sao_paulo', fingerprint: 'automation' },
      as(),
    );
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ locale: 'pt-BR', timezone: 'America/Sao_Paulo', fingerprint: 'automation' });
  });
});
