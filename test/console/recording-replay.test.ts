import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * What a run's browser leaves, in the console, in real Chromium: a recorded run replayed
 * (docs/browsers.md, Recordings), the run's page rebuilt in rrweb's player with the run's steps as
 * marks on its timeline; and the files it downloaded (Downloads), listed, fetched and deleted.
 */

let stack: TestStack;
let browser: Browser;
let site: Awaited<ReturnType<typeof startTestSite>>;

const CSV = 'id,name\n1,"console, listed"\n2,second row\n';

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
    '/reports': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Reports</title><a id="csv" href="/report.csv" download="monthly-report.csv">CSV</a>');
    },
    '/report.csv': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="monthly-report.csv"' });
      res.end(CSV);
    },
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await stack?.close();
});

/** How long a page may take to show what a poll waits for, on a busy machine. */
const soon = { timeout: 30_000 };

/** A new user's console, signed in, in a context of its own. */
async function signedIn(email: string) {
  const context = await browser.newContext({ baseURL: stack.url, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto('/');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('heading', { name: 'Projects', exact: true }).isVisible(), { timeout: 30_000 }).toBe(true);
  return { context, page };
}

describe('a run’s downloads in the console', () => {
  it('lists the CSV a run downloaded, fetches it through its link, and deletes it after a confirm', async () => {
    const { email, token } = await registerUser(stack);
    const { slug } = await createProject(stack, token);
    const session = await stack.http.put(`/${slug}/api/sessions`, { name: 'downloading' }, { token });
    expect(session.status, session.text).toBe(200);
    const pipelineId = await createPipeline(
      stack,
      slug,
      { token },
      {
        nodes: {
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/reports` } },
          csv: { type: 'page.download', inputs: { page: { $ref: 'open.page' }, selector: '#csv' } },
        },
        outputs: { file: { $ref: 'csv.file' } },
      },
    );
    const started = await stack.http.post(`/${slug}/api/pipelines/${pipelineId}/start`, { session: session.body.id }, { token });
    expect(started.status, started.text).toBe(200);
    const run = await settledRun(stack, `/${slug}/api/pipelines/${pipelineId}/${started.body.id}`, { token });
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    const listPath = `/${slug}/api/sessions/${session.body.id}/${run.resources[0].id}/downloads`;
    expect(((await stack.http.get(listPath, { token })).body as { name: string }[]).map((file) => file.name)).toEqual([
      'monthly-report.csv',
    ]);

    const { context, page } = await signedIn(email);
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    await page.goto(`/#/projects/${slug}/pipelines/${pipelineId}/runs/${run.id}`);
    await page.getByRole('heading', { name: 'Downloads' }).waitFor({ timeout: 30_000 });
    const row = page.getByRole('row', { name: 'download monthly-report.csv' });
    await expect.poll(() => row.isVisible(), { timeout: 20_000 }).toBe(true);
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells.slice(0, 3)).toEqual(['monthly-report.csv', `${CSV.length} B`, 'text/csv']);
    expect(cells[3]).not.toBe('—');

    // Its link fetches the file, byte for byte, with the console's own sign-in.
    const link = row.getByRole('link', { name: 'monthly-report.csv' });
    expect(await link.getAttribute('download')).toBe('monthly-report.csv');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const fetched = await context.request.get(download.url());
    expect(fetched.status()).toBe(200);
    expect((await fetched.body()).toString()).toBe(CSV);

    // Delete asks first: Cancel keeps it, Yes deletes it.
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await row.isVisible()).toBe(true);
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(0);
    expect((await stack.http.get(listPath, { token })).body).toEqual([]);
    expect((await context.request.get(download.url())).status()).toBe(404);
    expect(failures).toEqual([]);
    await context.close();
  }, 240_000);
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
    await expect.poll(() => page.getByRole('heading', { name: 'Projects', exact: true }).isVisible(), { timeout: 30_000 }).toBe(true);
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
    await expect.poll(() => marks.count(), soon).toBeGreaterThanOrEqual(2);
    const titles = await marks.evaluateAll((elements) => elements.map((element) => element.getAttribute('title')));
    expect(titles).toEqual(expect.arrayContaining(['step open', 'step pass']));
    expect(failures).toEqual([]);
    await context.close();
  }, 240_000);
});
