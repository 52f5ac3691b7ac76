import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession, Pipeline, PipelineRun, PipelineVersion, Project } from '../../db/entities/index.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline as createPipelineIn, longWaitSource, settledRun, startRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Runs end however their workflow ends: the run sweeper settles a run whose workflow never
 * started or was terminated, and a run longer than the browser idle timeout keeps its browser.
 * A stack of its own, with a short idle timeout and a fast sweep.
 */
const IDLE_TIMEOUT_SECONDS = 6;

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let sessionId: string;
let site: Awaited<ReturnType<typeof startTestSite>>;

beforeAll(async () => {
  stack = await startTestStack(
    {
      BROWSER_IDLE_TIMEOUT_SECONDS: String(IDLE_TIMEOUT_SECONDS),
      BROWSER_SWEEP_INTERVAL_SECONDS: '1',
      BROWSER_SWEEP_GRACE_SECONDS: '2',
    },
    { browserHost: true },
  );
  site = await startTestSite({
    '/page': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><html><body><h1>here</h1></body></html>');
    },
  });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
  const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'runner' }, { token: owner.token });
  sessionId = created.body.id;
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

const createPipeline = (source: unknown) => createPipelineIn(stack, project.slug, { token: owner.token }, source);
const runUrl = (pipelineId: string, runId: string) => `/${project.slug}/api/pipelines/${pipelineId}/${runId}`;
const settled = (pipelineId: string, runId: string, timeout?: number) =>
  settledRun(stack, runUrl(pipelineId, runId), { token: owner.token }, timeout);

describe('the run sweeper', () => {
  it('settles a run whose workflow never started', async () => {
    const pipelineId = await createPipeline({ nodes: { say: { type: 'text.template', inputs: { template: 'hi' } } } });
    const em = stack.orm.em.fork();
    const pipeline = await em.findOneOrFail(Pipeline, { id: pipelineId });
    // What the api leaves when it stops between writing the run and starting its workflow.
    const run = em.create(PipelineRun, {
      project: em.getReference(Project, project.id),
      pipeline,
      version: em.getReference(PipelineVersion, pipeline.currentVersion?.id as string),
      session: em.getReference(BrowserSession, sessionId),
      status: 'running',
      evaluation: 'running',
    });
    await em.flush();
    const view = await settled(pipelineId, run.id, 30_000);
    expect(view.status).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
    expect(view.error).toMatchObject({ node: null, code: 'run_lost', message: expect.stringMatching(/never started/) });
    expect(view.finished).toBeTruthy();
  });

  it('settles a call whose workflow was terminated, and its host closes the call’s context', async () => {
    const pipelineId = await createPipeline(longWaitSource(50_000));
    const { runId } = await startRun(stack, project.slug, { token: owner.token }, pipelineId, sessionId);
    await expect
      .poll(async () => (await stack.http.get(runUrl(pipelineId, runId), { token: owner.token })).body.nodeOutputs.page, {
        timeout: 30_000,
      })
      .toBeTruthy();
    const calls = stack.browserHost?.projectBrowsers as NonNullable<TestStack['browserHost']>['projectBrowsers'];
    expect(calls.has(runId)).toBe(true);
    await stack.temporal.workflow.getHandle(`run-${runId}`).terminate('test: the workflow is gone');
    const view = await settled(pipelineId, runId, 30_000);
    expect(view.status).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
    expect(view.error).toMatchObject({ code: 'run_lost', message: expect.stringMatching(/terminated/) });
    expect(view.resources).toEqual([]);
    // No workflow is left to release it: the host closes the context of a call that has ended.
    await expect.poll(() => calls.has(runId), { timeout: 30_000 }).toBe(false);
  });

  it('settles a run whose workflow was terminated, and stops the browser it started', async () => {
    const pipelineId = await createPipeline(longWaitSource(50_000));
    // A run that records keeps a browser of its own (docs/browsers.md, Contexts for calls).
    const { runId } = await startRun(stack, project.slug, { token: owner.token }, pipelineId, sessionId, { record: true });
    await expect
      .poll(async () => (await stack.http.get(runUrl(pipelineId, runId), { token: owner.token })).body.nodeOutputs.page, {
        timeout: 30_000,
      })
      .toBeTruthy();
    await stack.temporal.workflow.getHandle(`run-${runId}`).terminate('test: the workflow is gone');
    const view = await settled(pipelineId, runId, 30_000);
    expect(view.status).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
    expect(view.error).toMatchObject({ code: 'run_lost', message: expect.stringMatching(/terminated/) });
    const resourceId = view.resources[0]?.id;
    expect(resourceId).toBeTruthy();
    await expect
      .poll(
        async () => (await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resourceId}`, { token: owner.token })).body.status,
        { timeout: 30_000 },
      )
      .toBe('stopped');
  });
});

describe('a run longer than the idle timeout', () => {
  it('keeps its browser: its nodes count as activity', async () => {
    const waitMs = (IDLE_TIMEOUT_SECONDS + 4) * 1000;
    const pipelineId = await createPipeline({
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/page` } },
        // Each wait alone outlasts the idle timeout and the idle check's interval.
        first: { type: 'page.wait', timeoutMs: waitMs + 5000, inputs: { page: { $ref: 'open.page' }, ms: waitMs } },
        second: { type: 'page.wait', timeoutMs: waitMs + 5000, inputs: { page: { $ref: 'first.page' }, ms: waitMs } },
        heading: { type: 'extract.text', inputs: { page: { $ref: 'second.page' }, selector: 'h1' } },
      },
      outputs: { heading: { $ref: 'heading.text' } },
    });
    const started = await stack.http.post(
      `/${project.slug}/api/pipelines/${pipelineId}/start`,
      { session: sessionId },
      { token: owner.token },
    );
    expect(started.status, started.text).toBe(200);
    const view = await settled(pipelineId, started.body.id, 90_000);
    expect(view.status.pipeline, JSON.stringify(view.error)).toBe('succeeded');
    expect(view.result).toEqual({ heading: 'here' });
  });
});
