import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A recorded run replayed in the console (docs/browsers.md, Recordings), in real Chromium: the
 * run's page is rebuilt in rrweb's player, with the run's steps as marks on its timeline.
 */

let stack: TestStack;
let browser: Browser;
let site: Awaited<ReturnType<typeof startTestSite>>;

const PAGE = `<!doctype html><html><head><title>Shop login</title><style>h1{color:#036}</style></head>
<body><h1 id="welcome">Welcome to the replayed shop</h1><label>Password <input id="pass" type="password"></label></body></html>`;

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  browser = await launchChromium();
  site = await startTestSite({
    '/shop': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(PAGE);
    },
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await stack?.close();
});

describe('a recorded run in the console', () => {
  it('replays the page in rrweb’s player with the run’s steps marked on its timeline', async () => {
    const { email, token } = await registerUser(stack);
    const { slug } = await createProject(stack, token);
    const session = await stack.http.put(`/${slug}/api/sessions`, { name: 'replayed' }, { token });
    expect(session.status, session.text).toBe(200);
    const pipelineId = await createPipeline(
      stack,
      slug,
      { token },
      {
        parameters: { password: { refType: 'string', secret: true } },
        nodes: {
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/shop` } },
          pass: { type: 'page.fill', inputs: { page: { $ref: 'open.page' }, selector: '#pass', value: { $param: 'password' } } },
          wait: { type: 'page.wait', inputs: { page: { $ref: 'pass.page' }, ms: 1000 } },
        },
      },
    );
    const started = await stack.http.post(
      `/${slug}/api/pipelines/${pipelineId}/start`,
      { session: session.body.id, args: { password: 'Replay-passw0rd-77' }, record: true },
      { token },
    );
    expect(started.status, started.text).toBe(200);
    const run = await settledRun(stack, `/${slug}/api/pipelines/${pipelineId}/${started.body.id}`, { token });
    expect(run.status.pipeline).toBe('succeeded');
    await expect
      .poll(async () => ((await stack.http.get(run.recording, { token })).body.pages as { url: string }[]).map((page) => page.url), {
        timeout: 30_000,
      })
      .toContain(`${site.url}/shop`);

    const context = await browser.newContext({ baseURL: stack.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') failures.push(message.text());
    });
    await page.goto('/');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Projects' }).isVisible(), { timeout: 30_000 }).toBe(true);
    await page.goto(`/#/projects/${slug}/pipelines/${pipelineId}/runs/${run.id}`);
    await page.getByRole('heading', { name: 'Recording' }).waitFor({ timeout: 30_000 });
    // axe (test/support/consoleChecks.ts) is not run here: it cannot enter the player's sandboxed iframe, where no script runs.

    const player = page.getByRole('region', { name: /recording of page/ });
    // The recorded page, rebuilt in the player's iframe: its heading is there and shown.
    const replayed = player.frameLocator('iframe').locator('#welcome');
    await replayed.waitFor({ state: 'visible', timeout: 20_000 });
    expect(await replayed.textContent()).toBe('Welcome to the replayed shop');
    // The password the run typed is masked in the replay too.
    const typed = await player.frameLocator('iframe').locator('#pass').inputValue();
    expect(typed).not.toContain('Replay-passw0rd-77');
    // Each browser node's start is a mark on the timeline, titled with its node.
    const marks = player.locator('.rr-progress [title^="step "]');
    await expect.poll(() => marks.count()).toBeGreaterThanOrEqual(2);
    const titles = await marks.evaluateAll((elements) => elements.map((element) => element.getAttribute('title')));
    expect(titles).toEqual(expect.arrayContaining(['step open', 'step pass']));
    expect(failures).toEqual([]);
    await context.close();
  }, 240_000);
});
