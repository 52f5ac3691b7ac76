import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserflowClient, isBrowserflowError } from '../../client/index.ts';
import { PipelineRun, Project } from '../../db/entities/index.ts';
import { meter } from '../../server/billing/metering.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * The console's project overview (server/trpc/routers/projectOverview.ts): runs across pipelines
 * and functions, filtered by status, pipeline or function and time, paged and sorted, only those
 * the caller may read; and the project's usage. Runs are rows written with the times a test needs
 * (a real run's `created` is now); test/console/console-overview.test.ts runs real ones.
 */

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let slug: string;
let projectId: string;
const ids: Record<string, string> = {};
let pipelineA: { id: string; version: string };
let pipelineB: { id: string; version: string };
let fn: { id: string; version: string };

const source = {
  parameters: {},
  nodes: { hello: { type: 'text.template', inputs: { template: 'hi' } } },
  outputs: { text: { $ref: 'hello.text' } },
};

async function createPipeline(name: string) {
  const created = await stack.http.put(`/${slug}/api/pipelines`, { name, description: '', source }, { token: owner.token });
  expect(created.status, created.text).toBe(200);
  const got = await stack.http.get(`/${slug}/api/pipelines/${created.body.id}`, { token: owner.token });
  expect(got.status, got.text).toBe(200);
  return { id: created.body.id as string, version: got.body.version as string };
}

/** A run row of the project, created at `created`. */
async function insertRun(
  name: string,
  fields: { pipeline?: { id: string; version: string }; fn?: { version: string }; status: PipelineRun['status']; created: string },
  project = projectId,
) {
  const em = stack.orm.em.fork();
  const run = em.create(PipelineRun, {
    project,
    pipeline: fields.pipeline?.id ?? null,
    version: fields.pipeline?.version ?? null,
    functionVersion: fields.fn?.version ?? null,
    status: fields.status,
    error: fields.status === 'failed' ? { node: 'hello', code: 'node_failed', message: 'the secret message' } : null,
  } as never);
  await em.flush();
  await em.nativeUpdate(PipelineRun, { id: run.id }, { created: new Date(fields.created) });
  ids[name] = run.id;
}

const client = (token: string) => createBrowserflowClient({ url: stack.url, token });

async function refusal(call: Promise<unknown>) {
  const error = await call.then(
    () => null,
    (caught) => caught,
  );
  expect(isBrowserflowError(error), String(error)).toBe(true);
  return error as { message: string; data: { httpStatus: number; domainCode?: string; issues?: { path: string[]; message: string }[] } };
}

beforeAll(async () => {
  stack = await startTestStack();
  owner = await registerUser(stack);
  ({ slug, id: projectId } = await createProject(stack, owner.token));
  pipelineA = await createPipeline('Alpha');
  pipelineB = await createPipeline('Beta');
  const created = await stack.http.put(
    `/${slug}/api/functions`,
    { name: 'Greeter', slug: 'greeter', definition: { source } },
    { token: owner.token },
  );
  expect(created.status, created.text).toBe(200);
  fn = { id: created.body.id, version: created.body.version };
  await insertRun('a-ok', { pipeline: pipelineA, status: 'succeeded', created: '2026-01-01T10:00:00Z' });
  await insertRun('a-failed', { pipeline: pipelineA, status: 'failed', created: '2026-01-02T10:00:00Z' });
  await insertRun('b-ok', { pipeline: pipelineB, status: 'succeeded', created: '2026-01-03T10:00:00Z' });
  await insertRun('fn-ok', { fn, status: 'succeeded', created: '2026-01-04T10:00:00Z' });
  await insertRun('b-running', { pipeline: pipelineB, status: 'running', created: '2026-01-05T10:00:00Z' });
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

describe('the runs overview', () => {
  it('lists pipeline runs and function executions, newest first, with their pipeline or function', async () => {
    const { runs, total } = await client(owner.token).projectOverview.runs.query({ project: slug });
    expect(total).toBe(5);
    expect(runs.map((run) => run.id)).toEqual([ids['b-running'], ids['fn-ok'], ids['b-ok'], ids['a-failed'], ids['a-ok']]);
    expect(runs[1]).toMatchObject({ kind: 'function', pipeline: null, function: { id: fn.id, name: 'Greeter', slug: 'greeter' } });
    expect(runs[3]).toMatchObject({
      kind: 'pipeline',
      pipeline: { id: pipelineA.id, name: 'Alpha' },
      function: null,
      status: 'failed',
      error: { node: 'hello', code: 'node_failed' },
      created: '2026-01-02T10:00:00.000Z',
    });
    // The error's message (which may hold what a page said) stays on the run's own page.
    expect(JSON.stringify(runs)).not.toContain('the secret message');
  });

  it('filters by status, pipeline, function and time, and pages and sorts', async () => {
    const bf = client(owner.token);
    const listed = async (input: Omit<Parameters<typeof bf.projectOverview.runs.query>[0], 'project'>) => {
      const answer = await bf.projectOverview.runs.query({ project: slug, ...input });
      return { ids: answer.runs.map((run) => run.id), total: answer.total };
    };
    expect(await listed({ status: ['succeeded'] })).toEqual({ ids: [ids['fn-ok'], ids['b-ok'], ids['a-ok']], total: 3 });
    expect(await listed({ status: ['failed', 'running'] })).toEqual({ ids: [ids['b-running'], ids['a-failed']], total: 2 });
    expect(await listed({ pipelineId: pipelineA.id })).toEqual({ ids: [ids['a-failed'], ids['a-ok']], total: 2 });
    expect(await listed({ pipelineId: pipelineB.id.toUpperCase(), status: ['succeeded'] })).toEqual({ ids: [ids['b-ok']], total: 1 });
    expect(await listed({ functionId: fn.id })).toEqual({ ids: [ids['fn-ok']], total: 1 });
    expect(await listed({ from: '2026-01-02T10:00:00Z', to: '2026-01-04T10:00:00Z' })).toEqual({
      ids: [ids['b-ok'], ids['a-failed']],
      total: 2,
    });
    expect(await listed({ from: '2026-01-04T00:00:00+02:00' })).toEqual({ ids: [ids['b-running'], ids['fn-ok']], total: 2 });
    expect(await listed({ limit: 2, offset: 2 })).toEqual({ ids: [ids['b-ok'], ids['a-failed']], total: 5 });
    expect(await listed({ order: 'asc', limit: 2 })).toEqual({ ids: [ids['a-ok'], ids['a-failed']], total: 5 });
    const byStatus = await listed({ sort: 'status', order: 'asc' });
    // By the status's name, as the table shows it: failed, running, then the three succeeded.
    expect(byStatus.ids.slice(0, 2)).toEqual([ids['a-failed'], ids['b-running']]);
  });

  it('answers bad filters with 400 and the field, never a 500', async () => {
    const bf = client(owner.token);
    const cases = [
      [{ from: 'yesterday' }, 'from'],
      [{ from: '2026-01-03T00:00:00Z', to: '2026-01-02T00:00:00Z' }, 'to'],
      [{ pipelineId: 'not-an-id' }, 'pipelineId'],
      [{ status: ['exploded'] }, 'status'],
      [{ limit: 0 }, 'limit'],
      [{ pipelineId: pipelineA.id, functionId: fn.id }, 'functionId'],
    ] as const;
    for (const [input, field] of cases) {
      const error = await refusal(bf.projectOverview.runs.query({ project: slug, ...(input as object) }));
      expect(error.data.httpStatus, JSON.stringify(input)).toBe(400);
      expect(error.data.domainCode).toBe('invalid_input');
      expect(
        error.data.issues?.some((issue) => issue.path[0] === field),
        JSON.stringify(error.data.issues),
      ).toBe(true);
    }
    // A pipeline of no project of the caller's: as its own page answers, 404.
    const missing = await refusal(bf.projectOverview.runs.query({ project: slug, pipelineId: '00000000-0000-4000-8000-000000000000' }));
    expect(missing.data.httpStatus).toBe(404);
  });

  it('never shows another project’s runs, and refuses who may not read', async () => {
    const other = await createProject(stack, owner.token);
    const created = await stack.http.put(
      `/${other.slug}/api/pipelines`,
      { name: 'Elsewhere', description: '', source },
      { token: owner.token },
    );
    expect(created.status, created.text).toBe(200);
    const got = await stack.http.get(`/${other.slug}/api/pipelines/${created.body.id}`, { token: owner.token });
    const foreignPipeline = created.body.id as string;
    await insertRun(
      'foreign',
      { pipeline: { id: foreignPipeline, version: got.body.version }, status: 'succeeded', created: '2026-01-03T12:00:00Z' },
      other.id,
    );
    const { total } = await client(owner.token).projectOverview.runs.query({ project: slug });
    expect(total).toBe(5);
    // Another project's pipeline named as the filter: 404, not its runs.
    const crossed = await refusal(client(owner.token).projectOverview.runs.query({ project: slug, pipelineId: foreignPipeline }));
    expect(crossed.data.httpStatus).toBe(404);

    // Another user: the private project is not theirs to read (404, as every project route answers).
    const stranger = await registerUser(stack);
    const refused = await refusal(client(stranger.token).projectOverview.runs.query({ project: slug }));
    expect(refused.data.httpStatus).toBe(404);

    // A key that may use sessions only: refused; one that may read pipeline A only: its runs only.
    const sessionsOnly = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${slug}.sessions.read`] });
    const forbidden = await refusal(
      createBrowserflowClient({ url: stack.url, apiKey: sessionsOnly.secret }).projectOverview.runs.query({ project: slug }),
    );
    expect(forbidden.data.httpStatus).toBe(403);
    const alphaOnly = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${slug}.pipelines.read.${pipelineA.id}`],
    });
    const viaKey = createBrowserflowClient({ url: stack.url, apiKey: alphaOnly.secret });
    const seen = await viaKey.projectOverview.runs.query({ project: slug });
    expect(seen.runs.map((run) => run.id)).toEqual([ids['a-failed'], ids['a-ok']]);
    expect(seen.total).toBe(2);
    expect((await refusal(viaKey.projectOverview.runs.query({ project: slug, pipelineId: pipelineB.id }))).data.httpStatus).toBe(403);
    expect((await refusal(viaKey.projectOverview.runs.query({ project: slug, functionId: fn.id }))).data.httpStatus).toBe(403);
  });
});

describe('the project’s usage', () => {
  it('sums what the project used by unit and day, billing off too, for its owner only', async () => {
    const bf = client(owner.token);
    const empty = await bf.projectOverview.usage.query({ project: slug });
    expect(empty.billingEnabled).toBe(false);
    expect(empty.days).toEqual([]);
    expect(empty.totals).toMatchObject({ cpu: '0', network: '0', tokens: '0', browserSeconds: '0', browsers: 0 });

    const em = stack.orm.em.fork();
    const project = await em.findOneOrFail(Project, { id: projectId }, { populate: ['owner'] });
    const resourceId = '11111111-1111-4111-8111-111111111111';
    await meter(em.fork(), stack.config.billing, project, { resourceId, unit: 'cpu', quantityMicro: 2_500_000n });
    await meter(em.fork(), stack.config.billing, project, { resourceId, unit: 'network', quantityMicro: 4096n * 1_000_000n });
    await meter(em.fork(), stack.config.billing, project, { resourceId, unit: 'tokens', quantityMicro: 1200n * 1_000_000n });
    // Another project's usage is not this one's.
    const other = await createProject(stack, owner.token);
    const otherProject = await em.findOneOrFail(Project, { id: other.id }, { populate: ['owner'] });
    await meter(em.fork(), stack.config.billing, otherProject, { resourceId, unit: 'tokens', quantityMicro: 99n * 1_000_000n });

    const used = await bf.projectOverview.usage.query({ project: slug, days: 7 });
    const today = new Date().toISOString().slice(0, 10);
    expect(used.totals).toMatchObject({ cpu: '2.5', network: '4096', tokens: '1200', billed: '0' });
    expect(used.days).toEqual([expect.objectContaining({ day: today, cpu: '2.5', network: '4096', tokens: '1200' })]);

    const bad = await refusal(bf.projectOverview.usage.query({ project: slug, days: 0 }));
    expect(bad.data.httpStatus).toBe(400);
    expect(bad.data.issues?.[0]?.path).toEqual(['days']);
    // Another user does not reach the private project; a key that may read pipelines only is refused.
    const visitor = await registerUser(stack);
    expect((await refusal(client(visitor.token).projectOverview.usage.query({ project: slug }))).data.httpStatus).toBe(404);
    const readOnly = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${slug}.pipelines.read`] });
    const refused = await refusal(
      createBrowserflowClient({ url: stack.url, apiKey: readOnly.secret }).projectOverview.usage.query({ project: slug }),
    );
    expect(refused.data.httpStatus).toBe(403);
  });
});
