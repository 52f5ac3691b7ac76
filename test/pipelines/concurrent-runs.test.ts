import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession, PipelineRun, PipelineVersion, Project, SessionResource, WarmBrowser } from '../../db/entities/index.ts';
import { completeBrowserStart, reserveBrowserStart } from '../../server/browsers/sessions/browserSessions.ts';
import { activeResourceStatuses } from '../../server/browsers/sessions/resourceStatus.ts';
import type { Plan } from '../../server/pipelines/engine/plan.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { pipelineRunWorkflow } from '../../workflows/pipelineRun.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun, startRun } from '../support/pipelines.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Runs started at once on one session, with warm browsers waiting: each run that starts a browser
 * gets its own (docs/pipelines.md, Runs), and no run's end stops a browser another run drives.
 * Runs that need no browser of their own are calls (docs/browsers.md, Contexts for calls): they
 * run in contexts of the project's browser, so the runs here that must start a browser ask for a
 * recording (`record`), which only a browser of its own gives.
 * A warm browser is taken in the transaction that writes the run owning it, so a second start
 * cannot find it running and unowned in between. The stack runs as `npm start` does (the api on
 * the worker's connection, eager workflow starts), where a run's first node can overtake the
 * browser workflow's adoption of the warm browser it was given.
 */

const ROUNDS = 4;
const RUNS = 3;

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let site: Awaited<ReturnType<typeof startTestSite>>;

beforeAll(async () => {
  // A warm browser for every run of a round, so each start is as fast as a start gets.
  stack = await startTestStack({ BROWSER_WARM_POOL: String(RUNS), BROWSER_WARM_RECENT: '0' }, { browserHost: true, eagerStart: true });
  site = await startTestSite();
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

const warmOffers = () => stack.orm.em.fork().count(WarmBrowser, {});
const activeBrowsers = () =>
  stack.orm.em.fork().count(SessionResource, { project: project.id, status: { $in: [...activeResourceStatuses] } });

/** Every browser of the last round stopped, and the pool refilled. */
async function settledPool() {
  await expect.poll(activeBrowsers, { timeout: 60_000, interval: 200 }).toBe(0);
  await expect.poll(warmOffers, { timeout: 60_000, interval: 200 }).toBeGreaterThanOrEqual(RUNS);
}

/**
 * The page stays in use a while after the first node, so a run that ended first would stop a
 * shared browser while the others still drive it.
 */
const headingSource = () => ({
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: site.url } },
    wait: { type: 'page.wait', inputs: { page: { $ref: 'open.page' }, ms: 300 } },
    heading: { type: 'extract.text', inputs: { page: { $ref: 'wait.page' }, selector: 'h1' } },
  },
  outputs: { heading: { $ref: 'heading.text' } },
});

/** Starts a run that records its browser: it needs a browser of its own, never a call's context. */
async function startRecordingRun(as: { token: string }, pipelineId: string, sessionId: string) {
  const started = await stack.http.post(`/${project.slug}/api/pipelines/${pipelineId}/start`, { session: sessionId, record: true }, as);
  expect(started.status, started.text).toBe(200);
  const runId = started.body.id as string;
  return { runId, runUrl: `/${project.slug}/api/pipelines/${pipelineId}/${runId}` };
}

describe('runs started at once on one session', () => {
  it('each get a browser of their own (runs that record) and all succeed', async () => {
    const as = { token: owner.token };
    const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'shared' }, as);
    expect(created.status, created.text).toBe(200);
    const sessionId = created.body.id as string;
    const pipelineId = await createPipeline(stack, project.slug, as, headingSource());

    for (let round = 0; round < ROUNDS; round++) {
      await settledPool();
      const started = await Promise.all(Array.from({ length: RUNS }, () => startRecordingRun(as, pipelineId, sessionId)));
      const runs = await Promise.all(started.map(({ runUrl }) => settledRun(stack, runUrl, as)));
      for (const run of runs) {
        expect(run.status, `round ${round}: ${JSON.stringify(run.error)}`).toEqual({
          pipeline: 'succeeded',
          'pipeline-evaluation': 'completed',
        });
        expect(run.result).toEqual({ heading: 'Hello from the test site' });
      }
      const browsers = runs.map((run) => run.resources[0]?.id as string | undefined);
      expect(browsers.every(Boolean), JSON.stringify(runs.map((run) => run.resources))).toBe(true);
      expect(new Set(browsers).size, `round ${round}: ${browsers.join(', ')}`).toBe(RUNS);
    }
  }, 300_000);

  it('runs that need no browser of their own, started at once, are calls: each in a context, none starts a browser', async () => {
    const as = { token: owner.token };
    const sessionId = (await stack.http.put(`/${project.slug}/api/sessions`, { name: 'calls' }, as)).body.id as string;
    const pipelineId = await createPipeline(stack, project.slug, as, headingSource());
    await settledPool();
    const started = await Promise.all(Array.from({ length: RUNS }, () => startRun(stack, project.slug, as, pipelineId, sessionId)));
    const runs = await Promise.all(started.map(({ runUrl }) => settledRun(stack, runUrl, as)));
    for (const run of runs) {
      expect(run.status, JSON.stringify(run.error)).toEqual({ pipeline: 'succeeded', 'pipeline-evaluation': 'completed' });
      expect(run.result).toEqual({ heading: 'Hello from the test site' });
      expect(run.resources).toEqual([]);
    }
    expect(await activeBrowsers()).toBe(0);
  }, 120_000);

  it('and functions executed at once each run in a context of their own, answering their outputs', async () => {
    const as = { token: owner.token };
    const created = await stack.http.put(
      `/${project.slug}/api/functions`,
      {
        name: 'Heading',
        description: '',
        slug: 'heading',
        definition: { source: headingSource(), parameters: [], outputs: [{ name: 'heading', refType: 'string' }] },
      },
      as,
    );
    expect(created.status, created.text).toBe(200);

    for (let round = 0; round < ROUNDS; round++) {
      await settledPool();
      const answers = await Promise.all(
        Array.from({ length: RUNS }, () => stack.http.post(`/${project.slug}/api/functions/slug/heading/execute`, {}, as)),
      );
      for (const answer of answers) {
        expect(answer.status, `round ${round}: ${answer.text}`).toBe(200);
        expect(answer.body.outputs).toEqual({ heading: 'Hello from the test site' });
      }
      const runs = await stack.orm.em.fork().find(PipelineRun, { id: { $in: answers.map((answer) => answer.body.identifier as string) } });
      expect(runs.map((run) => run.status)).toEqual(Array(RUNS).fill('succeeded'));
      // Calls: no browser of the project's count, each its own context (closed with its run).
      expect(runs.map((run) => run.resource)).toEqual(Array(RUNS).fill(null));
      expect(await activeBrowsers()).toBe(0);
      await expect.poll(() => stack.browserHost?.projectBrowsers.callCount, { timeout: 30_000 }).toBe(0);
    }
  }, 300_000);

  it('a run whose first node reaches the host before the warm browser’s workflow still runs on that browser', async () => {
    // What a start does, with the browser workflow's start held back until the run has ended: the
    // warm browser claimed and the run owning it written in one transaction, then the run started.
    const as = { token: owner.token };
    await settledPool();
    const sessionId = (await stack.http.put(`/${project.slug}/api/sessions`, { name: 'overtaken' }, as)).body.id as string;
    const pipelineId = await createPipeline(stack, project.slug, as, headingSource());
    const em = stack.orm.em.fork();
    const version = await em.findOneOrFail(PipelineVersion, { pipeline: pipelineId }, { populate: ['plan'] });
    const deps = { config: stack.config, temporal: stack.temporal, relayTokens: stack.relayTokens, log: stack.log };
    const { reservation, run } = await em.transactional(async (tx) => {
      const reservation = await reserveBrowserStart(
        deps,
        tx,
        await tx.findOneOrFail(Project, { id: project.id }),
        await tx.findOneOrFail(BrowserSession, { id: sessionId }),
      );
      const run = tx.create(PipelineRun, {
        project: project.id,
        pipeline: pipelineId,
        version,
        session: sessionId,
        resource: reservation.resource,
        ownsResource: true,
      });
      return { reservation, run };
    });
    expect(reservation.warm).not.toBeNull();
    const resourceId = reservation.resource.id;
    await stack.temporal.workflow.execute(pipelineRunWorkflow, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: workflowIds.run(run.id),
      args: [
        run.id,
        { plan: version.plan as unknown as Plan, args: {}, hostId: reservation.resource.hostId as string, resourceId, ownsResource: true },
      ],
    });
    const ended = await stack.orm.em.fork().findOneOrFail(PipelineRun, { id: run.id });
    expect(ended.status, JSON.stringify(ended.error)).toBe('succeeded');
    expect(ended.result).toEqual({ heading: 'Hello from the test site' });

    // The workflow's adoption, late, finds the browser taken over and manages it from then on.
    await completeBrowserStart(deps, em, reservation);
    const logs = `/${project.slug}/api/sessions/${sessionId}/${resourceId}/logs?limit=200`;
    await expect
      .poll(async () => JSON.stringify((await stack.http.get(logs, as)).body), { timeout: 30_000 })
      .toContain('(from the warm pool)');
    const { ended: stopped } = await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${resourceId}`, as);
    expect(stopped.status).toBe('stopped');
    expect(stack.browserHost?.pool.contextOf(resourceId)).toBeUndefined();
  }, 120_000);
});
