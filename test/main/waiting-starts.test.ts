import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserflowClient, WaitTimedOut } from '../../client/index.ts';
import { createApiKey } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, greetingSource, longWaitSource, settledRun, userWithSession } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A user starts a run, a function, an analysis or a generation with `wait`: the finished object
 * when it ends in time, else the running one with 202, and the work goes on.
 */

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let token: string;
let slug: string;
let sessionId: string;

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite();
  ({ token, slug, sessionId } = await userWithSession(stack, 'waiting'));
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await site?.close();
});

const base = (pipelineId: string) => `/${slug}/api/pipelines/${pipelineId}`;

describe('a pipeline run started with wait', () => {
  it('answers the finished run, as GET answers it, when it ends in time', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, greetingSource(site.url));
    const started = await stack.http.post(`${base(pipelineId)}/start`, { session: sessionId, wait: 60 }, { token });
    expect(started.status, started.text).toBe(200);
    expect(started.body.status).toEqual({ pipeline: 'succeeded', 'pipeline-evaluation': 'completed' });
    expect(started.body.result).toEqual({ greeting: 'Hello from the test site' });
    const got = await stack.http.get(`${base(pipelineId)}/${started.body.id}`, { token });
    expect({ ...started.body, resources: [] }).toEqual({ ...got.body, resources: [] });
  }, 90_000);

  it('answers 202 with the running run when it does not, and the run goes on to its end', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, longWaitSource(6_000));
    const started = await stack.http.post(`${base(pipelineId)}/start`, { session: sessionId, wait: 1 }, { token });
    expect(started.status, started.text).toBe(202);
    expect(['queued', 'running']).toContain(started.body.status.pipeline);
    expect(started.body.finished).toBeNull();
    const ended = await settledRun(stack, `${base(pipelineId)}/${started.body.id}`, { token });
    expect(ended.status.pipeline).toBe('succeeded');
  }, 90_000);

  it('a client that hangs up while it waits does not stop the run', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, longWaitSource(3_000));
    const hangUp = new AbortController();
    const request = fetch(`${stack.url}${base(pipelineId)}/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session: sessionId, wait: 30 }),
      signal: hangUp.signal,
    });
    setTimeout(() => hangUp.abort(), 1_000);
    await expect(request).rejects.toThrow();
    let runs: { id: string }[] = [];
    await expect
      .poll(async () => {
        runs = (await stack.http.get(base(pipelineId), { token })).body.runs;
        return runs.length;
      })
      .toBe(1);
    const ended = await settledRun(stack, `${base(pipelineId)}/${runs[0]?.id}`, { token });
    expect(ended.status.pipeline).toBe('succeeded');
  }, 90_000);

  it('without wait, or with 0, answers the run id at once as before', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, greetingSource(site.url));
    for (const body of [{ session: sessionId }, { session: sessionId, wait: 0 }]) {
      const started = await stack.http.post(`${base(pipelineId)}/start`, body, { token });
      expect(started.status, started.text).toBe(200);
      expect(Object.keys(started.body)).toEqual(['id']);
      await settledRun(stack, `${base(pipelineId)}/${started.body.id}`, { token });
    }
  }, 90_000);

  it('refuses a wait that is not a whole number of seconds from 0 to 60, saying so', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, greetingSource(site.url));
    for (const wait of [61, -1, 'x', 1.5]) {
      const refused = await stack.http.post(`${base(pipelineId)}/start`, { session: sessionId, wait }, { token });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.status).toBe('error');
      expect(refused.text).toContain('`wait` is a whole number of seconds from 0 to 60');
    }
    const analysis = await stack.http.put(
      `${base(pipelineId)}/analysis`,
      { session: sessionId, model: 'builtin', prompt: 'read it', wait: 61 },
      { token },
    );
    expect(analysis.status, analysis.text).toBe(400);
    expect(analysis.text).toContain('`wait` is a whole number of seconds from 0 to 60');
  }, 60_000);

  it('over /trpc the same: the object’s status says whether it ended', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, longWaitSource(3_000));
    const client = createBrowserflowClient({ url: stack.url, token });
    const running = await client.pipelineRuns.start.mutate({ project: slug, pipelineId, session: sessionId, wait: 1 });
    expect('status' in running && running.status.pipeline).toMatch(/queued|running/);
    const ended = await client.waitForRun(slug, pipelineId, running.id, { timeoutMs: 60_000 });
    expect(ended.status.pipeline).toBe('succeeded');
  }, 90_000);
});

describe('a function executed with wait', () => {
  async function createFunction(source: unknown, outputs: unknown[]) {
    const fnSlug = `wait-${Date.now().toString(36)}`;
    const created = await stack.http.put(
      `/${slug}/api/functions`,
      {
        name: fnSlug,
        description: '',
        slug: fnSlug,
        definition: { source, parameters: [], outputs, metadata: {}, outputType: 'function' },
      },
      { token },
    );
    expect(created.status, created.text).toBe(200);
    return { slug: fnSlug, id: created.body.id as string };
  }

  it('answers the finished execution when the run ends in time, else 202 with the running run', async () => {
    const quick = await createFunction(greetingSource(site.url), [{ name: 'greeting', refType: 'string' }]);
    const done = await stack.http.post(`/${slug}/api/functions/slug/${quick.slug}/execute`, { args: {}, wait: 60 }, { token });
    expect(done.status, done.text).toBe(200);
    expect(done.body.outputs).toEqual({ greeting: 'Hello from the test site' });
    expect(done.body.result.status.pipeline).toBe('succeeded');

    const slow = await createFunction(longWaitSource(5_000), []);
    const going = await stack.http.post(`/${slug}/api/functions/slug/${slow.slug}/execute`, { args: {}, wait: 1 }, { token });
    expect(going.status, going.text).toBe(202);
    expect(going.body.identifier).toEqual(expect.any(String));
    expect(going.body.outputs).toEqual({});
    expect(['queued', 'running']).toContain(going.body.result.status.pipeline);

    // The execution is followed to its end by its own GET, which the 202's location names.
    const runUrl = `/${slug}/api/functions/${slow.id}/runs/${going.body.identifier}`;
    expect(going.headers.get('location')).toBe(runUrl);
    // Who may read the function but not execute it learns nothing of its runs.
    const reader = await createApiKey(stack, token, { accessType: 'custom', permissions: [`${slug}.functions.read`] });
    const hidden = await stack.http.get(runUrl, { apiKey: reader.secret });
    expect(hidden.status, hidden.text).toBe(404);
    const client = createBrowserflowClient({ url: stack.url, token });
    const ended = await client.waitForFunctionRun(slug, slow.id, going.body.identifier, { timeoutMs: 60_000 });
    expect(ended.result.status.pipeline).toBe('succeeded');
    expect((await stack.http.get(runUrl, { token })).body).toEqual(ended);
    expect((await stack.http.get(`/${slug}/api/functions/${quick.id}/runs/${going.body.identifier}`, { token })).status).toBe(404);
    const quickRun = await stack.http.get(`/${slug}/api/functions/${quick.id}/runs/${done.body.identifier}`, { token });
    // GET adds the run's screenshots (none here: nothing failed) to what execute answered.
    expect(quickRun.body.screenshots).toEqual([]);
    expect({ ...quickRun.body, screenshots: undefined }).toEqual(done.body);
  }, 90_000);
});

describe('analysis and generation started with wait', () => {
  it('an analysis with builtin answers its stopped job; accepting it with wait answers the stopped generation', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const analysis = await stack.http.put(
      `${base(pipelineId)}/analysis`,
      { session: sessionId, model: 'builtin', prompt: `Open ${site.url}/ and read the heading`, wait: 60 },
      { token },
    );
    expect(analysis.status, analysis.text).toBe(200);
    expect(analysis.body).toMatchObject({ agent: 'stopped', model: 'builtin', status: 'pending' });
    const got = await stack.http.get(`/${slug}/api/analysis/${analysis.body.id}`, { token });
    expect(analysis.body).toEqual(got.body);

    const generation = await stack.http.post(`/${slug}/api/analysis/${analysis.body.id}/accept`, { model: 'builtin', wait: 60 }, { token });
    expect(generation.status, generation.text).toBe(200);
    expect(generation.body).toMatchObject({ agent: 'stopped', analysis: analysis.body.id });
    expect(generation.body.output).not.toBeNull();
  }, 150_000);
});

describe('the SDK waits', () => {
  it('waitForRun, waitForAnalysis and waitForGeneration answer the finished objects; a wait past its time throws WaitTimedOut', async () => {
    const client = createBrowserflowClient({ url: stack.url, token });
    const slowPipeline = await createPipeline(stack, slug, { token }, longWaitSource(4_000));
    const { id: runId } = await client.pipelineRuns.start.mutate({ project: slug, pipelineId: slowPipeline, session: sessionId });
    const timedOut = await client.waitForRun(slug, slowPipeline, runId, { timeoutMs: 500 }).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(WaitTimedOut);
    expect((timedOut as WaitTimedOut).message).toContain(`Run ${runId} did not finish within 500 ms`);
    expect((timedOut as WaitTimedOut<{ status: { pipeline: string } }>).last.status.pipeline).toMatch(/queued|running/);
    expect((await client.waitForRun(slug, slowPipeline, runId)).status.pipeline).toBe('succeeded');

    const pipelineId = await createPipeline(stack, slug, { token }, { nodes: {} });
    const started = await client.agentJobs.startAnalysis.mutate({
      project: slug,
      pipelineId,
      session: sessionId,
      model: 'builtin',
      prompt: `Open ${site.url}/ and read the heading`,
    });
    const analysis = await client.waitForAnalysis(slug, started.id, { timeoutMs: 90_000 });
    expect(analysis.agent).toBe('stopped');
    const accepted = await client.agentJobs.acceptAnalysis.mutate({ project: slug, analysisId: analysis.id, model: 'builtin' });
    const generation = await client.waitForGeneration(slug, accepted.id, { timeoutMs: 90_000 });
    expect(generation).toMatchObject({ agent: 'stopped', analysis: analysis.id });
  }, 240_000);
});
