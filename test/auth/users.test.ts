import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let users: Awaited<ReturnType<typeof registerUser>>[];

beforeAll(async () => {
  // These files sign up dozens of accounts from one address; rate limits have their own tests.
  stack = await startTestStack({ RATE_LIMITS: 'off' });
  const request = stack.http.request.bind(stack.http);
  // Every response of this file is checked: user endpoints never expose a password or its hash.
  stack.http.request = (async (...args: Parameters<typeof request>) => {
    const response = await request(...args);
    for (const secret of ['passwordHash', 'password_hash', '$argon2', 'secretHash', PASSWORD]) {
      expect(response.text, `${args[0]} ${args[1]} leaks ${secret}`).not.toContain(secret);
    }
    return response;
  }) as typeof stack.http.request;
  users = [];
  // One after another, so that their creation order is the list order.
  for (let i = 0; i < 5; i++) users.push(await registerUser(stack, { verify: i !== 4 }));
});
afterAll(async () => {
  await stack?.close();
});

const publicKeys = ['firstName', 'id', 'lastName'];
const signedInKeys = ['created', 'email', 'firstName', 'id', 'lastName'];
/** A signed-in caller who may not see e-mail: an unverified account, a narrowed key. */
const withoutEmailKeys = ['created', 'firstName', 'id', 'lastName'];

describe('listing users', () => {
  it('an anonymous visitor sees only id and names', async () => {
    const response = await stack.http.get('/api/users');
    expect(response.status, response.text).toBe(200);
    expect(response.body.map((user: { id: string }) => user.id)).toEqual(users.map((user) => user.id));
    for (const user of response.body) expect(Object.keys(user).sort()).toEqual(publicKeys);
    expect(response.body[0]).toEqual({ id: users[0]?.id, firstName: 'Ada', lastName: 'Lovelace' });
  });

  it('a signed-in user also sees e-mail and creation time', async () => {
    const response = await stack.http.get('/api/users', { token: users[0]?.token });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toHaveLength(users.length);
    for (const user of response.body) {
      expect(Object.keys(user).sort()).toEqual(signedInKeys);
      expect(new Date(user.created).toISOString()).toBe(user.created);
    }
    expect(response.body.map((user: { email: string }) => user.email)).toEqual(users.map((user) => user.email));
  });

  it('an account that never verified its e-mail sees the users without their e-mail', async () => {
    const unverified = await stack.http.get('/api/users', { token: users[4]?.token });
    expect(unverified.status, unverified.text).toBe(200);
    expect(unverified.body).toHaveLength(users.length);
    for (const user of unverified.body) expect(Object.keys(user).sort()).toEqual(withoutEmailKeys);
    for (const user of users) expect(unverified.text).not.toContain(user.email);
    const one = await stack.http.get(`/api/users/${users[0]?.id}`, { token: users[4]?.token });
    expect(Object.keys(one.body).sort()).toEqual(withoutEmailKeys);
    // Nor through a full key of its own.
    const key = await createApiKey(stack, users[4]?.token as string, { accessType: 'full' });
    const viaKey = await stack.http.get('/api/users', { apiKey: key.secret });
    expect(viaKey.status, viaKey.text).toBe(200);
    for (const user of viaKey.body) expect(Object.keys(user).sort()).toEqual(withoutEmailKeys);
  });

  it('a full key of a verified account sees e-mail; a key narrowed to projects or grants does not', async () => {
    const owner = users[1] as (typeof users)[number];
    const project = await createProject(stack, owner.token);
    const full = await createApiKey(stack, owner.token, { accessType: 'full' });
    const viaFull = await stack.http.get('/api/users', { apiKey: full.secret });
    expect(viaFull.status, viaFull.text).toBe(200);
    expect(Object.keys(viaFull.body[0]).sort()).toEqual(signedInKeys);
    expect(viaFull.body.map((user: { email: string }) => user.email)).toEqual(users.map((user) => user.email));
    for (const body of [
      { accessType: 'projects' as const, projectIds: [project.id] },
      { accessType: 'custom' as const, permissions: [`${project.slug}.functions.read`] },
    ]) {
      const narrow = await createApiKey(stack, owner.token, body);
      const listed = await stack.http.get('/api/users', { apiKey: narrow.secret });
      expect(listed.status, listed.text).toBe(200);
      for (const user of listed.body) expect(Object.keys(user).sort()).toEqual(withoutEmailKeys);
      for (const user of users) expect(listed.text).not.toContain(user.email);
      const one = await stack.http.get(`/api/users/${users[0]?.id}`, { apiKey: narrow.secret });
      expect(one.body).toEqual({ id: users[0]?.id, firstName: 'Ada', lastName: 'Lovelace', created: expect.any(String) });
    }
  });

  it('a stale cookie reads as anonymous', async () => {
    const user = await registerUser(stack);
    users.push(user);
    await stack.http.get('/api/auth/logout', { token: user.token });
    const response = await stack.http.get('/api/users', { cookie: `token=${user.token}` });
    expect(response.status).toBe(200);
    for (const entry of response.body) expect(Object.keys(entry).sort()).toEqual(publicKeys);
  });

  it('a caller pages through users with limit and offset', async () => {
    const all = (await stack.http.get('/api/users?limit=200')).body as { id: string }[];
    const page = await stack.http.get('/api/users?limit=2&offset=1');
    expect(page.status, page.text).toBe(200);
    expect(page.body.map((user: { id: string }) => user.id)).toEqual(all.slice(1, 3).map((user) => user.id));
    const last = await stack.http.get(`/api/users?limit=2&offset=${all.length - 1}`);
    expect(last.body.map((user: { id: string }) => user.id)).toEqual([all.at(-1)?.id]);
    const beyond = await stack.http.get(`/api/users?offset=${all.length}`);
    expect(beyond.status).toBe(200);
    expect(beyond.body).toEqual([]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1000', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=abc', 'offset'],
  ])('a caller asking for %s gets 400 naming the parameter', async (query, name) => {
    const response = await stack.http.get(`/api/users?${query}`);
    expect(response.status, response.text).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code: 'invalid_input' });
    expect(response.body.message).toContain(name);
  });

  it('an unknown query parameter is refused with 400 naming it', async () => {
    const response = await stack.http.get('/api/users?sort=email');
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('sort');
  });
});

describe('one user', () => {
  it('an anonymous visitor sees only id and names', async () => {
    const user = users[0];
    const response = await stack.http.get(`/api/users/${user?.id}`);
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ id: user?.id, firstName: 'Ada', lastName: 'Lovelace' });
  });

  it('a signed-in user also sees e-mail and creation time', async () => {
    const [me, other] = users;
    const response = await stack.http.get(`/api/users/${other?.id}`, { token: me?.token });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({
      id: other?.id,
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: other?.email,
      created: expect.any(String),
    });
  });

  it('an id written in upper case finds the same user', async () => {
    const user = users[0];
    const response = await stack.http.get(`/api/users/${user?.id.toUpperCase()}`);
    expect(response.status, response.text).toBe(200);
    expect(response.body.id).toBe(user?.id);
  });

  it.each([
    ['an unknown UUID', randomUUID()],
    ['a malformed id', 'not-a-user'],
  ])('a lookup of %s answers 400 with a message naming the id', async (_, id) => {
    for (const as of [undefined, { token: users[0]?.token }]) {
      const response = await stack.http.get(`/api/users/${id}`, as);
      expect(response.status, response.text).toBe(400);
      expect(response.body).toMatchObject({ status: 'error', message: expect.stringContaining(id) });
    }
  });
});
