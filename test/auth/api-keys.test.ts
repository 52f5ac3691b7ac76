import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import type { Credentials } from '../support/http.ts';
import { tokenFromMail } from '../support/smtp.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let stranger: Awaited<ReturnType<typeof registerUser>>;
let alpha: { id: string; slug: string };
let beta: { id: string; slug: string };
let strangers: { id: string; slug: string };

/** Secrets handed out so far: after its creation answer, a secret must never come back out. */
const issuedSecrets = new Set<string>();

beforeAll(async () => {
  // These files sign up dozens of accounts from one address; rate limits have their own tests.
  stack = await startTestStack({ RATE_LIMITS: 'off' });
  const request = stack.http.request.bind(stack.http);
  stack.http.request = (async (...args: Parameters<typeof request>) => {
    const response = await request(...args);
    for (const secret of ['passwordHash', 'password_hash', 'secretHash', 'secret_hash', '$argon2', PASSWORD, ...issuedSecrets]) {
      expect(response.text, `${args[0]} ${args[1]} leaks ${secret}`).not.toContain(secret);
    }
    if (args[0] === 'PUT' && args[1] === '/api/api-keys' && typeof response.body?.secret === 'string')
      issuedSecrets.add(response.body.secret);
    return response;
  }) as typeof stack.http.request;
  owner = await registerUser(stack);
  stranger = await registerUser(stack);
  alpha = await createProject(stack, owner.token);
  beta = await createProject(stack, owner.token);
  strangers = await createProject(stack, stranger.token);
});
afterAll(async () => {
  await stack?.close();
});

const keyFields = ['accessType', 'created', 'id', 'keyPrefix', 'lastUsed', 'name', 'permissions', 'projectIds', 'updated'];

const readProject = (slug: string, as: Credentials) => stack.http.get(`/${slug}/api`, as);

describe('creating and reading keys', () => {
  it('a user who creates a key sees its secret once, then only its prefix', async () => {
    const created = await stack.http.put('/api/api-keys', { name: 'ci', accessType: 'full' }, { token: owner.token });
    expect(created.status, created.text).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual([...keyFields, 'secret'].sort());
    expect(created.body).toMatchObject({ name: 'ci', accessType: 'full', projectIds: [], permissions: [], lastUsed: null });
    const { id, secret, keyPrefix } = created.body;
    expect(secret.startsWith(`${keyPrefix}_`)).toBe(true);
    expect(secret.length).toBeGreaterThan(keyPrefix.length + 30);

    const one = await stack.http.get(`/api/api-keys/${id}`, { token: owner.token });
    expect(one.status, one.text).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(keyFields);
    expect(one.body).toMatchObject({ id, name: 'ci', keyPrefix });

    const list = await stack.http.get('/api/api-keys', { token: owner.token });
    expect(list.status, list.text).toBe(200);
    const listed = list.body.find((key: { id: string }) => key.id === id);
    expect(Object.keys(listed).sort()).toEqual(keyFields);
    for (const key of list.body) expect(key.secret).toBeUndefined();
  });

  it('a user lists only their own keys, in pages', async () => {
    const user = await registerUser(stack);
    const ids = [];
    for (const name of ['one', 'two', 'three']) ids.push((await createApiKey(stack, user.token, { name, accessType: 'full' })).id);
    const all = await stack.http.get('/api/api-keys', { token: user.token });
    expect(all.body.map((key: { id: string }) => key.id)).toEqual(ids);
    const page = await stack.http.get('/api/api-keys?limit=1&offset=1', { token: user.token });
    expect(page.body.map((key: { id: string }) => key.id)).toEqual([ids[1]]);
    expect((await stack.http.get('/api/api-keys?limit=0', { token: user.token })).status).toBe(400);
  });

  it('a projects key names its projects by id or slug and reads back their ids', async () => {
    const created = await stack.http.put(
      '/api/api-keys',
      { name: 'two projects', accessType: 'projects', projectIds: [alpha.slug, beta.id] },
      { token: owner.token },
    );
    expect(created.status, created.text).toBe(200);
    expect([...created.body.projectIds].sort()).toEqual([alpha.id, beta.id].sort());
    const read = await stack.http.get(`/api/api-keys/${created.body.id}`, { token: owner.token });
    expect([...read.body.projectIds].sort()).toEqual([alpha.id, beta.id].sort());
  });

  it('a custom key keeps its permission strings', async () => {
    const permissions = [`${alpha.slug}.pipelines.read`, `${alpha.slug}.pipelineRuns.execute.${randomUUID()}`];
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions });
    const read = await stack.http.get(`/api/api-keys/${key.id}`, { token: owner.token });
    expect(read.body).toMatchObject({ accessType: 'custom', permissions, projectIds: [] });
  });

  it('an anonymous caller cannot create or list keys', async () => {
    const created = await stack.http.put('/api/api-keys', { name: 'x', accessType: 'full' });
    expect(created.status).toBe(401);
    expect(created.body).toMatchObject({ status: 'error' });
    expect((await stack.http.get('/api/api-keys')).status).toBe(401);
  });
});

describe('signing in with a key', () => {
  it('a key works as x-api-key, as Authorization: ApiKey and as Authorization: Bearer', async () => {
    const key = await createApiKey(stack, owner.token, { name: 'headers', accessType: 'full' });
    for (const as of [{ apiKey: key.secret }, { authorization: `ApiKey ${key.secret}` }, { authorization: `Bearer ${key.secret}` }]) {
      const root = await stack.http.get('/api', as);
      expect(root.status, root.text).toBe(200);
      expect(root.body.subject).toEqual({ type: 'apiKey', userId: owner.id, email: owner.email, emailVerified: true, apiKeyId: key.id });
      const project = await readProject(alpha.slug, as);
      expect(project.status, project.text).toBe(200);
      const status = await stack.http.get('/api/auth', as);
      expect(status.body).toMatchObject({
        status: 'ok',
        apiKey: { id: key.id, name: 'headers', keyPrefix: key.keyPrefix, accessType: 'full' },
      });
    }
  });

  it('a key shows when it was last used, without counting as an update', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    const before = (await stack.http.get(`/api/api-keys/${key.id}`, { token: owner.token })).body;
    expect(before.lastUsed).toBeNull();
    const usedAt = Date.now();
    expect((await stack.http.get('/api', { apiKey: key.secret })).status).toBe(200);
    const after = (await stack.http.get(`/api/api-keys/${key.id}`, { token: owner.token })).body;
    expect(Math.abs(Date.parse(after.lastUsed) - usedAt)).toBeLessThan(5_000);
    expect(after.updated).toBe(before.updated);
  });

  it('a key prefix alone, or the prefix with a wrong secret, is refused with 401', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    const forged = `${key.keyPrefix}_${'A'.repeat(43)}`;
    for (const value of [key.keyPrefix, forged, `${key.secret}x`]) {
      for (const as of [{ apiKey: value }, { authorization: `ApiKey ${value}` }, { authorization: `Bearer ${value}` }]) {
        const response = await stack.http.get('/api', as);
        expect(response.status, `${JSON.stringify(as)}: ${response.text}`).toBe(401);
        expect(response.body).toMatchObject({ status: 'error', code: 'invalid_api_key' });
      }
    }
  });

  it('a key given in a header wins over a session cookie', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [alpha.id] });
    const response = await stack.http.get(`/${beta.slug}/api`, { apiKey: key.secret, cookie: `token=${owner.token}` });
    expect(response.status).toBe(404);
  });

  it('a projects key reaches only its projects, and never past what its owner may', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [alpha.id] });
    expect((await readProject(alpha.slug, { apiKey: key.secret })).status).toBe(200);
    expect((await readProject(beta.slug, { apiKey: key.secret })).status).toBe(404);
    expect((await readProject(strangers.slug, { apiKey: key.secret })).status).toBe(404);
    const created = await stack.http.put(
      '/api/projects',
      { name: 'by key', slug: `k-${randomUUID().slice(0, 8)}` },
      { apiKey: key.secret },
    );
    expect(created.status).toBe(403);
  });

  it('a custom key reads what its strings grant and cannot write', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${alpha.slug}.projects.read`] });
    expect((await readProject(alpha.slug, { apiKey: key.secret })).status).toBe(200);
    expect((await readProject(beta.slug, { apiKey: key.secret })).status).toBe(404);
    const write = await stack.http.patch(`/${alpha.slug}/api`, { description: 'changed by a read-only key' }, { apiKey: key.secret });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ status: 'error', code: 'forbidden' });
  });

  it("a custom key naming another user's project gets no access to it", async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${strangers.slug}.*`] });
    expect((await readProject(strangers.slug, { apiKey: key.secret })).status).toBe(404);
  });
});

describe('changing and revoking keys', () => {
  it('a user who renames a key sees the new name on the next request made with it', async () => {
    const key = await createApiKey(stack, owner.token, { name: 'before', accessType: 'full' });
    const renamed = await stack.http.patch(`/api/api-keys/${key.id}`, { name: 'after' }, { token: owner.token });
    expect(renamed.status, renamed.text).toBe(200);
    expect(Object.keys(renamed.body).sort()).toEqual(keyFields);
    expect(renamed.body).toMatchObject({ id: key.id, name: 'after', accessType: 'full', keyPrefix: key.keyPrefix });
    const status = await stack.http.get('/api/auth', { apiKey: key.secret });
    expect(status.body.apiKey).toMatchObject({ id: key.id, name: 'after' });
  });

  it('a user who re-scopes a key changes what it reaches on the very next request', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [alpha.id] });
    const as = { apiKey: key.secret };
    expect((await readProject(alpha.slug, as)).status).toBe(200);
    expect((await readProject(beta.slug, as)).status).toBe(404);

    const moved = await stack.http.patch(`/api/api-keys/${key.id}`, { projectIds: [beta.slug] }, { token: owner.token });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.projectIds).toEqual([beta.id]);
    expect((await readProject(alpha.slug, as)).status).toBe(404);
    expect((await readProject(beta.slug, as)).status).toBe(200);

    const custom = await stack.http.patch(
      `/api/api-keys/${key.id}`,
      { accessType: 'custom', permissions: [`${alpha.slug}.projects.read`] },
      { token: owner.token },
    );
    expect(custom.status, custom.text).toBe(200);
    expect(custom.body).toMatchObject({ accessType: 'custom', projectIds: [], permissions: [`${alpha.slug}.projects.read`] });
    expect((await readProject(alpha.slug, as)).status).toBe(200);
    expect((await readProject(beta.slug, as)).status).toBe(404);

    // Switching to full drops the old grants rather than keeping them around.
    const full = await stack.http.patch(`/api/api-keys/${key.id}`, { accessType: 'full' }, { token: owner.token });
    expect(full.status, full.text).toBe(200);
    expect(full.body).toMatchObject({ accessType: 'full', projectIds: [], permissions: [] });
    expect((await readProject(beta.slug, as)).status).toBe(200);
  });

  it('a user who revokes a key makes the next request with it fail with 401', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    expect((await readProject(alpha.slug, { apiKey: key.secret })).status).toBe(200);
    const revoked = await stack.http.delete(`/api/api-keys/${key.id}`, { token: owner.token });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toEqual({ status: 'ok' });
    for (const as of [{ apiKey: key.secret }, { authorization: `Bearer ${key.secret}` }]) {
      const refused = await readProject(alpha.slug, as);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ status: 'error', code: 'invalid_api_key' });
    }
    expect((await stack.http.get(`/api/api-keys/${key.id}`, { token: owner.token })).status).toBe(404);
    expect((await stack.http.delete(`/api/api-keys/${key.id}`, { token: owner.token })).status).toBe(404);
  });

  it("a user cannot read, change or revoke another user's key (404)", async () => {
    const key = await createApiKey(stack, stranger.token, { name: 'theirs', accessType: 'full' });
    const as = { token: owner.token };
    for (const response of [
      await stack.http.get(`/api/api-keys/${key.id}`, as),
      await stack.http.patch(`/api/api-keys/${key.id}`, { name: 'mine now' }, as),
      await stack.http.delete(`/api/api-keys/${key.id}`, as),
    ]) {
      expect(response.status, response.text).toBe(404);
      expect(response.body).toMatchObject({ status: 'error', code: 'not_found' });
    }
    expect((await stack.http.get('/api/api-keys', as)).body.some((k: { id: string }) => k.id === key.id)).toBe(false);
    const still = await stack.http.get('/api/auth', { apiKey: key.secret });
    expect(still.body.apiKey).toMatchObject({ id: key.id, name: 'theirs' });
  });

  it('the id in the path decides which key changes, whatever the body says', async () => {
    const first = await createApiKey(stack, owner.token, { name: 'first', accessType: 'full' });
    const second = await createApiKey(stack, owner.token, { name: 'second', accessType: 'full' });
    const response = await stack.http.patch(`/api/api-keys/${first.id}`, { id: second.id, name: 'renamed' }, { token: owner.token });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ id: first.id, name: 'renamed' });
    expect((await stack.http.get(`/api/api-keys/${second.id}`, { token: owner.token })).body.name).toBe('second');
  });

  it('an unknown or malformed key id answers 404', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      expect((await stack.http.get(`/api/api-keys/${id}`, { token: owner.token })).status).toBe(404);
      expect((await stack.http.patch(`/api/api-keys/${id}`, { name: 'x' }, { token: owner.token })).status).toBe(404);
    }
  });

  it('an API key cannot manage API keys (403)', async () => {
    const key = await createApiKey(stack, owner.token, { name: 'manager?', accessType: 'full' });
    const as = { apiKey: key.secret };
    for (const response of [
      await stack.http.put('/api/api-keys', { name: 'minted by a key', accessType: 'full' }, as),
      await stack.http.get('/api/api-keys', as),
      await stack.http.get(`/api/api-keys/${key.id}`, as),
      await stack.http.patch(`/api/api-keys/${key.id}`, { name: 'renamed by itself' }, as),
      await stack.http.delete(`/api/api-keys/${key.id}`, as),
    ]) {
      expect(response.status, response.text).toBe(403);
      expect(response.body).toMatchObject({ status: 'error', code: 'forbidden' });
    }
    const read = await stack.http.get(`/api/api-keys/${key.id}`, { token: owner.token });
    expect(read.body.name).toBe('manager?');
  });
});

describe('access type rules', () => {
  it.each([
    ['projects without projectIds', { accessType: 'projects' }, 'projectIds'],
    ['projects with an empty projectIds', { accessType: 'projects', projectIds: [] }, 'projectIds'],
    ['custom without permissions', { accessType: 'custom' }, 'permissions'],
    ['full with projectIds', { accessType: 'full', projectIds: ['PROJECT'] }, 'projectIds'],
    ['full with permissions', { accessType: 'full', permissions: ['PROJECT.pipelines.read'] }, 'permissions'],
    [
      'projects with permissions',
      { accessType: 'projects', projectIds: ['PROJECT'], permissions: ['PROJECT.pipelines.read'] },
      'permissions',
    ],
    ['custom with projectIds', { accessType: 'custom', projectIds: ['PROJECT'], permissions: ['PROJECT.pipelines.read'] }, 'projectIds'],
    ['an unknown access type', { accessType: 'admin' }, 'accessType'],
    ['an invalid permission string', { accessType: 'custom', permissions: ['PROJECT pipelines read'] }, 'permissions'],
    ['an empty permission string', { accessType: 'custom', permissions: ['PROJECT..read'] }, 'permissions'],
    ['an unknown field', { accessType: 'full', secret: 'mine' }, 'secret'],
  ])('a key with %s is refused with 400 naming the field', async (_, fields, field) => {
    const body = JSON.parse(JSON.stringify({ name: 'bad', ...fields }).replaceAll('PROJECT', alpha.slug));
    const response = await stack.http.put('/api/api-keys', body, { token: owner.token });
    expect(response.status, response.text).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', message: expect.stringContaining(field) });
  });

  it.each([
    ['an unknown project', () => randomUUID()],
    ['an unknown slug', () => 'no-such-project'],
    ["another user's project", () => strangers.slug],
  ])('a projects key naming %s is refused with 400', async (_, makeRef) => {
    const ref = makeRef();
    const response = await stack.http.put(
      '/api/api-keys',
      { name: 'bad', accessType: 'projects', projectIds: [ref] },
      { token: owner.token },
    );
    expect(response.status, response.text).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'unknown_project' });
    expect(response.body.message).toContain(ref);
  });

  it('a change that breaks the access type rules is refused and leaves the key as it was', async () => {
    const key = await createApiKey(stack, owner.token, { name: 'steady', accessType: 'projects', projectIds: [alpha.id] });
    const as = { token: owner.token };
    const attempts = [
      { accessType: 'custom' },
      { accessType: 'full', projectIds: [alpha.id] },
      { projectIds: [] },
      { permissions: [`${alpha.slug}.projects.read`] },
      { projectIds: [strangers.id], name: 'hijack' },
      { name: '' },
    ];
    for (const body of attempts) {
      const response = await stack.http.patch(`/api/api-keys/${key.id}`, body, as);
      expect(response.status, `${JSON.stringify(body)}: ${response.text}`).toBe(400);
      expect(response.body).toMatchObject({ status: 'error' });
    }
    const read = await stack.http.get(`/api/api-keys/${key.id}`, as);
    expect(read.body).toMatchObject({ name: 'steady', accessType: 'projects', projectIds: [alpha.id], permissions: [] });
  });
});

describe('an admin scoping a key to projects', () => {
  it('may name any project only once their e-mail address is verified', async () => {
    const admin = await registerUser(stack, { email: 'admin@example.test', verify: false });
    const body = { name: 'admin key', accessType: 'projects', projectIds: [strangers.id] };
    const refused = await stack.http.put('/api/api-keys', body, { token: admin.token });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.code).toBe('unknown_project');

    const mail = await stack.smtp.waitFor((m) => m.to.includes('admin@example.test') && /verify/i.test(m.subject));
    const verified = await stack.http.post('/api/auth/verify/submit', { token: tokenFromMail(mail) });
    expect(verified.status, verified.text).toBe(200);
    const allowed = await stack.http.put('/api/api-keys', body, { token: verified.body.token });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.body.projectIds).toEqual([strangers.id]);
  });
});

describe('secrets at rest', () => {
  it('an API key is stored as a hash: its secret is nowhere in its row', async () => {
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    const [row] = await stack.orm.em.fork().getConnection().execute('select * from api_keys where id = ?', [key.id]);
    expect(row).toBeDefined();
    const stored = JSON.stringify(row);
    expect(row?.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    const secretPart = key.secret.slice(key.keyPrefix.length);
    expect(secretPart.length).toBeGreaterThan(16);
    expect(stored).not.toContain(key.secret);
    expect(stored).not.toContain(secretPart);
  });

  it('a mailed one-time token is stored as a hash', async () => {
    const user = await registerUser(stack, { verify: false });
    const mail = await stack.smtp.waitFor((m) => m.to.includes(user.email) && /verify/i.test(m.subject));
    const token = tokenFromMail(mail);
    const rows = await stack.orm.em.fork().getConnection().execute('select * from one_time_tokens where user_id = ?', [user.id]);
    expect(rows.length).toBe(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows[0]?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    // The mail row keeps no copy either once it was sent.
    const mailRows = () => stack.orm.em.fork().getConnection().execute('select text, status from mails where "to" = ?', [user.email]);
    await expect.poll(mailRows, { timeout: 10_000 }).toEqual([{ text: null, status: 'sent' }]);
  });
});
