import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Project, UsageRecord } from '../../db/entities/index.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import type { Credentials } from '../support/http.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Calls in contexts (docs/browsers.md, Contexts for calls), on the real stack with default
 * settings: executes and runs that use no running session browser run in a fresh context of
 * their project's browser; the project's calls wait their turn in a bounded queue.
 */

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let owner: Credentials;
let projectA: string;
let projectB: string;
/** A session of each project, none of them running a browser: runs on them are calls. */
const sessions: Record<string, string> = {};

const html = (body: string, script = '') =>
  `<!doctype html><html><head><title>t</title></head><body>${body}<script>${script}</script></body></html>`;

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite({
    '/hello': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html('<h1>hello</h1>'));
    },
    // Shows what the context held before the page came (cookie and localStorage), then leaves its own.
    '/store': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        html(
          '<h1 id="h">?</h1>',
          `document.getElementById('h').textContent = 'cookie=' + document.cookie + ';ls=' + (localStorage.getItem('k') ?? '');
           document.cookie = 'seen=1; path=/; max-age=3600'; localStorage.setItem('k', 'set');`,
        ),
      );
    },
  });
  owner = { token: (await registerUser(stack)).token };
  projectA = (await createProject(stack, owner.token as string)).slug;
  projectB = (await createProject(stack, owner.token as string)).slug;
  for (const slug of [projectA, projectB]) {
    const session = await stack.http.put(`/${slug}/api/sessions`, { name: 'calls' }, owner);
    expect(session.status, session.text).toBe(200);
    sessions[slug] = session.body.id;
  }
}, 120_000);
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

const helloFunction = {
  parameters: {},
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: '' } },
    heading: { type: 'extract.text', timeoutMs: 5000, inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
  },
  outputs: { title: { $ref: 'heading.text' } },
};

async function createFunction(projectSlug: string, slug: string, url: string) {
  const source = structuredClone(helloFunction);
  source.nodes.open.inputs.url = url;
  const created = await stack.http.put(
    `/${projectSlug}/api/functions`,
    {
      name: slug,
      description: 'reads a heading',
      slug,
      definition: { source, parameters: [], outputs: [{ name: 'title', refType: 'string' }], metadata: {}, outputType: 'function' },
    },
    owner,
  );
  expect(created.status, created.text).toBe(200);
}

const execute = (projectSlug: string, slug: string) =>
  stack.http.post(`/${projectSlug}/api/functions/slug/${slug}/execute`, { args: {} }, owner);

/** A pipeline that opens `path`, reads its heading, then holds its context for `holdMs`. */
const holdingSource = (path: string, holdMs: number) => ({
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: site.url + path } },
    heading: { type: 'extract.text', timeoutMs: 5000, inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
    hold: { type: 'page.wait', timeoutMs: 60_000, inputs: { page: { $ref: 'heading.page' }, ms: holdMs } },
  },
  outputs: { heading: { $ref: 'heading.text' } },
});

/** Starts a run of `pipelineId` on the project's default session (no browser runs: a call). */
async function startCall(projectSlug: string, pipelineId: string, body: Record<string, unknown> = {}) {
  const started = await stack.http.post(
    `/${projectSlug}/api/pipelines/${pipelineId}/start`,
    { session: sessions[projectSlug], ...body },
    owner,
  );
  expect(started.status, started.text).toBe(200);
  const runId = started.body.id as string;
  return { runId, runUrl: `/${projectSlug}/api/pipelines/${pipelineId}/${runId}` };
}

const calls = () => stack.browserHost?.projectBrowsers as NonNullable<TestStack['browserHost']>['projectBrowsers'];

/** The pid of the browser the run's context is in, once it has one. */
async function pidOf(runId: string) {
  await expect.poll(() => calls().pidOf(runId), { timeout: 30_000, interval: 100 }).not.toBeNull();
  return calls().pidOf(runId) as number;
}

/** Once the run has read its heading (its outputs are stored as it goes). */
async function headingRead(runUrl: string) {
  await expect
    .poll(async () => (await stack.http.get(runUrl, owner)).body.nodeOutputs?.heading?.text, { timeout: 30_000, interval: 200 })
    .toBeTypeOf('string');
}

describe('calls in contexts', () => {
  it('10 concurrent callers × 4 executes all answer 200 on the default settings', async () => {
    await createFunction(projectA, 'hello', `${site.url}/hello`);
    const caller = async () => {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await execute(projectA, 'hello'));
      return answers;
    };
    const answers = (await Promise.all(Array.from({ length: 10 }, caller))).flat();
    expect(answers.map((answer) => `${answer.status} ${answer.status === 200 ? answer.body.outputs.title : answer.text}`)).toEqual(
      Array(40).fill('200 hello'),
    );
    // No browser of the project's count was taken: calls are not browsers.
    const resources = await stack.orm.em.fork().getConnection().execute('select count(*)::int as n from session_resources');
    expect(resources[0]?.n).toBe(0);
    // Every context was closed with its call.
    await expect.poll(() => calls().callCount, { timeout: 10_000 }).toBe(0);
    // Billing is off here: the project's browser is metered all the same, as every browser is.
    const project = await stack.orm.em.fork().findOneOrFail(Project, { slug: projectA });
    await expect
      .poll(async () => stack.orm.em.fork().count(UsageRecord, { project: project.id, reportId: { $like: 'calls:%' } }), {
        timeout: 30_000,
      })
      .toBeGreaterThan(0);
  }, 240_000);

  it('a call starts with its session’s stored cookies, in its own context only', async () => {
    const stored = await stack.http.put(
      `/${projectA}/api/sessions`,
      { name: 'stored cookies', cookies: [{ name: 'stored', value: 'kept-9f2c41', url: site.url }] },
      owner,
    );
    expect(stored.status, stored.text).toBe(200);
    const pipelineId = await createPipeline(stack, projectA, owner, holdingSource('/store', 4000));
    const start = async () => {
      const started = await stack.http.post(`/${projectA}/api/pipelines/${pipelineId}/start`, { session: stored.body.id }, owner);
      expect(started.status, started.text).toBe(200);
      return { runId: started.body.id as string, runUrl: `/${projectA}/api/pipelines/${pipelineId}/${started.body.id}` };
    };
    const first = await start();
    // The first call's page has set a cookie of its own by now; the second comes while it holds its context.
    await headingRead(first.runUrl);
    const second = await start();
    expect(await pidOf(second.runId)).toBe(await pidOf(first.runId));
    for (const call of [first, second]) {
      const run = await settledRun(stack, call.runUrl, owner);
      expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
      expect(run.resources).toEqual([]);
      // Each page saw the stored cookie (its value hidden in what the run keeps, as a stored
      // cookie value is), and not the cookie the other call's page set.
      expect(run.nodeOutputs.heading.text).toBe('cookie=stored=[redacted];ls=');
    }
  }, 120_000);

  it('two calls share the browser process, never its cookies or localStorage; screenshots work in contexts', async () => {
    const pipelineId = await createPipeline(stack, projectA, owner, holdingSource('/store', 4000));
    const first = await startCall(projectA, pipelineId, { screenshots: 'steps' });
    await headingRead(first.runUrl);
    // The first call's page has set its cookie and localStorage by now; the second comes while it holds its context.
    const second = await startCall(projectA, pipelineId);
    const [pidFirst, pidSecond] = [await pidOf(first.runId), await pidOf(second.runId)];
    expect(pidSecond).toBe(pidFirst);
    const [one, two] = [await settledRun(stack, first.runUrl, owner), await settledRun(stack, second.runUrl, owner)];
    expect(one.status.pipeline, JSON.stringify(one.error)).toBe('succeeded');
    expect(two.status.pipeline, JSON.stringify(two.error)).toBe('succeeded');
    expect(one.nodeOutputs.heading.text).toBe('cookie=;ls=');
    expect(two.nodeOutputs.heading.text).toBe('cookie=;ls=');
    // A third, after both closed, starts as empty.
    const third = await startCall(projectA, pipelineId);
    expect((await settledRun(stack, third.runUrl, owner)).nodeOutputs.heading.text).toBe('cookie=;ls=');
    // Screenshots of a call's pages are taken and kept.
    expect(one.screenshots.length).toBeGreaterThan(0);
  }, 120_000);

  it('two projects never share a browser', async () => {
    const [a, b] = [
      await createPipeline(stack, projectA, owner, holdingSource('/hello', 3000)),
      await createPipeline(stack, projectB, owner, holdingSource('/hello', 3000)),
    ];
    const [runA, runB] = [await startCall(projectA, a), await startCall(projectB, b)];
    const [pidA, pidB] = [await pidOf(runA.runId), await pidOf(runB.runId)];
    expect(pidA).not.toBe(pidB);
    const projects = new Set(
      calls()
        .status()
        .map((browser) => browser.projectId),
    );
    expect(projects.size).toBeGreaterThanOrEqual(2);
    for (const run of [runA, runB]) expect((await settledRun(stack, run.runUrl, owner)).status.pipeline).toBe('succeeded');
  }, 120_000);

  it('a killed project browser fails only the calls inside it, as browser_crashed; the next call gets a new browser', async () => {
    const [a, b] = [
      await createPipeline(stack, projectA, owner, holdingSource('/hello', 6000)),
      await createPipeline(stack, projectB, owner, holdingSource('/hello', 6000)),
    ];
    const [runA, runB] = [await startCall(projectA, a), await startCall(projectB, b)];
    await Promise.all([headingRead(runA.runUrl), headingRead(runB.runUrl)]);
    const killed = await pidOf(runA.runId);
    process.kill(killed, 'SIGKILL');
    const [endA, endB] = [await settledRun(stack, runA.runUrl, owner), await settledRun(stack, runB.runUrl, owner)];
    expect(endA.status.pipeline).toBe('failed');
    expect(endA.error).toMatchObject({ node: 'hold', code: 'browser_crashed' });
    expect(endB.status.pipeline, JSON.stringify(endB.error)).toBe('succeeded');
    const again = await execute(projectA, 'hello');
    expect(again.status, again.text).toBe(200);
    expect(again.body.outputs.title).toBe('hello');
  }, 120_000);

  it('a call is stopped inside its context (POST …/stop), and its context closes', async () => {
    const pipelineId = await createPipeline(stack, projectB, owner, holdingSource('/hello', 20_000));
    const run = await startCall(projectB, pipelineId);
    await headingRead(run.runUrl);
    const stopped = await stack.http.post(`${run.runUrl}/stop`, {}, owner);
    expect(stopped.status, stopped.text).toBe(200);
    const end = await settledRun(stack, run.runUrl, owner);
    expect(end.status.pipeline).toBe('cancelled');
    await expect.poll(() => calls().has(run.runId), { timeout: 10_000 }).toBe(false);
  }, 60_000);

  describe('the call queue', () => {
    it('answers 429 call_queue_full when the queue is full and call_queue_timeout when a wait runs out', async () => {
      const saved = { ...stack.config.calls };
      try {
        await queueLimits();
      } finally {
        Object.assign(stack.config.calls, saved);
      }
    }, 120_000);

    async function queueLimits() {
      // One call at a time, one waiting, for 2 s: the limits the config module read (CALLS_PER_PROJECT, CALL_QUEUE_MAX, CALL_QUEUE_TIMEOUT_SECONDS).
      Object.assign(stack.config.calls, { perProject: 1, queueMax: 1, queueTimeoutSeconds: 2 });
      const pipelineId = await createPipeline(stack, projectB, owner, holdingSource('/hello', 8000));
      const running = await startCall(projectB, pipelineId);
      await pidOf(running.runId);
      const asCall = { session: sessions[projectB] };
      const waiting = stack.http.post(`/${projectB}/api/pipelines/${pipelineId}/start`, asCall, owner);
      // The second waits in the queue; a third finds it full.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const full = await execute(projectB, 'nothing-needed');
      // An unknown function is a 404 before any queue: the queue is met only by a call.
      expect(full.status).toBe(404);
      const third = await stack.http.post(`/${projectB}/api/pipelines/${pipelineId}/start`, asCall, owner);
      expect(third.status, third.text).toBe(429);
      expect(third.body).toMatchObject({ status: 'error', code: 'call_queue_full' });
      expect(third.body.message).toMatch(/CALL_QUEUE_MAX/);
      const timedOut = await waiting;
      expect(timedOut.status, timedOut.text).toBe(429);
      expect(timedOut.body).toMatchObject({ status: 'error', code: 'call_queue_timeout' });
      expect(timedOut.body.message).toMatch(/CALL_QUEUE_TIMEOUT_SECONDS/);
      // Runs that are not calls never wait behind calls: a session's own running browser is used at once.
      const session = await stack.http.put(`/${projectB}/api/sessions`, { name: 'own' }, owner);
      const sessionStart = await stack.http.post(`/${projectB}/api/sessions/${session.body.id}/start`, undefined, owner);
      expect(sessionStart.status, sessionStart.text).toBe(200);
      const onSession = await stack.http.post(`/${projectB}/api/pipelines/${pipelineId}/start`, { session: session.body.id }, owner);
      expect(onSession.status, onSession.text).toBe(200);
      expect((await settledRun(stack, running.runUrl, owner)).status.pipeline).toBe('succeeded');
      // Its place free again, the next call runs.
      const next = await startCall(projectB, pipelineId);
      expect(next.runId).toBeTruthy();
      await stack.http.post(`/${projectB}/api/pipelines/${pipelineId}/${next.runId}/stop`, {}, owner);
      await stack.http.post(`/${projectB}/api/pipelines/${pipelineId}/${onSession.body.id}/stop`, {}, owner);
    }
  });
});
