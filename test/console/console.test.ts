import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generate } from 'otplib';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleDist } from '../../server/http/consoleRoutes.ts';
import { createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { checkPage } from '../support/consoleChecks.ts';
import { startTestSite } from '../support/pages.ts';
import { tokenFromMail } from '../support/smtp.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * The web console at `/` (docs/console.md), driven in Chromium as a user would: the service's own
 * build of it, on the real stack. Every step goes through the typed tRPC client the console is
 * built on, with the session cookie the sign-in sets.
 */

let stack: TestStack;
let browser: Browser;
let site: Awaited<ReturnType<typeof startTestSite>>;

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  browser = await launchChromium();
  site = await startTestSite();
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await stack?.close();
});

/** How long a page may take to show what a poll waits for, on a busy machine (CI: the whole suite on 2 cores). */
const soon = { timeout: 30_000 };

async function consolePage() {
  const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'], baseURL: stack.url });
  const page = await context.newPage();
  const failures: string[] = [];
  // A CSP violation or a script error shows here: the console loads nothing from elsewhere.
  page.on('console', (message) => {
    if (message.type() === 'error') failures.push(message.text());
  });
  page.on('pageerror', (error) => failures.push(error.message));
  await page.goto('/');
  return { page, failures };
}

async function signIn(page: Page, email: string) {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('heading', { name: 'Projects', exact: true }).isVisible(), soon).toBe(true);
}

describe('the web console', () => {
  it('is served at / with its assets, under a CSP that allows only this origin; API paths stay JSON', async () => {
    const index = await fetch(`${stack.url}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const script = html.match(/src="(\/assets\/[^"]+\.js)"/)?.[1];
    expect(script, html).toBeTruthy();
    expect(html).not.toMatch(/https?:\/\//);
    const asset = await fetch(`${stack.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const unknown = await fetch(`${stack.url}/no-such-page`, { headers: { accept: 'text/html' } });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).code).toBe('not_found');
  });

  it('serves a rebuild without a restart, and nothing outside its assets', async () => {
    // What a `vite build` after the start writes: a file the running service has never seen.
    const name = `rebuilt-${randomBytes(4).toString('hex')}.js`;
    const file = path.join(consoleDist, 'assets', name);
    writeFileSync(file, 'console.log("rebuilt");\n');
    try {
      const fresh = await fetch(`${stack.url}/assets/${name}`);
      expect(fresh.status).toBe(200);
      expect(await fresh.text()).toContain('rebuilt');
      expect(fresh.headers.get('cache-control')).toContain('immutable');
      expect(fresh.headers.get('content-security-policy')).toContain("default-src 'none'");
    } finally {
      rmSync(file, { force: true });
    }
    expect((await fetch(`${stack.url}/assets/${name}`)).status).toBe(404);
    // Sent as written (fetch would resolve the dots first).
    const rawGet = (target: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { hostname, port } = new URL(stack.url);
        const request = http.request({ hostname, port, path: target }, (response) => {
          let body = '';
          response.on('data', (chunk) => {
            body += chunk;
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        });
        request.on('error', reject);
        request.end();
      });
    for (const outside of [
      '/assets/../package.json',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/assets/..%2f..%2fpackage.json',
      '/assets/',
      '/assets//index.html',
    ]) {
      const refused = await rawGet(outside);
      expect(refused.status, outside).toBe(404);
      expect(JSON.parse(refused.body).code, outside).toBe('not_found');
    }
  });

  it('a new user registers, follows the mailed link, signs in, and signs out', async () => {
    const { page, failures } = await consolePage();
    const email = `console-${randomBytes(4).toString('hex')}@example.test`;
    await page.getByRole('button', { name: 'Create an account' }).click();
    await checkPage(page, 'register');
    await page.getByLabel('First name').fill('Grace');
    await page.getByLabel('Last name').fill('Hopper');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Register' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Verify your e-mail address' }).isVisible(), soon).toBe(true);
    await checkPage(page, 'verify-email');

    const mail = await stack.smtp.waitFor((m) => m.to.includes(email) && /verify/i.test(m.subject));
    const verified = await stack.http.post('/api/auth/verify/submit', { token: tokenFromMail(mail) });
    expect(verified.status, verified.text).toBe(200);
    await page.reload();
    await expect.poll(() => page.getByRole('heading', { name: 'Projects', exact: true }).isVisible(), soon).toBe(true);
    await expect.poll(() => page.getByRole('button', { name: `account ${email}` }).isVisible(), soon).toBe(true);
    await checkPage(page, 'projects');

    await page.getByRole('button', { name: `account ${email}` }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in to Browserflow' }).isVisible(), soon).toBe(true);
    await checkPage(page, 'sign-in');
    await signIn(page, email);
    expect(failures).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('a wrong password says so and keeps the form', async () => {
    const { email } = await registerUser(stack);
    const { page } = await consolePage();
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), soon).toContain('E-mail or password is wrong (invalid_credentials)');
    expect(await page.getByLabel('E-mail').inputValue()).toBe(email);
    await page.context().close();
  }, 30_000);

  it('creates a project and a session, starts a browser with its CDP URL and snippets, and stops it', async () => {
    const { email } = await registerUser(stack);
    const { page, failures } = await consolePage();
    await signIn(page, email);
    const slug = `console-${randomBytes(3).toString('hex')}`;
    await page.getByLabel('Name').fill('Console shop');
    await page.getByLabel('Slug').fill(slug);
    await page.getByRole('button', { name: 'Create project' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Console shop' }).isVisible(), soon).toBe(true);
    expect(page.url()).toContain(`#/projects/${slug}`);

    await page.getByRole('textbox', { name: 'New session', exact: true }).fill('checkout');
    await page.getByRole('button', { name: 'Create session' }).click();
    const card = page.getByRole('article', { name: 'session checkout' });
    await card.getByRole('button', { name: 'Start a browser' }).click();
    const cdp = card.getByLabel('CDP URL');
    await expect.poll(() => cdp.isVisible(), { timeout: 30_000 }).toBe(true);
    const remoteUrl = (await cdp.textContent()) as string;
    expect(remoteUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\//);
    expect(await card.getByLabel('Playwright').textContent()).toContain(`chromium.connectOverCDP('${remoteUrl}')`);
    expect(await card.getByLabel('Puppeteer').textContent()).toContain(`browserWSEndpoint: '${remoteUrl}'`);
    // The service agrees: the session has a browser running.
    const sessions = await stack.http.get(`/${slug}/api/sessions`, { cookie: await cookieOf(page) });
    expect(sessions.body.find((session: { name: string }) => session.name === 'checkout')).toMatchObject({ status: 'running' });

    // The live view embedded, and the browser's log live.
    await card.getByText('Live view', { exact: true }).click();
    const frame = page.frameLocator(`iframe[title^="live view of"]`);
    await expect.poll(() => frame.getByAltText('browser screen').count(), soon).toBe(1);
    // Its bar: an address typed is opened, back returns, the tabs are listed; file: is refused.
    const address = frame.getByLabel('address');
    await expect.poll(() => frame.getByRole('toolbar', { name: 'tabs' }).getByRole('button').count(), soon).toBe(1);
    await checkPage(page, 'sessions-live-view');
    await address.fill(site.url);
    await address.press('Enter');
    await expect.poll(() => address.inputValue(), soon).toBe(`${site.url}/`);
    await expect.poll(() => frame.getByRole('button', { name: 'back' }).isEnabled(), soon).toBe(true);
    await expect.poll(() => frame.getByRole('toolbar', { name: 'tabs' }).getByRole('button').textContent(), soon).toBe('Test page');
    await frame.getByRole('button', { name: 'back' }).click();
    await expect.poll(() => address.inputValue(), soon).toBe('about:blank');
    // A script drives the browser over the CDP URL the card shows: the live view follows it.
    const screen = frame.getByAltText('browser screen');
    const before = await screen.getAttribute('src');
    const scripted = await chromium.connectOverCDP(remoteUrl);
    try {
      const [tab] = scripted.contexts()[0]?.pages() ?? [];
      await tab?.goto(`${site.url}/?by=script`);
      await expect.poll(() => address.inputValue(), soon).toBe(`${site.url}/?by=script`);
      await expect.poll(() => screen.getAttribute('src'), soon).not.toBe(before);
    } finally {
      await scripted.close();
    }
    await address.fill('file:///etc/passwd');
    await address.press('Enter');
    await expect.poll(() => frame.locator('#status').textContent(), soon).toContain('not a page the live view opens');
    await card.getByText('Logs', { exact: true }).click();
    await expect.poll(() => card.getByRole('list', { name: 'logs' }).textContent(), soon).toMatch(/started|running|launched/i);

    await card.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => cdp.isVisible(), { timeout: 30_000 }).toBe(false);
    expect(failures).toEqual([]);
    await page.context().close();
  }, 150_000);

  it('creates an API key whose secret is shown once and works, then revokes it', async () => {
    const { email } = await registerUser(stack);
    const { page, failures } = await consolePage();
    await signIn(page, email);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByLabel('Secret');
    await expect.poll(() => secret.isVisible(), soon).toBe(true);
    await checkPage(page, 'api-keys');
    const value = (await secret.textContent()) as string;
    expect(value).toMatch(/^bfk_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(value);
    expect((await stack.http.get('/api/auth', { apiKey: value })).body.status).toBe('ok');

    // Listed by its prefix only; after a reload the secret is gone for good.
    await page.reload();
    await expect.poll(() => page.getByRole('cell', { name: 'ci', exact: true }).isVisible(), soon).toBe(true);
    expect(await page.content()).not.toContain(value);

    await page.getByRole('button', { name: 'Revoke' }).click();
    // Asked first, in a dialog; Enter answers the focused "Yes, revoke".
    const asked = page.getByRole('dialog');
    expect(await asked.textContent()).toContain('Revoke ci? Whatever uses it stops working.');
    await asked.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => asked.count(), soon).toBe(0);
    expect((await stack.http.get('/api/auth', { apiKey: value })).body.status).toBe('ok');
    await page.getByRole('button', { name: 'Revoke' }).click();
    // Enter once the dialog has put the focus on its answer, as a person sees it there first.
    const yes = page.getByRole('dialog').getByRole('button', { name: 'Yes, revoke' });
    await expect.poll(() => yes.evaluate((button) => button === document.activeElement), soon).toBe(true);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByText('No keys yet.').isVisible(), soon).toBe(true);
    expect((await stack.http.get('/api/auth', { apiKey: value })).status).toBe(401);
    expect(failures).toEqual([]);
    await page.context().close();
  }, 120_000);
});

describe('project settings and session settings', () => {
  it('a project is renamed, made public and moved to a new slug, a session created with a proxy and cookies, and the project deleted', async () => {
    const user = await registerUser(stack);
    const project = await createProject(stack, user.token);
    const { page, failures } = await consolePage();
    await signIn(page, user.email);
    await page.goto(`/#/projects/${project.slug}`);
    const form = page.getByRole('form', { name: 'new session' });
    await form.getByRole('textbox', { name: 'New session', exact: true }).fill('with settings');
    await form.getByText('Screen, proxy and cookies').click();
    await form.getByLabel('Screen width').fill('1024');
    await form.getByLabel('Screen height').fill('600');
    await form.getByLabel('Locale').fill('fr-FR');
    await form.getByLabel('Timezone').fill('Europe/Paris');
    await form.getByLabel('Fingerprint').selectOption('automation');
    await form.getByLabel('Proxy', { exact: true }).fill('http://proxy.example.test:3128');
    await form.getByLabel('Proxy user').fill('alice');
    expect(await form.getByLabel('Proxy password').getAttribute('type')).toBe('password');
    await form.getByLabel('Proxy password').fill('proxy-pass-1');
    await form.getByLabel('Cookies (JSON)').fill('[{"name": "sid", "value": "abc", "domain": "shop.example.test", "path": "/"}]');
    await form.getByRole('button', { name: 'Create session' }).click();
    await expect.poll(() => page.getByRole('article', { name: 'session with settings' }).isVisible(), soon).toBe(true);
    const sessions = (await stack.http.get(`/${project.slug}/api/sessions`, { token: user.token })).body as { id: string; name: string }[];
    const created = sessions.find((session) => session.name === 'with settings') as { id: string };
    const detail = (await stack.http.get(`/${project.slug}/api/sessions/${created.id}`, { token: user.token })).body;
    expect(detail).toMatchObject({
      screen: { width: 1024, height: 600 },
      proxy: { hostname: 'proxy.example.test', port: 3128 },
      locale: 'fr-FR',
      timezone: 'Europe/Paris',
      fingerprint: 'automation',
    });
    expect(detail.cookies).toEqual([expect.objectContaining({ name: 'sid', domain: 'shop.example.test' })]);
    expect(JSON.stringify(detail)).not.toContain('proxy-pass-1');

    // Its settings changed later: renamed, the proxy removed; then the session deleted.
    const card = page.getByRole('article', { name: 'session with settings' });
    await card.getByText('Settings', { exact: true }).click();
    const edit = card.getByRole('form', { name: 'settings of with settings' });
    await edit.getByLabel('Name').fill('edited session');
    await edit.getByText('Screen, proxy and cookies').click();
    expect(await edit.getByLabel('Proxy', { exact: true }).inputValue()).toBe('http://proxy.example.test:3128');
    await edit.getByLabel('Proxy', { exact: true }).fill('');
    await edit.getByRole('button', { name: 'Save settings' }).click();
    await expect
      .poll(async () => (await stack.http.get(`/${project.slug}/api/sessions/${created.id}`, { token: user.token })).body, soon)
      .toMatchObject({ name: 'edited session', proxy: null, screen: { width: 1024, height: 600 } });
    const edited = page.getByRole('article', { name: 'session edited session' });
    await edited.getByRole('button', { name: 'Delete the session' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Yes, delete' }).click();
    await expect
      .poll(async () => (await stack.http.get(`/${project.slug}/api/sessions/${created.id}`, { token: user.token })).status, soon)
      .toBe(404);

    await page.getByRole('link', { name: 'Project settings' }).click();
    const settings = page.getByRole('form', { name: 'project settings' });
    await settings.getByLabel('Name').fill('Renamed shop');
    await settings.getByLabel(/Public: anyone may read it/).check();
    const slug = `moved-${randomBytes(3).toString('hex')}`;
    await settings.getByLabel(/^Slug/).fill(slug);
    await settings.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.url(), soon).toContain(`#/projects/${slug}/settings`);
    await expect.poll(() => page.getByRole('heading', { name: 'Renamed shop' }).isVisible(), soon).toBe(true);
    await checkPage(page, 'project-settings');
    expect((await stack.http.get(`/${slug}/api`)).body).toMatchObject({ name: 'Renamed shop', visibility: 'public' });

    const remove = page.getByRole('form', { name: 'delete the project' });
    expect(await remove.getByRole('button', { name: 'Delete' }).isDisabled()).toBe(true);
    await remove.getByLabel(/Type the slug/).fill(slug);
    await remove.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Projects', exact: true }).isVisible(), soon).toBe(true);
    expect((await stack.http.get(`/${slug}/api`, { token: user.token })).status).toBe(404);
    expect(failures).toEqual([]);
    await page.context().close();
  }, 120_000);
});

describe('lists and errors in forms', () => {
  it('a list longer than a page is read a page at a time, with Previous and Next', async () => {
    const user = await registerUser(stack);
    for (let index = 0; index < 21; index++) await createProject(stack, user.token);
    const { page } = await consolePage();
    await signIn(page, user.email);
    const rows = page.locator('table tbody tr');
    await expect.poll(() => rows.count(), soon).toBe(20);
    const pager = page.getByRole('navigation', { name: 'projects: pages' });
    expect(await pager.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
    await pager.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => rows.count(), soon).toBe(1);
    expect(await pager.textContent()).toContain('21–21');
    expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    await pager.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => rows.count(), soon).toBe(20);
    await page.context().close();
  });

  it('a slug the API refuses shows the API’s message, and its issue beside the Slug field', async () => {
    const { email } = await registerUser(stack);
    const { page } = await consolePage();
    await signIn(page, email);
    await page.getByLabel('Name').fill('Refused');
    await page.getByLabel('Slug').fill('Not a slug!');
    await page.getByRole('button', { name: 'Create project' }).click();
    // Beside the field: its error, tied to the input (aria-describedby).
    await expect.poll(() => messageBeside(page.getByLabel('Slug')), soon).toMatch(/\S/);
    expect(await page.getByRole('list', { name: 'issues' }).textContent()).toContain('slug');
    // Nothing was lost: the form keeps what was typed.
    expect(await page.getByLabel('Name').inputValue()).toBe('Refused');
    await page.context().close();
  });
});

describe('errors beside their fields', () => {
  /** What a person reads of an error: words, not JSON or a validator's output. */
  const readable = (text: string) => {
    expect(text).toMatch(/\w{3}/);
    expect(text).not.toMatch(/[{[]|"code"/);
  };

  it('a short password at registration, and cookies that are not a list, each say so beside their field', async () => {
    const { page, failures } = await consolePage();
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('E-mail').fill(`short-${randomBytes(4).toString('hex')}@example.test`);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Register' }).click();
    await expect.poll(() => messageBeside(page.getByLabel('Password')), soon).toMatch(/\S/);
    readable(await messageBeside(page.getByLabel('Password')));
    readable((await page.getByRole('alert').first().textContent()) as string);
    await checkPage(page, 'register-refused');

    const user = await registerUser(stack);
    const project = await createProject(stack, user.token);
    await page.goto('/');
    await signIn(page, user.email);
    await page.goto(`/#/projects/${project.slug}`);
    const form = page.getByRole('form', { name: 'new session' });
    await form.getByRole('textbox', { name: 'New session', exact: true }).fill('bad cookies');
    await form.getByText('Screen, proxy and cookies').click();
    const cookies = form.getByLabel('Cookies (JSON)');
    // Not JSON: the console says so itself.
    await cookies.fill('sid=abc');
    await form.getByRole('button', { name: 'Create session' }).click();
    await expect.poll(() => messageBeside(cookies), soon).toMatch(/\S/);
    readable(await messageBeside(cookies));
    // JSON the service refuses: its issue, beside the field.
    await cookies.fill('[{"name": "sid"}]');
    await form.getByRole('button', { name: 'Create session' }).click();
    await expect.poll(() => messageBeside(cookies), soon).not.toMatch(/not JSON/);
    await expect.poll(() => messageBeside(cookies), soon).toMatch(/\S/);
    readable(await messageBeside(cookies));
    await checkPage(page, 'session-refused');
    // A slug refused: the message beside it, and the page's alert in words.
    await page.goto('/#/projects');
    await page.getByLabel('Name').fill('Refused');
    await page.getByLabel('Slug').fill('Not a slug!');
    await page.getByRole('button', { name: 'Create project' }).click();
    await expect.poll(() => messageBeside(page.getByLabel('Slug')), soon).toMatch(/\S/);
    readable(await messageBeside(page.getByLabel('Slug')));
    // Each refusal above is a 400 the browser logs as a failed load: that is the test, not a fault.
    expect(failures.filter((failure) => !/status of 400 \(Bad Request\)/.test(failure))).toEqual([]);
    await page.context().close();
  }, 150_000);
});

describe('who may only read a project', () => {
  it('a signed-in visitor of a public project sees the buttons that would change it turned off, and the API’s refusal if they force one', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token, { public: true });
    const created = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      { name: 'owned', description: '', source: { nodes: {} } },
      { token: owner.token },
    );
    expect(created.status, created.text).toBe(200);
    const visitor = await registerUser(stack);
    const { page } = await consolePage();
    await signIn(page, visitor.email);
    await page.goto(`/#/projects/${project.slug}/pipelines`);
    await expect.poll(() => page.getByRole('link', { name: 'owned' }).isVisible(), soon).toBe(true);
    expect(await page.getByRole('note').first().textContent()).toContain('Read-only');
    const create = page.getByRole('button', { name: 'Create pipeline' });
    expect(await create.isDisabled()).toBe(true);
    expect(await create.getAttribute('title')).toContain('not this project’s owner');
    await checkPage(page, 'read-only-visitor');
    // Forced on anyway: the API refuses, and the console says what it said.
    await page.getByLabel('New pipeline').fill('mine now');
    await create.evaluate((button) => button.removeAttribute('disabled'));
    await create.click();
    await expect.poll(() => page.getByRole('alert').first().textContent(), soon).toMatch(/permission|not allowed|may not/i);
    expect((await stack.http.get(`/${project.slug}/api/pipelines`, { token: owner.token })).body).toHaveLength(1);
    // The pipeline's own page: its source can be read, not saved or run.
    await page.getByRole('link', { name: 'owned' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Save as a new version' }).isVisible(), soon).toBe(true);
    expect(await page.getByRole('button', { name: 'Save as a new version' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Run' }).isDisabled()).toBe(true);
    await page.context().close();
  }, 120_000);
});

describe('the account page', () => {
  it('turns two-factor sign-in on from a QR code and the secret, shows the recovery codes once, and off with one of them', async () => {
    const user = await registerUser(stack);
    const { page, failures } = await consolePage();
    await signIn(page, user.email);
    await page.getByRole('button', { name: `account ${user.email}` }).click();
    await page.getByRole('menuitem', { name: 'Account' }).click();
    const section = page.getByRole('region', { name: 'two-factor sign-in' });
    await section.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
    await expect.poll(() => section.getByAltText('QR code for the authenticator app').isVisible(), soon).toBe(true);
    await checkPage(page, 'account-two-factor');
    expect(await section.getByAltText('QR code for the authenticator app').getAttribute('src')).toMatch(/^data:image\/gif;base64,/);
    const secret = (await section.getByRole('status', { name: 'authenticator secret' }).textContent()) as string;
    await section.getByLabel(/A current code/).fill(await generate({ secret }));
    await section.getByRole('button', { name: 'Confirm and turn on' }).click();
    const codes = section.getByRole('list', { name: 'recovery codes' }).locator('li');
    await expect.poll(() => codes.count(), soon).toBe(10);
    const recovery = (await codes.first().textContent()) as string;
    await expect.poll(() => section.textContent(), soon).toContain('On. 10 recovery codes left.');
    // Other sessions ended with the change (the test's own token among them); the page's goes on.
    expect((await stack.http.get('/api/auth/2fa', { cookie: await cookieOf(page) })).body).toMatchObject({ enabled: true });

    await section.getByLabel(/A current code/).fill(recovery);
    await section.getByRole('button', { name: 'Turn off' }).click();
    await expect.poll(() => section.getByRole('button', { name: 'Turn on two-factor sign-in' }).isVisible(), soon).toBe(true);
    expect(await page.getByRole('region', { name: 'linked accounts' }).textContent()).toContain('No external sign-in providers');
    expect(failures).toEqual([]);
    await page.context().close();
  }, 120_000);
});

describe('global admins in the console', () => {
  it('see the browser hosts with their load; others have no Hosts page', async () => {
    const admin = await registerUser(stack, { email: 'admin@example.test' });
    const { page, failures } = await consolePage();
    await signIn(page, admin.email);
    await page.getByRole('link', { name: 'Hosts' }).click();
    const hosts = page.getByRole('table', { name: 'browser hosts' });
    await expect.poll(() => hosts.textContent(), soon).toContain(stack.config.browsers.hostId);
    await checkPage(page, 'hosts');
    expect(await hosts.textContent()).toContain('live');
    expect(failures).toEqual([]);
    await page.context().close();

    const user = await registerUser(stack);
    const other = await consolePage();
    await signIn(other.page, user.email);
    expect(await other.page.getByRole('link', { name: 'Hosts' }).count()).toBe(0);
    await other.page.goto('/#/hosts');
    await expect.poll(() => other.page.getByRole('alert').textContent(), soon).toMatch(/\(permission_denied\)|\(forbidden\)/);
    await other.page.context().close();
  }, 120_000);
});

describe('pipelines in the console', () => {
  it('a pipeline is created, its source fixed where the compiler points, run with a secret argument, and its run followed to the end', async () => {
    const user = await registerUser(stack);
    const project = await createProject(stack, user.token);
    const { page, failures } = await consolePage();
    await signIn(page, user.email);
    await page.goto(`/#/projects/${project.slug}/pipelines`);
    await page.getByLabel('New pipeline').fill('headings');
    await page.getByRole('button', { name: 'Create pipeline' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'headings' }).isVisible(), soon).toBe(true);
    const errors = page.getByRole('complementary', { name: 'compiler errors' });
    expect(await errors.textContent()).toContain('Compiles without errors');
    // The graph: the parameter, three nodes and the outputs, an arrow per reference.
    const graph = page.getByRole('figure', { name: 'pipeline graph' });
    await expect.poll(() => graph.locator('.react-flow__node').count(), soon).toBe(5);
    await checkPage(page, 'pipeline');
    expect(await graph.getAttribute('data-edges')).toBe('4');
    expect(await graph.locator('.react-flow__node').allTextContents()).toContain('openpage.goto');

    // A node type that does not exist: the error shows beside that node.
    const broken = {
      parameters: { url: { refType: 'string' }, token: { refType: 'string', secret: true } },
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
        heading: { type: 'extract.nothing', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
      },
      outputs: { heading: { $ref: 'heading.text' } },
    };
    await page.getByLabel('source').fill(JSON.stringify(broken, null, 2));
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await expect.poll(() => errors.locator('li.has-error').textContent(), soon).toContain('heading');
    expect(await errors.textContent()).toMatch(/1 compiler error/);
    await expect.poll(() => graph.locator('.react-flow__node.failing').textContent(), soon).toContain('heading');
    expect(await page.getByRole('button', { name: 'Run' }).isDisabled()).toBe(true);

    const fixed = { ...broken, nodes: { ...broken.nodes, heading: { ...broken.nodes.heading, type: 'extract.text' } } };
    await page.getByLabel('source').fill(JSON.stringify(fixed, null, 2));
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await expect.poll(() => errors.textContent(), soon).toContain('Compiles without errors');
    await expect.poll(() => page.locator('tr[aria-label^="version "]').count(), soon).toBe(3);

    // The arguments form: a secret parameter is a password field.
    const form = page.getByRole('form', { name: 'run the pipeline' });
    expect(await form.getByLabel(/^token/).getAttribute('type')).toBe('password');
    await form.getByLabel(/^url/).fill(site.url);
    await form.getByLabel(/^token/).fill('s3cret-console-token');
    await form.getByLabel('Screenshots').selectOption('steps');
    await form.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.getByRole('heading', { name: /^Run / }).textContent(), { timeout: 60_000 }).toContain('succeeded');
    const steps = page.getByRole('region', { name: 'steps' });
    await expect.poll(() => steps.textContent(), soon).toContain('Hello from the test site');
    // A picture beside each browser step, loaded from the service (its JPEG decoded by the page).
    await expect.poll(() => steps.getByRole('img').count(), soon).toBe(3);
    await expect
      .poll(() => steps.getByRole('img').evaluateAll((images) => images.map((image) => (image as HTMLImageElement).naturalWidth > 0)), soon)
      .toEqual([true, true, true]);
    expect(await steps.getByRole('img', { name: /^after: open at / }).getAttribute('src')).toMatch(
      new RegExp(`^/${project.slug}/api/screenshots/[0-9a-f-]{36}$`),
    );
    expect(await page.getByRole('document', { name: 'result' }).textContent()).toContain('Hello from the test site');
    // The live log reached its end; the secret is not in the page.
    await expect.poll(() => page.getByText(/^Complete/).isVisible(), { timeout: 30_000 }).toBe(true);
    await checkPage(page, 'run');
    expect(await page.getByRole('list', { name: 'logs' }).locator('li').count()).toBeGreaterThan(0);
    // Each picture's log line links it.
    expect(await page.getByRole('list', { name: 'logs' }).getByRole('link', { name: 'screenshot after the node' }).count()).toBe(3);
    expect(await page.content()).not.toContain('s3cret-console-token');

    // Back on the pipeline: the run is listed; the first version can be made current again.
    await page.getByRole('link', { name: '← headings' }).click();
    await expect.poll(() => page.getByRole('cell').getByText('succeeded').isVisible(), soon).toBe(true);
    await page.locator('tr[aria-label^="version "]').last().getByRole('button', { name: 'Make current' }).click();
    await expect.poll(() => page.getByLabel('source').inputValue(), soon).toContain('https://example.com');
    // A fork: a new pipeline seeded with that version, opened at once.
    const pipelineUrl = page.url();
    await page.locator('tr[aria-label^="version "]').first().getByRole('button', { name: 'Fork' }).click();
    await expect.poll(() => page.url(), soon).not.toBe(pipelineUrl);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), soon).toMatch(/headings/);
    expect((await stack.http.get(`/${project.slug}/api/pipelines`, { token: user.token })).body).toHaveLength(2);
    expect(failures).toEqual([]);
    await page.context().close();
  }, 180_000);
});

describe('analysis and generation in the console', () => {
  it('a prompt becomes a proposal of steps, a generated graph with its dry run, and, accepted, the pipeline’s new version', async () => {
    const user = await registerUser(stack);
    const project = await createProject(stack, user.token);
    const created = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      { name: 'to grow', description: '', source: { nodes: {} } },
      { token: user.token },
    );
    expect(created.status, created.text).toBe(200);
    const { page, failures } = await consolePage();
    await signIn(page, user.email);
    await page.goto(`/#/projects/${project.slug}/pipelines/${created.body.id}`);
    const form = page.getByRole('form', { name: 'propose a version' });
    await form.getByLabel('What should the pipeline do?').fill(`Open ${site.url} and extract the heading`);
    await expect.poll(() => form.getByLabel('Model').inputValue(), soon).toBe('builtin');
    await form.getByRole('button', { name: 'Analyse' }).click();
    const proposal = page.getByRole('region', { name: 'proposal' });
    await expect.poll(() => proposal.isVisible(), { timeout: 90_000 }).toBe(true);
    expect(await proposal.locator('.steps li strong').allTextContents()).toEqual(['goto', 'extract_text']);
    expect(await proposal.locator('code.selector').count()).toBeGreaterThan(0);
    // The agent's steps, from its live log.
    // Folded away once the agent has stopped, as it may have by now.
    const agentSteps = page.locator('details.progress');
    if (!(await agentSteps.evaluate((details) => (details as HTMLDetailsElement).open))) await agentSteps.locator('summary').click();
    await expect.poll(() => agentSteps.getByRole('list', { name: 'logs' }).locator('li').count(), soon).toBeGreaterThan(0);
    // The heading the extraction reads, boxed and numbered on a picture of the page.
    const pictures = page.getByRole('region', { name: 'where the steps act' });
    await expect.poll(() => pictures.getByRole('note', { name: /^step 2: / }).isVisible(), { timeout: 30_000 }).toBe(true);
    await checkPage(page, 'analysis');
    expect(await pictures.getByRole('img').evaluate((image) => (image as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Accept and generate' }).click();
    const dryRun = page.getByRole('region', { name: 'dry run' });
    await expect.poll(() => dryRun.textContent(), { timeout: 90_000 }).toContain('succeeded');
    expect(await dryRun.getByRole('document', { name: 'dry-run result' }).textContent()).toContain('Hello from the test site');
    await expect.poll(() => dryRun.getByRole('img').count(), soon).toBeGreaterThan(0);
    await expect
      .poll(() => page.getByRole('figure', { name: 'pipeline graph' }).locator('.react-flow__node').count(), soon)
      .toBeGreaterThan(2);
    await checkPage(page, 'generation');
    await page.getByRole('button', { name: 'Accept as the new version' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'to grow' }).isVisible(), soon).toBe(true);
    const pipeline = (await stack.http.get(`/${project.slug}/api/pipelines/${created.body.id}`, { token: user.token })).body;
    expect(Object.keys(pipeline.source.nodes).length).toBeGreaterThan(1);
    expect(failures).toEqual([]);
    await page.context().close();
  }, 300_000);
});

describe('functions and MCP servers in the console', () => {
  it('a function is tried from its form; an MCP server is made from it and a new key linked in one step, whose config works', async () => {
    const user = await registerUser(stack);
    const project = await createProject(stack, user.token);
    const fnSlug = 'read-heading';
    const created = await stack.http.put(
      `/${project.slug}/api/functions`,
      {
        name: 'Read a heading',
        slug: fnSlug,
        description: 'The first heading of a page',
        definition: {
          source: {
            parameters: { url: { refType: 'string' }, loud: { refType: 'boolean' } },
            nodes: {
              page: { type: 'browser.page' },
              open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
              heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
            },
            outputs: { heading: { $ref: 'heading.text' }, loud: { $param: 'loud' } },
          },
          parameters: [
            { name: 'url', refType: 'string' },
            { name: 'loud', refType: 'boolean' },
          ],
          outputs: [
            { name: 'heading', refType: 'string' },
            { name: 'loud', refType: 'boolean' },
          ],
          metadata: {},
          outputType: 'function',
        },
      },
      { token: user.token },
    );
    expect(created.status, created.text).toBe(200);

    const { page, failures } = await consolePage();
    await signIn(page, user.email);
    await page.goto(`/#/projects/${project.slug}/functions`);
    const card = page.getByRole('article', { name: `function ${fnSlug}` });
    await card.getByLabel(/^url/).fill(site.url);
    // A boolean is a choice, not text to spell right.
    await card.getByLabel(/^loud/).selectOption('false');
    await card.getByRole('button', { name: 'Try it' }).click();
    const outputs = card.getByRole('document', { name: `outputs of ${fnSlug}` });
    await expect.poll(() => outputs.textContent(), { timeout: 60_000 }).toContain('Hello from the test site');
    expect(JSON.parse((await outputs.textContent()) as string)).toMatchObject({ loud: false });

    const form = page.getByRole('form', { name: 'new MCP server' });
    await form.getByLabel('Name').fill('Agents');
    await form.getByLabel('Server slug').fill('agents');
    await form.getByLabel(fnSlug).check();
    await form.getByRole('button', { name: 'Create MCP server' }).click();
    const server = page.getByRole('article', { name: 'MCP server agents' });
    await expect.poll(() => server.textContent(), soon).toContain(`tools: ${fnSlug}`);

    // A server without tools: no key can be made for its tools, and it says why.
    await form.getByLabel('Name').fill('Empty');
    await form.getByLabel('Server slug').fill('empty');
    await form.getByLabel(fnSlug).uncheck();
    await form.getByRole('button', { name: 'Create MCP server' }).click();
    const empty = page.getByRole('article', { name: 'MCP server empty' });
    await expect.poll(() => empty.textContent(), soon).toContain('No tools yet');
    expect(await empty.getByRole('option', { name: 'A new key for these tools only' }).isDisabled()).toBe(true);
    expect(await empty.getByRole('button', { name: 'Link' }).isDisabled()).toBe(true);

    await server.getByRole('button', { name: 'Link' }).click();
    const cursorConfig = server.getByRole('document', { name: 'Cursor' });
    await expect.poll(() => cursorConfig.isVisible(), soon).toBe(true);
    await checkPage(page, 'functions-and-mcp');
    const config = JSON.parse((await cursorConfig.textContent()) as string) as {
      mcpServers: Record<string, { url: string; headers: Record<string, string> }>;
    };
    const { url, headers } = config.mcpServers.agents as { url: string; headers: Record<string, string> };
    expect(headers['x-api-key']).toMatch(/^bfk_/);
    await expect.poll(() => server.textContent(), soon).toMatch(/Linked keys: MCP agents/);

    // What the config says is enough for an MCP client.
    const client = new Client({ name: 'console-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toEqual([fnSlug]);
    const called = await client.callTool({ name: fnSlug, arguments: { url: site.url, loud: true } });
    expect(called.structuredContent).toMatchObject({ heading: 'Hello from the test site', loud: true });
    await client.close();
    // The new key may use the server's tools and nothing else of the project.
    const sessions = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'not for this key' }, { apiKey: headers['x-api-key'] });
    expect(sessions.status).toBe(403);
    expect(failures).toEqual([]);
    await page.context().close();
  }, 180_000);
});

/** The error message shown beside a field (the element its `aria-describedby` names as its error), or ''. */
function messageBeside(field: Locator) {
  return field.evaluate((input) => {
    const ids = (input.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
    return ids
      .map((id) => document.getElementById(id))
      .filter((element) => element && /error/.test(element.id))
      .map((element) => element?.textContent ?? '')
      .join(' ');
  });
}

/** The page's session cookie, as a header the test's own client sends. */
async function cookieOf(page: Page) {
  const cookies = await page.context().cookies();
  return cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
}
