import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerUser } from '../support/accounts.ts';
import { CHROMIUM, CHROMIUM_FLAGS } from '../support/chromium.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun, startRun } from '../support/pipelines.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const EXTERNAL_TOKEN = 'external-token-for-the-tests';
const COORDINATOR_TOKEN = 'coordinator-token-for-the-tests';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
/** A Chromium this test runs itself, as "elsewhere": the service only knows its DevTools address. */
let elsewhere: BrowserContext;
let elsewhereDir: string;
let devtools: { http: string; ws: string };

beforeAll(async () => {
  site = await startTestSite({
    '/shop': (_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><title>Shop</title><h1>Welcome back, Ada</h1>');
    },
  });
  elsewhereDir = mkdtempSync(path.join(os.tmpdir(), 'bf-elsewhere-'));
  elsewhere = await chromium.launchPersistentContext(elsewhereDir, {
    executablePath: CHROMIUM,
    args: [...CHROMIUM_FLAGS, '--remote-debugging-port=0'],
    headless: true,
  });
  const [port, browserPath] = readFileSync(path.join(elsewhereDir, 'DevToolsActivePort'), 'utf8').trim().split('\n');
  devtools = { http: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}${browserPath}` };
  // Billing is off here (no STRIPE_SECRET_KEY): the last test checks what that means.
  stack = await startTestStack({ EXTERNAL_TOKEN, COORDINATOR_TOKEN }, { browserHost: true });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await elsewhere?.close();
  rmSync(elsewhereDir, { recursive: true, force: true });
  await site?.close();
});

describe('external sessions', () => {
  it('need the external token: 401 without it or with another, 400 for a bad body, 404 for an unknown project', async () => {
    const body = { project: 'nope', cdpUrl: devtools.ws };
    expect((await stack.http.put('/api/external-session', body)).status).toBe(401);
    expect((await stack.http.put('/api/external-session', body, { authorization: 'Bearer someone-elses-token-here' })).status).toBe(401);
    const auth = { authorization: `Bearer ${EXTERNAL_TOKEN}` };
    const bad = await stack.http.put('/api/external-session', { project: 'p', cdpUrl: 'file:///etc/passwd', extra: 1 }, auth);
    expect(bad.status).toBe(400);
    expect(bad.body.issues.map((issue: { path: string[] }) => issue.path.join('.')).sort()).toEqual(['cdpUrl', 'extra']);
    const unknown = await stack.http.put('/api/external-session', body, auth);
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
    expect((await stack.http.post(`/api/external-session/${crypto.randomUUID()}/capture?token=${EXTERNAL_TOKEN}`)).status).toBe(404);
  });

  it('registers a browser running elsewhere: runs use it, its cookies are captured into the session, and a stop leaves it running', async () => {
    const owner = await registerUser(stack);
    const as = { token: owner.token };
    const project = await createProject(stack, owner.token);
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'elsewhere' }, as);
    expect(session.status, session.text).toBe(200);

    // The http:// DevTools address, the token in the query.
    const registered = await stack.http.put(`/api/external-session?token=${EXTERNAL_TOKEN}`, {
      project: project.slug,
      session: session.body.id,
      cdpUrl: devtools.http,
    });
    expect(registered.status, registered.text).toBe(200);
    expect(registered.body).toMatchObject({ project: project.id, session: session.body.id, status: 'running', warm: false });
    const resourceId: string = registered.body.id;

    // Shown like any other resource, with its URLs, to the project's users.
    const shown = await stack.http.get(`/${project.slug}/api/sessions/${session.body.id}/${resourceId}`, as);
    expect(shown.status).toBe(200);
    expect(shown.body.remoteUrl).toMatch(/^ws:.*\/cdp\?token=/);

    // A run on the session drives that browser.
    const pipelineId = await createPipeline(stack, project.slug, as, {
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/shop` } },
        heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
      },
      outputs: { heading: { $ref: 'heading.text' } },
    });
    const { runUrl } = await startRun(stack, project.slug, as, pipelineId, session.body.id);
    const run = await settledRun(stack, runUrl, as);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.result).toEqual({ heading: 'Welcome back, Ada' });
    expect(run.resources[0]?.id).toBe(resourceId);
    expect(elsewhere.pages().some((page) => page.url() === `${site.url}/shop`)).toBe(true);

    // Its cookies, captured into the session: the answer counts them, the session holds them.
    await elsewhere.addCookies([{ name: 'sid', value: 'elsewhere-session-value', domain: '127.0.0.1', path: '/' }]);
    const captured = await stack.http.post(`/api/external-session/${resourceId}/capture`, undefined, {
      authorization: `Bearer ${EXTERNAL_TOKEN}`,
    });
    expect(captured.status, captured.text).toBe(200);
    expect(captured.body).toEqual({ session: session.body.id, resource: resourceId, cookies: 1 });
    expect(captured.text).not.toContain('elsewhere-session-value');
    const stored = await stack.http.get(`/${project.slug}/api/sessions/${session.body.id}`, as);
    expect(stored.body.cookies).toEqual([expect.objectContaining({ name: 'sid', value: 'elsewhere-session-value' })]);

    // A stop disconnects; the browser stays its owner's.
    const stopped = await stopAndWait(stack.http, `/${project.slug}/api/sessions/${session.body.id}/${resourceId}`, as);
    expect(stopped.ended.status).toBe('stopped');
    const page = await elsewhere.newPage();
    await page.goto(`${site.url}/shop`);
    expect(await page.textContent('h1')).toBe('Welcome back, Ada');
    const again = await stack.http.post(`/api/external-session/${resourceId}/capture?token=${EXTERNAL_TOKEN}`);
    expect([again.status, again.body.code]).toEqual([409, 'browser_not_running']);
  }, 90_000);
});

describe('with billing off', () => {
  it('offers no plans and no checkout, records usage, and cuts nobody off', async () => {
    const owner = await registerUser(stack);
    const as = { token: owner.token };
    const project = await createProject(stack, owner.token);
    expect((await stack.http.get('/api/billing/plans')).body).toEqual([]);
    for (const [path, body] of [
      ['/api/billing/subscription', { priceId: 'price_pro' }],
      ['/api/billing/top-up', { amount: '5', currency: 'usd' }],
      ['/api/billing/portal', undefined],
    ] as const) {
      const refused = await stack.http.post(path, body, as);
      expect([refused.status, refused.body.code], path).toEqual([400, 'billing_disabled']);
    }
    expect((await stack.http.post('/api/stripe/webhook', { id: 'evt_1' })).status).toBe(404);

    const registered = await stack.http.put(`/api/external-session?token=${EXTERNAL_TOKEN}`, {
      project: project.slug,
      cdpUrl: devtools.ws,
    });
    expect(registered.status, registered.text).toBe(200);
    // A million CPU seconds on an account with nothing in it: recorded and priced, not refused.
    const report = await stack.http.post(`/api/coordinator/${COORDINATOR_TOKEN}/usage`, {
      resourceId: registered.body.id,
      amount: 1_000_000,
      unit: 'cpu',
    });
    expect(report.body).toEqual({ action: 'continue' });
    const overview = await stack.http.get('/api/billing/overview', as);
    expect(overview.body).toMatchObject({ billingEnabled: false, balances: [{ currency: 'usd', available: '0', pending: '0' }] });
    expect(overview.body.transactions[0]).toMatchObject({ type: 'usage', unit: 'cpu', quantity: '1000000', cost: '1400', billed: '0' });
    const run = await stack.http.get(`/${project.slug}/api/sessions/${registered.body.session}/${registered.body.id}`, as);
    expect(run.body.status).toBe('running');
    const stopped = await stack.http.post(
      `/${project.slug}/api/sessions/${registered.body.session}/${registered.body.id}/stop`,
      undefined,
      as,
    );
    expect(stopped.status).toBe(200);
  });
});
