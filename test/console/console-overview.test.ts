import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Project } from '../../db/entities/index.ts';
import { meter } from '../../server/billing/metering.ts';
import { createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { checkPage } from '../support/consoleChecks.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * The console's project overview (issue 37) in Chromium on the real stack: the runs of two
 * pipelines (one fails) and a function's execution, filtered by status, pipeline, function and
 * time, sorted and linked to their pages; and the project's usage, billing off. At 1280 and 390
 * pixels wide, with no sideways scroll.
 */

let stack: TestStack;
let browser: Browser;
let user: Awaited<ReturnType<typeof registerUser>>;
let slug: string;
let projectId: string;
const pipelines: Record<'greeter' | 'breaker', string> = { greeter: '', breaker: '' };
const runs: Record<'greeter' | 'breaker' | 'function', string> = { greeter: '', breaker: '', function: '' };
/** A time between the greeter's run and the two after it, to the second (the console's time fields take seconds). */
let split: Date;

const greeterSource = {
  parameters: {},
  nodes: { hello: { type: 'text.template', inputs: { template: 'hi' } } },
  outputs: { text: { $ref: 'hello.text' } },
};
const breakerSource = {
  nodes: {
    page: { type: 'browser.page' },
    boom: { type: 'page.evaluate', inputs: { page: { $ref: 'page.page' }, script: 'throw new Error("planned failure")' } },
  },
};

/** How long a page may take to show what a wait expects, on a busy machine. */
const soon = { timeout: 30_000 };

async function putPipeline(name: string, source: object) {
  const created = await stack.http.put(`/${slug}/api/pipelines`, { name, description: '', source }, { token: user.token });
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

/** Polls `check` until it answers true (beforeAll has no expect.poll): fails after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Starts a run and follows it to its end (a wait answered 202 on a busy machine is read again). */
async function runPipeline(pipelineId: string, session: string) {
  const started = await stack.http.post(`/${slug}/api/pipelines/${pipelineId}/start`, { session, wait: 60 }, { token: user.token });
  expect([200, 202], started.text).toContain(started.status);
  type Run = { id: string; status: { pipeline: string }; created: string };
  let run = started.body as Run;
  await until('the run to end', async () => {
    run = (await stack.http.get(`/${slug}/api/pipelines/${pipelineId}/${run.id}`, { token: user.token })).body as Run;
    return !['queued', 'running'].includes(run.status.pipeline);
  });
  return run;
}

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  browser = await launchChromium();
  user = await registerUser(stack);
  ({ slug, id: projectId } = await createProject(stack, user.token));
  const session = await stack.http.put(`/${slug}/api/sessions`, { name: 'overview' }, { token: user.token });
  expect(session.status, session.text).toBe(200);
  pipelines.greeter = await putPipeline('Greeter', greeterSource);
  pipelines.breaker = await putPipeline('Breaker', breakerSource);
  const fn = await stack.http.put(
    `/${slug}/api/functions`,
    { name: 'Hello function', slug: 'hello', definition: { source: greeterSource } },
    { token: user.token },
  );
  expect(fn.status, fn.text).toBe(200);

  const greeted = await runPipeline(pipelines.greeter, session.body.id);
  expect(greeted.status.pipeline).toBe('succeeded');
  runs.greeter = greeted.id;
  // The next whole second after the greeter's run was created: the runs started from here on are after it.
  split = new Date(Math.floor(Date.parse(greeted.created) / 1000) * 1000 + 1000);
  await until('the clock to pass the split', () => Date.now() > split.getTime() + 10, 5_000);
  const broken = await runPipeline(pipelines.breaker, session.body.id);
  expect(broken.status.pipeline).toBe('failed');
  runs.breaker = broken.id;
  const executed = await stack.http.post(`/${slug}/api/functions/slug/hello/execute`, { args: {}, wait: 60 }, { token: user.token });
  expect([200, 202], executed.text).toContain(executed.status);
  runs.function = executed.body.identifier;
  await until(
    'the function to succeed',
    async () =>
      (await stack.http.get(`/${slug}/api/functions/${fn.body.id}/runs/${runs.function}`, { token: user.token })).body.result?.status
        ?.pipeline === 'succeeded',
  );
  // The runs above are calls (contexts of the project's browser); the session's own browser,
  // started and stopped, is what the usage page counts as a browser started.
  const started = await stack.http.post(`/${slug}/api/sessions/${session.body.id}/start`, {}, { token: user.token });
  expect(started.status, started.text).toBe(200);
  const stopped = await stack.http.post(`/${slug}/api/sessions/${session.body.id}/${started.body.id}/stop`, {}, { token: user.token });
  expect(stopped.status, stopped.text).toBe(200);
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

async function signedIn(width = 1280) {
  // UTC in the page, so a time typed in its fields is the one the test means.
  const context = await browser.newContext({ baseURL: stack.url, timezoneId: 'UTC', locale: 'en-US', viewport: { width, height: 800 } });
  const page = await context.newPage();
  const failures: string[] = [];
  page.on('pageerror', (error) => failures.push(error.message));
  await page.goto('/');
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('heading', { name: 'Projects', exact: true }).isVisible(), soon).toBe(true);
  return { page, failures };
}

/** The ids of the runs the table shows, in its order. */
async function shownRuns(page: Page) {
  const labels = await page
    .getByRole('table', { name: 'runs' })
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('aria-label')));
  return labels.map((label) => String(label).replace(/^run /, ''));
}

/** Waits until the table shows exactly `expected` runs, in that order. */
async function expectRuns(page: Page, expected: string[]) {
  await expect.poll(() => shownRuns(page).catch(() => []), soon).toEqual(expected);
}

/** Picks `option` in the Mantine Select or MultiSelect labelled `label`, then closes its list. */
async function choose(page: Page, label: string, option: string) {
  await page.getByRole('combobox', { name: label, exact: true }).click({ force: true });
  await page.getByRole('option', { name: option, exact: true }).click();
  await page.keyboard.press('Escape');
}

/** The message shown beside a field: the element the input names in aria-describedby as its error. */
async function errorBeside(input: Locator) {
  const errorIds = async () => ((await input.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter((id) => id.endsWith('-error'));
  await expect.poll(async () => (await errorIds()).length, soon).toBe(1);
  const text = (
    await input
      .page()
      .locator(`[id="${(await errorIds())[0]}"]`)
      .innerText()
  ).trim();
  expect(text).not.toMatch(/[{[]|"code"/);
  return text;
}

/**
 * No part of the page's own content reaches past the window's right edge. The console's header is
 * the shell's (being redone with Mantine's AppShell, issue 37): measured is `main`, what this page draws.
 */
async function noSidewaysScroll(page: Page) {
  const past = await page.evaluate(() => {
    const main = document.querySelector('main') as HTMLElement;
    const wide = [...main.querySelectorAll('*')].filter((element) => element.getBoundingClientRect().right > window.innerWidth + 0.5);
    return {
      main: main.scrollWidth <= window.innerWidth,
      wide: wide
        .slice(0, 5)
        .map((element) => `${element.tagName.toLowerCase()}.${element.className} ${Math.round(element.getBoundingClientRect().right)}`),
      document: document.documentElement.scrollWidth,
    };
  });
  expect({ main: past.main, wide: past.wide }, `document ${past.document} px wide`).toEqual({ main: true, wide: [] });
}

/** `2026-12-07T21:45:30` (UTC) for a datetime-local field. */
const localField = (date: Date) => date.toISOString().slice(0, 19);

describe('the runs overview', () => {
  it('lists the runs of both pipelines and the function, and filters them by status, pipeline, function and time', async () => {
    const { page, failures } = await signedIn();
    await page.goto(`/#/projects/${slug}/more/runs`);
    await expectRuns(page, [runs.function, runs.breaker, runs.greeter]);
    const table = page.getByRole('table', { name: 'runs' });
    const breakerRow = table.getByRole('row', { name: `run ${runs.breaker}` });
    expect(await breakerRow.innerText()).toMatch(/failed[\s\S]*Breaker[\s\S]*script_error at boom/i);
    expect(await table.getByRole('row', { name: `run ${runs.function}` }).innerText()).toMatch(
      /succeeded[\s\S]*Hello function \(function\)/i,
    );
    expect(await page.getByText('3 runs').isVisible()).toBe(true);
    await checkPage(page, 'runs-overview');

    // By status.
    await choose(page, 'Status', 'failed');
    await expectRuns(page, [runs.breaker]);
    await choose(page, 'Status', 'succeeded');
    await expectRuns(page, [runs.function, runs.breaker, runs.greeter]);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await choose(page, 'Status', 'succeeded');
    await expectRuns(page, [runs.function, runs.greeter]);
    await page.getByRole('button', { name: 'Clear filters' }).click();

    // By pipeline, and by function.
    await choose(page, 'Pipeline or function', 'Greeter');
    await expectRuns(page, [runs.greeter]);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expectRuns(page, [runs.function, runs.breaker, runs.greeter]);
    await choose(page, 'Pipeline or function', 'Hello function (hello)');
    await expectRuns(page, [runs.function]);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expectRuns(page, [runs.function, runs.breaker, runs.greeter]);

    // By time: from the split on, the two runs after the greeter's; before it, the greeter's alone.
    await page.getByLabel('From', { exact: true }).fill(localField(split));
    await expectRuns(page, [runs.function, runs.breaker]);
    await page.getByLabel('From', { exact: true }).fill('');
    await page.getByLabel('To', { exact: true }).fill(localField(split));
    await expectRuns(page, [runs.greeter]);
    // A range that ends before it starts: the API's words beside the field.
    await page.getByLabel('From', { exact: true }).fill(localField(new Date(split.getTime() + 60_000)));
    expect(await errorBeside(page.getByLabel('To', { exact: true }))).toMatch(/later than from/);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expectRuns(page, [runs.function, runs.breaker, runs.greeter]);

    // Sorted by a header: oldest first.
    await table.getByRole('button', { name: 'Created' }).click();
    await expectRuns(page, [runs.function, runs.breaker, runs.greeter].reverse());

    // A pipeline's run links to its page.
    await table
      .getByRole('row', { name: `run ${runs.breaker}` })
      .getByRole('link', { name: 'Breaker' })
      .click();
    await expect
      .poll(() => page.evaluate(() => window.location.hash), soon)
      .toBe(`#/projects/${slug}/pipelines/${pipelines.breaker}/runs/${runs.breaker}`);
    await expect.poll(() => page.getByText('planned failure').first().isVisible(), soon).toBe(true);
    expect(failures).toEqual([]);
  }, 180_000);

  it('fits a phone, and says what to do when a project has no runs', async () => {
    const { page, failures } = await signedIn(390);
    await page.goto(`/#/projects/${slug}/more/runs`);
    await expectRuns(page, [runs.function, runs.breaker, runs.greeter]);
    await noSidewaysScroll(page);
    await checkPage(page, 'runs-overview-phone');

    const empty = await createProject(stack, user.token);
    await page.goto(`/#/projects/${empty.slug}/more/runs`);
    await expect.poll(() => page.getByText('No runs yet').isVisible(), soon).toBe(true);
    expect(await page.getByRole('link', { name: 'Open pipelines' }).getAttribute('href')).toBe(`#/projects/${empty.slug}/pipelines`);
    await noSidewaysScroll(page);
    expect(failures).toEqual([]);
  }, 120_000);
});

describe('the project’s usage', () => {
  it('shows what the project used, billing off, and a kind empty state', async () => {
    // Model tokens as an agent's call meters them (server/agents/model/conversation.ts), beside
    // what the runs' browsers used.
    const em = stack.orm.em.fork();
    const project = await em.findOneOrFail(Project, { id: projectId }, { populate: ['owner'] });
    await meter(em, stack.config.billing, project, {
      resourceId: '22222222-2222-4222-8222-222222222222',
      unit: 'tokens',
      quantityMicro: 1234n * 1_000_000n,
    });
    const today = new Date().toISOString().slice(0, 10);
    for (const width of [1280, 390]) {
      const { page, failures } = await signedIn(width);
      await page.goto(`/#/projects/${slug}/more/usage`);
      await expect.poll(() => page.getByText('Billing is off').isVisible(), soon).toBe(true);
      const tokens = page.getByRole('group', { name: 'Model tokens' });
      await expect.poll(() => tokens.innerText(), soon).toMatch(/1,234/);
      // The runs' browsers: started today, counted.
      await expect.poll(() => page.getByRole('group', { name: 'Browser time' }).innerText(), soon).toMatch(/[1-9]\d* browsers? started/);
      await expect.poll(() => page.getByRole('row', { name: `usage on ${today}` }).isVisible(), soon).toBe(true);
      expect(await page.getByRole('row', { name: `usage on ${today}` }).innerText()).toMatch(/1,234/);
      expect(await page.getByText('Billed').count()).toBe(0);
      await noSidewaysScroll(page);
      await checkPage(page, width === 1280 ? 'usage' : 'usage-phone');
      expect(failures).toEqual([]);
      await page.context().close();
    }

    const { page } = await signedIn(390);
    const empty = await createProject(stack, user.token);
    await page.goto(`/#/projects/${empty.slug}/more/usage`);
    await expect.poll(() => page.getByText('No usage in this period').isVisible(), soon).toBe(true);
    expect(await page.getByRole('link', { name: 'Open sessions' }).getAttribute('href')).toBe(`#/projects/${empty.slug}`);
    await noSidewaysScroll(page);
  }, 120_000);
});
