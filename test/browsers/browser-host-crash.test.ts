import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findProcessesMentioning, isAlive } from '../../server/browsers/host/chromium/processes.ts';
import { sharedDataDirOf } from '../../server/config.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { browserHostProcess } from '../support/browserHostProcess.ts';
import { startTestSite } from '../support/pages.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
const hostId = `crash-${Date.now().toString(36)}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-host-'));
const browsersDir = path.join(sharedDataDirOf(dataDir), 'browsers', hostId);
/** The marker BrowserPool.start() looks for in command lines: every browser's user-data-dir is below it. */
const orphanMarker = `--user-data-dir=${browsersDir}${path.sep}`;
let host: ReturnType<typeof browserHostProcess>;

/** How long Chromium gets to exit by itself after its host died, before it counts as an orphan. */
const ORPHAN_WAIT_MS = 15_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const hostAlive = () => host.alive();
const killHost = () => host.kill();

beforeAll(async () => {
  stack = await startTestStack();
  site = await startTestSite();
  host = browserHostProcess(stack, { hostId, dataDir });
});
afterAll(async () => {
  await killHost();
  for (const pid of findProcessesMentioning(orphanMarker)) process.kill(pid, 'SIGKILL');
  await site?.close();
  await stack?.close();
});

describe('a browser host that dies', () => {
  it('leaves no browser running or stuck: the resource settles (stopped, or failed when the host was lost meanwhile) and the restarted host cleans up', async () => {
    host.start();
    await expect.poll(hostAlive, { timeout: 30_000, interval: 250 }).toBe(true);

    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'crash' }, { token: owner.token });
    const sessionId = created.body.id;
    const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
    expect(started.status, started.text).toBe(200);
    expect(started.body.host).toBe(hostId);

    // Puppeteer uses the same remoteUrl as Playwright, as is.
    const browser = await puppeteer.connect({ browserWSEndpoint: started.body.remoteUrl });
    const page = await browser.newPage();
    await page.goto(`${site.url}/before-crash`);
    expect(await page.$eval('#greeting', (el) => el.textContent)).toBe('Hello from the test site');
    await browser.disconnect();
    expect(findProcessesMentioning(orphanMarker).length).toBeGreaterThan(0);

    await killHost();
    // Whether Chromium outlives its host decides what proves the restart's orphan kill: the
    // survivors themselves, or (if Chromium goes down with the host) a process planted with the
    // marker the restarted host looks for. Chromium exits when its pipe to the host closes, but
    // slowly on a busy machine: what still runs after this long has survived.
    const deadline = Date.now() + ORPHAN_WAIT_MS;
    while (findProcessesMentioning(orphanMarker).length && Date.now() < deadline) await sleep(250);
    const survivors = findProcessesMentioning(orphanMarker);
    let planted: { exited: Promise<NodeJS.Signals | null> } | undefined;
    if (survivors.length === 0) {
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', `${orphanMarker}planted`], { stdio: 'ignore' });
      planted = { exited: new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal))) };
      await expect.poll(() => findProcessesMentioning(orphanMarker).length, { timeout: 5_000 }).toBe(1);
    }
    const orphans = findProcessesMentioning(orphanMarker);
    expect(orphans.length).toBeGreaterThan(0);
    expect(orphans.every(isAlive), 'the orphans live while no host runs').toBe(true);

    host.clearOutput();
    host.start();
    await expect.poll(hostAlive, { timeout: 30_000, interval: 250 }).toBe(true);
    // The restart killed them (before it heartbeat), and said so.
    if (planted) expect(await planted.exited).toBe('SIGKILL');
    await expect.poll(() => orphans.filter(isAlive), { timeout: 5_000 }).toEqual([]);
    await expect.poll(() => host.output, { timeout: 5_000 }).toContain('killed browsers left by a previous run of this host');
    expect(host.output).toContain(`"count":${orphans.length}`);

    const resourceUrl = `/${project.slug}/api/sessions/${sessionId}/${started.body.id}`;
    await expect
      .poll(async () => (await stack.http.get(resourceUrl, { token: owner.token })).body.status, { timeout: 60_000, interval: 500 })
      .toBe('failed');
    // Back within the pickup time, the restarted host answers the check without the browser: the
    // host was lost (restarted), not the browser exited. Later than that (the orphan wait above is
    // as long), nobody picked the check up.
    const resource = await stack.http.get(resourceUrl, { token: owner.token });
    expect(`${resource.body.status}: ${resource.body.stopReason}`).toMatch(
      new RegExp(`^failed: browser host ${hostId} lost: (it was restarted, and the browser died with it|it picked up no task.*)$`),
    );
    expect(findProcessesMentioning(browsersDir)).toEqual([]);
    // The row is settled by the workflow's last activity; the workflow completes just after it.
    const workflow = stack.temporal.workflow.getHandle(`browser-${started.body.id}`);
    await expect.poll(async () => (await workflow.describe()).status.name, { timeout: 10_000, interval: 200 }).toBe('COMPLETED');

    // The restarted host serves new browsers.
    const again = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
    expect(again.status, again.text).toBe(200);
    const stopped = await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${again.body.id}`, { token: owner.token });
    expect(stopped.ended.status).toBe('stopped');
  });

  it('settles the resource of a host that stays dead within the detection time', async () => {
    await killHost();
    host.start();
    await expect.poll(hostAlive, { timeout: 30_000, interval: 250 }).toBe(true);
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'dead-host' }, { token: owner.token });
    const started = await stack.http.post(`/${project.slug}/api/sessions/${created.body.id}/start`, undefined, { token: owner.token });
    expect(started.status, started.text).toBe(200);
    const resourceUrl = `/${project.slug}/api/sessions/${created.body.id}/${started.body.id}`;
    expect((await stack.http.get(resourceUrl, { token: owner.token })).body.status).toBe('running');

    await killHost();
    const killedAt = Date.now();
    // Detection: the next check (every 5 s) goes unpicked for HOST_PICKUP_TIMEOUT (15 s) in
    // workflows/browserSession.ts; the stop is then skipped (no host to ask) and the row settled.
    await expect
      .poll(async () => (await stack.http.get(resourceUrl, { token: owner.token })).body.status, { timeout: 45_000, interval: 500 })
      .toMatch(/^(stopped|failed)$/);
    expect(Date.now() - killedAt).toBeLessThan(45_000);
    const resource = await stack.http.get(resourceUrl, { token: owner.token });
    expect(resource.body.stopReason).toMatch(new RegExp(`browser host ${hostId} lost`));
    // The row is settled by the workflow's last activity; the workflow completes just after it.
    const workflow = stack.temporal.workflow.getHandle(`browser-${started.body.id}`);
    await expect.poll(async () => (await workflow.describe()).status.name, { timeout: 10_000, interval: 200 }).toBe('COMPLETED');
    // No host ran meanwhile: whatever Chromium left is the next test's restart to clean up.
  });

  it('fails a pipeline run cleanly, naming the node, when its host dies mid-node', async () => {
    await killHost();
    host.start();
    await expect.poll(hostAlive, { timeout: 30_000, interval: 250 }).toBe(true);
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'run-crash' }, { token: owner.token });
    const pipeline = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      {
        name: 'slow',
        source: {
          nodes: {
            page: { type: 'browser.page' },
            wait: { type: 'page.wait', timeoutMs: 120_000, inputs: { page: { $ref: 'page.page' }, ms: 60_000 } },
          },
        },
      },
      { token: owner.token },
    );
    const started = await stack.http.post(
      `/${project.slug}/api/pipelines/${pipeline.body.id}/start`,
      { session: session.body.id },
      { token: owner.token },
    );
    expect(started.status, started.text).toBe(200);
    const runUrl = `/${project.slug}/api/pipelines/${pipeline.body.id}/${started.body.id}`;
    // The kill must land inside `wait` (60 s): both nodes run in one stretch, which stores
    // `page`'s outputs (with its log lines) once `wait` has started.
    await expect
      .poll(async () => (await stack.http.get(runUrl, { token: owner.token })).body.nodeOutputs.page, { timeout: 30_000, interval: 250 })
      .toBeTruthy();

    await killHost();
    host.start();

    await expect
      .poll(async () => (await stack.http.get(runUrl, { token: owner.token })).body.status.pipeline, { timeout: 90_000, interval: 500 })
      .toBe('failed');
    const run = (await stack.http.get(runUrl, { token: owner.token })).body;
    expect(run.status['pipeline-evaluation']).toBe('failed');
    expect(run.error.node).toBe('wait');
    // Restarted under the run: its host was lost, whatever the node's (no) retries left (or,
    // restarted too slowly for the pickup time, lost all the same).
    expect(run.error.code, JSON.stringify(run.error)).toBe('host_lost');
    expect(run.error.message).toMatch(new RegExp(`^browser host ${hostId} lost: `));
    // The run is a call (docs/browsers.md, Contexts for calls): it held no browser resource, and its
    // context died with the host's process, its project's browser with it. Nothing is left running
    // on the host.
    expect(run.resources).toEqual([]);
    expect(findProcessesMentioning(browsersDir)).toEqual([]);
  }, 150_000);
});
