import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserHost } from '../../db/entities/index.ts';
import { HostDraining } from '../../server/browsers/host/chromium/launchErrors.ts';
import { findProcessesMentioning } from '../../server/browsers/host/chromium/processes.ts';
import { BrowserPool } from '../../server/browsers/host/pool/browserPool.ts';
import { defaultLaunchSettings } from '../../server/browsers/launch/launchSignature.ts';
import { sharedDataDirOf } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { browserHostProcess, killBrowsersLeftUnder } from '../support/browserHostProcess.ts';
import { createPipeline, longWaitSource, settledRun, startRun } from '../support/pipelines.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A host with two places that is drained (SIGTERM) while it runs a session's browser and a run on
 * it, and another host with one place. No host runs in the test's process.
 */
const DRAIN_SECONDS = 20;
const RUN_WAIT_MS = 6_000;
const suffix = Date.now().toString(36);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-drain-'));
const drainedId = `drain-x-${suffix}`;
const otherId = `drain-y-${suffix}`;
let stack: TestStack;
let drained: ReturnType<typeof browserHostProcess>;
let other: ReturnType<typeof browserHostProcess>;

beforeAll(async () => {
  stack = await startTestStack();
  drained = browserHostProcess(stack, {
    hostId: drainedId,
    dataDir,
    env: { BROWSERS_PER_HOST: '2', BROWSER_DRAIN_SECONDS: String(DRAIN_SECONDS) },
  });
  other = browserHostProcess(stack, { hostId: otherId, dataDir, env: { BROWSERS_PER_HOST: '1' } });
  drained.start();
  other.start();
  for (const host of [drained, other]) await host.ready();
}, 120_000);

afterAll(async () => {
  await drained?.kill();
  await other?.kill();
  killBrowsersLeftUnder(dataDir);
  await stack?.close();
});

describe('draining a browser host (SIGTERM)', () => {
  it('lets a run finish, places starts elsewhere (or answers hosts-full), then stops what is left saying so, and exits', async () => {
    const owner = await registerUser(stack);
    const as = { token: owner.token };
    const { slug } = await createProject(stack, owner.token);
    const newSession = async () => {
      const session = await stack.http.put(`/${slug}/api/sessions`, { name: `s-${Date.now()}` }, as);
      expect(session.status, session.text).toBe(200);
      return session.body.id as string;
    };
    const start = (sessionId: string) => stack.http.post(`/${slug}/api/sessions/${sessionId}/start`, undefined, as);

    // Both hosts empty: the one with more free places takes the session's browser.
    const sessionId = await newSession();
    const started = await start(sessionId);
    expect(started.status, started.text).toBe(200);
    expect(started.body.host).toBe(drainedId);
    const resourceUrl = `/${slug}/api/sessions/${sessionId}/${started.body.id}`;
    const run = await startRun(stack, slug, as, await createPipeline(stack, slug, as, longWaitSource(RUN_WAIT_MS)), sessionId);
    await expect
      .poll(async () => (await stack.http.get(run.runUrl, as)).body.nodeOutputs?.page, { timeout: 60_000, interval: 100 })
      .toBeTruthy();

    const exited = drained.terminate();
    const signalledAt = Date.now();
    await expect
      .poll(async () => (await stack.orm.em.fork().findOne(BrowserHost, { id: drainedId }))?.drainingSince ?? null, {
        timeout: 10_000,
        interval: 100,
      })
      .not.toBeNull();

    // A start during the drain goes to the other host; with that one full, every host is full.
    const elsewhere = await start(await newSession());
    expect(elsewhere.status, elsewhere.text).toBe(200);
    expect(elsewhere.body.host).toBe(otherId);
    const full = await start(await newSession());
    expect(full.status, full.text).toBe(429);
    expect(full.body.code).toBe('browser_hosts_full');

    // The run goes on to its end on the draining host.
    const ended = await settledRun(stack, run.runUrl, as, 60_000);
    expect(ended.status, JSON.stringify(ended.error)).toEqual({ pipeline: 'succeeded', 'pipeline-evaluation': 'completed' });
    expect((await stack.http.get(resourceUrl, as)).body.status).toBe('running');

    // At the end of the drain time the session's browser is stopped, saying why, and the host exits.
    expect(await exited).toBe(0);
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(DRAIN_SECONDS * 1000 - 1000);
    expect(Date.now() - signalledAt).toBeLessThan((DRAIN_SECONDS + 40) * 1000);
    // The workflow records the end once the host's stop answered, a moment after the host could go.
    await expect.poll(async () => (await stack.http.get(resourceUrl, as)).body.status, { timeout: 15_000, interval: 250 }).toBe('stopped');
    const resource = (await stack.http.get(resourceUrl, as)).body;
    expect(resource.stopReason).toBe(`browser host ${drainedId} drained (it was shut down)`);
    expect(findProcessesMentioning(path.join(sharedDataDirOf(dataDir), 'browsers', drainedId))).toEqual([]);

    const elsewhereUrl = `/${slug}/api/sessions/${elsewhere.body.session}/${elsewhere.body.id}`;
    expect((await stopAndWait(stack.http, elsewhereUrl, as)).ended.status).toBe('stopped');
  }, 240_000);
});

/** A pool in this process with one place and `warmSize` warm browsers, no sandbox or egress policy. */
const onePlacePool = (browsersDir: string, warmSize: number) =>
  new BrowserPool({
    chromiumPath: stack.config.chromiumPath,
    egress: null,
    sandbox: null,
    cgroups: null,
    diskBytes: null,
    browsersDir,
    warmSize,
    recentSize: 0,
    recentMs: 1000,
    capacity: 1,
    log: createLogger(stack.config),
    onLog: async () => {},
  });

describe('a draining pool', () => {
  it('refuses a launch clearly, so the start fails at once instead of waiting for a browser', async () => {
    const pool = onePlacePool(mkdtempSync(path.join(os.tmpdir(), 'bf-drain-pool-')), 0);
    await pool.start();
    await pool.drain();
    const launch = pool.launch({ ...defaultLaunchSettings, resourceId: 'r-1', projectId: 'p-1', cookies: [], proxy: null });
    await expect(launch).rejects.toBeInstanceOf(HostDraining);
    await expect(launch).rejects.toThrow('this browser host is draining (shutting down) and takes no new browsers');
    expect(pool.warmSignatures).toEqual([]);
    expect(pool.runningCount).toBe(0);
    await pool.close();
  });

  it('a pool closed while a cold start takes over a warm launch leaves no browser behind', async () => {
    const browsersDir = mkdtempSync(path.join(os.tmpdir(), 'bf-close-pool-'));
    const pool = onePlacePool(browsersDir, 1);
    await pool.start();
    expect(pool.warmLaunching).toBe(1);
    const launch = pool.launch({ ...defaultLaunchSettings, resourceId: 'r-2', projectId: 'p-2', cookies: [], proxy: null });
    await pool.close();
    await expect(launch).rejects.toThrow('this browser host closed while the browser started');
    expect(pool.runningCount).toBe(0);
    await expect.poll(() => findProcessesMentioning(browsersDir).length, { timeout: 10_000 }).toBe(0);
  }, 60_000);
});
