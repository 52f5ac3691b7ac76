import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserSessionActivities } from '../../activities/browserSessions.ts';
import { BrowserSession, Project, SessionResource, UsageRecord, WarmBrowser } from '../../db/entities/index.ts';
import { isAlive, measureProcessTree } from '../../server/browsers/host/chromium/processes.ts';
import { summarizeLaunchFailure } from '../../server/browsers/sessions/resourceStatus.ts';
import { createLogger } from '../../server/logger.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Started browsers beyond the happy path (test/browsers/browser-sessions.test.ts): cookies in capture's
 * shape applied to warm and cold browsers, the info a resource shows, usage metered from adoption, a stop
 * whose workflow is already gone, and what a failed launch tells the caller.
 */

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };

beforeAll(async () => {
  // One warm browser; an unwanted browser is destroyed one second after the host notices.
  stack = await startTestStack({ BROWSER_WARM_POOL: '1', BROWSER_ORPHAN_GRACE_SECONDS: '1' }, { browserHost: true });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  await stack?.close();
});

const as = () => ({ token: owner.token });
const sessions = () => `/${project.slug}/api/sessions`;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function createSession(body: Record<string, unknown> = {}) {
  const created = await stack.http.put(sessions(), { name: `s-${Date.now()}`, ...body }, as());
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

/** The warm browser the next fitting start will take. */
function warmBrowser() {
  return waitFor('a warm browser', () => stack.orm.em.fork().findOne(WarmBrowser, { hostId: stack.config.browsers.hostId }));
}

async function stop(sessionId: string, resourceId: string) {
  const stopped = await stack.http.post(`${sessions()}/${sessionId}/${resourceId}/stop`, undefined, as());
  expect(stopped.status, stopped.text).toBe(200);
  return stopped.body;
}

describe('cookies in the shape capture answers', () => {
  // A session with a screen of its own does not fit the warm pool: the host launches for it.
  it.each([
    { launch: 'warm', settings: {} },
    { launch: 'cold', settings: { screen: { width: 1024, height: 700 } } },
  ])('are applied to a $launch browser with their priority and partition, and captured back', async ({ launch, settings }) => {
    await warmBrowser();
    const sessionId = await createSession({
      ...settings,
      cookies: [
        // As Storage.getCookies answers them, read-only fields included.
        {
          name: 'prio',
          value: 'high',
          domain: 'shop.test',
          path: '/',
          expires: -1,
          size: 8,
          httpOnly: false,
          secure: false,
          session: true,
          priority: 'High',
          sourceScheme: 'NonSecure',
          sourcePort: 8080,
        },
        {
          name: 'chips',
          value: 'embedded',
          domain: 'widget.test',
          path: '/',
          expires: -1,
          size: 13,
          httpOnly: true,
          secure: true,
          session: true,
          sameSite: 'None',
          priority: 'Medium',
          sourceScheme: 'Secure',
          sourcePort: 443,
          partitionKey: { topLevelSite: 'https://shop.test', hasCrossSiteAncestor: true },
        },
      ],
    });
    const started = await stack.http.post(`${sessions()}/${sessionId}/start`, undefined, as());
    expect(started.status, started.text).toBe(200);
    expect(started.body.warm).toBe(launch === 'warm');

    const captured = await stack.http.get(`${sessions()}/${sessionId}/${started.body.id}/capture`, as());
    expect(captured.status, captured.text).toBe(200);
    const byName = new Map(captured.body.cookies.map((cookie: { name: string }) => [cookie.name, cookie]));
    expect(byName.get('prio')).toMatchObject({ value: 'high', domain: 'shop.test', priority: 'High', sourcePort: 8080 });
    expect(byName.get('chips')).toMatchObject({
      value: 'embedded',
      secure: true,
      sameSite: 'None',
      partitionKey: { topLevelSite: 'https://shop.test', hasCrossSiteAncestor: true },
    });

    // What capture answered goes back into a session as it is.
    const saved = await stack.http.patch(`${sessions()}/${sessionId}`, { cookies: captured.body.cookies }, as());
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.cookies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'chips', partitionKey: { topLevelSite: 'https://shop.test', hasCrossSiteAncestor: true } }),
      ]),
    );
    await stop(sessionId, started.body.id);
  });

  it('a warm browser that cannot take the cookies fails the start with that reason', async () => {
    // The offered browser dies before it is claimed: the api cannot reach it to set the cookies.
    const warm = await warmBrowser();
    if (!warm.pid) throw new Error('the warm browser has no pid');
    process.kill(warm.pid, 'SIGKILL');
    await waitFor('the warm browser to die', async () => !isAlive(warm.pid as number));
    const sessionId = await createSession({ cookies: [{ name: 'a', value: '1', domain: 'shop.test' }] });
    const started = await stack.http.post(`${sessions()}/${sessionId}/start`, undefined, as());
    expect(started.status, started.text).toBe(503);
    expect(started.body.code).toBe('browser_start_failed');
    expect(started.body.message).toMatch(/^The browser could not be started: its cookies could not be set \(/);
    expect(started.body.message).not.toMatch(/workflow engine/);
    const [row] = await stack.orm.em.fork().find(SessionResource, { session: sessionId });
    expect(row).toMatchObject({ status: 'failed', cdpEndpoint: null });
    expect(row?.stopReason).toMatch(/^could not start: its cookies could not be set/);
  });
});

describe('a running resource', () => {
  it('shows its host, start and usage, metered from when it took the warm browser', async () => {
    const warm = await warmBrowser();
    if (!warm.pid) throw new Error('the warm browser has no pid');
    // Launching Chromium costs CPU seconds; they are the pool's, not the project's.
    const beforeClaim = measureProcessTree(warm.pid);
    expect(beforeClaim?.cpuSeconds).toBeGreaterThan(0.05);

    const sessionId = await createSession();
    const before = Date.now();
    const started = await stack.http.post(`${sessions()}/${sessionId}/start`, undefined, as());
    expect(started.status, started.text).toBe(200);
    expect(started.body.warm).toBe(true);
    const resourceId = started.body.id as string;
    const url = `${sessions()}/${sessionId}/${resourceId}`;

    const resource = await waitFor('the first usage report', async () => {
      const read = await stack.http.get(url, as());
      expect(read.status, read.text).toBe(200);
      return read.body.usage ? read.body : null;
    });
    const now = measureProcessTree(warm.pid);
    if (!beforeClaim || !now) throw new Error('the browser is not running');

    expect(resource.host).toBe(stack.config.browsers.hostId);
    expect(Date.parse(resource.started)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(resource.started)).toBeLessThanOrEqual(Date.now());
    expect(resource.stopped).toBeNull();
    const { cpuSeconds, memoryBytes, networkBytes } = resource.usage;
    expect(cpuSeconds).toBeGreaterThanOrEqual(0);
    // At most what the browser used since the claim (plus a clock tick): none of its launch.
    expect(cpuSeconds).toBeLessThanOrEqual(now.cpuSeconds - beforeClaim.cpuSeconds + 0.011);
    expect(memoryBytes).toBeGreaterThan(20 * 1024 * 1024);
    expect(memoryBytes).toBeLessThan(16 * 1024 * 1024 * 1024);
    expect(networkBytes).toBeGreaterThanOrEqual(0);

    // The metered records add up to the cumulative figure shown.
    const records = await stack.orm.em.fork().find(UsageRecord, { resourceId, unit: 'cpu' });
    const billed = records.reduce((sum, record) => sum + Number(record.amount), 0);
    expect(billed).toBeCloseTo(cpuSeconds, 5);
    await stop(sessionId, resourceId);
  });

  it('usage figures never go back, so nothing is billed twice', async () => {
    const em = stack.orm.em.fork();
    const row = em.create(SessionResource, {
      session: em.getReference(BrowserSession, await createSession()),
      project: em.getReference(Project, project.id),
      status: 'running',
      hostId: stack.config.browsers.hostId,
    });
    await em.flush();
    const { recordUsage } = createBrowserSessionActivities({ config: stack.config, orm: stack.orm, log: createLogger(stack.config) });
    // A child's seconds leave the tree (reaped elsewhere), then the tree grows again.
    for (const [cpuSeconds, networkBytes] of [
      [2, 1000],
      [1.5, 800],
      [2.25, 1500],
    ] as const) {
      await recordUsage(row.id, { cpuSeconds, memoryBytes: 1, networkBytes });
    }
    const records = await stack.orm.em.fork().find(UsageRecord, { resourceId: row.id });
    const total = (unit: string) => records.filter((r) => r.unit === unit).reduce((sum, r) => sum + Number(r.amount), 0);
    expect(total('cpu')).toBeCloseTo(2.25, 6);
    expect(total('network')).toBe(1500);
    const stored = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: row.id });
    expect(stored.usage).toEqual({ cpuSeconds: 2.25, memoryBytes: 1, networkBytes: 1500 });
    await stack.orm.em.fork().nativeUpdate(SessionResource, { id: row.id }, { status: 'stopped' });
  });

  it('stop settles the row itself when the workflow was terminated', async () => {
    const sessionId = await createSession();
    const started = await stack.http.post(`${sessions()}/${sessionId}/start`, undefined, as());
    expect(started.status, started.text).toBe(200);
    const resourceId = started.body.id as string;
    const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resourceId });
    if (!row.pid) throw new Error('the browser has no pid');
    expect(isAlive(row.pid)).toBe(true);

    // The workflow is gone without settling anything: the row still says running.
    await stack.temporal.workflow.getHandle(workflowIds.browser(resourceId)).terminate('test terminates it');
    expect((await stack.http.get(`${sessions()}/${sessionId}/${resourceId}`, as())).body.status).toBe('running');

    const stopped = await stop(sessionId, resourceId);
    expect(stopped).toMatchObject({ status: 'stopped', remoteUrl: null, vncUrl: null });
    expect(stopped.stopReason).toBe('stopped on request (its workflow had already ended: terminated)');
    const settled = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resourceId });
    expect(settled).toMatchObject({ status: 'stopped', cdpEndpoint: null });
    expect(settled.stoppedAt).toBeInstanceOf(Date);
    // The second stop finds it stopped; the host destroys the browser nothing holds any more.
    expect((await stop(sessionId, resourceId)).status).toBe('stopped');
    await waitFor('the browser to be destroyed', async () => !isAlive(row.pid as number), 30_000);
  });
});

describe('stop of a resource no workflow manages', () => {
  it('is 409 while the row may still be starting, and settles it once it cannot be', async () => {
    const sessionId = await createSession();
    const em = stack.orm.em.fork();
    // As the api leaves a row when it dies between committing it and starting its workflow.
    const row = em.create(SessionResource, {
      session: em.getReference(BrowserSession, sessionId),
      project: em.getReference(Project, project.id),
      status: 'starting',
      hostId: stack.config.browsers.hostId,
    });
    await em.flush();
    const url = `${sessions()}/${sessionId}/${row.id}/stop`;
    const early = await stack.http.post(url, undefined, as());
    expect(early.status, early.text).toBe(409);
    expect(early.body.code).toBe('browser_starting');

    await em.nativeUpdate(SessionResource, { id: row.id }, { created: new Date(Date.now() - 60_000) });
    const stopped = await stop(sessionId, row.id);
    expect(stopped).toMatchObject({ status: 'stopped', stopReason: 'stopped on request (no workflow managed it)' });
  });
});

describe('a launch that fails', () => {
  let broken: TestStack;
  const logged: Record<string, unknown>[] = [];

  beforeAll(async () => {
    // A host whose "Chromium" exits at once: Playwright's error then carries the command line,
    // every flag, the host's paths and a call log.
    broken = await startTestStack(
      { CHROMIUM_PATH: '/bin/false', BROWSER_WARM_POOL: '0', LOG_LEVEL: 'warn' },
      {
        browserHost: true,
        logDestination: new Writable({
          write(chunk, _encoding, done) {
            for (const line of String(chunk).split('\n').filter(Boolean)) logged.push(JSON.parse(line));
            done();
          },
        }),
      },
    );
  });
  afterAll(async () => {
    await broken?.close();
  });

  it('tells the caller a short reason, stores it, and logs the full one', async () => {
    const user = await registerUser(broken);
    const own = await createProject(broken, user.token);
    const created = await broken.http.put(`/${own.slug}/api/sessions`, { name: 'doomed' }, { token: user.token });
    const sessionId = created.body.id as string;
    const started = await broken.http.post(`/${own.slug}/api/sessions/${sessionId}/start`, undefined, { token: user.token });
    expect(started.status, started.text).toBe(503);
    expect(started.body.code).toBe('browser_start_failed');
    // Playwright's first line ("Failed to launch the browser process."), nothing after it.
    expect(started.body.message).toMatch(/^The browser could not be started: \w[^\n]{5,150}$/);
    const reason = started.body.message.replace('The browser could not be started: ', '');
    for (const leak of ['/bin/false', '--user-data-dir', 'Call log', '\n', broken.config.dataDir]) {
      expect(started.text).not.toContain(leak);
    }

    const [row] = await broken.orm.em.fork().find(SessionResource, { session: sessionId });
    expect(row).toMatchObject({ status: 'failed', stopReason: `could not start: ${reason}` });
    const logs = await broken.http.get(`/${own.slug}/api/sessions/${sessionId}/${row?.id}/logs`, { token: user.token });
    expect(logs.status, logs.text).toBe(200);
    // Read as lines, not as the JSON text: a reason may hold quotes (the pipe's own message does).
    expect((logs.body as { message: string }[]).map((line) => line.message).join('\n')).toContain(`could not start: ${reason}`);
    expect(logs.text).not.toContain('/bin/false');

    // The server's log has all of it.
    const full = () => logged.find((line) => line.resourceId === row?.id && typeof line.reason === 'string');
    const about = () => JSON.stringify({ answered: started.body.message, logged: logged.filter((line) => line.resourceId === row?.id) });
    await expect
      .poll(() => full()?.reason, { timeout: 10_000, message: about() })
      .toMatch(/<launching> \/bin\/false .*--user-data-dir=.*Call log:/s);
  });
});

describe('summarizeLaunchFailure', () => {
  it('keeps the first line without method, paths, flags or colour codes', () => {
    expect(
      summarizeLaunchFailure(
        "browserType.launchPersistentContext: Failed to launch chromium because executable doesn't exist at /opt/x/chrome",
      ),
    ).toBe("Failed to launch chromium because executable doesn't exist at …");
    expect(
      summarizeLaunchFailure('could not start: browserContext.addCookies: Protocol error (Storage.setCookies): Invalid cookie fields'),
    ).toBe('could not start: Protocol error (Storage.setCookies): Invalid cookie fields');
    expect(summarizeLaunchFailure('spawn failed for --user-data-dir=/data/b/1 --no-sandbox\n  at x')).toBe('spawn failed for');
    expect(summarizeLaunchFailure('\u001b[2mnet::ERR_PROXY_CONNECTION_FAILED at http://p.test:8080/\u001b[22m')).toBe(
      'net::ERR_PROXY_CONNECTION_FAILED at http://p.test:8080/',
    );
    expect(summarizeLaunchFailure('idle for more than 300 s')).toBe('idle for more than 300 s');
    expect(summarizeLaunchFailure('\n')).toBe('the browser failed to launch');
    expect(summarizeLaunchFailure('x'.repeat(500))).toHaveLength(200);
  });
});
