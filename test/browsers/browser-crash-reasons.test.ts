import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PipelineRun, SessionResource } from '../../db/entities/index.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { createPipeline, longWaitSource, settledRun, startRun } from '../support/pipelines.ts';
import { processTree } from '../support/sandbox.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A browser's Chromium killed behind the service's back (kill -9): its resource says the browser
 * crashed, whether its own check found it or a run that used it ended first and asked it stopped
 * (docs/browsers.md, the stop reasons). A host restarted under its browsers is covered by
 * test/browsers/browser-host-crash.test.ts (`failed`, host lost).
 */

let stack: TestStack;
let as: { token: string };
let project: { id: string; slug: string };

beforeAll(async () => {
  stack = await startTestStack({ BROWSER_WARM_POOL: '0' }, { browserHost: true });
  const owner = await registerUser(stack);
  as = { token: owner.token };
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  await stack?.close();
});

/** Answers when it was killed (ms since the epoch). */
const killChromium = async (resourceId: string) => {
  const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resourceId });
  expect(row.pid).toBeTruthy();
  const killedAt = Date.now();
  process.kill(row.pid as number, 'SIGKILL');
  return killedAt;
};

/** How long after `killedAt` the resource settled, by the time its row records (not when a poll saw it). */
const settledAfter = async (resourceId: string, killedAt: number) => {
  const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resourceId });
  expect(row.stoppedAt).toBeTruthy();
  return (row.stoppedAt as Date).getTime() - killedAt;
};

/** Kills the renderer processes of a browser (its pages' processes), not the browser: answers how many. */
const killRenderers = async (resourceId: string) => {
  const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resourceId });
  const renderers = processTree(row.pid as number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer');
    } catch {
      return false;
    }
  });
  for (const pid of renderers) process.kill(pid, 'SIGKILL');
  return renderers.length;
};

/** A run of a 30 s wait in a new session, once its browser is up: its session, URL and browser. */
const runWaitingOnItsBrowser = async (sessionName: string) => {
  const sessionId = (await stack.http.put(`/${project.slug}/api/sessions`, { name: sessionName }, as)).body.id as string;
  const pipelineId = await createPipeline(stack, project.slug, as, longWaitSource(30_000));
  // Recorded, so it keeps a browser of its own (a plain run is a call, in a context of the project's browser).
  const { runId, runUrl } = await startRun(stack, project.slug, as, pipelineId, sessionId, { record: true });
  await expect.poll(async () => (await stack.http.get(runUrl, as)).body.nodeOutputs?.page, { timeout: 60_000, interval: 250 }).toBeTruthy();
  const resourceId = (await stack.orm.em.fork().findOneOrFail(PipelineRun, { id: runId })).resource?.id as string;
  return { sessionId, runUrl, resourceId };
};

const settledResource = async (url: string) => {
  await expect
    .poll(async () => (await stack.http.get(url, as)).body.status, { timeout: 45_000, interval: 300 })
    .toMatch(/^(stopped|failed)$/);
  return (await stack.http.get(url, as)).body as { status: string; stopReason: string };
};

describe('a browser whose Chromium is killed', () => {
  it('settles stopped within 1.5 s, saying the browser crashed: its host tells the workflow at once', async () => {
    const sessionId = (await stack.http.put(`/${project.slug}/api/sessions`, { name: 'crash' }, as)).body.id as string;
    const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, as);
    expect(started.status, started.text).toBe(200);
    const url = `/${project.slug}/api/sessions/${sessionId}/${started.body.id}`;
    await expect.poll(async () => (await stack.http.get(url, as)).body.status, { timeout: 30_000 }).toBe('running');
    const killedAt = await killChromium(started.body.id);
    const resource = await settledResource(url);
    expect(`${resource.status}: ${resource.stopReason}`).toBe('stopped: browser crashed: Chromium exited without being stopped');
    // Its check every 5 s would take 0–5 s (4.2–4.4 s in the fault probe): a run's browser settles in under 1 s.
    expect(await settledAfter(started.body.id, killedAt)).toBeLessThan(1_500);
  }, 90_000);

  it('under a run: the run fails, and the browser it started says it crashed, not that the run ended', async () => {
    const { sessionId, runUrl, resourceId } = await runWaitingOnItsBrowser('crash-run');
    const killedAt = await killChromium(resourceId);
    const run = await settledRun(stack, runUrl, as);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('failed');
    expect(run.error).toMatchObject({ node: 'wait', code: 'browser_crashed' });
    const resource = await settledResource(`/${project.slug}/api/sessions/${sessionId}/${resourceId}`);
    expect(resource.status).toBe('stopped');
    expect(resource.stopReason).toMatch(/^browser crashed: Chromium exited without being stopped/);
    expect(await settledAfter(resourceId, killedAt)).toBeLessThan(1_500);
  }, 120_000);

  it('a run whose page’s renderer dies fails with renderer_crashed; the browser lives on and is stopped by the run', async () => {
    const { sessionId, runUrl, resourceId } = await runWaitingOnItsBrowser('crash-renderer');
    expect(await killRenderers(resourceId)).toBeGreaterThan(0);
    const run = await settledRun(stack, runUrl, as);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('failed');
    expect(run.error).toMatchObject({ node: 'wait', code: 'renderer_crashed' });
    expect(run.error.message).toMatch(/renderer crashed/);
    const resource = await settledResource(`/${project.slug}/api/sessions/${sessionId}/${resourceId}`);
    expect(resource.status).toBe('stopped');
    expect(resource.stopReason).not.toMatch(/crashed/);
  }, 120_000);
});
