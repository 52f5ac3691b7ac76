import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession, Pipeline, PipelineRun, PipelineVersion } from '../../db/entities/index.ts';
import { createVersion } from '../../server/pipelines/versions.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import type { Credentials } from '../support/http.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/** Pipeline versions (spec 4.5, 3): list, get, history, fork and switch, over REST. */

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

const pipelines = (slug = project.slug) => `/${slug}/api/pipelines`;
const versions = (slug = project.slug) => `/${slug}/api/pipelines/versions`;

function source(url: string) {
  return {
    nodes: {
      page: { type: 'browser.page' },
      open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url } },
    },
  };
}

const brokenSource = { nodes: { mystery: { type: 'no.such.node' } } };

async function createPipeline(body: Record<string, unknown> = {}, slug = project.slug, credentials: Credentials = as) {
  const created = await stack.http.put(pipelines(slug), { name: `p-${randomUUID().slice(0, 8)}`, ...body }, credentials);
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

async function currentVersion(pipelineId: string, slug = project.slug) {
  const one = await stack.http.get(`${pipelines(slug)}/${pipelineId}`, as);
  expect(one.status, one.text).toBe(200);
  return one.body.version as string;
}

async function patchSource(pipelineId: string, body: Record<string, unknown>, slug = project.slug, credentials: Credentials = as) {
  const patched = await stack.http.patch(`${pipelines(slug)}/${pipelineId}/source`, body, credentials);
  expect(patched.status, patched.text).toBe(200);
  return patched.body.version as string;
}

/** A pipeline with `count` versions; answers the version ids, oldest first. */
async function pipelineWithVersions(count: number, slug = project.slug) {
  const id = await createPipeline({ source: source('https://example.test/0') }, slug);
  const ids = [await currentVersion(id, slug)];
  for (let i = 1; i < count; i++) ids.push(await patchSource(id, { source: source(`https://example.test/${i}`) }, slug));
  return { id, versions: ids };
}

const ids = (body: { id: string }[]) => body.map((item) => item.id);

describe('listing versions', () => {
  it('lists shallow versions newest first, with the `pipeline` filter and paging', async () => {
    const fresh = await createProject(stack, owner.token);
    const a = await pipelineWithVersions(3, fresh.slug);
    const b = await createPipeline({ source: brokenSource }, fresh.slug);
    const bVersion = await currentVersion(b, fresh.slug);

    const all = await stack.http.get(versions(fresh.slug), as);
    expect(all.status, all.text).toBe(200);
    expect(ids(all.body)).toEqual([bVersion, ...[...a.versions].reverse()]);
    expect(all.body[0]).toEqual({
      id: bVersion,
      pipeline: b,
      predecessor: null,
      errorCount: 1,
      metadata: {},
      created: expect.any(String),
    });
    expect(all.body[1]).toMatchObject({ pipeline: a.id, predecessor: a.versions[1], errorCount: 0 });
    for (const item of all.body) expect(item.source).toBeUndefined();

    const filtered = await stack.http.get(`${versions(fresh.slug)}?pipeline=${a.id}`, as);
    expect(ids(filtered.body)).toEqual([...a.versions].reverse());
    const page = await stack.http.get(`${versions(fresh.slug)}?pipeline=${a.id}&limit=1&offset=1`, as);
    expect(ids(page.body)).toEqual([a.versions[1]]);
    expect((await stack.http.get(`${versions(fresh.slug)}?limit=201`, as)).status).toBe(400);
    expect((await stack.http.get(`${versions(fresh.slug)}?offset=-2`, as)).status).toBe(400);
  });

  it('a `pipeline` filter naming no pipeline of the project is 404', async () => {
    const other = await createProject(stack, owner.token);
    const elsewhere = await createPipeline({}, other.slug);
    expect((await stack.http.get(`${versions()}?pipeline=${randomUUID()}`, as)).status).toBe(404);
    expect((await stack.http.get(`${versions()}?pipeline=${elsewhere}`, as)).status).toBe(404);
    expect((await stack.http.get(`${versions()}?pipeline=nope`, as)).status).toBe(404);
  });

  it('an unknown query field is 400', async () => {
    expect((await stack.http.get(`${versions()}?colour=red`, as)).status).toBe(400);
  });
});

describe('one version', () => {
  it('answers source, errors, metadata, predecessor and run references', async () => {
    const id = await createPipeline({ source: source('https://example.test/a') });
    const v1 = await currentVersion(id);
    const v2 = await patchSource(id, { source: brokenSource, metadata: { why: 'test' } });
    const em = stack.orm.em.fork();
    const session = await em.findOneOrFail(BrowserSession, { project: project.id, name: 'Default session' });
    const run = em.create(PipelineRun, { project: project.id, pipeline: id, version: v2, session, status: 'failed', evaluation: 'failed' });
    await em.flush();

    const one = await stack.http.get(`${versions()}/${v2}`, as);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual({
      id: v2,
      pipeline: id,
      predecessor: v1,
      source: brokenSource,
      errors: [expect.objectContaining({ node: 'mystery', code: expect.any(String), message: expect.any(String) })],
      metadata: { why: 'test' },
      runs: [run.id],
      runCount: 1,
      created: expect.any(String),
    });
    const first = await stack.http.get(`${versions()}/${v1}`, as);
    expect(first.body).toMatchObject({ id: v1, predecessor: null, errors: [], runs: [], runCount: 0 });
  });

  it('unknown, malformed and other projects’ versions are 404', async () => {
    const other = await createProject(stack, owner.token);
    const elsewhere = await currentVersion(await createPipeline({}, other.slug), other.slug);
    expect((await stack.http.get(`${versions()}/${randomUUID()}`, as)).status).toBe(404);
    expect((await stack.http.get(`${versions()}/not-a-uuid`, as)).status).toBe(404);
    expect((await stack.http.get(`${versions()}/${elsewhere}`, as)).status).toBe(404);
    expect((await stack.http.get(`${versions(other.slug)}/${elsewhere}`, as)).status).toBe(200);
  });
});

describe('history', () => {
  it('walks the predecessors, nearest first, up to depth (default 10)', async () => {
    const { versions: chain } = await pipelineWithVersions(13);
    const newest = chain.at(-1) as string;
    const two = await stack.http.get(`${versions()}/${newest}/history?depth=2`, as);
    expect(two.status, two.text).toBe(200);
    expect(ids(two.body)).toEqual([chain[11], chain[10]]);
    expect(two.body[0]).toEqual({
      id: chain[11],
      pipeline: expect.any(String),
      predecessor: chain[10],
      errorCount: 0,
      metadata: {},
      created: expect.any(String),
    });
    const byDefault = await stack.http.get(`${versions()}/${newest}/history`, as);
    expect(ids(byDefault.body)).toEqual([...chain].reverse().slice(1, 11));
    const deep = await stack.http.get(`${versions()}/${newest}/history?depth=100`, as);
    expect(ids(deep.body)).toEqual([...chain].reverse().slice(1));
    // The first version has no history.
    expect((await stack.http.get(`${versions()}/${chain[0]}/history`, as)).body).toEqual([]);
    const middle = await stack.http.get(`${versions()}/${chain[5]}/history?depth=3`, as);
    expect(ids(middle.body)).toEqual([chain[4], chain[3], chain[2]]);
  });

  it('refuses a depth outside 1–100', async () => {
    const { versions: chain } = await pipelineWithVersions(1);
    for (const depth of ['0', '101', '-1', '2.5', 'deep']) {
      const answer = await stack.http.get(`${versions()}/${chain[0]}/history?depth=${depth}`, as);
      expect(answer.status, `depth=${depth}: ${answer.text}`).toBe(400);
    }
  });

  it('stops before a predecessor the caller may not read', async () => {
    const fresh = await createProject(stack, owner.token);
    const hidden = await pipelineWithVersions(2, fresh.slug);
    const shown = await createPipeline({}, fresh.slug);
    // A chain that crosses pipelines (the API never makes one; a later import might): the
    // shown pipeline's new version follows the hidden pipeline's latest.
    const em = stack.orm.em.fork();
    const pipeline = await em.findOneOrFail(Pipeline, { id: shown });
    const predecessor = await em.findOneOrFail(PipelineVersion, { id: hidden.versions[1] });
    const crossing = await createVersion(em, pipeline, { source: source('https://example.test/x'), predecessor });
    const tip = await patchSource(shown, { metadata: { tip: true } }, fresh.slug);

    expect(ids((await stack.http.get(`${versions(fresh.slug)}/${tip}/history`, as)).body)).toEqual([
      crossing.id,
      ...[...hidden.versions].reverse(),
    ]);
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${fresh.slug}.pipelines.read.${shown}`] });
    const narrow = { apiKey: key.secret };
    const walked = await stack.http.get(`${versions(fresh.slug)}/${tip}/history`, narrow);
    expect(walked.status, walked.text).toBe(200);
    expect(ids(walked.body)).toEqual([crossing.id]);
    expect((await stack.http.get(`${versions(fresh.slug)}/${hidden.versions[1]}/history`, narrow)).status).toBe(404);
  });
});

describe('fork', () => {
  it('makes a new pipeline in another project of the caller, seeded with the version', async () => {
    const target = await createProject(stack, owner.token);
    const { id, versions: chain } = await pipelineWithVersions(3);
    await stack.http.patch(`${pipelines()}/${id}`, { description: 'original' }, as);
    const forked = await stack.http.post(
      `${versions()}/${chain[1]}/fork`,
      { name: 'Forked', description: 'copy', project: target.slug },
      as,
    );
    expect(forked.status, forked.text).toBe(200);
    expect(Object.keys(forked.body)).toEqual(['id']);
    const newId = forked.body.id;
    expect(newId).not.toBe(id);

    const one = await stack.http.get(`${pipelines(target.slug)}/${newId}`, as);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toMatchObject({
      name: 'Forked',
      description: 'copy',
      source: source('https://example.test/1'),
      errors: [],
      metadata: { forkedFrom: { project: project.id, pipeline: id, version: chain[1] } },
      runs: [],
    });
    const first = await stack.http.get(`${versions(target.slug)}/${one.body.version}`, as);
    expect(first.body).toMatchObject({ pipeline: newId, predecessor: null });
    // The original is untouched, and the new pipeline is not in the source project.
    expect(await currentVersion(id)).toBe(chain[2]);
    expect((await stack.http.get(`${pipelines()}/${newId}`, as)).status).toBe(404);
    // By id works as well as by slug.
    const byId = await stack.http.post(`${versions()}/${chain[0]}/fork`, { project: target.id }, as);
    expect(byId.status, byId.text).toBe(200);
  });

  it('without `project` forks into the same project, keeping name and description', async () => {
    const id = await createPipeline({ name: 'Keep me', description: 'as is', source: brokenSource });
    const version = await currentVersion(id);
    const forked = await stack.http.post(`${versions()}/${version}/fork`, {}, as);
    expect(forked.status, forked.text).toBe(200);
    const one = await stack.http.get(`${pipelines()}/${forked.body.id}`, as);
    expect(one.body).toMatchObject({ name: 'Keep me', description: 'as is', source: brokenSource });
    // Errors are the compiler's verdict on the source, so the fork has them too.
    expect(one.body.errors).toHaveLength(1);
    // A bodyless POST works as well.
    const bare = await stack.http.request('POST', `${versions()}/${version}/fork`, { as });
    expect(bare.status, bare.text).toBe(200);
  });

  it('is refused without pipelines.write in the target', async () => {
    const { versions: chain } = await pipelineWithVersions(1);
    const theirPrivate = await createProject(stack, stranger.token);
    const theirPublic = await createProject(stack, stranger.token, { public: true });
    const hidden = await stack.http.post(`${versions()}/${chain[0]}/fork`, { project: theirPrivate.slug }, as);
    expect(hidden.status, hidden.text).toBe(404);
    expect((await stack.http.post(`${versions()}/${chain[0]}/fork`, { project: 'no-such-project' }, as)).status).toBe(404);
    const readOnly = await stack.http.post(`${versions()}/${chain[0]}/fork`, { project: theirPublic.slug }, as);
    expect(readOnly.status, readOnly.text).toBe(403);
    expect((await stack.http.get(pipelines(theirPublic.slug), as)).body).toEqual([]);

    // A key that reads here but writes nowhere.
    const target = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.pipelines.read`, `${target.slug}.pipelines.read`],
    });
    const reader = { apiKey: key.secret };
    expect((await stack.http.post(`${versions()}/${chain[0]}/fork`, { project: target.slug }, reader)).status).toBe(403);
    expect((await stack.http.post(`${versions()}/${chain[0]}/fork`, {}, reader)).status).toBe(403);
    const writer = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.pipelines.read`, `${target.slug}.pipelines.write`],
    });
    const allowed = await stack.http.post(`${versions()}/${chain[0]}/fork`, { project: target.slug }, { apiKey: writer.secret });
    expect(allowed.status, allowed.text).toBe(200);
  });

  it('needs read on the version', async () => {
    const { versions: chain } = await pipelineWithVersions(1);
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.pipelines.write`] });
    const forked = await stack.http.post(`${versions()}/${chain[0]}/fork`, {}, { apiKey: key.secret });
    expect(forked.status, forked.text).toBe(404);
    expect((await stack.http.post(`${versions()}/${randomUUID()}/fork`, {}, as)).status).toBe(404);
    expect((await stack.http.post(`${versions()}/${chain[0]}/fork`, {}, { token: stranger.token })).status).toBe(404);
  });

  it('from a public project into the reader’s own project', async () => {
    const open = await createProject(stack, owner.token, { public: true });
    const { id, versions: chain } = await pipelineWithVersions(2, open.slug);
    const mine = await createProject(stack, stranger.token);
    const forked = await stack.http.post(`${versions(open.slug)}/${chain[0]}/fork`, { project: mine.slug }, { token: stranger.token });
    expect(forked.status, forked.text).toBe(200);
    const one = await stack.http.get(`${pipelines(mine.slug)}/${forked.body.id}`, { token: stranger.token });
    expect(one.body).toMatchObject({
      source: source('https://example.test/0'),
      metadata: { forkedFrom: { project: open.id, pipeline: id, version: chain[0] } },
    });
  });

  it('refuses bad input', async () => {
    const { versions: chain } = await pipelineWithVersions(1);
    for (const body of [{ name: '' }, { name: 5 }, { project: 7 }, { source: {} }, { description: null }]) {
      const answer = await stack.http.post(`${versions()}/${chain[0]}/fork`, body, as);
      expect(answer.status, `${JSON.stringify(body)}: ${answer.text}`).toBe(400);
    }
  });
});

describe('switch', () => {
  it('to an own version makes it current, without a new version', async () => {
    const { id, versions: chain } = await pipelineWithVersions(3);
    const switched = await stack.http.post(`${versions()}/${chain[0]}/switch`, { pipeline: id }, as);
    expect(switched.status, switched.text).toBe(200);
    expect(switched.body).toEqual({ version: chain[0], copied: false });
    const one = await stack.http.get(`${pipelines()}/${id}`, as);
    expect(one.body).toMatchObject({ version: chain[0], source: source('https://example.test/0') });
    expect((await stack.http.get(`${versions()}?pipeline=${id}`, as)).body).toHaveLength(3);
    // The next edit follows the version switched to.
    const next = await patchSource(id, { metadata: { after: 'switch' } });
    expect((await stack.http.get(`${versions()}/${next}`, as)).body).toMatchObject({
      predecessor: chain[0],
      source: source('https://example.test/0'),
    });
    // Switching to the current version again is a no-op.
    const again = await stack.http.post(`${versions()}/${next}/switch`, { pipeline: id }, as);
    expect(again.body).toEqual({ version: next, copied: false });
  });

  it('to a foreign version copies it into the target, then makes the copy current', async () => {
    const from = await createPipeline({ source: brokenSource });
    const foreign = await patchSource(from, { metadata: { author: 'ada' } });
    const { id: target, versions: chain } = await pipelineWithVersions(2);
    const switched = await stack.http.post(`${versions()}/${foreign}/switch`, { pipeline: target }, as);
    expect(switched.status, switched.text).toBe(200);
    expect(switched.body.copied).toBe(true);
    const copy = switched.body.version;
    expect(copy).not.toBe(foreign);
    const one = await stack.http.get(`${versions()}/${copy}`, as);
    expect(one.body).toMatchObject({
      pipeline: target,
      predecessor: chain[1],
      source: brokenSource,
      errors: [expect.objectContaining({ node: 'mystery' })],
      metadata: { author: 'ada', copiedFrom: { pipeline: from, version: foreign } },
    });
    expect(await currentVersion(target)).toBe(copy);
    // The source pipeline is unchanged.
    expect(await currentVersion(from)).toBe(foreign);
    expect((await stack.http.get(`${versions()}?pipeline=${from}`, as)).body).toHaveLength(2);
  });

  it('needs write on the target pipeline, and read on the version', async () => {
    const from = await createPipeline();
    const foreign = await currentVersion(from);
    const target = await createPipeline();
    const reader = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.pipelines.read`] });
    expect((await stack.http.post(`${versions()}/${foreign}/switch`, { pipeline: target }, { apiKey: reader.secret })).status).toBe(403);
    const writesTarget = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.pipelines.read.${target}`, `${project.slug}.pipelines.write.${target}`],
    });
    // The version belongs to a pipeline this key cannot read.
    expect((await stack.http.post(`${versions()}/${foreign}/switch`, { pipeline: target }, { apiKey: writesTarget.secret })).status).toBe(
      404,
    );
    const both = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.pipelines.read.${from}`, `${project.slug}.pipelines.write.${target}`],
    });
    const allowed = await stack.http.post(`${versions()}/${foreign}/switch`, { pipeline: target }, { apiKey: both.secret });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.body.copied).toBe(true);
    expect((await stack.http.post(`${versions()}/${foreign}/switch`, { pipeline: target }, { token: stranger.token })).status).toBe(404);
  });

  it('the target must be a pipeline of this project', async () => {
    const version = await currentVersion(await createPipeline());
    const other = await createProject(stack, owner.token);
    const elsewhere = await createPipeline({}, other.slug);
    expect((await stack.http.post(`${versions()}/${version}/switch`, { pipeline: elsewhere }, as)).status).toBe(404);
    expect((await stack.http.post(`${versions()}/${version}/switch`, { pipeline: randomUUID() }, as)).status).toBe(404);
    expect((await stack.http.post(`${versions()}/${version}/switch`, {}, as)).status).toBe(400);
    expect((await stack.http.post(`${versions()}/${version}/switch`, { pipeline: 5 }, as)).status).toBe(400);
    expect((await stack.http.post(`${versions()}/${randomUUID()}/switch`, { pipeline: elsewhere }, as)).status).toBe(404);
  });

  it('a public project lets strangers read versions and history, not switch', async () => {
    const open = await createProject(stack, owner.token, { public: true });
    const { id, versions: chain } = await pipelineWithVersions(2, open.slug);
    for (const them of [{ token: stranger.token }, undefined]) {
      expect(ids((await stack.http.get(versions(open.slug), them)).body)).toEqual([chain[1], chain[0]]);
      expect((await stack.http.get(`${versions(open.slug)}/${chain[1]}`, them)).status).toBe(200);
      expect(ids((await stack.http.get(`${versions(open.slug)}/${chain[1]}/history`, them)).body)).toEqual([chain[0]]);
    }
    expect((await stack.http.post(`${versions(open.slug)}/${chain[0]}/switch`, { pipeline: id }, { token: stranger.token })).status).toBe(
      403,
    );
    expect((await stack.http.post(`${versions(open.slug)}/${chain[0]}/switch`, { pipeline: id })).status).toBe(401);
  });
});

describe('visibility of versions', () => {
  it('a stranger sees no versions of a private project', async () => {
    const { versions: chain } = await pipelineWithVersions(1);
    const them = { token: stranger.token };
    expect((await stack.http.get(versions(), them)).status).toBe(404);
    expect((await stack.http.get(`${versions()}/${chain[0]}`, them)).status).toBe(404);
    expect((await stack.http.get(`${versions()}/${chain[0]}/history`, them)).status).toBe(404);
  });

  it('grants per pipeline id show only that pipeline’s versions', async () => {
    const fresh = await createProject(stack, owner.token);
    const mine = await pipelineWithVersions(2, fresh.slug);
    const theirs = await pipelineWithVersions(2, fresh.slug);
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${fresh.slug}.pipelines.read.${mine.id}`] });
    const narrow = { apiKey: key.secret };
    expect(ids((await stack.http.get(versions(fresh.slug), narrow)).body)).toEqual([...mine.versions].reverse());
    expect((await stack.http.get(`${versions(fresh.slug)}?pipeline=${theirs.id}`, narrow)).status).toBe(403);
    expect((await stack.http.get(`${versions(fresh.slug)}/${theirs.versions[0]}`, narrow)).status).toBe(404);
    expect((await stack.http.get(`${versions(fresh.slug)}/${mine.versions[0]}`, narrow)).status).toBe(200);
    const none = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${fresh.slug}.sessions.read`] });
    expect((await stack.http.get(versions(fresh.slug), { apiKey: none.secret })).body).toEqual([]);
  });
});

describe('the OpenAPI document', () => {
  it('lists every pipelines and versions endpoint of this work', async () => {
    const document = (await stack.http.get('/api/openapi.json')).body as { paths: Record<string, Record<string, { summary?: string }>> };
    const expected = [
      'GET /{project}/api/pipelines',
      'PUT /{project}/api/pipelines',
      'GET /{project}/api/pipelines/{pipelineId}',
      'PATCH /{project}/api/pipelines/{pipelineId}',
      'DELETE /{project}/api/pipelines/{pipelineId}',
      'PATCH /{project}/api/pipelines/{pipelineId}/source',
      'GET /{project}/api/pipelines/versions',
      'GET /{project}/api/pipelines/versions/{versionId}',
      'GET /{project}/api/pipelines/versions/{versionId}/history',
      'POST /{project}/api/pipelines/versions/{versionId}/fork',
      'POST /{project}/api/pipelines/versions/{versionId}/switch',
    ];
    for (const endpoint of expected) {
      const [method, path] = endpoint.split(' ') as [string, string];
      expect(document.paths[path]?.[method.toLowerCase()]?.summary, endpoint).toBeTruthy();
    }
  });
});
