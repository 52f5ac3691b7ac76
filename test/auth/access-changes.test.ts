import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import { cuttableLink, throughLink } from '../support/cuttableLink.ts';
import type { Credentials, HttpClient } from '../support/http.ts';
import { startApiProcess } from '../support/processes.ts';
import { tokenFromMail } from '../support/smtp.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Two api replicas on one database: the test stack's app (`one`) and a second api process
 * (`other`, server/main/api.ts) whose database connections go through a link the last test cuts.
 * Each keeps keys, sessions and projects in memory between requests; a change made through one
 * must hold on the very next request to the other (spec: permissions are re-evaluated on every
 * project call, a revoked key fails on later requests). Every test first reads through both, so
 * both hold what the change is about.
 */

const link = cuttableLink({ host: '127.0.0.1', port: 5432 });
let stack: TestStack;
let other: Awaited<ReturnType<typeof startApiProcess>>;
let one: HttpClient;

beforeAll(async () => {
  await link.open();
  stack = await startTestStack();
  one = stack.http;
  other = await startApiProcess(stack, { databaseUrl: throughLink(stack.config.databaseUrl as string, link) });
}, 120_000);

afterAll(async () => {
  await other?.stop();
  await stack?.close();
  await link.cut();
});

async function readOnBoth(path: string, as: Credentials | undefined, status: number) {
  for (const api of [one, other.http]) {
    const answer = await api.get(path, as);
    expect(answer.status, `${api.baseUrl}${path}: ${answer.text}`).toBe(status);
  }
}

describe('a change made through one api process holds on the very next request to another', () => {
  it('a revoked key fails with 401', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    await readOnBoth(`/${project.slug}/api`, { apiKey: key.secret }, 200);

    expect((await one.delete(`/api/api-keys/${key.id}`, { token: owner.token })).status).toBe(200);
    const refused = await other.http.get(`/${project.slug}/api`, { apiKey: key.secret });
    expect(refused.status, refused.text).toBe(401);
    expect(refused.body).toMatchObject({ code: 'invalid_api_key' });
    expect((await one.get(`/${project.slug}/api`, { apiKey: key.secret })).status).toBe(401);
  });

  it('a kept key vouches only for its own secret: another with the same prefix fails with 401', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    // Both processes have checked the secret and keep the key with it.
    await readOnBoth(`/${project.slug}/api`, { apiKey: key.secret }, 200);
    const last = key.secret.at(-1) === 'A' ? 'B' : 'A';
    const guess = `${key.secret.slice(0, -1)}${last}`;
    for (const api of [one, other.http]) {
      const refused = await api.get(`/${project.slug}/api`, { apiKey: guess });
      expect(refused.status, refused.text).toBe(401);
      expect(refused.body).toMatchObject({ code: 'invalid_api_key' });
    }
    await readOnBoth(`/${project.slug}/api`, { apiKey: key.secret }, 200);
  });

  it('a key moved to other projects reaches only those', async () => {
    const owner = await registerUser(stack);
    const alpha = await createProject(stack, owner.token);
    const beta = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [alpha.id] });
    await readOnBoth(`/${alpha.slug}/api`, { apiKey: key.secret }, 200);
    await readOnBoth(`/${beta.slug}/api`, { apiKey: key.secret }, 404);

    const moved = await other.http.patch(`/api/api-keys/${key.id}`, { projectIds: [beta.id] }, { token: owner.token });
    expect(moved.status, moved.text).toBe(200);
    expect((await one.get(`/${alpha.slug}/api`, { apiKey: key.secret })).status).toBe(404);
    expect((await one.get(`/${beta.slug}/api`, { apiKey: key.secret })).status).toBe(200);
  });

  it("a custom key's new permission strings decide what it reaches", async () => {
    const owner = await registerUser(stack);
    const alpha = await createProject(stack, owner.token);
    const beta = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${alpha.slug}.pipelines.read`] });
    await readOnBoth(`/${alpha.slug}/api`, { apiKey: key.secret }, 200);
    await readOnBoth(`/${beta.slug}/api`, { apiKey: key.secret }, 404);

    const moved = await one.patch(`/api/api-keys/${key.id}`, { permissions: [`${beta.slug}.pipelines.read`] }, { token: owner.token });
    expect(moved.status, moved.text).toBe(200);
    expect((await other.http.get(`/${alpha.slug}/api`, { apiKey: key.secret })).status).toBe(404);
    expect((await other.http.get(`/${beta.slug}/api`, { apiKey: key.secret })).status).toBe(200);
  });

  it('a renamed project answers by its new slug and no longer by its old one', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    await readOnBoth(`/${project.slug}/api`, { apiKey: key.secret }, 200);

    const slug = `${project.slug}-renamed`;
    expect((await one.patch(`/${project.slug}/api`, { slug }, { token: owner.token })).status).toBe(200);
    expect((await other.http.get(`/${project.slug}/api`, { apiKey: key.secret })).status).toBe(404);
    const renamed = await other.http.get(`/${slug}/api`, { apiKey: key.secret });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ id: project.id, slug });
  });

  it('a deleted project answers 404, by slug and by id', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    await readOnBoth(`/${project.slug}/api`, { token: owner.token }, 200);
    await readOnBoth(`/${project.id}/api`, { token: owner.token }, 200);

    expect((await other.http.delete(`/${project.slug}/api`, { token: owner.token })).status).toBe(200);
    expect((await one.get(`/${project.slug}/api`, { token: owner.token })).status).toBe(404);
    expect((await one.get(`/${project.id}/api`, { token: owner.token })).status).toBe(404);
  });

  it('a project made private is hidden from anonymous readers', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token, { public: true });
    await readOnBoth(`/${project.slug}/api`, undefined, 200);

    expect((await one.patch(`/${project.slug}/api`, { public: false }, { token: owner.token })).status).toBe(200);
    expect((await other.http.get(`/${project.slug}/api`)).status).toBe(404);
  });

  it('a session signed out fails with 401', async () => {
    const owner = await registerUser(stack);
    await readOnBoth('/api/api-keys', { token: owner.token }, 200);

    expect((await one.get('/api/auth/logout', { token: owner.token })).status).toBe(200);
    const ended = await other.http.get('/api/api-keys', { token: owner.token });
    expect(ended.status, ended.text).toBe(401);
    expect(ended.body).toMatchObject({ code: 'session_ended' });
  });

  it('a session that reaches its end while kept is refused', async () => {
    const owner = await registerUser(stack);
    const sql = new pg.Client({ connectionString: stack.config.databaseUrl });
    await sql.connect();
    try {
      await sql.query(`update auth_sessions set expires_at = now() + interval '5 seconds' where user_id = $1`, [owner.id]);
    } finally {
      await sql.end();
    }
    await readOnBoth('/api/api-keys', { token: owner.token }, 200);
    // Nothing changes the row: each process sees the end on its own.
    for (const api of [one, other.http]) {
      await expect
        .poll(async () => (await api.get('/api/api-keys', { token: owner.token })).status, { timeout: 20_000, interval: 250 })
        .toBe(401);
    }
  });

  it('a password change ends the other sessions of the account, and keeps the one that made it', async () => {
    const owner = await registerUser(stack);
    const second = await one.post('/api/auth/login', { email: owner.email, password: PASSWORD });
    expect(second.status, second.text).toBe(200);
    await readOnBoth('/api/api-keys', { token: owner.token }, 200);
    await readOnBoth('/api/api-keys', { token: second.body.token }, 200);

    const changed = await other.http.post(
      '/api/auth/password',
      { currentPassword: PASSWORD, password: 'a new password 2', confirmPassword: 'a new password 2' },
      { token: second.body.token },
    );
    expect(changed.status, changed.text).toBe(200);
    expect((await one.get('/api/api-keys', { token: owner.token })).status).toBe(401);
    expect((await one.get('/api/api-keys', { token: second.body.token })).status).toBe(200);
  });

  it('an e-mail address verified through one process reads as verified on the other', async () => {
    const user = await registerUser(stack, { verify: false });
    for (const api of [one, other.http]) expect((await api.get('/api/auth', { token: user.token })).body.status).toBe('email_not_verified');

    // Submitted from elsewhere (the link opened in another browser): the session stays.
    const mail = await stack.smtp.waitFor((m) => m.to.includes(user.email) && /verify/i.test(m.subject));
    expect((await one.post('/api/auth/verify/submit', { token: tokenFromMail(mail) })).status).toBe(200);
    const status = await other.http.get('/api/auth', { token: user.token });
    expect(status.body.status, status.text).toBe('ok');
  });

  it('a change written straight into the database, not through the API, reaches both', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token, { public: true });
    await readOnBoth(`/${project.slug}/api`, undefined, 200);

    const sql = new pg.Client({ connectionString: stack.config.databaseUrl });
    await sql.connect();
    try {
      await sql.query(`update projects set visibility = 'private' where id = $1`, [project.id]);
    } finally {
      await sql.end();
    }
    // No api process made it, so none holds an answer for it: it is heard a moment after commit.
    for (const api of [one, other.http]) {
      await expect.poll(async () => (await api.get(`/${project.slug}/api`)).status, { timeout: 5_000, interval: 50 }).toBe(404);
    }
  });
});

describe('an api process that loses its database connections', () => {
  it('serves nothing it kept while they are gone, and what changed meanwhile holds once they are back', async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const key = await createApiKey(stack, owner.token, { accessType: 'full' });
    await readOnBoth(`/${project.slug}/api`, { apiKey: key.secret }, 200);

    await link.cut();
    try {
      // Revoked while the other process cannot hear of it.
      expect((await one.delete(`/api/api-keys/${key.id}`, { token: owner.token })).status).toBe(200);
      const away = await other.http.get(`/${project.slug}/api`, { apiKey: key.secret });
      expect(away.status, away.text).toBe(503);
    } finally {
      await link.open();
    }
    const statuses: number[] = [];
    await expect
      .poll(
        async () => {
          const answer = await other.http.get(`/${project.slug}/api`, { apiKey: key.secret });
          statuses.push(answer.status);
          return answer.status;
        },
        { timeout: 30_000, interval: 250 },
      )
      .toBe(401);
    expect(statuses.filter((status) => status !== 503 && status !== 401)).toEqual([]);
  });
});
