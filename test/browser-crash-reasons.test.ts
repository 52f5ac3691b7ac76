import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PipelineRun, SessionResource } from '../db/entities/index.ts';
import { createProject, registerUser } from './support/accounts.ts';
import { createPipeline, longWaitSource, settledRun, startRun } from './support/pipelines.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

/**
 * A browser's Chromium killed behind the service's back (kill -9): its resource says the browser
 * crashed, whether its own check found it or a run that used it ended first and asked it stopped
 * (docs/browsers.md, the stop reasons). A host restarted under its browsers is covered by
 * test/browser-host-crash.test.ts (`failed`, host lost).
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

const killChromium = async (resourceId: string) => {
  const row = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: resourceId });
  expect(row.pid).toBeTruthy();
  process.kill(row.pid as number, 'SIGKILL');
};

const settledResource = async (url: string) => {
  await expect
    .poll(async () => (await stack.http.get(url, as)).body.status, { timeout: 45_000, interval: 300 })
    .toMatch(/^(stopped|failed)$/);
  return (await stack.http.get(url, as)).body as { status: string; stopReason: string };
};

describe('a browser whose Chromium is killed', () => {
  it('settles stopped, saying the browser crashed', async () => {
    const sessionId = (await stack.http.put(`/${project.slug}/api/sessions`, { name: 'crash' }, as)).body.id as string;
    const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, as);
    expect(started.status, started.text).toBe(200);
    const url = `/${project.slug}/api/sessions/${sessionId}/${started.body.id}`;
    await expect.poll(async () => (await stack.http.get(url, as)).body.status, { timeout: 30_000 }).toBe('running');
    await killChromium(started.body.id);
    const resource = await settledResource(url);
    expect(`${resource.status}: ${resource.stopReason}`).toBe('stopped: browser crashed: Chromium exited without being stopped');
  }, 90_000);

  it('under a run: the run fails, and the browser it started says it crashed, not that the run ended', async () => {
    const sessionId = (await stack.http.put(`/${project.slug}/api/sessions`, { name: 'crash-run' }, as)).body.id as string;
    const pipelineId = await createPipeline(stack, project.slug, as, longWaitSource(30_000));
    const { runId, runUrl } = await startRun(stack, project.slug, as, pipelineId, sessionId);
    await expect
      .poll(async () => (await stack.http.get(runUrl, as)).body.nodeOutputs?.page, { timeout: 60_000, interval: 250 })
      .toBeTruthy();
    const resourceId = (await stack.orm.em.fork().findOneOrFail(PipelineRun, { id: runId })).resource?.id as string;
    await killChromium(resourceId);
    const run = await settledRun(stack, runUrl, as);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('failed');
    expect(run.error).toMatchObject({ node: 'wait', code: 'browser_crashed' });
    const resource = await settledResource(`/${project.slug}/api/sessions/${sessionId}/${resourceId}`);
    expect(resource.status).toBe('stopped');
    expect(resource.stopReason).toMatch(/^browser crashed: Chromium exited without being stopped/);
  }, 120_000);
});
