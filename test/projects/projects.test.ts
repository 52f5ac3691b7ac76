import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import type { HttpResponse } from '../support/http.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let other: Awaited<ReturnType<typeof registerUser>>;

beforeAll(async () => {
  stack = await startTestStack();
  owner = await registerUser(stack);
  other = await registerUser(stack);
});

afterAll(async () => {
  await stack?.close();
});

const uniqueSlug = (prefix = 'p') => `${prefix}-${randomBytes(4).toString('hex')}`;

function createBody(overrides: Record<string, unknown> = {}) {
  return { name: 'Shop scraper', description: 'Orders and invoices', public: false, slug: uniqueSlug(), ...overrides };
}

function expectError(response: HttpResponse, status: number, code?: string) {
  expect(response.status, response.text).toBe(status);
  expect(response.body.status).toBe('error');
  if (code) expect(response.body.code).toBe(code);
  expect(typeof response.body.message).toBe('string');
}

describe('PUT /api/projects', () => {
  it('creates a project and answers its id; `public` maps to visibility', async () => {
    for (const isPublic of [true, false]) {
      const body = createBody({ public: isPublic });
      const created = await stack.http.put('/api/projects', body, { token: owner.token });
      expect(created.status, created.text).toBe(200);
      expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      const read = await stack.http.get(`/${body.slug}/api`, { token: owner.token });
      expect(read.body).toMatchObject({
        id: created.body.id,
        name: body.name,
        description: body.description,
        slug: body.slug,
        visibility: isPublic ? 'public' : 'private',
        owner: owner.id,
      });
    }
  });

  it('defaults to private with an empty description', async () => {
    const slug = uniqueSlug();
    const created = await stack.http.put('/api/projects', { name: 'Minimal', slug }, { token: owner.token });
    expect(created.status, created.text).toBe(200);
    const read = await stack.http.get(`/${slug}/api`, { token: owner.token });
    expect(read.body).toMatchObject({ visibility: 'private', description: '' });
  });

  it('needs a verified e-mail address (400), and a signed-in caller (401)', async () => {
    const unverified = await registerUser(stack, { verify: false });
    expectError(await stack.http.put('/api/projects', createBody(), { token: unverified.token }), 400, 'email_not_verified');
    // A full key of an unverified account is no way around it.
    const key = await createApiKey(stack, unverified.token, { accessType: 'full' });
    expectError(await stack.http.put('/api/projects', createBody(), { apiKey: key.secret }), 400, 'email_not_verified');
    expectError(await stack.http.put('/api/projects', createBody()), 401, 'unauthenticated');
  });

  it('accepts a full API key, refuses narrowed keys (403)', async () => {
    const full = await createApiKey(stack, owner.token, { accessType: 'full' });
    const byKey = createBody();
    expect((await stack.http.put('/api/projects', byKey, { apiKey: full.secret })).status).toBe(200);
    expect((await stack.http.get(`/${byKey.slug}/api`, { token: owner.token })).body.owner).toBe(owner.id);

    const mine = await createProject(stack, owner.token);
    const narrowed = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [mine.id] });
    expectError(await stack.http.put('/api/projects', createBody(), { apiKey: narrowed.secret }), 403, 'forbidden');
    const custom = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: ['*.*'] });
    expectError(await stack.http.put('/api/projects', createBody(), { apiKey: custom.secret }), 403, 'forbidden');
  });

  describe('slugs', () => {
    it.each(['ab', 'shop', 'my-shop_2', 'A1', 'x'.repeat(64)])('accepts %j', async (slug) => {
      const unique = slug.length > 60 ? slug : `${slug}${randomBytes(2).toString('hex')}`;
      const created = await stack.http.put('/api/projects', createBody({ slug: unique }), { token: owner.token });
      expect(created.status, created.text).toBe(200);
    });

    it.each([
      ['has space', 'a space'],
      ['dot.ted', 'a dot'],
      ['slash/ed', 'a slash'],
      ['ümlaut', 'a non-ASCII letter'],
      ['semi;colon', 'a semicolon'],
      ['a', 'one character'],
      ['', 'empty'],
      ['x'.repeat(65), '65 characters'],
      ['0b5c1a5e-1234-4abc-8def-0123456789ab', 'the shape of a UUID'],
    ])('rejects %j (%s) with 400 naming slug', async (slug) => {
      const response = await stack.http.put('/api/projects', createBody({ slug }), { token: owner.token });
      expectError(response, 400, 'invalid_input');
      expect(response.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toContain('slug');
      expect(response.body.message).toMatch(/slug/);
    });

    it('accepts a slug that merely starts like a UUID', async () => {
      const slug = `0b5c1a5e-1234-${randomBytes(3).toString('hex')}`;
      const created = await stack.http.put('/api/projects', createBody({ slug }), { token: owner.token });
      expect(created.status, created.text).toBe(200);
      expect((await stack.http.get(`/${slug}/api`, { token: owner.token })).body.id).toBe(created.body.id);
    });

    it.each(['api', 'trpc', 'docs', 'API', 'Docs', 'auth', 'admin'])('rejects the reserved word %j with 400', async (slug) => {
      const response = await stack.http.put('/api/projects', createBody({ slug }), { token: owner.token });
      expectError(response, 400, 'invalid_input');
      expect(response.body.message).toMatch(/reserved/);
    });

    it('refuses a taken slug with 409, case-insensitively, for any user', async () => {
      const slug = uniqueSlug('taken');
      expect((await stack.http.put('/api/projects', createBody({ slug }), { token: owner.token })).status).toBe(200);
      expectError(await stack.http.put('/api/projects', createBody({ slug }), { token: owner.token }), 409, 'slug_taken');
      expectError(
        await stack.http.put('/api/projects', createBody({ slug: slug.toUpperCase() }), { token: other.token }),
        409,
        'slug_taken',
      );
    });

    it('stores slugs lower-case and finds the project by slug in any case, or by UUID', async () => {
      const slug = `Mixed-Case-${randomBytes(3).toString('hex')}`;
      const created = await stack.http.put('/api/projects', createBody({ slug }), { token: owner.token });
      const id: string = created.body.id;
      for (const path of [slug, slug.toLowerCase(), slug.toUpperCase(), id, id.toUpperCase()]) {
        const read = await stack.http.get(`/${path}/api`, { token: owner.token });
        expect(read.status, path).toBe(200);
        expect(read.body).toMatchObject({ id, slug: slug.toLowerCase() });
      }
      expectError(await stack.http.get('/00000000-0000-4000-8000-000000000000/api', { token: owner.token }), 404, 'not_found');
    });
  });
});

describe('GET /{project}/api', () => {
  it('shows owner, created and updated only to authenticated callers', async () => {
    const project = await createProject(stack, owner.token, { public: true });
    const anonymous = await stack.http.get(`/${project.slug}/api`);
    expect(anonymous.status).toBe(200);
    expect(Object.keys(anonymous.body).sort()).toEqual(['description', 'id', 'name', 'slug', 'visibility']);

    const signedIn = await stack.http.get(`/${project.slug}/api`, { token: other.token });
    expect(Object.keys(signedIn.body).sort()).toEqual(['created', 'description', 'id', 'name', 'owner', 'slug', 'updated', 'visibility']);
    expect(signedIn.body.owner).toBe(owner.id);
    for (const field of ['created', 'updated']) {
      expect(new Date(signedIn.body[field]).toISOString()).toBe(signedIn.body[field]);
    }
  });
});

describe('GET /api/projects', () => {
  it('lists public projects to everyone, and private ones to their owner only', async () => {
    const open = await createProject(stack, owner.token, { public: true });
    const closed = await createProject(stack, owner.token, { public: false });
    const slugs = async (as?: { token: string }) =>
      ((await stack.http.get('/api/projects?limit=200', as)).body as { slug: string }[]).map((p) => p.slug);
    expect(await slugs()).toContain(open.slug);
    expect(await slugs()).not.toContain(closed.slug);
    expect(await slugs({ token: other.token })).not.toContain(closed.slug);
    expect(await slugs({ token: owner.token })).toEqual(expect.arrayContaining([open.slug, closed.slug]));
  });

  it('omits owner and timestamps for anonymous callers', async () => {
    await createProject(stack, owner.token, { public: true });
    const anonymous = await stack.http.get('/api/projects');
    expect(anonymous.body.length).toBeGreaterThan(0);
    for (const project of anonymous.body) expect(project).not.toHaveProperty('owner');
    const signedIn = await stack.http.get('/api/projects', { token: other.token });
    for (const project of signedIn.body) expect(project).toHaveProperty('owner');
  });

  it('`my` lists only the caller’s own projects, private ones included; anonymous gets 401', async () => {
    const mine = await createProject(stack, other.token, { public: false });
    const theirsPublic = await createProject(stack, owner.token, { public: true });
    for (const query of ['my', 'my=true', 'my=1']) {
      const listed = await stack.http.get(`/api/projects?${query}&limit=200`, { token: other.token });
      expect(listed.status, query).toBe(200);
      const slugs = listed.body.map((p: { slug: string }) => p.slug);
      expect(slugs, query).toContain(mine.slug);
      expect(slugs, query).not.toContain(theirsPublic.slug);
      for (const project of listed.body) expect(project.owner).toBe(other.id);
    }
    const off = await stack.http.get('/api/projects?my=false&limit=200', { token: other.token });
    expect(off.body.map((p: { slug: string }) => p.slug)).toContain(theirsPublic.slug);
    for (const query of ['my', 'my=true', 'my=1']) {
      expectError(await stack.http.get(`/api/projects?${query}`), 401, 'unauthenticated');
    }
  });

  it('pages with limit and offset, in a stable order', async () => {
    const pager = await registerUser(stack);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await createProject(stack, pager.token)).slug);
    const all = await stack.http.get('/api/projects?my', { token: pager.token });
    expect(all.body.map((p: { slug: string }) => p.slug)).toEqual(created);
    const page = await stack.http.get('/api/projects?my&limit=2&offset=1', { token: pager.token });
    expect(page.body.map((p: { slug: string }) => p.slug)).toEqual(created.slice(1, 3));
    const last = await stack.http.get('/api/projects?my&limit=2&offset=4', { token: pager.token });
    expect(last.body.map((p: { slug: string }) => p.slug)).toEqual(created.slice(4));
    const beyond = await stack.http.get('/api/projects?my&offset=10', { token: pager.token });
    expect(beyond.body).toEqual([]);
  });

  it('pages what a narrowed key sees, not what its owner sees (the filter is in the query)', async () => {
    const pager = await registerUser(stack);
    const created: { id: string; slug: string }[] = [];
    for (let i = 0; i < 5; i++) created.push(await createProject(stack, pager.token));
    const [p0, p1, p2, p3] = created as [
      { id: string; slug: string },
      { id: string; slug: string },
      { id: string; slug: string },
      { id: string; slug: string },
    ];
    const byProjects = await createApiKey(stack, pager.token, { accessType: 'projects', projectIds: [p1.id, p3.slug] });
    const custom = await createApiKey(stack, pager.token, {
      accessType: 'custom',
      permissions: [`${p0.slug.toUpperCase()}.sessions.read`, `${p2.id}.pipelines.read`],
    });
    const page = async (apiKey: string, offset: number) =>
      ((await stack.http.get(`/api/projects?my&limit=1&offset=${offset}`, { apiKey })).body as { slug: string }[]).map((p) => p.slug);
    expect(await page(byProjects.secret, 0)).toEqual([p1.slug]);
    expect(await page(byProjects.secret, 1)).toEqual([p3.slug]);
    expect(await page(byProjects.secret, 2)).toEqual([]);
    expect(await page(custom.secret, 0)).toEqual([p0.slug]);
    expect(await page(custom.secret, 1)).toEqual([p2.slug]);
    expect(await page(custom.secret, 2)).toEqual([]);
    // Without `my` the key also sees public projects of others, never their private ones.
    const all = (await stack.http.get('/api/projects?limit=200', { apiKey: byProjects.secret })).body as {
      slug: string;
      visibility: string;
    }[];
    expect(all.map((p) => p.slug)).toEqual(expect.arrayContaining([p1.slug, p3.slug]));
    expect(all.map((p) => p.slug)).not.toContain(p0.slug);
    for (const project of all.filter((p) => ![p1.slug, p3.slug].includes(p.slug))) expect(project.visibility).toBe('public');
  });

  it('caps limit at 200 and needs it to be at least 1', async () => {
    expect((await stack.http.get('/api/projects?limit=200')).status).toBe(200);
    expectError(await stack.http.get('/api/projects?limit=201'), 400, 'invalid_input');
    expectError(await stack.http.get('/api/projects?limit=0'), 400, 'invalid_input');
  });
});

describe('PATCH /{project}/api', () => {
  it('answers the updated project', async () => {
    const project = await createProject(stack, owner.token);
    const before = await stack.http.get(`/${project.slug}/api`, { token: owner.token });
    const patched = await stack.http.patch(`/${project.slug}/api`, { name: 'Renamed', description: 'New words' }, { token: owner.token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ id: project.id, name: 'Renamed', description: 'New words', slug: project.slug, owner: owner.id });
    expect(patched.body.created).toBe(before.body.created);
    expect(Date.parse(patched.body.updated)).toBeGreaterThanOrEqual(Date.parse(before.body.updated));
    const read = await stack.http.get(`/${project.id}/api`, { token: owner.token });
    expect(read.body).toEqual(patched.body);
  });

  it('changes visibility with `public`', async () => {
    const project = await createProject(stack, owner.token);
    expect((await stack.http.get(`/${project.slug}/api`)).status).toBe(404);
    const opened = await stack.http.patch(`/${project.slug}/api`, { public: true }, { token: owner.token });
    expect(opened.body.visibility).toBe('public');
    expect((await stack.http.get(`/${project.slug}/api`)).status).toBe(200);
    const closed = await stack.http.patch(`/${project.slug}/api`, { public: false }, { token: owner.token });
    expect(closed.body.visibility).toBe('private');
    expect((await stack.http.get(`/${project.slug}/api`)).status).toBe(404);
  });

  it('moves the project to its new slug path', async () => {
    const project = await createProject(stack, owner.token);
    const next = uniqueSlug('moved');
    const patched = await stack.http.patch(`/${project.slug}/api`, { slug: next.toUpperCase() }, { token: owner.token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.slug).toBe(next);
    expectError(await stack.http.get(`/${project.slug}/api`, { token: owner.token }), 404, 'not_found');
    expect((await stack.http.get(`/${next}/api`, { token: owner.token })).body.id).toBe(project.id);
    // The old slug is free again.
    expect((await stack.http.put('/api/projects', createBody({ slug: project.slug }), { token: owner.token })).status).toBe(200);
  });

  it('keeps slug rules on update: 409 when taken, 400 when reserved or malformed, 200 when unchanged', async () => {
    const project = await createProject(stack, owner.token);
    const taken = await createProject(stack, other.token);
    expectError(
      await stack.http.patch(`/${project.slug}/api`, { slug: taken.slug.toUpperCase() }, { token: owner.token }),
      409,
      'slug_taken',
    );
    expectError(await stack.http.patch(`/${project.slug}/api`, { slug: 'docs' }, { token: owner.token }), 400, 'invalid_input');
    expectError(await stack.http.patch(`/${project.slug}/api`, { slug: 'no spaces' }, { token: owner.token }), 400, 'invalid_input');
    expect((await stack.http.patch(`/${project.slug}/api`, { slug: project.slug }, { token: owner.token })).status).toBe(200);
  });

  it('accepts an empty patch and changes nothing', async () => {
    const project = await createProject(stack, owner.token);
    const patched = await stack.http.patch(`/${project.slug}/api`, {}, { token: owner.token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ slug: project.slug, visibility: 'private', name: `Project ${project.slug}` });
  });
});

describe('DELETE /{project}/api', () => {
  async function keyProjectRows(projectId: string) {
    return stack.orm.em
      .fork()
      .execute<{ api_key_id: string }[]>('select api_key_id from api_key_projects where project_id = ?', [projectId]);
  }

  it('removes the project and cascades to the api-key allow lists; the key keeps its other projects', async () => {
    const doomed = await createProject(stack, owner.token);
    const kept = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [doomed.id, kept.slug] });
    expect(await keyProjectRows(doomed.id)).toEqual([{ api_key_id: key.id }]);

    const deleted = await stack.http.delete(`/${doomed.slug}/api`, { token: owner.token });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ status: 'ok' });

    expect(await keyProjectRows(doomed.id)).toEqual([]);
    expectError(await stack.http.get(`/${doomed.id}/api`, { token: owner.token }), 404, 'not_found');
    expectError(await stack.http.delete(`/${doomed.id}/api`, { token: owner.token }), 404, 'not_found');

    const listedKey = await stack.http.get(`/api/api-keys/${key.id}`, { token: owner.token });
    expect(listedKey.body.projectIds).toEqual([kept.id]);
    expect((await stack.http.get(`/${kept.slug}/api`, { apiKey: key.secret })).status).toBe(200);
    expect((await stack.http.patch(`/${kept.slug}/api`, { name: 'Still mine' }, { apiKey: key.secret })).status).toBe(200);
    expectError(await stack.http.get(`/${doomed.slug}/api`, { apiKey: key.secret }), 404, 'not_found');
    // The slug is free again.
    expect((await stack.http.put('/api/projects', createBody({ slug: doomed.slug }), { token: owner.token })).status).toBe(200);
  });

  it('cascades to every table that holds project data, including tables added later (catalog check)', async () => {
    const em = stack.orm.em.fork();
    // Each foreign key: its table and column, the table it points to, and its ON DELETE rule.
    const keys = await em.execute<{ table: string; column: string; target: string; rule: string }[]>(
      `select tc.table_name as "table", kcu.column_name as "column", ccu.table_name as target, rc.delete_rule as rule
         from information_schema.table_constraints tc
         join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name and kcu.table_schema = tc.table_schema
         join information_schema.constraint_column_usage ccu on ccu.constraint_name = tc.constraint_name and ccu.table_schema = tc.table_schema
         join information_schema.referential_constraints rc on rc.constraint_name = tc.constraint_name and rc.constraint_schema = tc.table_schema
        where tc.constraint_type = 'FOREIGN KEY' and tc.table_schema = current_schema()`,
    );
    const projectColumns = await em.execute<{ table: string }[]>(
      `select table_name as "table" from information_schema.columns where column_name = 'project_id' and table_schema = current_schema()`,
    );
    expect(projectColumns.length).toBeGreaterThan(5);
    // Every project_id column is a foreign key to projects that goes with the project, but the
    // account's usage: what the account paid for stays in its history, of no project any more…
    const outliving: Record<string, string> = { usage_records: 'SET NULL' };
    for (const { table } of projectColumns) {
      expect(
        keys.find((key) => key.table === table && key.column === 'project_id'),
        table,
      ).toMatchObject({
        target: 'projects',
        rule: outliving[table] ?? 'CASCADE',
      });
    }
    // …and nothing that points at project data can hold a project's delete back.
    const projectTables = new Set(['projects', ...projectColumns.map(({ table }) => table)]);
    for (const key of keys.filter(({ target }) => projectTables.has(target))) {
      expect(['CASCADE', 'SET NULL'], `${key.table}.${key.column} → ${key.target}`).toContain(key.rule);
    }
  });

  it('drops the project from every listing', async () => {
    const project = await createProject(stack, owner.token, { public: true });
    expect((await stack.http.delete(`/${project.id}/api`, { token: owner.token })).status).toBe(200);
    const listed = await stack.http.get('/api/projects?limit=200');
    expect(listed.body.map((p: { id: string }) => p.id)).not.toContain(project.id);
  });
});

describe('API key scope is checked on every request', () => {
  it('a permission taken from a custom key fails on the next request', async () => {
    const project = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.projects.write`] });
    expect((await stack.http.patch(`/${project.slug}/api`, { name: 'By key' }, { apiKey: key.secret })).status).toBe(200);
    const narrowed = await stack.http.patch(
      `/api/api-keys/${key.id}`,
      { permissions: [`${project.slug}.pipelines.read`] },
      { token: owner.token },
    );
    expect(narrowed.status, narrowed.text).toBe(200);
    expectError(await stack.http.patch(`/${project.slug}/api`, { name: 'Again' }, { apiKey: key.secret }), 403, 'forbidden');
    expect((await stack.http.get(`/${project.slug}/api`, { apiKey: key.secret })).status).toBe(200);
  });

  it('a project taken from a projects key disappears for it at once', async () => {
    const first = await createProject(stack, owner.token);
    const second = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [first.id, second.id] });
    expect((await stack.http.get(`/${first.slug}/api`, { apiKey: key.secret })).status).toBe(200);
    expect((await stack.http.patch(`/api/api-keys/${key.id}`, { projectIds: [second.id] }, { token: owner.token })).status).toBe(200);
    expectError(await stack.http.get(`/${first.slug}/api`, { apiKey: key.secret }), 404, 'not_found');
    const listed = await stack.http.get('/api/projects?my&limit=200', { apiKey: key.secret });
    const ids = listed.body.map((p: { id: string }) => p.id);
    expect(ids).toContain(second.id);
    expect(ids).not.toContain(first.id);
  });
});
