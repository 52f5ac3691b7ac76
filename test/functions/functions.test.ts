import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FunctionVersion, Project, User } from '../../db/entities/index.ts';
import type { Subject } from '../../server/auth/subject.ts';
import { executeFunction } from '../../server/functions/execute.ts';
import { functionInputJsonSchema, functionOutputJsonSchema } from '../../server/functions/schemas.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let other: Awaited<ReturnType<typeof registerUser>>;
let admin: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };

const html = (body: string) => `<!doctype html><html><head><title>catalog</title></head><body>${body}</body></html>`;
const catalogs: Record<string, string[]> = { fruit: ['apple', 'pear', 'plum'], tools: ['saw', 'drill'] };

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite({
    '/catalog': (req, res) => {
      const kind = new URL(req.url ?? '', 'http://x').searchParams.get('kind') ?? 'fruit';
      const items = (catalogs[kind] ?? []).map((item) => `<li class="item">${item}</li>`).join('');
      res.setHeader('content-type', 'text/html');
      res.end(html(`<h1>Catalog: ${kind}</h1><ul>${items}</ul><p class="note">n</p>`));
    },
    '/empty': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html('<p>nothing here</p>'));
    },
  });
  owner = await registerUser(stack);
  other = await registerUser(stack);
  // In ADMIN_EMAILS of the test stack.
  admin = await registerUser(stack, { email: 'admin@example.test' });
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

/** Opens `url`, reads the heading and the items matching `selector` (default `li`). */
const extractSource = () => ({
  parameters: {
    url: { refType: 'string', description: 'The catalog page' },
    selector: { refType: 'string', default: 'li' },
  },
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
    heading: { type: 'extract.text', timeoutMs: 3000, inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
    items: { type: 'extract.text', timeoutMs: 3000, inputs: { page: { $ref: 'heading.page' }, selector: { $param: 'selector' } } },
  },
  outputs: { title: { $ref: 'heading.text' } },
});

const extractInterface = () => ({
  parameters: [
    { name: 'url', refType: 'string', description: 'The catalog page' },
    { name: 'selector', refType: 'string' },
  ],
  outputs: [
    { name: 'title', refType: 'string' },
    { name: 'items', refType: 'list', source: { nodeName: 'items', outputName: 'texts' } },
    { name: 'count', refType: 'number', source: { nodeName: 'items', outputName: 'count' } },
  ],
});

let slugCounter = 0;
async function createFunction(
  overrides: { slug?: string; source?: unknown; parameters?: unknown; outputs?: unknown; metadata?: unknown; projectSlug?: string } = {},
) {
  const slug = overrides.slug ?? `fn-${++slugCounter}-${Date.now().toString(36)}`;
  const created = await stack.http.put(
    `/${overrides.projectSlug ?? project.slug}/api/functions`,
    {
      name: `Function ${slug}`,
      description: 'reads a catalog',
      slug,
      definition: {
        source: overrides.source ?? extractSource(),
        parameters: overrides.parameters ?? extractInterface().parameters,
        outputs: overrides.outputs ?? extractInterface().outputs,
        metadata: overrides.metadata ?? { team: 'a' },
        outputType: 'function',
      },
    },
    { token: owner.token },
  );
  expect(created.status, created.text).toBe(200);
  return { id: created.body.id as string, version: created.body.version as string, errors: created.body.errors, slug: slug.toLowerCase() };
}

const execute = (
  slug: string,
  args: unknown,
  as: { token?: string; apiKey?: string } = { token: owner.token },
  projectSlug = project.slug,
) => stack.http.post(`/${projectSlug}/api/functions/slug/${slug}/execute`, { args }, as);

describe('functions CRUD', () => {
  it('creates a function with its first version, lists, reads, updates and deletes it', async () => {
    const fn = await createFunction({ slug: 'Catalog_Reader' });
    expect(fn.errors).toEqual([]);
    expect(fn.slug).toBe('catalog_reader');

    const list = await stack.http.get(`/${project.slug}/api/functions`, { token: owner.token });
    expect(list.status, list.text).toBe(200);
    const entry = list.body.find((f: { id: string }) => f.id === fn.id);
    expect(entry).toMatchObject({ slug: 'catalog_reader', version: fn.version, outputType: 'function', sourcePipelineId: null });
    expect(entry.parameters).toEqual(extractInterface().parameters);

    const one = await stack.http.get(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token });
    expect(one.status, one.text).toBe(200);
    expect(one.body).toMatchObject({
      id: fn.id,
      name: 'Function Catalog_Reader',
      slug: 'catalog_reader',
      description: 'reads a catalog',
      version: fn.version,
      metadata: { team: 'a' },
      parameters: extractInterface().parameters,
      outputs: extractInterface().outputs,
      outputType: 'function',
      sourcePipelineId: null,
      sourcePipelineVersionId: null,
      errors: [],
      versions: [],
    });
    expect(one.body.source.nodes.heading.type).toBe('extract.text');

    const patched = await stack.http.patch(
      `/${project.slug}/api/functions/${fn.id}`,
      { name: 'Reader', description: 'changed' },
      { token: owner.token },
    );
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Reader', description: 'changed', slug: 'catalog_reader' });

    // A slug update is slugified rather than refused.
    const reslugged = await stack.http.patch(
      `/${project.slug}/api/functions/${fn.id}`,
      { slug: '  My Catalog Tool! ' },
      { token: owner.token },
    );
    expect(reslugged.status, reslugged.text).toBe(200);
    expect(reslugged.body.slug).toBe('my-catalog-tool');
    const empty = await stack.http.patch(`/${project.slug}/api/functions/${fn.id}`, { slug: '!!!' }, { token: owner.token });
    expect(empty.status).toBe(400);

    const unknownField = await stack.http.patch(`/${project.slug}/api/functions/${fn.id}`, { version: 'x' }, { token: owner.token });
    expect(unknownField.status).toBe(400);

    const deleted = await stack.http.delete(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await stack.http.get(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token })).status).toBe(404);
    expect(await stack.orm.em.fork().count(FunctionVersion, { function: fn.id })).toBe(0);
    expect((await stack.http.delete(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token })).status).toBe(404);
  });

  it('refuses a taken slug with 409, on create and on PATCH, and a malformed one with 400', async () => {
    const first = await createFunction({ slug: 'taken-slug' });
    const again = await stack.http.put(
      `/${project.slug}/api/functions`,
      {
        name: 'x',
        description: '',
        slug: 'TAKEN-slug',
        definition: { source: extractSource(), ...extractInterface(), metadata: {}, outputType: 'function' },
      },
      { token: owner.token },
    );
    expect(again.status, again.text).toBe(409);
    expect(again.body.code).toBe('slug_taken');

    const second = await createFunction({ slug: 'another-slug' });
    const clash = await stack.http.patch(`/${project.slug}/api/functions/${second.id}`, { slug: 'Taken Slug' }, { token: owner.token });
    expect(clash.status, clash.text).toBe(409);
    // Its own slug is no collision.
    const same = await stack.http.patch(`/${project.slug}/api/functions/${first.id}`, { slug: 'taken slug' }, { token: owner.token });
    expect(same.status, same.text).toBe(200);

    const malformed = await stack.http.put(
      `/${project.slug}/api/functions`,
      { name: 'x', description: '', slug: 'has space', definition: { source: extractSource(), metadata: {}, outputType: 'function' } },
      { token: owner.token },
    );
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(malformed.body.issues)).toContain('slug');

    // A slug shaped like an id would be read as one by the by-id routes.
    const uuidShaped = await stack.http.put(
      `/${project.slug}/api/functions`,
      { name: 'x', description: '', slug: randomUUID(), definition: { source: extractSource(), metadata: {}, outputType: 'function' } },
      { token: owner.token },
    );
    expect(uuidShaped.status, uuidShaped.text).toBe(400);
    expect(uuidShaped.body.message).toContain('id');
    const uuidPatch = await stack.http.patch(`/${project.slug}/api/functions/${second.id}`, { slug: randomUUID() }, { token: owner.token });
    expect(uuidPatch.status, uuidPatch.text).toBe(400);

    // The same slug in another project is fine.
    const elsewhere = await createProject(stack, owner.token);
    await createFunction({ slug: 'taken-slug', projectSlug: elsewhere.slug });
  });

  it('stores compiler and interface errors; a version with errors cannot execute', async () => {
    const broken = await createFunction({
      parameters: [
        { name: 'url', refType: 'string' },
        { name: 'nope', refType: 'string' },
        { name: 'selector', refType: 'number' },
      ],
      outputs: [
        { name: 'ghost', refType: 'string', source: { nodeName: 'missing', outputName: 'text' } },
        { name: 'wrong', refType: 'string', source: { nodeName: 'items', outputName: 'nothing' } },
        { name: 'unsourced', refType: 'string' },
      ],
    });
    const codes = broken.errors.map((e: { code: string }) => e.code).sort();
    expect(codes).toEqual([
      'parameter_type_mismatch',
      'unknown_output_source',
      'unknown_output_source',
      'unknown_output_source',
      'unknown_parameter',
    ]);
    expect(JSON.stringify(broken.errors)).toContain('missing');
    const refused = await execute(broken.slug, { url: `${site.url}/catalog` });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.code).toBe('version_has_errors');

    const uncompilable = await createFunction({ source: { nodes: { a: { type: 'no.such.node' } } }, parameters: [], outputs: [] });
    expect(uncompilable.errors.length).toBeGreaterThan(0);
    expect((await execute(uncompilable.slug, {})).body.code).toBe('version_has_errors');

    // A required source parameter the function does not declare.
    const undeclared = await createFunction({ parameters: [], outputs: [] });
    expect(undeclared.errors.map((e: { code: string }) => e.code)).toEqual(['undeclared_parameter']);

    // A page parameter is refused outright.
    const page = await stack.http.put(
      `/${project.slug}/api/functions`,
      {
        name: 'x',
        description: '',
        slug: 'page-param',
        definition: {
          source: extractSource(),
          parameters: [{ name: 'p', refType: 'page' }],
          outputs: [],
          metadata: {},
          outputType: 'function',
        },
      },
      { token: owner.token },
    );
    expect(page.status).toBe(400);
  });
});

describe('function versions', () => {
  it('imports pipeline versions as new versions; omitted fields come from the previous version', async () => {
    const fn = await createFunction({ metadata: { team: 'a', note: 'first' } });
    const pipeline = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      { name: 'catalog', description: '', source: extractSource() },
      { token: owner.token },
    );
    expect(pipeline.status, pipeline.text).toBe(200);
    const pipelineId = pipeline.body.id as string;
    const firstPipelineVersion = (await stack.http.get(`/${project.slug}/api/pipelines/${pipelineId}`, { token: owner.token })).body
      .version;
    const changed = { ...extractSource(), outputs: { title: { $ref: 'heading.text' }, extra: { $ref: 'items.text' } } };
    const patched = await stack.http.patch(
      `/${project.slug}/api/pipelines/${pipelineId}/source`,
      { source: changed },
      { token: owner.token },
    );
    expect(patched.status, patched.text).toBe(200);

    // The first import names the pipeline version; interface and metadata carried over.
    const imported = await stack.http.post(
      `/${project.slug}/api/functions/${fn.id}/import`,
      { pipelineId, pipelineVersionId: patched.body.version },
      { token: owner.token },
    );
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.errors).toEqual([]);
    let detail = (await stack.http.get(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token })).body;
    expect(detail).toMatchObject({
      version: imported.body.version,
      metadata: { team: 'a', note: 'first' },
      parameters: extractInterface().parameters,
      outputs: extractInterface().outputs,
      sourcePipelineId: pipelineId,
      sourcePipelineVersionId: patched.body.version,
    });
    expect(detail.source.outputs.extra).toEqual({ $ref: 'items.text' });
    expect(detail.versions).toEqual([
      {
        id: fn.version,
        metadata: { team: 'a', note: 'first' },
        sourcePipelineId: null,
        sourcePipelineVersionId: null,
        created: expect.any(String),
      },
    ]);

    // An older pipeline version, with new metadata and outputs.
    const again = await stack.http.post(
      `/${project.slug}/api/functions/${fn.id}/import`,
      {
        pipelineId,
        pipelineVersionId: firstPipelineVersion,
        metadata: { note: 'second' },
        outputs: [{ name: 'title', refType: 'string' }],
      },
      { token: owner.token },
    );
    expect(again.status, again.text).toBe(200);
    detail = (await stack.http.get(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token })).body;
    expect(detail).toMatchObject({
      version: again.body.version,
      metadata: { note: 'second' },
      parameters: extractInterface().parameters,
      outputs: [{ name: 'title', refType: 'string' }],
      sourcePipelineVersionId: firstPipelineVersion,
    });
    expect(detail.versions.map((v: { id: string }) => v.id)).toEqual([imported.body.version, fn.version]);
    const stored = await stack.orm.em.fork().findOneOrFail(FunctionVersion, { id: again.body.version });
    expect(stored.predecessor?.id).toBe(imported.body.version);

    // Nothing given: the previous version's pipeline version again (not the pipeline's current one).
    const same = await stack.http.post(`/${project.slug}/api/functions/${fn.id}/import`, {}, { token: owner.token });
    expect(same.status, same.text).toBe(200);
    detail = (await stack.http.get(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token })).body;
    expect(detail).toMatchObject({
      version: same.body.version,
      metadata: { note: 'second' },
      outputs: [{ name: 'title', refType: 'string' }],
      sourcePipelineId: pipelineId,
      sourcePipelineVersionId: firstPipelineVersion,
    });

    // An interface that no longer fits is stored with its errors; the same pipeline named keeps its version.
    const misfit = await stack.http.post(
      `/${project.slug}/api/functions/${fn.id}/import`,
      { pipelineId, outputs: [{ name: 'gone', refType: 'string', source: { nodeName: 'nowhere', outputName: 'x' } }] },
      { token: owner.token },
    );
    expect(misfit.status).toBe(200);
    expect(misfit.body.errors.map((e: { code: string }) => e.code)).toEqual(['unknown_output_source']);
    expect((await stack.http.get(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token })).body.sourcePipelineVersionId).toBe(
      firstPipelineVersion,
    );

    // A version of another pipeline, or a pipeline of another project: 404.
    const otherPipeline = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      { name: 'other', description: '' },
      { token: owner.token },
    );
    const mismatch = await stack.http.post(
      `/${project.slug}/api/functions/${fn.id}/import`,
      { pipelineId: otherPipeline.body.id, pipelineVersionId: firstPipelineVersion },
      { token: owner.token },
    );
    expect(mismatch.status).toBe(404);
    // Another pipeline without its version: the previous version's does not apply.
    const otherOnly = await stack.http.post(
      `/${project.slug}/api/functions/${fn.id}/import`,
      { pipelineId: otherPipeline.body.id },
      { token: owner.token },
    );
    expect(otherOnly.status, otherOnly.text).toBe(400);
    expect(otherOnly.body.issues.map((issue: { path: string[] }) => issue.path)).toEqual([['pipelineVersionId']]);
    const elsewhere = await createProject(stack, owner.token);
    const foreign = await stack.http.put(`/${elsewhere.slug}/api/pipelines`, { name: 'foreign', description: '' }, { token: owner.token });
    const cross = await stack.http.post(
      `/${project.slug}/api/functions/${fn.id}/import`,
      { pipelineId: foreign.body.id, pipelineVersionId: firstPipelineVersion },
      { token: owner.token },
    );
    expect(cross.status).toBe(404);
  });

  it('refuses an import that names no pipeline when the previous version came from none, naming the fields', async () => {
    const fn = await createFunction();
    const bare = await stack.http.post(`/${project.slug}/api/functions/${fn.id}/import`, {}, { token: owner.token });
    expect(bare.status, bare.text).toBe(400);
    expect(bare.body).toMatchObject({ status: 'error', code: 'invalid_input' });
    expect(bare.body.issues.map((issue: { path: string[] }) => issue.path)).toEqual([['pipelineId'], ['pipelineVersionId']]);
    expect(bare.body.message).toContain('pipelineId');
    expect(bare.body.message).toContain('pipelineVersionId');

    const pipeline = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      { name: 'versionless import', description: '', source: extractSource() },
      { token: owner.token },
    );
    const onlyPipeline = await stack.http.post(
      `/${project.slug}/api/functions/${fn.id}/import`,
      { pipelineId: pipeline.body.id },
      { token: owner.token },
    );
    expect(onlyPipeline.status, onlyPipeline.text).toBe(400);
    expect(onlyPipeline.body.issues.map((issue: { path: string[] }) => issue.path)).toEqual([['pipelineVersionId']]);
    // Nothing was made.
    expect((await stack.http.get(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token })).body.version).toBe(fn.version);
  });
});

describe('executing a function', () => {
  it('drives a real browser against a page and answers structured outputs', async () => {
    const fn = await createFunction({ slug: 'read-catalog' });
    const done = await execute('READ-catalog', { url: `${site.url}/catalog?kind=fruit` });
    expect(done.status, done.text).toBe(200);
    expect(done.body.identifier).toMatch(/^[0-9a-f-]{36}$/);
    expect(done.body.outputs).toEqual({ title: 'Catalog: fruit', items: ['apple', 'pear', 'plum'], count: 3 });
    expect(done.body.result.status).toEqual({ pipeline: 'succeeded', 'pipeline-evaluation': 'completed' });
    expect(done.body.result.result).toEqual({ title: 'Catalog: fruit' });
    expect(done.body.result.nodeOutputs.items.count).toBe(3);

    // The optional parameter given; and the by-id route answers the same way.
    const byId = await stack.http.post(
      `/${project.slug}/api/functions/${fn.id}/execute`,
      { args: { url: `${site.url}/catalog?kind=tools`, selector: 'li.item' } },
      { token: owner.token },
    );
    expect(byId.status, byId.text).toBe(200);
    expect(byId.body.outputs).toEqual({ title: 'Catalog: tools', items: ['saw', 'drill'], count: 2 });
  });

  it('refuses an argument the pipeline cannot take, though the function declares it wider (json), before any run', async () => {
    const fn = await createFunction({
      parameters: [
        { name: 'url', refType: 'string' },
        { name: 'selector', refType: 'json' },
      ],
    });
    const bad = await execute(fn.slug, { url: `${site.url}/catalog`, selector: 5 });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.code).toBe('invalid_args');
    expect(bad.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toEqual(['args.selector']);
  });

  it('refuses bad arguments with 400 naming each problem', async () => {
    const fn = await createFunction();
    const bad = await execute(fn.slug, { selector: 5, extra: true });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.code).toBe('invalid_args');
    expect(bad.body.issues.map((issue: { path: string[] }) => issue.path.join('.')).sort()).toEqual([
      'args.extra',
      'args.selector',
      'args.url',
    ]);
    expect(bad.body.message).toMatch(/url.*required/);
    const notObject = await execute(fn.slug, 'nope');
    expect(notObject.status).toBe(400);
    expect((await execute('no-such-function', {})).status).toBe(404);
  });

  it('answers 400 function_failed naming the node when the run fails', async () => {
    const fn = await createFunction();
    const failed = await execute(fn.slug, { url: `${site.url}/empty` });
    expect(failed.status, failed.text).toBe(400);
    expect(failed.body.code).toBe('function_failed');
    expect(failed.body.message).toContain('heading');
  });

  it('stops a run that exceeds the time limit and answers 503 function_timeout', async () => {
    const slow = await createFunction({
      source: {
        nodes: {
          page: { type: 'browser.page' },
          wait: { type: 'page.wait', timeoutMs: 60_000, inputs: { page: { $ref: 'page.page' }, ms: 30_000 } },
        },
      },
      parameters: [],
      outputs: [],
    });
    const em = stack.orm.em.fork();
    const projectRow = await em.findOneOrFail(Project, { id: project.id });
    const user = await em.findOneOrFail(User, { id: owner.id });
    const account = { id: user.id, isAdmin: user.isAdmin, emailVerified: user.emailVerified };
    const subject = { kind: 'session', account, user } as unknown as Subject;
    const error = await executeFunction(stack, em, subject, projectRow, slow.slug, {}, { timeoutMs: 3000 }).catch((e) => e);
    expect(error.code).toBe('function_timeout');
    expect(error.status).toBe(503);
    const run = (await stack.orm.em.fork().getConnection().execute('select status from pipeline_runs where id = ?', [error.identifier]))[0];
    expect(run?.status).toBe('cancelled');
  });

  it('runs several executions at once, each in its own context (a call); the function cannot be deleted meanwhile', async () => {
    // A pause after the extraction keeps the three runs alive together.
    const source = extractSource();
    const fn = await createFunction({
      source: {
        ...source,
        nodes: { ...source.nodes, pause: { type: 'page.wait', inputs: { page: { $ref: 'items.page' }, ms: 2500 } } },
      },
    });
    const kinds = ['fruit', 'tools', 'fruit'];
    const pending = Promise.all(kinds.map((kind) => execute(fn.slug, { url: `${site.url}/catalog?kind=${kind}` })));

    // While one is queued or running, DELETE is refused.
    const db = stack.orm.em.fork().getConnection();
    const activeRuns = async () => {
      const rows: { n: number }[] = await db.execute(
        `select count(*)::int as n from pipeline_runs r join function_versions v on v.id = r.function_version_id
          where v.function_id = ? and r.status in ('queued', 'running')`,
        [fn.id],
      );
      return rows[0]?.n ?? 0;
    };
    for (let i = 0; i < 100 && (await activeRuns()) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const busy = await stack.http.delete(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token });
    expect(busy.status, busy.text).toBe(409);
    expect(busy.body.code).toBe('function_running');

    const answers = await pending;
    for (const [i, answer] of answers.entries()) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.outputs.title).toBe(`Catalog: ${kinds[i]}`);
      expect(answer.body.outputs.count).toBe(catalogs[kinds[i] as string]?.length);
    }
    const ids = answers.map((a) => a.body.identifier as string);
    expect(new Set(ids).size).toBe(3);
    const runs: { resource_id: string; started_at: Date; finished_at: Date }[] = await db.execute(
      'select resource_id, started_at, finished_at from pipeline_runs where id in (?, ?, ?)',
      ids,
    );
    // Calls (docs/browsers.md, Contexts for calls): each in a context of the project's browser, none a browser of its own.
    expect(runs.map((run) => run.resource_id)).toEqual([null, null, null]);
    // Every run started before any ended: they ran at the same time.
    const lastStart = Math.max(...runs.map((run) => new Date(run.started_at).getTime()));
    const firstEnd = Math.min(...runs.map((run) => new Date(run.finished_at).getTime()));
    expect(lastStart).toBeLessThan(firstEnd);
    expect((await stack.http.delete(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token })).status).toBe(200);
  });
});

/** A function that answers `window.innerWidth` of the page it opens (page.evaluate reads cookies too). */
const widthFunction = (metadata: Record<string, unknown> = {}) =>
  createFunction({
    source: {
      parameters: { url: { refType: 'string' } },
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
        width: { type: 'page.evaluate', inputs: { page: { $ref: 'open.page' }, script: 'return window.innerWidth' } },
      },
    },
    parameters: [{ name: 'url', refType: 'string' }],
    outputs: [{ name: 'width', refType: 'number', source: { nodeName: 'width', outputName: 'result' } }],
    metadata,
  });

describe('the session an execution runs on', () => {
  async function runOf(identifier: string) {
    const rows = await stack.orm.em.fork().getConnection().execute('select session_id from pipeline_runs where id = ?', [identifier]);
    return rows[0] as { session_id: string };
  }

  it('is the session metadata.session names, with its settings', async () => {
    const session = await stack.http.put(
      `/${project.slug}/api/sessions`,
      { name: 'narrow', screen: { width: 900, height: 700 } },
      { token: owner.token },
    );
    expect(session.status, session.text).toBe(200);
    const fn = await widthFunction({ session: session.body.id });
    const done = await execute(fn.slug, { url: `${site.url}/empty` });
    expect(done.status, done.text).toBe(200);
    expect(done.body.outputs).toEqual({ width: 900 });
    expect((await runOf(done.body.identifier)).session_id).toBe(session.body.id);
  });

  it('is otherwise the project’s "Default session", whose settings apply', async () => {
    const sessions = await stack.http.get(`/${project.slug}/api/sessions`, { token: owner.token });
    const fallback = sessions.body.find((s: { name: string }) => s.name === 'Default session');
    expect(fallback, sessions.text).toBeTruthy();
    const patched = await stack.http.patch(
      `/${project.slug}/api/sessions/${fallback.id}`,
      { screen: { width: 1111, height: 800 } },
      { token: owner.token },
    );
    expect(patched.status, patched.text).toBe(200);
    const fn = await widthFunction();
    const done = await execute(fn.slug, { url: `${site.url}/empty` });
    expect(done.status, done.text).toBe(200);
    expect(done.body.outputs).toEqual({ width: 1111 });
    expect((await runOf(done.body.identifier)).session_id).toBe(fallback.id);
  });

  it('answers 400 no_session when the named session or the Default session does not exist', async () => {
    const named = await widthFunction({ session: '00000000-0000-4000-8000-000000000000' });
    const missing = await execute(named.slug, { url: `${site.url}/empty` });
    expect(missing.status, missing.text).toBe(400);
    expect(missing.body.code).toBe('no_session');

    const bare = await createProject(stack, owner.token);
    const sessions = await stack.http.get(`/${bare.slug}/api/sessions`, { token: owner.token });
    for (const session of sessions.body) {
      expect((await stack.http.delete(`/${bare.slug}/api/sessions/${session.id}`, { token: owner.token })).status).toBe(200);
    }
    const fn = await createFunction({ projectSlug: bare.slug });
    const none = await execute(fn.slug, { url: `${site.url}/catalog` }, { token: owner.token }, bare.slug);
    expect(none.status, none.text).toBe(400);
    expect(none.body.code).toBe('no_session');
  });
});

describe('functions that read cookies', () => {
  /** Reads the page's heading, then its cookies; only the heading is a declared output. */
  const cookieSource = () => ({
    nodes: {
      page: { type: 'browser.page' },
      open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/cookie` } },
      heading: { type: 'extract.text', timeoutMs: 3000, inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
      jar: { type: 'page.cookies', inputs: { page: { $ref: 'heading.page' }, name: 'visited' } },
    },
    outputs: { cookie: { $ref: 'jar.value' } },
  });
  const cookieDefinition = (metadata: Record<string, unknown> = {}) => ({
    source: cookieSource(),
    parameters: [],
    outputs: [{ name: 'title', refType: 'string', source: { nodeName: 'heading', outputName: 'text' } }],
    metadata,
    outputType: 'function',
  });
  const put = (as: { token?: string; apiKey?: string }, definition: unknown, slug = `cookies-${randomBytes(3).toString('hex')}`) =>
    stack.http.put(`/${project.slug}/api/functions`, { name: 'cookie reader', slug, definition }, as);

  it('may be created only by an author who may read the cookies of the session it runs on', async () => {
    const writer = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.functions.*`] });
    const refused = await put({ apiKey: writer.secret }, cookieDefinition());
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.message).toContain('sessions.write');
    // A function that reads no cookies needs nothing more.
    const plain = await put({ apiKey: writer.secret }, { source: extractSource(), ...extractInterface(), metadata: {} });
    expect(plain.status, plain.text).toBe(200);
    // The owner may.
    expect((await put({ token: owner.token }, cookieDefinition())).status).toBe(200);

    // Rights on the named session are what counts; without `metadata.session`, the Default session's.
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'jar' }, { token: owner.token });
    const sessionKey = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [
        `${project.slug}.functions.*`,
        `${project.slug}.sessions.write.${session.body.id}`,
        `${project.slug}.cookies.read.${session.body.id}`,
        `${project.slug}.pipelines.read`,
      ],
    });
    expect((await put({ apiKey: sessionKey.secret }, cookieDefinition({ session: session.body.id }))).status).toBe(200);
    expect((await put({ apiKey: sessionKey.secret }, cookieDefinition())).status).toBe(403);
    // A session that does not exist: cookies.read on every session.
    expect((await put({ apiKey: sessionKey.secret }, cookieDefinition({ session: randomUUID() }))).status).toBe(403);

    // Import checks the same: the pipeline version's source reads cookies.
    const pipeline = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      { name: 'cookie pipeline', description: '', source: cookieSource() },
      { token: owner.token },
    );
    const pipelineVersionId = (await stack.http.get(`/${project.slug}/api/pipelines/${pipeline.body.id}`, { token: owner.token })).body
      .version;
    const target = plain.body.id as string;
    const importAs = (apiKey: string, metadata: Record<string, unknown>) =>
      stack.http.post(
        `/${project.slug}/api/functions/${target}/import`,
        { pipelineId: pipeline.body.id, pipelineVersionId, parameters: [], outputs: cookieDefinition().outputs, metadata },
        { apiKey },
      );
    const importRefused = await importAs(sessionKey.secret, {});
    expect(importRefused.status, importRefused.text).toBe(403);
    const imported = await importAs(sessionKey.secret, { session: session.body.id });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.errors).toEqual([]);
  });

  it('answer their declared outputs to every caller, node outputs and result only to readers of the cookies', async () => {
    const created = await put({ token: owner.token }, cookieDefinition());
    expect(created.status, created.text).toBe(200);
    const slug = (await stack.http.get(`/${project.slug}/api/functions/${created.body.id}`, { token: owner.token })).body.slug;
    const caller = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.functions.read.${created.body.id}`, `${project.slug}.functions.execute.${created.body.id}`],
    });

    const mine = await execute(slug, {});
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.outputs).toEqual({ title: 'Hello from the test site' });
    expect(mine.body.result.outputsWithheld).toBe(false);
    expect(mine.body.result.result).toEqual({ cookie: 'yes' });
    expect(mine.body.result.nodeOutputs.jar.value).toBe('yes');

    const theirs = await execute(slug, {}, { apiKey: caller.secret });
    expect(theirs.status, theirs.text).toBe(200);
    expect(theirs.body.outputs).toEqual({ title: 'Hello from the test site' });
    expect(theirs.body.result).toMatchObject({ outputsWithheld: true, result: null, nodeOutputs: {} });
    expect(theirs.text).not.toContain('"yes"');

    // A failed node's message may quote what the script read: withheld as well.
    const failing = await put(
      { token: owner.token },
      {
        source: {
          nodes: {
            page: { type: 'browser.page' },
            open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/cookie-js` } },
            leak: {
              type: 'page.evaluate',
              inputs: { page: { $ref: 'open.page' }, script: 'document.cookie = "js=tasty"; throw new Error("saw " + document.cookie)' },
            },
          },
        },
        parameters: [],
        outputs: [],
        metadata: {},
        outputType: 'function',
      },
    );
    expect(failing.status, failing.text).toBe(200);
    const failingSlug = (await stack.http.get(`/${project.slug}/api/functions/${failing.body.id}`, { token: owner.token })).body.slug;
    const grant = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.functions.read.${failing.body.id}`, `${project.slug}.functions.execute.${failing.body.id}`],
    });
    const ownerFailure = await execute(failingSlug, {});
    expect(ownerFailure.status, ownerFailure.text).toBe(400);
    expect(ownerFailure.body.message).toContain('js=tasty');
    const callerFailure = await execute(failingSlug, {}, { apiKey: grant.secret });
    expect(callerFailure.status, callerFailure.text).toBe(400);
    expect(callerFailure.body.code).toBe('function_failed');
    expect(callerFailure.body.message).toContain('leak');
    expect(callerFailure.text).not.toContain('tasty');
  });
});

describe('execute permissions', () => {
  it('needs read on the function and execute on what it runs', async () => {
    const fn = await createFunction();
    const url = `${site.url}/catalog?kind=tools`;
    // Another user: the private project is invisible.
    expect((await execute(fn.slug, { url }, { token: other.token })).status).toBe(404);
    expect((await stack.http.get(`/${project.slug}/api/functions/${fn.id}`, { token: other.token })).status).toBe(404);

    const readOnly = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.functions.read`] });
    const refused = await execute(fn.slug, { url }, { apiKey: readOnly.secret });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.message).toContain(`functions.execute.${fn.id}`);

    const executeOnly = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.functions.execute.${fn.id}`],
    });
    expect((await execute(fn.slug, { url }, { apiKey: executeOnly.secret })).status).toBe(404);

    const both = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.functions.read.${fn.id}`, `${project.slug}.functions.execute.${fn.id}`],
    });
    // No session permission: the function's author chose the session it runs on (spec 4.6).
    const allowed = await execute(fn.slug, { url }, { apiKey: both.secret });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.body.outputs.items).toEqual(['saw', 'drill']);

    // Per-id read: the list shows only that function; PUT needs write.
    const listed = await stack.http.get(`/${project.slug}/api/functions`, { apiKey: both.secret });
    expect(listed.body.map((f: { id: string }) => f.id)).toEqual([fn.id]);
    const write = await stack.http.put(
      `/${project.slug}/api/functions`,
      { name: 'x', description: '', slug: 'nope', definition: { source: extractSource(), metadata: {}, outputType: 'function' } },
      { apiKey: both.secret },
    );
    expect(write.status).toBe(403);
  });

  it('admins may; a revoked key may not; a projects key only in its projects', async () => {
    const fn = await createFunction();
    const url = `${site.url}/catalog?kind=tools`;
    const byAdmin = await execute(fn.slug, { url }, { token: admin.token });
    expect(byAdmin.status, byAdmin.text).toBe(200);
    expect(byAdmin.body.outputs.count).toBe(2);

    const revoked = await createApiKey(stack, owner.token, { accessType: 'full' });
    expect((await stack.http.delete(`/api/api-keys/${revoked.id}`, { token: owner.token })).status).toBe(200);
    expect((await execute(fn.slug, { url }, { apiKey: revoked.secret })).status).toBe(401);

    const here = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [project.id] });
    const inProject = await execute(fn.slug, { url }, { apiKey: here.secret });
    expect(inProject.status, inProject.text).toBe(200);
    const elsewhere = await createProject(stack, owner.token);
    const away = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [elsewhere.id] });
    expect((await execute(fn.slug, { url }, { apiKey: away.secret })).status).toBe(404);
  });

  it('for an imported version, execute on the pipeline version it came from', async () => {
    const fn = await createFunction();
    const pipeline = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      { name: 'p', description: '', source: extractSource() },
      { token: owner.token },
    );
    const pipelineVersionId = (await stack.http.get(`/${project.slug}/api/pipelines/${pipeline.body.id}`, { token: owner.token })).body
      .version;
    const imported = await stack.http.post(
      `/${project.slug}/api/functions/${fn.id}/import`,
      { pipelineId: pipeline.body.id, pipelineVersionId },
      { token: owner.token },
    );
    const detail = (await stack.http.get(`/${project.slug}/api/functions/${fn.id}`, { token: owner.token })).body;
    expect(detail.version).toBe(imported.body.version);
    const url = `${site.url}/catalog?kind=fruit`;

    const functionGrant = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.functions.read`, `${project.slug}.functions.execute.${fn.id}`],
    });
    expect((await execute(fn.slug, { url }, { apiKey: functionGrant.secret })).status).toBe(403);
    const versionGrant = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.functions.read`, `${project.slug}.pipelineRuns.execute.${detail.sourcePipelineVersionId}`],
    });
    const ok = await execute(fn.slug, { url }, { apiKey: versionGrant.secret });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.outputs.count).toBe(3);
  });

  it('a public project lets everyone read its functions, but not execute or write them', async () => {
    const publicProject = await createProject(stack, owner.token, { public: true });
    const fn = await createFunction({ projectSlug: publicProject.slug, slug: 'public-fn' });
    const list = await stack.http.get(`/${publicProject.slug}/api/functions`);
    expect(list.status, list.text).toBe(200);
    expect(list.body.map((f: { slug: string }) => f.slug)).toEqual(['public-fn']);
    expect((await stack.http.get(`/${publicProject.slug}/api/functions/${fn.id}`)).status).toBe(200);
    const url = `${site.url}/catalog`;
    expect((await execute(fn.slug, { url }, {}, publicProject.slug)).status).toBe(401);
    expect((await execute(fn.slug, { url }, { token: other.token }, publicProject.slug)).status).toBe(403);
    expect((await stack.http.patch(`/${publicProject.slug}/api/functions/${fn.id}`, { name: 'x' }, { token: other.token })).status).toBe(
      403,
    );
    expect((await stack.http.delete(`/${publicProject.slug}/api/functions/${fn.id}`)).status).toBe(401);
  });
});

describe('function schemas', () => {
  it('are in the OpenAPI document and map refTypes to JSON Schema', async () => {
    const doc = await stack.http.get('/api/openapi.json');
    const paths = Object.keys(doc.body.paths);
    const executeOutput =
      doc.body.paths['/{project}/api/functions/slug/{slug}/execute'].post.responses['200'].content['application/json'].schema;
    expect(executeOutput.properties.result.required).toContain('outputsWithheld');
    for (const path of [
      '/{project}/api/functions',
      '/{project}/api/functions/{functionId}',
      '/{project}/api/functions/{functionId}/import',
      '/{project}/api/functions/slug/{slug}/execute',
    ]) {
      expect(paths).toContain(path);
    }
    const input = functionInputJsonSchema(
      [
        { name: 'q', refType: 'string', description: 'query' },
        { name: 'n', refType: 'number' },
        { name: 'any', refType: 'json' },
        { name: 'tags', refType: 'list' },
      ],
      { optional: ['n'] },
    );
    expect(input).toMatchObject({
      type: 'object',
      properties: { q: { type: 'string', description: 'query' }, n: { type: 'number' }, any: {}, tags: { type: 'array' } },
      required: ['q', 'any', 'tags'],
      additionalProperties: false,
    });
    // Every output is present, but may be null (a value the run did not produce).
    expect(
      functionOutputJsonSchema([
        { name: 'r', refType: 'record' },
        { name: 's', refType: 'string' },
        { name: 'any', refType: 'json' },
      ]),
    ).toMatchObject({
      type: 'object',
      properties: { r: { type: ['object', 'null'] }, s: { type: ['string', 'null'] }, any: {} },
      required: ['r', 's', 'any'],
    });
  });
});
