/// <reference lib="dom" />
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionResource, UsageRecord, WarmBrowser } from '../../db/entities/index.ts';
import { startBrowserHost } from '../../server/browsers/host/browserHost.ts';
import { findProcessesMentioning, isAlive } from '../../server/browsers/host/chromium/processes.ts';
import { createLogger } from '../../server/logger.ts';
import type { browserSessionWorkflow } from '../../workflows/browserSession.ts';
import { browserStateQuery, stopBrowserUpdate } from '../../workflows/contracts/browserSession.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { startAuthProxy, startTestSite } from '../support/pages.ts';
import { stopAndWait } from '../support/resources.ts';
import { readSse } from '../support/sse.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };

beforeAll(async () => {
  stack = await startTestStack({ RATE_LIMITS: 'off' }, { browserHost: true });
  site = await startTestSite();
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

async function createSession(body: Record<string, unknown> = {}) {
  const created = await stack.http.put(
    `/${project.slug}/api/sessions`,
    { name: `s-${Date.now()}`, description: '', screen: { width: 1280, height: 720 }, args: '', image: 'chromium', cookies: [], ...body },
    { token: owner.token },
  );
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

async function start(sessionId: string) {
  const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
  expect(started.status, started.text).toBe(200);
  return started.body;
}

describe('a running browser', () => {
  it('is started, driven over remoteUrl, watched live, logged, captured and stopped', async () => {
    const sessionId = await createSession({ cookies: [{ name: 'preset', value: 'from-session', domain: '127.0.0.1', path: '/' }] });
    const resource = await start(sessionId);
    expect(resource).toMatchObject({ status: 'running', session: sessionId });
    expect(resource.remoteUrl).toMatch(/^ws:\/\/.*\/cdp\?token=/);
    expect(resource.vncUrl).toMatch(/^http:\/\/.*\/live\?token=/);

    // Drive it with Playwright through the authenticated CDP proxy.
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    const context = browser.contexts()[0];
    if (!context) throw new Error('no default context');
    const page = await context.newPage();
    await page.goto(`${site.url}/cookie`);
    expect(await page.textContent('#greeting')).toBe('Hello from the test site');

    // The cookies the browser holds now: the session's preset one and the page's.
    const captured = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resource.id}/capture`, { token: owner.token });
    expect(captured.status, captured.text).toBe(200);
    const names = captured.body.cookies.map((cookie: { name: string }) => cookie.name);
    expect(names).toEqual(expect.arrayContaining(['preset', 'visited']));
    const streamed = await readSse(`${stack.url}/${project.slug}/api/sessions/${sessionId}/${resource.id}/capture`, {
      headers: { authorization: `Bearer ${owner.token}` },
      until: (events) => events.some((event) => event.event === 'cookies'),
    });
    expect(JSON.parse(streamed.find((event) => event.event === 'cookies')?.data ?? '{}').cookies.length).toBeGreaterThanOrEqual(2);

    // The live view, opened by two viewers at once in a second browser, streams frames to both.
    const viewer = await launchChromium();
    try {
      const views = [await viewer.newPage(), await viewer.newPage()];
      for (const view of views) {
        await view.goto(resource.vncUrl);
        await view.waitForFunction(() => (window as unknown as { liveView: { frames: number } }).liveView.frames > 0, undefined, {
          timeout: 20_000,
        });
      }
      // Mouse, keyboard and wheel in either view reach the remote page.
      await page.evaluate(() => {
        const seen = (what: string) => {
          document.title = [...document.title.split(' ').filter(Boolean), what].join(' ');
        };
        document.title = '';
        document.addEventListener('click', () => seen('click'));
        document.addEventListener('keydown', (event) => seen(`key:${event.key}`));
        document.addEventListener('wheel', () => seen('wheel'), { once: true });
      });
      const [first, second] = views as [Page, Page];
      const box = await first.locator('#screen').boundingBox();
      if (!box) throw new Error('no screen');
      await first.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      await expect.poll(() => page.title(), { timeout: 10_000 }).toContain('click');
      await second.locator('#screen').click();
      await second.keyboard.press('q');
      await expect.poll(() => page.title(), { timeout: 10_000 }).toContain('key:q');
      await second.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await second.mouse.wheel(0, 300);
      await expect.poll(() => page.title(), { timeout: 10_000 }).toContain('wheel');
    } finally {
      await viewer.close();
    }

    // Logs: navigation and console lines, as JSON pages and as SSE resumable by id.
    await expect
      .poll(
        async () =>
          (await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resource.id}/logs`, { token: owner.token })).body.map(
            (e: { area: string }) => e.area,
          ),
        // Log lines are written in batches; under a loaded machine a batch can take a while.
        { timeout: 30_000 },
      )
      .toEqual(expect.arrayContaining(['lifecycle', 'navigation', 'console']));
    const page1 = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resource.id}/logs?limit=1&offset=1`, {
      token: owner.token,
    });
    expect(page1.body).toHaveLength(1);
    expect(page1.body[0].seq).toBe(2);
    const sse = await readSse(`${stack.url}/${project.slug}/api/sessions/${sessionId}/${resource.id}/logs`, {
      headers: { authorization: `Bearer ${owner.token}`, 'last-event-id': '1' },
      until: (events) => events.length >= 2,
    });
    expect(sse[0]?.id).toBe('2');
    expect(JSON.parse(sse[0]?.data ?? '{}')).toMatchObject({ seq: 2 });

    await browser.close();
    const stopped = await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${resource.id}`, { token: owner.token });
    expect(stopped.answer).toMatchObject({ remoteUrl: null, vncUrl: null, stopReason: 'stopped on request' });
    expect(stopped.ended).toMatchObject({ status: 'stopped', remoteUrl: null, vncUrl: null, stopReason: 'stopped on request' });

    // The workflow is closed and no Chromium of this resource is left.
    // The row is stopped once the browser is; the workflow completes just after.
    const workflow = stack.temporal.workflow.getHandle(`browser-${resource.id}`);
    await expect.poll(async () => (await workflow.describe()).status.name, { timeout: 10_000, interval: 200 }).toBe('COMPLETED');
    expect(findProcessesMentioning(`${stack.config.sharedDataDir}/browsers/`)).toEqual([]);
    // The URLs stop working with the browser.
    await expect(chromium.connectOverCDP(resource.remoteUrl, { timeout: 5000 })).rejects.toThrow();
    const sseEnd = await readSse(`${stack.url}/${project.slug}/api/sessions/${sessionId}/${resource.id}/logs`, {
      headers: { authorization: `Bearer ${owner.token}` },
      until: (events) => events.some((event) => event.event === 'end'),
    });
    expect(sseEnd.at(-1)?.event).toBe('end');
  });

  it('keeps running when its workflow is asked to stop without a reason (the update validator refuses it)', async () => {
    const sessionId = await createSession();
    const resource = await start(sessionId);
    const handle = stack.temporal.workflow.getHandle<typeof browserSessionWorkflow>(workflowIds.browser(resource.id));
    await expect(handle.executeUpdate(stopBrowserUpdate, { args: [' '] })).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    expect((await handle.query(browserStateQuery)).phase).toBe('running');
    const shown = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resource.id}`, { token: owner.token });
    expect(shown.body.status).toBe('running');

    const stopped = await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${resource.id}`, { token: owner.token });
    expect(stopped.ended).toMatchObject({ status: 'stopped', stopReason: 'stopped on request' });
  });

  it('is refused its cookies without cookies.read, and hidden from other users', async () => {
    const sessionId = await createSession();
    const resource = await start(sessionId);
    try {
      const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.sessions.read`] });
      const base = `/${project.slug}/api/sessions/${sessionId}/${resource.id}`;
      expect((await stack.http.get(base, { apiKey: key.secret })).status).toBe(200);
      expect((await stack.http.get(`${base}/capture`, { apiKey: key.secret })).status).toBe(403);
      const stranger = await registerUser(stack);
      expect((await stack.http.get(base, { token: stranger.token })).status).toBe(404);
      expect((await stack.http.get(`${base}/capture`, { token: stranger.token })).status).toBe(404);
      expect((await stack.http.get(`${base}/logs`, { token: stranger.token })).status).toBe(404);
      expect((await stack.http.post(`${base}/stop`, undefined, { token: stranger.token })).status).toBe(404);
      // A bad token on the CDP URL is refused.
      await expect(chromium.connectOverCDP(resource.remoteUrl.replace(/token=.*/, 'token=forged'), { timeout: 5000 })).rejects.toThrow();
    } finally {
      await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/${resource.id}/stop`, undefined, { token: owner.token });
    }
  });

  it('reaches pages through the session proxy with its credentials', async () => {
    const proxy = await startAuthProxy('proxyuser', 'proxy-secret-pw');
    try {
      const sessionId = await createSession({
        proxy: { protocol: 'http', hostname: proxy.host, port: proxy.port, username: 'proxyuser', password: 'proxy-secret-pw' },
      });
      const resource = await start(sessionId);
      const browser = await chromium.connectOverCDP(resource.remoteUrl);
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}/through-proxy`);
      expect(await page.textContent('#greeting')).toBe('Hello from the test site');
      expect(proxy.relayed).toContain(`${site.url}/through-proxy`);
      await browser.close();
      // Until stopped: the host writes what the browser logged last as it closes it.
      await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${resource.id}`, { token: owner.token });
      const logs = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resource.id}/logs?limit=200`, { token: owner.token });
      expect(logs.text).not.toContain('proxy-secret-pw');
    } finally {
      await proxy.close();
    }
  });

  it('launches with the session’s screen and arguments, through a stored proxy, and meters its traffic', async () => {
    const proxy = await startAuthProxy('storeduser', 'stored-proxy-pw');
    try {
      const stored = await stack.http.post(
        `/${project.slug}/api/proxies`,
        { protocol: 'http', hostname: proxy.host, port: proxy.port, username: 'storeduser', password: 'stored-proxy-pw' },
        { token: owner.token },
      );
      expect(stored.status, stored.text).toBe(200);
      const sessionId = await createSession({
        screen: { width: 1024, height: 600 },
        args: '--user-agent=BrowserflowTest/1.0',
        proxyId: stored.body.id,
      });
      const resource = await start(sessionId);
      const browser = await chromium.connectOverCDP(resource.remoteUrl);
      const page = browser.contexts()[0]!.pages()[0] ?? (await browser.contexts()[0]!.newPage());
      await page.goto(`${site.url}/stored-proxy`);
      expect(await page.evaluate(() => ({ width: innerWidth, height: innerHeight, agent: navigator.userAgent }))).toEqual({
        width: 1024,
        height: 600,
        agent: 'BrowserflowTest/1.0',
      });
      expect(proxy.relayed).toContain(`${site.url}/stored-proxy`);
      await browser.close();
      // The host meters network bytes as well as CPU while the browser runs.
      await expect
        .poll(async () => (await stack.orm.em.fork().find(UsageRecord, { resourceId: resource.id })).map((record) => record.unit), {
          timeout: 20_000,
        })
        .toContain('network');
      await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/${resource.id}/stop`, undefined, { token: owner.token });
    } finally {
      await proxy.close();
    }
  });

  it('stops by itself when the project limit is reached, refusing a start past it', async () => {
    const limited = await startTestStack(
      { RATE_LIMITS: 'off', BROWSERS_PER_PROJECT: '1', BROWSER_IDLE_TIMEOUT_SECONDS: '5' },
      { browserHost: true },
    );
    try {
      const user = await registerUser(limited);
      const p = await createProject(limited, user.token);
      const created = await limited.http.put(
        `/${p.slug}/api/sessions`,
        { name: 'one', screen: { width: 800, height: 600 }, args: '', image: 'chromium', cookies: [] },
        { token: user.token },
      );
      const sessionId = created.body.id;
      const first = await limited.http.post(`/${p.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
      expect(first.status, first.text).toBe(200);
      const second = await limited.http.post(`/${p.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
      expect(second.status).toBe(429);
      expect(second.body.code).toBe('browser_limit_reached');
      // Nobody uses it: the idle timeout stops it, with a log entry saying why.
      await expect
        .poll(
          async () => (await limited.http.get(`/${p.slug}/api/sessions/${sessionId}/${first.body.id}`, { token: user.token })).body.status,
          { timeout: 30_000, interval: 1000 },
        )
        .toBe('stopped');
      const logs = await limited.http.get(`/${p.slug}/api/sessions/${sessionId}/${first.body.id}/logs`, { token: user.token });
      expect(logs.body.map((entry: { message: string }) => entry.message).join('\n')).toMatch(/idle for more than 5 s/);
      // Its host metered it while it ran: CPU seconds, recorded for billing.
      const usage = await limited.orm.em.fork().find(UsageRecord, { resourceId: first.body.id });
      expect(usage.map((record) => record.unit)).toContain('cpu');
      expect(usage.reduce((sum, record) => sum + Number(record.amount), 0)).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  it('stops by itself at its maximum lifetime, even while in use', async () => {
    const shortLived = await startTestStack({ BROWSER_MAX_LIFETIME_SECONDS: '10' }, { browserHost: true });
    try {
      const user = await registerUser(shortLived);
      const p = await createProject(shortLived, user.token);
      const created = await shortLived.http.put(`/${p.slug}/api/sessions`, { name: 'short' }, { token: user.token });
      const started = await shortLived.http.post(`/${p.slug}/api/sessions/${created.body.id}/start`, undefined, { token: user.token });
      expect(started.status, started.text).toBe(200);
      const base = `/${p.slug}/api/sessions/${created.body.id}/${started.body.id}`;
      // Kept busy over CDP, so the idle timeout is not what stops it.
      const browser = await chromium.connectOverCDP(started.body.remoteUrl);
      const page = await browser.contexts()[0]!.newPage();
      try {
        await expect
          .poll(
            async () => {
              await page.goto(`${site.url}/busy`).catch(() => undefined);
              return (await shortLived.http.get(base, { token: user.token })).body.status;
            },
            { timeout: 40_000, interval: 1000 },
          )
          .toBe('stopped');
      } finally {
        await browser.close().catch(() => undefined);
      }
      const resource = await shortLived.http.get(base, { token: user.token });
      expect(resource.body.stopReason).toBe('maximum lifetime reached');
    } finally {
      await shortLived.close();
    }
  });

  it('starts from the warm pool at once, with the session’s cookies, and the pool refills', async () => {
    const warmStack = await startTestStack({ BROWSER_WARM_POOL: '1' }, { browserHost: true });
    try {
      const warmRows = () => warmStack.orm.em.fork().count(WarmBrowser, {});
      await expect.poll(warmRows, { timeout: 30_000 }).toBe(1);
      const user = await registerUser(warmStack);
      const p = await createProject(warmStack, user.token);
      const created = await warmStack.http.put(
        `/${p.slug}/api/sessions`,
        { name: 'warm', cookies: [{ name: 'preset', value: 'warm-cookie', domain: '127.0.0.1', path: '/' }] },
        { token: user.token },
      );
      const started = await warmStack.http.post(`/${p.slug}/api/sessions/${created.body.id}/start`, undefined, { token: user.token });
      expect(started.status, started.text).toBe(200);
      expect(started.body).toMatchObject({ status: 'running', warm: true });
      const browser = await chromium.connectOverCDP(started.body.remoteUrl);
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}/warm`);
      expect((await browser.contexts()[0]!.cookies()).map((c) => c.name)).toContain('preset');
      await browser.close();
      const base = `/${p.slug}/api/sessions/${created.body.id}/${started.body.id}`;
      await expect
        .poll(
          async () =>
            (await warmStack.http.get(`${base}/logs`, { token: user.token })).body.map((e: { message: string }) => e.message).join('\n'),
          {
            timeout: 15_000,
          },
        )
        .toMatch(/from the warm pool/);
      // The page the client opened before the host adopted the browser is in the log as well.
      await expect
        .poll(async () => (await warmStack.http.get(`${base}/logs`, { token: user.token })).text, { timeout: 15_000 })
        .toContain(`navigated to ${site.url}/warm`);
      const stopped = await stopAndWait(warmStack.http, base, { token: user.token });
      expect(stopped.ended.status).toBe('stopped');
      await expect.poll(warmRows, { timeout: 30_000 }).toBe(1);
    } finally {
      await warmStack.close();
    }
    // A second stack with a browser host launching in the background: slow on 2 busy cores.
  }, 180_000);
});

describe('a host at its limit, and starts that went wrong', () => {
  // One browser per host, one warm browser waiting, and short sweeps: the host drops a browser
  // nothing can use after 1 s, the worker looks for stuck resources every second.
  let small: TestStack;
  let user: Awaited<ReturnType<typeof registerUser>>;
  let p: { id: string; slug: string };
  const warmRows = () => small.orm.em.fork().find(WarmBrowser, {});
  const base = (sessionId: string, resourceId: string) => `/${p.slug}/api/sessions/${sessionId}/${resourceId}`;

  beforeAll(async () => {
    small = await startTestStack(
      {
        BROWSER_WARM_POOL: '1',
        BROWSERS_PER_HOST: '1',
        BROWSER_ORPHAN_GRACE_SECONDS: '1',
        BROWSER_SWEEP_INTERVAL_SECONDS: '1',
        BROWSER_SWEEP_GRACE_SECONDS: '5',
      },
      { browserHost: true },
    );
    user = await registerUser(small);
    p = await createProject(small, user.token);
  });
  afterAll(async () => {
    await small?.close();
  });

  async function newSession(body: Record<string, unknown> = {}) {
    const created = await small.http.put(`/${p.slug}/api/sessions`, { name: `s-${Date.now()}`, ...body }, { token: user.token });
    expect(created.status, created.text).toBe(200);
    return created.body.id as string;
  }

  it('refuses a start past the host’s limit with 429 even while a warm browser waits, and goes cold to a host with room', async () => {
    await expect.poll(async () => (await warmRows()).length, { timeout: 60_000 }).toBe(1);
    const sessionId = await newSession();
    const first = await small.http.post(`/${p.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ status: 'running', warm: true });
    // The host adopts it and launches the next warm browser: the host is full, yet one waits.
    await expect.poll(async () => (await warmRows()).length, { timeout: 60_000 }).toBe(1);
    const refused = await small.http.post(`/${p.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.code).toBe('browser_hosts_full');
    expect(await warmRows()).toHaveLength(1);

    // A second host with room but no warm pool takes the next start, cold.
    const otherId = `${small.config.browsers.hostId}-b`;
    const other = await startBrowserHost({
      config: { ...small.config, browsers: { ...small.config.browsers, hostId: otherId, warmPool: 0 } },
      orm: small.orm,
      log: createLogger(small.config),
      temporalAddress: small.config.temporal.address as string,
      temporal: small.temporal,
    });
    try {
      const second = await small.http.post(`/${p.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
      expect(second.status, second.text).toBe(200);
      expect(second.body).toMatchObject({ status: 'running', warm: false, host: otherId });
      const stopped = await stopAndWait(small.http, base(sessionId, second.body.id), { token: user.token });
      expect(stopped.ended.status).toBe('stopped');
    } finally {
      await other.stop('kill');
    }
    const stopped = await stopAndWait(small.http, base(sessionId, first.body.id), { token: user.token });
    expect(stopped.ended.status).toBe('stopped');
  }, 180_000);

  it('replaces a warm browser whose offer is gone and that no resource holds', async () => {
    await expect.poll(async () => (await warmRows()).length, { timeout: 60_000 }).toBe(1);
    const [offer] = await warmRows();
    if (!offer?.pid) throw new Error('no warm browser with a pid');
    await small.orm.em.fork().nativeDelete(WarmBrowser, { id: offer.id });
    await expect.poll(() => isAlive(offer.pid as number), { timeout: 30_000, interval: 500 }).toBe(false);
    await expect
      .poll(async () => (await warmRows()).map((row) => row.id), { timeout: 60_000 })
      .toEqual([expect.not.stringMatching(offer.id)]);
  }, 120_000);

  it('destroys a browser whose workflow was terminated once its resource is settled, freeing the host', async () => {
    // A screen the warm pool does not have: the browser launches cold and takes the host's one place.
    const sessionId = await newSession({ screen: { width: 800, height: 600 } });
    const started = await small.http.post(`/${p.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
    expect(started.status, started.text).toBe(200);
    expect(started.body).toMatchObject({ status: 'running', warm: false });
    const { pid } = await small.orm.em.fork().findOneOrFail(SessionResource, { id: started.body.id });
    if (!pid) throw new Error('no pid recorded for the browser');

    // An operator terminates the workflow: nothing stops the browser or settles its row…
    await small.temporal.workflow.getHandle(workflowIds.browser(started.body.id)).terminate('terminated by an operator');
    // …until the sweeper settles the row and the host, finding it no longer active, destroys the browser.
    await expect
      .poll(async () => (await small.http.get(base(sessionId, started.body.id), { token: user.token })).body.status, {
        timeout: 30_000,
        interval: 500,
      })
      .toBe('failed');
    const settled = (await small.http.get(base(sessionId, started.body.id), { token: user.token })).body;
    expect(settled.stopReason).toMatch(/its workflow ended \(terminated\)/);
    await expect.poll(() => isAlive(pid), { timeout: 30_000, interval: 500 }).toBe(false);
    expect(small.browserHost?.pool.runningCount).toBe(0);
    await expect
      .poll(async () => (await small.http.get(`${base(sessionId, started.body.id)}/logs`, { token: user.token })).text, { timeout: 10_000 })
      .toContain('the browser host destroyed the browser: its resource is no longer active');

    // The place is free again: the next cold start launches on this host.
    const again = await small.http.post(`/${p.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ status: 'running', warm: false, host: small.config.browsers.hostId });
    const stopped = await stopAndWait(small.http, base(sessionId, again.body.id), { token: user.token });
    expect(stopped.ended.status).toBe('stopped');
  }, 120_000);

  it('settles resources whose workflow never started (the api died mid-start), and frees the warm browser one held', async () => {
    await expect.poll(async () => (await warmRows()).length, { timeout: 60_000 }).toBe(1);
    const sessionId = await newSession();
    const em = small.orm.em.fork();
    const [offer] = await warmRows();
    if (!offer?.pid) throw new Error('no warm browser with a pid');
    // What a warm start commits before it starts the workflow: the offer claimed, the row running.
    const warm = em.create(SessionResource, {
      session: sessionId,
      project: p.id,
      status: 'running',
      hostId: offer.hostId,
      cdpEndpoint: offer.cdpEndpoint,
      pid: offer.pid,
      warm: true,
      startedAt: new Date(),
      lastActivity: new Date(),
    });
    // …and a cold start: the row starting.
    const cold = em.create(SessionResource, { session: sessionId, project: p.id, status: 'starting', hostId: offer.hostId });
    await em.transactional(async (tx) => {
      await tx.nativeDelete(WarmBrowser, { id: offer.id });
      tx.persist([warm, cold]);
    });
    // It holds a place on the host until settled.
    const held = await small.http.post(`/${p.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
    expect(held.status, held.text).toBe(429);

    for (const resource of [warm, cold]) {
      await expect
        .poll(async () => (await small.http.get(base(sessionId, resource.id), { token: user.token })).body.status, {
          timeout: 30_000,
          interval: 500,
        })
        .toBe('failed');
      const settled = (await small.http.get(base(sessionId, resource.id), { token: user.token })).body;
      expect(settled.stopReason).toMatch(/workflow never started/);
      const logs = await small.http.get(`${base(sessionId, resource.id)}/logs`, { token: user.token });
      expect(logs.body.map((entry: { message: string }) => entry.message).join('\n')).toMatch(/browser failed: its workflow never started/);
    }
    // The warm browser the crashed start claimed is destroyed, and the pool refilled.
    await expect.poll(() => isAlive(offer.pid as number), { timeout: 30_000, interval: 500 }).toBe(false);
    await expect.poll(async () => (await warmRows()).length, { timeout: 60_000 }).toBe(1);
    const again = await small.http.post(`/${p.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
    expect(again.status, again.text).toBe(200);
    await stopAndWait(small.http, base(sessionId, again.body.id), { token: user.token });
  }, 180_000);
});
