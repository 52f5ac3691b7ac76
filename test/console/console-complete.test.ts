import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { checkPage } from '../support/consoleChecks.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { RECEIVER_HOST, startWebhookReceiver } from '../support/webhookReceivers.ts';

/**
 * What only the API could do before issue 37, done in the console in Chromium: a function made
 * from a pipeline version, a webhook that hears an event and resends it, a proxy, a password
 * change. Every form, given bad input, says what is wrong beside the field, in words.
 */

let stack: TestStack;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let user: { email: string; token: string };
let slug: string;

/** A pipeline with a parameter and an output, no browser: `hi <who>`. */
const greeterSource = {
  parameters: { who: { refType: 'string', description: 'whom to greet' } },
  nodes: { hello: { type: 'text.template', inputs: { template: 'hi {{who}}', who: { $param: 'who' } } } },
  outputs: { text: { $ref: 'hello.text' } },
};

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  // A function executes on a browser host even when its pipeline opens no page.
  stack = await startTestStack(
    {
      BROWSER_ALLOWED_PRIVATE_DESTINATIONS: RECEIVER_HOST,
      WEBHOOK_RETRY_INITIAL_SECONDS: '1',
      WEBHOOK_RETRY_MAX_INTERVAL_SECONDS: '2',
      WEBHOOK_TIMEOUT_SECONDS: '2',
    },
    { browserHost: true },
  );
  browser = await launchChromium();
  user = await registerUser(stack);
  slug = (await createProject(stack, user.token)).slug;
  const pipeline = await stack.http.put(
    `/${slug}/api/pipelines`,
    { name: 'Greeter pipeline', description: '', source: greeterSource },
    { token: user.token },
  );
  expect(pipeline.status, pipeline.text).toBe(200);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await receiver?.close();
});

async function signedIn(password = PASSWORD) {
  const context = await browser.newContext({ baseURL: stack.url, permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  const failures: string[] = [];
  page.on('pageerror', (error) => failures.push(error.message));
  await page.goto('/');
  await signIn(page, password);
  return { page, failures };
}

async function signIn(page: Page, password: string) {
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('heading', { name: 'Projects', exact: true }).isVisible(), soon).toBe(true);
}

/** How long a page may take to show what a poll waits for, on a busy machine. */
const soon = { timeout: 20_000 };

/** The message shown beside a field: the element the input names in aria-describedby as its error. */
async function errorBeside(input: Locator) {
  const errorIds = async () => ((await input.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter((id) => id.endsWith('-error'));
  await expect.poll(async () => (await errorIds()).length, { timeout: 15_000 }).toBe(1);
  const described = await errorIds();
  const text = (await input.page().locator(`[id="${described[0]}"]`).innerText()).trim();
  expect(text.length).toBeGreaterThan(0);
  // Words, not the error body: no JSON, no codes.
  expect(text).not.toMatch(/[{[]|"code"/);
  return text;
}

/** Picks `option` in the Mantine Select or MultiSelect labelled `label`. */
async function choose(scope: Locator, label: string, option: string) {
  // A MultiSelect's pills field sits under its box, which takes the click: forced, as a user's lands on the box.
  await scope.getByLabel(label, { exact: true }).click({ force: true });
  await scope.page().getByRole('option', { name: option, exact: true }).click();
}

describe('the console does what only the API did', () => {
  it('creates a function from a pipeline version, its interface filled from it', async () => {
    const { page, failures } = await signedIn();
    await page.goto(`/#/projects/${slug}/functions`);
    await expect.poll(() => page.getByText('No functions yet').isVisible(), soon).toBe(true);
    await page.getByRole('button', { name: 'Create function' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create function from a pipeline' });
    await choose(dialog, 'Pipeline', 'Greeter pipeline');
    // The current version is chosen, and the interface comes from its source.
    await expect.poll(() => dialog.getByLabel('Version', { exact: true }).inputValue(), soon).toMatch(/\(current\)/);
    const table = dialog.getByRole('table', { name: 'function interface' });
    await expect.poll(() => table.innerText(), soon).toMatch(/parameter\s+who\s+string/);
    expect(await table.innerText()).toMatch(/output\s+text\s+string/);
    expect(await dialog.getByLabel('Name', { exact: true }).inputValue()).toBe('Greeter pipeline');
    expect(await dialog.getByLabel('Slug', { exact: true }).inputValue()).toBe('greeter-pipeline');
    await checkPage(page, 'create-function');

    // A slug the API refuses: its message beside the field.
    await dialog.getByLabel('Slug', { exact: true }).fill('not a slug!');
    await dialog.getByRole('button', { name: 'Create function' }).click();
    expect(await errorBeside(dialog.getByLabel('Slug', { exact: true }))).toMatch(/letters, digits/);

    await dialog.getByLabel('Slug', { exact: true }).fill('greeter');
    await dialog.getByRole('button', { name: 'Create function' }).click();
    await expect.poll(() => page.getByRole('article', { name: 'function greeter' }).isVisible(), { timeout: 15_000 }).toBe(true);

    const listed = await stack.http.get(`/${slug}/api/functions`, { token: user.token });
    const fn = listed.body[0];
    expect(fn).toMatchObject({
      slug: 'greeter',
      parameters: [{ name: 'who', refType: 'string', description: 'whom to greet' }],
      outputs: [{ name: 'text', refType: 'string' }],
    });
    const pipelines = await stack.http.get(`/${slug}/api/pipelines`, { token: user.token });
    expect(fn.sourcePipelineId).toBe(pipelines.body[0].id);
    expect(fn.sourcePipelineVersionId).toBe(pipelines.body[0].version);
    const executed = await stack.http.post(
      `/${slug}/api/functions/slug/greeter/execute`,
      { args: { who: 'Ada' }, wait: 30 },
      { token: user.token },
    );
    expect(executed.status, executed.text).toBe(200);
    expect(executed.body.outputs).toEqual({ text: 'hi Ada' });
    expect(failures).toEqual([]);
  }, 120_000);

  it('adds a webhook, sees its delivery, resends it, rotates its secret and deletes it', async () => {
    const { page, failures } = await signedIn();
    await page.goto(`/#/projects/${slug}/more/webhooks`);
    await expect.poll(() => page.getByText('No webhooks yet').isVisible(), soon).toBe(true);
    await checkPage(page, 'webhooks-empty');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add webhook' });

    await dialog.getByLabel('URL', { exact: true }).fill('not a url');
    await dialog.getByRole('button', { name: 'Add webhook' }).click();
    await errorBeside(dialog.getByLabel('URL', { exact: true }));

    await dialog.getByLabel('URL', { exact: true }).fill(receiver.url('/console'));
    await choose(dialog, 'Events', 'function.finished');
    // The list stays open for more: moving on (Tab) closes it.
    await page.keyboard.press('Tab');
    await expect.poll(() => page.getByRole('option', { name: 'run.finished' }).count(), soon).toBe(0);
    await dialog.getByRole('button', { name: 'Add webhook' }).click();
    const secret = page.getByLabel('The new webhook’s signing secret value');
    await expect.poll(() => secret.isVisible(), { timeout: 15_000 }).toBe(true);
    const first = (await secret.innerText()).trim();
    expect(first.length).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByText(first).count()).toBe(0);
    const card = page.getByRole('article', { name: `webhook ${receiver.url('/console')}` });
    // Badges are drawn upper-case: the words, in any case.
    expect((await card.innerText()).toLowerCase()).toContain('function.finished');

    // An event it wants: the function made above, executed.
    const executed = await stack.http.post(
      `/${slug}/api/functions/slug/greeter/execute`,
      { args: { who: 'Grace' }, wait: 30 },
      { token: user.token },
    );
    expect(executed.status, executed.text).toBe(200);
    await expect.poll(() => receiver.at('/console').length, { timeout: 30_000 }).toBe(1);

    await card.getByRole('button', { name: 'Deliveries' }).click();
    const log = card.getByRole('table', { name: 'deliveries' });
    await expect.poll(() => log.innerText(), { timeout: 15_000 }).toMatch(/function\.finished\s+succeeded/i);
    await checkPage(page, 'webhooks');
    await log.getByRole('button', { name: 'Resend' }).click();
    await expect.poll(() => receiver.at('/console').length, { timeout: 30_000 }).toBe(2);
    const [sent, resent] = receiver.at('/console');
    expect(resent?.headers['webhook-id']).toBe(sent?.headers['webhook-id']);
    await expect.poll(() => log.getByRole('row').count(), { timeout: 15_000 }).toBe(3);
    await expect.poll(() => log.innerText(), { timeout: 15_000 }).toMatch(/\(resent\)\s+succeeded/i);

    await card.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = page.getByLabel(`The new signing secret of ${receiver.url('/console')} value`);
    await expect.poll(() => rotated.isVisible(), { timeout: 15_000 }).toBe(true);
    expect((await rotated.innerText()).trim()).not.toBe(first);
    await page.getByRole('button', { name: 'I have copied it' }).click();

    await card.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this webhook?' }).getByRole('button', { name: 'Delete webhook' }).click();
    await expect.poll(() => page.getByText('No webhooks yet').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(failures).toEqual([]);
  }, 120_000);

  it('adds a proxy without ever showing its password, and deletes it', async () => {
    const { page, failures } = await signedIn();
    await page.goto(`/#/projects/${slug}/more/proxies`);
    await expect.poll(() => page.getByText('No proxies yet').isVisible(), soon).toBe(true);
    await page.getByRole('button', { name: 'Add proxy' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add proxy' });
    await dialog.getByLabel('Host', { exact: true }).fill('proxy.example.test');
    await dialog.getByLabel('Port', { exact: true }).fill('eighty');
    await dialog.getByRole('button', { name: 'Add proxy' }).click();
    await errorBeside(dialog.getByLabel('Port', { exact: true }));
    await dialog.getByLabel('Host', { exact: true }).fill('bad host!');
    await dialog.getByLabel('Port', { exact: true }).fill('8080');
    await dialog.getByRole('button', { name: 'Add proxy' }).click();
    expect(await errorBeside(dialog.getByLabel('Host', { exact: true }))).toMatch(/host name/);

    const password = 'pw-never-shown-42';
    await dialog.getByLabel('Name', { exact: true }).fill('Office');
    await dialog.getByLabel('Host', { exact: true }).fill('proxy.example.test');
    await dialog.getByLabel('User name', { exact: true }).fill('ada');
    await dialog.getByLabel('Password', { exact: true }).fill(password);
    await dialog.getByRole('button', { name: 'Add proxy' }).click();
    const row = page.getByRole('row', { name: 'proxy Office' });
    await expect.poll(() => row.isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await row.innerText()).toMatch(/http:\/\/proxy\.example\.test:8080\s+ada\s+set/);
    expect(await page.content()).not.toContain(password);
    await checkPage(page, 'proxies');

    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this proxy?' }).getByRole('button', { name: 'Delete proxy' }).click();
    await expect.poll(() => page.getByText('No proxies yet').isVisible(), { timeout: 15_000 }).toBe(true);
    expect((await stack.http.get(`/${slug}/api/proxies?source=db`, { token: user.token })).body).toEqual([]);
    expect(failures).toEqual([]);
  }, 120_000);

  it('changes the password, then signs in with the new one', async () => {
    const { page, failures } = await signedIn();
    await page.goto('/#/account');
    const form = page.getByRole('form', { name: 'change password' });
    const current = form.getByLabel('Current password', { exact: true });
    const next = form.getByLabel('New password', { exact: true });
    const again = form.getByLabel('New password again', { exact: true });
    const submit = form.getByRole('button', { name: 'Change password' });
    await checkPage(page, 'account');

    await current.fill(PASSWORD);
    await next.fill('short');
    await again.fill('short');
    await submit.click();
    expect(await errorBeside(next)).toMatch(/at least 8 characters/);

    const fresh = 'a brand new battery staple';
    await next.fill(fresh);
    await again.fill(`${fresh}!`);
    await submit.click();
    expect(await errorBeside(again)).toMatch(/does not match/);

    await current.fill('not my password');
    await again.fill(fresh);
    await submit.click();
    expect(await errorBeside(current)).toMatch(/wrong password/);

    await current.fill(PASSWORD);
    await submit.click();
    await expect.poll(() => form.getByText('Password changed').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await current.inputValue()).toBe('');

    await page.getByRole('button', { name: `account ${user.email}` }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Sign in' }).isVisible(), soon).toBe(true);
    await page.evaluate(() => {
      window.location.hash = '#/projects';
    });
    await signIn(page, fresh);
    expect((await stack.http.post('/api/auth/login', { email: user.email, password: PASSWORD, remember: false })).status).toBe(401);
    expect(failures).toEqual([]);
  }, 120_000);
});
