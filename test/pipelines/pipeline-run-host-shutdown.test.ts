import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BrowserHost } from '../../db/entities/index.ts';
import { drainedReason, shutDownReason, startBrowserHost } from '../../server/browsers/host/browserHost.ts';
import { findProcessesMentioning } from '../../server/browsers/host/chromium/processes.ts';
import { sharedDataDirOf } from '../../server/config.ts';
import { createControlWorker } from '../../server/main/controlWorker.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { browserHostProcess, killBrowsersLeftUnder } from '../support/browserHostProcess.ts';
import { createPipeline, longWaitSource, settledRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A browser host shut down while a run waits on its browser: the run fails `host_shutdown` at the
 * node it was on, saying the host was shut down, never with Playwright's "Target page, context or
 * browser has been closed" (`browser_error`) or `no_page`. First the host in the test's process,
 * stopped as `npm start`'s Ctrl-C stops it (its browsers at once); then a host in its own process,
 * sent SIGINT with no drain time left; then one killed while it drains, which cannot say so itself.
 * And a run between two stretches at `npm start`'s Ctrl-C, its browser stopped by the shutdown,
 * fails `host_shutdown` at its next browser node on the restarted host, not `no_page` or `host_lost`.
 */

const WAIT_MS = 50_000;
const suffix = Date.now().toString(36);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-host-shutdown-'));
const processHostId = `shutdown-${suffix}`;
const killedHostId = `shutdown-killed-${suffix}`;
let stack: TestStack;
let processHost: ReturnType<typeof browserHostProcess>;
let killedHost: ReturnType<typeof browserHostProcess>;
let as: { token: string };
let slug: string;
let pipelineId: string;
/** The control worker, served by the test (so it can stop and start it as `npm start` does), and the host it started again. */
let control: { stop: () => Promise<void> } | undefined;
let restartedHost: Awaited<ReturnType<typeof startBrowserHost>> | undefined;

async function startControlWorker() {
  const { worker, connection } = await createControlWorker(
    { config: stack.config, orm: stack.orm, log: stack.log },
    {
      address: inject('temporalAddress'),
      namespace: stack.config.temporal.namespace,
      taskQueue: stack.config.temporal.taskQueue,
      workflowBundle: { code: readFileSync(inject('workflowBundlePath'), 'utf8') },
    },
  );
  const running = worker.run();
  control = {
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** The stack's own browser host (its id and queue) started again in this process, as `npm start` starts it. */
const startStackHost = () =>
  startBrowserHost({
    config: stack.config,
    orm: stack.orm,
    log: stack.log,
    temporalAddress: inject('temporalAddress'),
    temporal: stack.temporal,
  });

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true, controlWorker: false });
  await startControlWorker();
  const owner = await registerUser(stack);
  as = { token: owner.token };
  slug = (await createProject(stack, owner.token)).slug;
  pipelineId = await createPipeline(stack, slug, as, longWaitSource(WAIT_MS));
}, 120_000);

afterAll(async () => {
  await restartedHost?.stop('kill');
  await control?.stop();
  await processHost?.kill();
  await killedHost?.kill();
  killBrowsersLeftUnder(dataDir);
  await stack?.close();
});

/**
 * A run on a new session's browser (the run starts it), once it waits in `wait`. It records, so it
 * needs a browser of its own: a plain run would be a call, in a context (docs/browsers.md, Contexts for calls).
 */
async function runWaitingOn(hostId: string) {
  const session = await stack.http.put(`/${slug}/api/sessions`, { name: `s-${Date.now()}` }, as);
  expect(session.status, session.text).toBe(200);
  const started = await stack.http.post(`/${slug}/api/pipelines/${pipelineId}/start`, { session: session.body.id, record: true }, as);
  expect(started.status, started.text).toBe(200);
  const run = { runId: started.body.id as string, runUrl: `/${slug}/api/pipelines/${pipelineId}/${started.body.id}` };
  await expect
    .poll(async () => (await stack.http.get(run.runUrl, as)).body.nodeOutputs?.page, { timeout: 60_000, interval: 100 })
    .toBeTruthy();
  const resource = (await stack.http.get(run.runUrl, as)).body.resources[0];
  expect(resource?.host).toBe(hostId);
  return { ...run, resourceUrl: `/${slug}/api/sessions/${session.body.id}/${resource.id}` };
}

/** The run's failure as the host's shutdown: the node, the code, the host's own words, also in the node's log. */
async function expectShutDown(runUrl: string, reason: string) {
  const run = await settledRun(stack, runUrl, as, 60_000);
  expect(run.status, JSON.stringify(run.error)).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
  expect(run.error).toEqual({ node: 'wait', code: 'host_shutdown', message: `${reason}: it closed the browser under the node` });
  const logs = (await stack.http.get(`${runUrl}/logs?limit=200`, as)).body as { context: string; message: string; area: string }[];
  const lines = logs.filter((entry) => entry.context === 'wait' && entry.area !== 'screenshot').map((entry) => entry.message);
  expect(lines).toContain(`page.wait failed: ${reason}: it closed the browser under the node`);
  expect(JSON.stringify(logs)).not.toMatch(/has been closed|no longer running on this host/);
}

describe('a browser host shut down with a run in flight', () => {
  it('npm start’s Ctrl-C (the host stops its browsers at once) fails the run host_shutdown', async () => {
    const hostId = stack.config.browsers.hostId;
    const { runUrl, resourceUrl } = await runWaitingOn(hostId);
    await stack.browserHost?.stop('stop');

    await expectShutDown(runUrl, shutDownReason(hostId));
    // The browser settles as the host stopped it, saying why.
    await expect.poll(async () => (await stack.http.get(resourceUrl, as)).body.status, { timeout: 30_000, interval: 250 }).toBe('stopped');
    expect((await stack.http.get(resourceUrl, as)).body.stopReason).toBe(shutDownReason(hostId));
  }, 180_000);

  it('npm start’s Ctrl-C and restart, with a run between two stretches, fails the run host_shutdown at its next browser node', async () => {
    const hostId = stack.config.browsers.hostId;
    // The case above shut the stack's host down: it starts again, as `npm start` would.
    restartedHost = await startStackHost();
    const twoStretches = await createPipeline(stack, slug, as, {
      nodes: {
        page: { type: 'browser.page' },
        first: { type: 'page.wait', inputs: { page: { $ref: 'page.page' }, ms: 3000 } },
        // A flow node: the workflow runs it between the two stretches, on the control worker.
        check: {
          type: 'flow.condition',
          inputs: { value: 1, page: { $ref: 'first.page' } },
          // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
          then: { nodes: { after: { type: 'page.wait', inputs: { page: { $ref: 'check.page' }, ms: 100 } } } },
        },
      },
    });
    const session = await stack.http.put(`/${slug}/api/sessions`, { name: `between-${Date.now()}` }, as);
    expect(session.status, session.text).toBe(200);
    // It records, so it starts a browser of its own; a plain run would be a call, whose context dies with the host (callHostFailure in activities/browserHost/hostBrowsers.ts).
    const started = await stack.http.post(`/${slug}/api/pipelines/${twoStretches}/start`, { session: session.body.id, record: true }, as);
    expect(started.status, started.text).toBe(200);
    const runUrl = `/${slug}/api/pipelines/${twoStretches}/${started.body.id}`;
    const outputs = async () => (await stack.http.get(runUrl, as)).body.nodeOutputs ?? {};
    await expect.poll(async () => (await outputs()).page, { timeout: 60_000, interval: 100 }).toBeTruthy();

    // No control worker: the first stretch ends on the host, and the run waits there, between the two.
    await control?.stop();
    await expect.poll(async () => (await outputs()).first, { timeout: 30_000, interval: 100 }).toBeTruthy();
    // Ctrl-C: the host stops the run's browser at once; then `npm start` is started again.
    await restartedHost.stop('stop');
    restartedHost = await startStackHost();
    await startControlWorker();

    const run = await settledRun(stack, runUrl, as, 90_000);
    expect(run.status, JSON.stringify(run.error)).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
    expect(run.error).toEqual({
      node: 'check.then.after',
      code: 'host_shutdown',
      message: `${shutDownReason(hostId)}: it stopped the run’s browser before the node`,
    });
    // The hosts of the cases below take the runs from here on.
    await restartedHost.stop('kill');
  }, 240_000);

  it('a host process’s Ctrl-C (SIGINT), its drain time over, fails the run host_shutdown and exits', async () => {
    processHost = browserHostProcess(stack, { hostId: processHostId, dataDir, env: { BROWSER_DRAIN_SECONDS: '0' } });
    processHost.start();
    await processHost.ready();
    const { runUrl, resourceUrl } = await runWaitingOn(processHostId);

    expect(await processHost.terminate('SIGINT')).toBe(0);
    await expectShutDown(runUrl, drainedReason(processHostId));
    await expect.poll(async () => (await stack.http.get(resourceUrl, as)).body.status, { timeout: 30_000, interval: 250 }).toBe('stopped');
    expect((await stack.http.get(resourceUrl, as)).body.stopReason).toBe(drainedReason(processHostId));
    expect(findProcessesMentioning(path.join(sharedDataDirOf(dataDir), 'browsers', processHostId))).toEqual([]);
  }, 180_000);

  it('a host killed by its supervisor while it drains (SIGTERM, then SIGKILL) fails the run host_shutdown: the registry says it was shut down', async () => {
    killedHost = browserHostProcess(stack, { hostId: killedHostId, dataDir, env: { BROWSER_DRAIN_SECONDS: '300' } });
    killedHost.start();
    await killedHost.ready();
    const { runUrl } = await runWaitingOn(killedHostId);

    void killedHost.terminate();
    await expect
      .poll(async () => (await stack.orm.em.fork().findOne(BrowserHost, { id: killedHostId }))?.drainingSince ?? null, {
        timeout: 10_000,
        interval: 100,
      })
      .not.toBeNull();
    // The drain lets the run go on; the supervisor does not wait for it.
    await killedHost.kill();

    // The attempt goes silent, its retry is picked up by nobody, and the registry tells why.
    const run = await settledRun(stack, runUrl, as, 120_000);
    expect(run.error, JSON.stringify(run.error)).toMatchObject({ node: 'wait', code: 'host_shutdown' });
    expect(run.error.message).toMatch(new RegExp(`^browser host ${killedHostId} was shut down: `));
  }, 240_000);
});
