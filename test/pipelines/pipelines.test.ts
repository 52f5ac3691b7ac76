import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession, PipelineRun, PipelineVersion } from '../../db/entities/index.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import type { Credentials } from '../support/http.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/** Pipelines CRUD and PATCH source (spec 4.5) over REST, against a real database. */

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let stranger: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let as: Credentials;

beforeAll(async () => {
  stack = await startTestStack();
  owner = await registerUser(stack);
  stranger = await registerUser(stack);
  project = await createProject(stack, owner.token);
  as = { token: owner.token };
});
afterAll(async () => {
  await stack?.close();
});

const base = (slug = project.slug) => `/${slug}/api/pipelines`;

/** A graph that compiles: a page, and a visit. */
const validSource = {
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: 'https://example.test/' } },
  },
};

/** A graph with two mistakes: a type the catalog lacks, and a reference to a missing node. */
const brokenSource = {
  nodes: {
    page: { type: 'browser.page' },
    mystery: { type: 'no.such.node' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'missing.page' }, url: 'https://example.test/' } },
  },
};

async function createPipeline(body: Record<string, unknown> = {}, slug = project.slug, credentials: Credentials = as) {
  const created = await stack.http.put(base(slug), { name: `p-${randomUUID().slice(0, 8)}`, ...body }, credentials);
  expect(created.status, created.text).toBe(200);
  expect(Object.keys(created.body)).toEqual(['id']);
  return created.body.id as string;
}

async function getPipeline(id: string, slug = project.slug, credentials: Credentials = as) {
  const one = await stack.http.get(`${base(slug)}/${id}`, credentials);
  expect(one.status, one.text).toBe(200);
  return one.body;
}

/** Run rows as the runs work writes them; here only their summaries and their cascade matter. */
async function insertRun(pipelineId: string, versionId: string, status: 'queued' | 'running' | 'succeeded' | 'failed' = 'succeeded') {
  const em = stack.orm.em.fork();
  const session = await em.findOneOrFail(BrowserSession, { project: project.id, name: 'Default session' });
  const run = em.create(PipelineRun, {
    project: project.id,
    pipeline: pipelineId,
    version: versionId,
    session,
    status,
    evaluation: status === 'succeeded' ? 'completed' : status === 'failed' ? 'failed' : status === 'running' ? 'running' : 'pending',
  });
  await em.flush();
  return { id: run.id, session: session.id };
}

describe('creating and reading pipelines', () => {
  it('a pipeline without source gets an empty first version, so `version` is never null', async () => {
    const id = await createPipeline({ name: 'Empty', description: 'nothing yet' });
    const one = await getPipeline(id);
    expect(one).toEqual({
      id,
      name: 'Empty',
      description: 'nothing yet',
      version: expect.any(String),
      created: expect.any(String),
      updated: expect.any(String),
      source: { nodes: {} },
      errors: [],
      metadata: {},
      runs: [],
    });
    expect(new Date(one.created).toISOString()).toBe(one.created);
  });

  it('a given source is compiled; a valid one has no errors', async () => {
    const id = await createPipeline({ name: 'Valid', source: validSource });
    const one = await getPipeline(id);
    expect(one.source).toEqual(validSource);
    expect(one.errors).toEqual([]);
    // The plan is stored with the version (not shown by the API).
    const stored = await stack.orm.em.fork().findOneOrFail(PipelineVersion, { id: one.version }, { populate: ['plan'] });
    expect(stored.plan).not.toBeNull();
  });

  it('a source with errors is stored with every error, and no plan', async () => {
    const id = await createPipeline({ name: 'Broken', source: brokenSource });
    const one = await getPipeline(id);
    expect(one.source).toEqual(brokenSource);
    expect(one.errors.length).toBeGreaterThanOrEqual(2);
    for (const error of one.errors) {
      expect(error).toEqual({
        node: expect.anything(),
        code: expect.any(String),
        message: expect.any(String),
        ...(error.input ? { input: error.input } : {}),
      });
    }
    const nodes = one.errors.map((error: { node: string }) => error.node);
    expect(nodes).toContain('mystery');
    expect(nodes).toContain('open');
    const stored = await stack.orm.em.fork().findOneOrFail(PipelineVersion, { id: one.version }, { populate: ['plan'] });
    expect(stored.plan).toBeNull();
    expect(stored.errors).toEqual(one.errors);
  });

  it('description defaults to empty', async () => {
    const id = await createPipeline({ name: 'No description' });
    expect((await getPipeline(id)).description).toBe('');
  });

  it('names need not be unique', async () => {
    const first = await createPipeline({ name: 'Same' });
    const second = await createPipeline({ name: 'Same' });
    expect(first).not.toBe(second);
  });

  it('the list shows {id, name, description, version, created, updated}, in creation order, paged', async () => {
    const fresh = await createProject(stack, owner.token);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await createPipeline({ name: `n${i}`, source: validSource }, fresh.slug));
    const all = await stack.http.get(base(fresh.slug), as);
    expect(all.status, all.text).toBe(200);
    expect(all.body.map((p: { id: string }) => p.id)).toEqual(ids);
    for (const item of all.body) {
      expect(Object.keys(item).sort()).toEqual(['created', 'description', 'id', 'name', 'updated', 'version']);
      expect(item.version).toEqual(expect.any(String));
    }
    const page = await stack.http.get(`${base(fresh.slug)}?limit=2&offset=1`, as);
    expect(page.body.map((p: { id: string }) => p.id)).toEqual(ids.slice(1, 3));
    expect((await stack.http.get(`${base(fresh.slug)}?offset=3`, as)).body).toEqual([]);
    expect((await stack.http.get(`${base(fresh.slug)}?limit=201`, as)).status).toBe(400);
    expect((await stack.http.get(`${base(fresh.slug)}?limit=0`, as)).status).toBe(400);
    expect((await stack.http.get(`${base(fresh.slug)}?offset=-1`, as)).status).toBe(400);
    expect((await stack.http.get(`${base(fresh.slug)}?limit=ten`, as)).status).toBe(400);
  });

  it('unknown and malformed ids are 404', async () => {
    expect((await stack.http.get(`${base()}/${randomUUID()}`, as)).status).toBe(404);
    expect((await stack.http.get(`${base()}/not-a-uuid`, as)).status).toBe(404);
    expect((await stack.http.patch(`${base()}/${randomUUID()}`, { name: 'x' }, as)).status).toBe(404);
    expect((await stack.http.patch(`${base()}/${randomUUID()}/source`, { source: validSource }, as)).status).toBe(404);
    expect((await stack.http.delete(`${base()}/${randomUUID()}`, as)).status).toBe(404);
  });

  it('a pipeline of another project is 404 through this project', async () => {
    const other = await createProject(stack, owner.token);
    const id = await createPipeline({}, other.slug);
    expect((await stack.http.get(`${base()}/${id}`, as)).status).toBe(404);
    expect((await stack.http.patch(`${base()}/${id}`, { name: 'x' }, as)).status).toBe(404);
    expect((await stack.http.delete(`${base()}/${id}`, as)).status).toBe(404);
    expect((await stack.http.get(`${base(other.slug)}/${id}`, as)).status).toBe(200);
    // The project may be named by id as well as by slug.
    expect((await stack.http.get(`/${other.id}/api/pipelines/${id}`, as)).status).toBe(200);
  });

  it('static paths win over {pipelineId}: GET …/pipelines/versions is the versions list', async () => {
    const fresh = await createProject(stack, owner.token);
    const id = await createPipeline({}, fresh.slug);
    const versions = await stack.http.get(`${base(fresh.slug)}/versions`, as);
    expect(versions.status, versions.text).toBe(200);
    expect(versions.body).toEqual([expect.objectContaining({ pipeline: id })]);
    // Case-insensitive, as the REST matcher is.
    expect((await stack.http.get(`${base(fresh.slug)}/Versions`, as)).status).toBe(200);
  });
});

describe('runs in the detail view', () => {
  it('lists run summaries, newest first', async () => {
    const id = await createPipeline({ source: validSource });
    const { version } = await getPipeline(id);
    const first = await insertRun(id, version, 'succeeded');
    const second = await insertRun(id, version, 'failed');
    const one = await getPipeline(id);
    expect(one.runs).toEqual([
      {
        id: second.id,
        status: { pipeline: 'failed', 'pipeline-evaluation': 'failed' },
        version,
        session: second.session,
        created: expect.any(String),
      },
      {
        id: first.id,
        status: { pipeline: 'succeeded', 'pipeline-evaluation': 'completed' },
        version,
        session: first.session,
        created: expect.any(String),
      },
    ]);
  });
});

describe('changing pipelines', () => {
  it('PATCH changes name and/or description only, and answers the list view', async () => {
    const id = await createPipeline({ name: 'Before', description: 'kept', source: validSource });
    const before = await getPipeline(id);
    const patched = await stack.http.patch(`${base()}/${id}`, { name: 'After' }, as);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toEqual({
      id,
      name: 'After',
      description: 'kept',
      version: before.version,
      created: before.created,
      updated: expect.any(String),
    });
    const described = await stack.http.patch(`${base()}/${id}`, { description: '' }, as);
    expect(described.body).toMatchObject({ name: 'After', description: '' });
    const after = await getPipeline(id);
    expect(after).toMatchObject({ name: 'After', description: '', version: before.version, source: validSource });
    expect((await stack.http.patch(`${base()}/${id}`, {}, as)).status).toBe(200);
  });

  it('PATCH source makes a new current version linked to the previous one, with its errors', async () => {
    const id = await createPipeline({ source: validSource });
    const v1 = (await getPipeline(id)).version;
    const patched = await stack.http.patch(`${base()}/${id}/source`, { source: brokenSource }, as);
    expect(patched.status, patched.text).toBe(200);
    expect(Object.keys(patched.body).sort()).toEqual(['errors', 'version']);
    const v2 = patched.body.version;
    expect(v2).not.toBe(v1);
    expect(patched.body.errors.length).toBeGreaterThanOrEqual(2);
    const one = await getPipeline(id);
    expect(one).toMatchObject({ version: v2, source: brokenSource, errors: patched.body.errors });
    const version = await stack.http.get(`${base()}/versions/${v2}`, as);
    expect(version.body).toMatchObject({ predecessor: v1, errors: patched.body.errors });
    // Fixing it again: a third version, errors gone.
    const fixed = await stack.http.patch(`${base()}/${id}/source`, { source: validSource }, as);
    expect(fixed.body.errors).toEqual([]);
    expect((await stack.http.get(`${base()}/versions/${fixed.body.version}`, as)).body.predecessor).toBe(v2);
  });

  it('PATCH source carries over whichever of source and metadata is left out', async () => {
    const id = await createPipeline({ source: validSource });
    const withMetadata = await stack.http.patch(`${base()}/${id}/source`, { metadata: { note: 'first' } }, as);
    expect(withMetadata.status, withMetadata.text).toBe(200);
    expect(withMetadata.body.errors).toEqual([]);
    expect(await getPipeline(id)).toMatchObject({ version: withMetadata.body.version, source: validSource, metadata: { note: 'first' } });
    const withSource = await stack.http.patch(`${base()}/${id}/source`, { source: brokenSource }, as);
    expect(await getPipeline(id)).toMatchObject({ version: withSource.body.version, source: brokenSource, metadata: { note: 'first' } });
    const both = await stack.http.patch(`${base()}/${id}/source`, { source: validSource, metadata: {} }, as);
    expect(await getPipeline(id)).toMatchObject({ version: both.body.version, source: validSource, metadata: {} });
  });

  it('PATCH source needs source or metadata', async () => {
    const id = await createPipeline();
    const empty = await stack.http.patch(`${base()}/${id}/source`, {}, as);
    expect(empty.status, empty.text).toBe(400);
    expect(empty.body.status).toBe('error');
  });

  it('concurrent PATCH source calls form one chain, not two branches', async () => {
    const id = await createPipeline();
    const v1 = (await getPipeline(id)).version;
    const answers = await Promise.all([1, 2, 3, 4].map((n) => stack.http.patch(`${base()}/${id}/source`, { metadata: { n } }, as)));
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    const current = (await getPipeline(id)).version;
    const history = await stack.http.get(`${base()}/versions/${current}/history`, as);
    // The current version's predecessors hold every other version of the pipeline, v1 last.
    expect(history.body).toHaveLength(4);
    expect(history.body.at(-1).id).toBe(v1);
    const made = new Set(answers.map((answer) => answer.body.version));
    expect(new Set([current, ...history.body.slice(0, 3).map((v: { id: string }) => v.id)])).toEqual(made);
  });

  it('DELETE removes the pipeline, its versions and its runs', async () => {
    const id = await createPipeline({ source: validSource });
    const v1 = (await getPipeline(id)).version;
    const v2 = (await stack.http.patch(`${base()}/${id}/source`, { metadata: { a: 1 } }, as)).body.version;
    const run = await insertRun(id, v1);
    const deleted = await stack.http.delete(`${base()}/${id}`, as);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ status: 'ok' });
    expect((await stack.http.get(`${base()}/${id}`, as)).status).toBe(404);
    expect((await stack.http.get(`${base()}/versions/${v1}`, as)).status).toBe(404);
    expect((await stack.http.get(`${base()}/versions/${v2}`, as)).status).toBe(404);
    const em = stack.orm.em.fork();
    expect(await em.count(PipelineVersion, { pipeline: id })).toBe(0);
    expect(await em.count(PipelineRun, { id: run.id })).toBe(0);
    expect((await stack.http.delete(`${base()}/${id}`, as)).status).toBe(404);
  });

  it('DELETE is refused with 409 while a run is active', async () => {
    const id = await createPipeline({ source: validSource });
    const { version } = await getPipeline(id);
    const run = await insertRun(id, version, 'running');
    const refused = await stack.http.delete(`${base()}/${id}`, as);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.code).toBe('pipeline_running');
    const em = stack.orm.em.fork();
    await em.nativeUpdate(PipelineRun, { id: run.id }, { status: 'cancelled', evaluation: 'stopped' });
    expect((await stack.http.delete(`${base()}/${id}`, as)).status).toBe(200);
  });
});

describe('validation', () => {
  const rejected: [string, Record<string, unknown>, string][] = [
    ['an empty name', { name: '  ' }, 'name'],
    ['a long name', { name: 'x'.repeat(201) }, 'name'],
    ['a description that is not text', { description: 5 }, 'description'],
    ['a source that is a list', { source: [] }, 'source'],
    ['a source that is text', { source: '{"nodes":{}}' }, 'source'],
    ['a source that is null', { source: null }, 'source'],
    ['an unknown field', { colour: 'red' }, 'colour'],
  ];
  for (const [what, body, path] of rejected) {
    it(`PUT refuses ${what} with 400 naming ${path}`, async () => {
      const created = await stack.http.put(base(), { name: 'bad', ...body }, as);
      expect(created.status, created.text).toBe(400);
      expect(created.body.status).toBe('error');
      expect(created.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toContain(path);
    });
  }

  it('PUT needs a name', async () => {
    const created = await stack.http.put(base(), { description: 'x' }, as);
    expect(created.status).toBe(400);
    expect(created.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toContain('name');
  });

  it('PATCH refuses fields it does not change, and bad values', async () => {
    const id = await createPipeline();
    for (const body of [{ source: validSource }, { version: randomUUID() }, { name: '' }, { name: 3 }]) {
      const patched = await stack.http.patch(`${base()}/${id}`, body, as);
      expect(patched.status, `${JSON.stringify(body)}: ${patched.text}`).toBe(400);
    }
    for (const body of [{ source: [] }, { metadata: 'x' }, { metadata: [1] }, { name: 'x' }, { source: validSource, extra: 1 }]) {
      const patched = await stack.http.patch(`${base()}/${id}/source`, body, as);
      expect(patched.status, `${JSON.stringify(body)}: ${patched.text}`).toBe(400);
    }
  });

  it('a source larger than 512 KiB is refused', async () => {
    const huge = { nodes: {}, padding: 'x'.repeat(600 * 1024) };
    const created = await stack.http.put(base(), { name: 'huge', source: huge }, as);
    expect(created.status).toBeGreaterThanOrEqual(400);
    expect(created.status).toBeLessThan(500);
  });

  it('NUL characters in a source are refused', async () => {
    const created = await stack.http.put(base(), { name: 'nul', source: { nodes: { 'a\u0000': { type: 'browser.page' } } } }, as);
    expect(created.status, created.text).toBe(400);
  });
});

describe('permissions', () => {
  it('a stranger sees nothing of a private project', async () => {
    const id = await createPipeline();
    const them = { token: stranger.token };
    expect((await stack.http.get(base(), them)).status).toBe(404);
    expect((await stack.http.get(`${base()}/${id}`, them)).status).toBe(404);
    expect((await stack.http.put(base(), { name: 'x' }, them)).status).toBe(404);
    expect((await stack.http.patch(`${base()}/${id}`, { name: 'x' }, them)).status).toBe(404);
    expect((await stack.http.patch(`${base()}/${id}/source`, { metadata: {} }, them)).status).toBe(404);
    expect((await stack.http.delete(`${base()}/${id}`, them)).status).toBe(404);
    expect((await stack.http.get(`${base()}/${id}`)).status).toBe(404);
  });

  it('a public project lets everyone read its pipelines, and nobody else write them', async () => {
    const open = await createProject(stack, owner.token, { public: true });
    const id = await createPipeline({ name: 'Shared', source: brokenSource }, open.slug);
    for (const them of [{ token: stranger.token }, undefined]) {
      const list = await stack.http.get(base(open.slug), them);
      expect(list.status, list.text).toBe(200);
      expect(list.body.map((p: { id: string }) => p.id)).toEqual([id]);
      const one = await stack.http.get(`${base(open.slug)}/${id}`, them);
      expect(one.status, one.text).toBe(200);
      expect(one.body).toMatchObject({ name: 'Shared', source: brokenSource, errors: expect.any(Array) });
    }
    const them = { token: stranger.token };
    expect((await stack.http.put(base(open.slug), { name: 'x' }, them)).status).toBe(403);
    expect((await stack.http.patch(`${base(open.slug)}/${id}`, { name: 'x' }, them)).status).toBe(403);
    expect((await stack.http.patch(`${base(open.slug)}/${id}/source`, { metadata: {} }, them)).status).toBe(403);
    expect((await stack.http.delete(`${base(open.slug)}/${id}`, them)).status).toBe(403);
    // Anonymous writes are asked to sign in.
    expect((await stack.http.put(base(open.slug), { name: 'x' })).status).toBe(401);
    expect((await stack.http.delete(`${base(open.slug)}/${id}`)).status).toBe(401);
    expect((await getPipeline(id, open.slug)).name).toBe('Shared');
  });

  it('a custom key with pipelines.read reads, and may not write', async () => {
    const id = await createPipeline({ source: validSource });
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.pipelines.read`] });
    const reader = { apiKey: key.secret };
    expect((await stack.http.get(base(), reader)).body.map((p: { id: string }) => p.id)).toContain(id);
    expect((await stack.http.get(`${base()}/${id}`, reader)).body.source).toEqual(validSource);
    expect((await stack.http.put(base(), { name: 'x' }, reader)).status).toBe(403);
    expect((await stack.http.patch(`${base()}/${id}`, { name: 'x' }, reader)).status).toBe(403);
    expect((await stack.http.patch(`${base()}/${id}/source`, { metadata: {} }, reader)).status).toBe(403);
    expect((await stack.http.delete(`${base()}/${id}`, reader)).status).toBe(403);
  });

  it('a custom key with pipelines.write writes, and without pipelines.read does not read', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.id}.pipelines.write`] });
    const writer = { apiKey: key.secret };
    const id = await createPipeline({ name: 'by key' }, project.slug, writer);
    const patched = await stack.http.patch(`${base()}/${id}`, { name: 'renamed' }, writer);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.source).toBeUndefined();
    expect((await stack.http.patch(`${base()}/${id}/source`, { source: validSource }, writer)).status).toBe(200);
    expect((await stack.http.get(`${base()}/${id}`, writer)).status).toBe(403);
    expect((await stack.http.get(base(), writer)).body).toEqual([]);
    expect((await stack.http.delete(`${base()}/${id}`, writer)).status).toBe(200);
  });

  it('a key without any pipelines grant sees none and changes none', async () => {
    const id = await createPipeline();
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.sessions.read`] });
    const other = { apiKey: key.secret };
    expect((await stack.http.get(base(), other)).body).toEqual([]);
    expect((await stack.http.get(`${base()}/${id}`, other)).status).toBe(403);
    expect((await stack.http.put(base(), { name: 'x' }, other)).status).toBe(403);
  });

  it('grants per pipeline id narrow the list and the reads and writes', async () => {
    const fresh = await createProject(stack, owner.token);
    const mine = await createPipeline({ name: 'mine' }, fresh.slug);
    const theirs = await createPipeline({ name: 'theirs' }, fresh.slug);
    const key = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${fresh.slug}.pipelines.read.${mine}`, `${fresh.slug}.pipelines.write.${mine}`],
    });
    const narrow = { apiKey: key.secret };
    const list = await stack.http.get(base(fresh.slug), narrow);
    expect(list.body).toEqual([expect.objectContaining({ id: mine, name: 'mine', description: '', version: expect.any(String) })]);
    expect((await stack.http.get(`${base(fresh.slug)}?offset=1`, narrow)).body).toEqual([]);
    expect((await stack.http.get(`${base(fresh.slug)}/${mine}`, narrow)).status).toBe(200);
    expect((await stack.http.get(`${base(fresh.slug)}/${theirs}`, narrow)).status).toBe(403);
    expect((await stack.http.patch(`${base(fresh.slug)}/${mine}/source`, { metadata: { ok: true } }, narrow)).status).toBe(200);
    expect((await stack.http.patch(`${base(fresh.slug)}/${theirs}/source`, { metadata: {} }, narrow)).status).toBe(403);
    // Creating is not covered by a grant on one id.
    expect((await stack.http.put(base(fresh.slug), { name: 'x' }, narrow)).status).toBe(403);
  });

  it('a projects key reaches only its listed projects', async () => {
    const other = await createProject(stack, owner.token);
    const id = await createPipeline({}, other.slug);
    const key = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [project.id] });
    const scoped = { apiKey: key.secret };
    expect((await stack.http.get(base(), scoped)).status).toBe(200);
    expect((await stack.http.get(`${base(other.slug)}/${id}`, scoped)).status).toBe(404);
    await createPipeline({ name: 'via projects key' }, project.slug, scoped);
  });

  it('a revoked key fails at once', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    const id = await createPipeline({}, project.slug, { apiKey: key.secret });
    expect((await stack.http.delete(`/api/api-keys/${key.id}`, as)).status).toBe(200);
    expect((await stack.http.get(`${base()}/${id}`, { apiKey: key.secret })).status).toBe(401);
  });
});
