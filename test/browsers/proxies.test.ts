import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession, StoredProxy } from '../../db/entities/index.ts';
import { openProxyPassword } from '../../server/browsers/proxies/proxyPasswords.ts';
import { configProxyProvider, noDynamicProxies, parseProxyList, proxyProviderFor } from '../../server/browsers/proxies/proxyProviders.ts';
import { ConfigError, parseConfig } from '../../server/config.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import type { Credentials } from '../support/http.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const SECRET = 'stored-proxy-password-xyz';
const DYNAMIC_SECRET = 'dynamic-proxy-password-xyz';

/** What the `config` provider hands out in this file's stack. */
const proxyList = [
  {
    id: 'pool-1',
    name: 'Pool one',
    protocol: 'http',
    hostname: 'Pool1.Example.test',
    port: 8000,
    username: 'pool',
    password: DYNAMIC_SECRET,
  },
  { protocol: 'socks5', hostname: 'pool2.example.test', port: '1080', metadata: { region: 'eu' } },
];

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let stranger: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let as: Credentials;

beforeAll(async () => {
  stack = await startTestStack({ RATE_LIMITS: 'off', PROXY_LIST: JSON.stringify(proxyList) });
  // No answer of this file may carry a proxy password.
  const request = stack.http.request.bind(stack.http);
  stack.http.request = (async (...args: Parameters<typeof request>) => {
    const response = await request(...args);
    for (const secret of [SECRET, DYNAMIC_SECRET]) expect(response.text, `${args[0]} ${args[1]} leaks a password`).not.toContain(secret);
    return response;
  }) as typeof stack.http.request;
  owner = await registerUser(stack);
  stranger = await registerUser(stack);
  project = await createProject(stack, owner.token);
  as = { token: owner.token };
});
afterAll(async () => {
  await stack?.close();
});

const base = () => `/${project.slug}/api/proxies`;
const viewKeys = ['created', 'hasPassword', 'hostname', 'id', 'metadata', 'name', 'port', 'protocol', 'source', 'updated', 'username'];

async function createProxy(body: Record<string, unknown>, slug = project.slug) {
  const created = await stack.http.post(`/${slug}/api/proxies`, { hostname: 'p.test', port: 80, protocol: 'http', ...body }, as);
  expect(created.status, created.text).toBe(200);
  return created.body;
}

describe('stored proxies', () => {
  it('POST answers the created record, normalised, without the password', async () => {
    const created = await stack.http.post(
      base(),
      {
        name: 'Office',
        hostname: '  Proxy.Example.TEST ',
        port: '3128',
        protocol: ' HTTPS',
        username: 'alice',
        password: SECRET,
        metadata: { team: 'qa' },
      },
      as,
    );
    expect(created.status, created.text).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(viewKeys);
    expect(created.body).toMatchObject({
      name: 'Office',
      hostname: 'proxy.example.test',
      port: 3128,
      protocol: 'https',
      username: 'alice',
      hasPassword: true,
      metadata: { team: 'qa' },
      source: 'db',
    });
    const row = await stack.orm.em.fork().findOneOrFail(StoredProxy, { id: created.body.id });
    // Kept for the launch, sealed: the row does not hold it in clear.
    expect(row.password).not.toContain(SECRET);
    expect(openProxyPassword(stack.serviceSecret, row.password)).toBe(SECRET);
    expect(row.hostname).toBe('proxy.example.test');
  });

  it('empty username and password are stored as null; metadata defaults to {}', async () => {
    const created = await createProxy({ username: '', password: '', name: '' });
    expect(created).toMatchObject({ username: null, hasPassword: false, metadata: {}, name: null });
    const row = await stack.orm.em.fork().findOneOrFail(StoredProxy, { id: created.id });
    expect(row.username).toBeNull();
    expect(row.password).toBeNull();
  });

  it('GET one answers the record; a missing one is 404', async () => {
    const created = await createProxy({ name: 'one' });
    const one = await stack.http.get(`${base()}/${created.id}`, as);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual(created);
    const missing = await stack.http.get(`${base()}/${randomUUID()}`, as);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ status: 'error', code: 'not_found' });
    expect((await stack.http.get(`${base()}/nope`, as)).status).toBe(404);
  });

  it('PATCH changes any create field and keeps the rest', async () => {
    const created = await createProxy({ name: 'before', username: 'u', password: SECRET, metadata: { a: 1 } });
    const patched = await stack.http.patch(`${base()}/${created.id}`, { hostname: 'NEW.test', port: 9000, protocol: 'https' }, as);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'before',
      hostname: 'new.test',
      port: 9000,
      protocol: 'https',
      username: 'u',
      hasPassword: true,
    });
    const more = await stack.http.patch(`${base()}/${created.id}`, { name: 'after', username: '', password: null, metadata: { b: 2 } }, as);
    expect(more.body).toMatchObject({ name: 'after', username: null, hasPassword: false, metadata: { b: 2 } });
    expect((await stack.http.get(`${base()}/${created.id}`, as)).body).toEqual(more.body);
    expect((await stack.http.patch(`${base()}/${randomUUID()}`, { name: 'x' }, as)).status).toBe(404);
  });

  it('DELETE removes the record for good', async () => {
    const created = await createProxy({});
    const deleted = await stack.http.delete(`${base()}/${created.id}`, as);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ status: 'ok' });
    expect((await stack.http.get(`${base()}/${created.id}`, as)).status).toBe(404);
    expect((await stack.http.delete(`${base()}/${created.id}`, as)).status).toBe(404);
    expect(await stack.orm.em.fork().count(StoredProxy, { id: created.id })).toBe(0);
  });

  const rejected: [string, Record<string, unknown>, string][] = [
    ['an empty hostname', { hostname: '' }, 'hostname'],
    ['a blank hostname', { hostname: '   ' }, 'hostname'],
    ['a hostname with a path', { hostname: 'p.test/x' }, 'hostname'],
    ['an empty protocol', { protocol: '' }, 'protocol'],
    ['an unknown protocol', { protocol: 'gopher' }, 'protocol'],
    ['port 0', { port: 0 }, 'port'],
    ['a negative port', { port: -80 }, 'port'],
    ['a fractional port', { port: 80.5 }, 'port'],
    ['a port above 65535', { port: 70000 }, 'port'],
    ['a port of letters', { port: 'eighty' }, 'port'],
    ['a boolean port', { port: true }, 'port'],
    ['a numeric name', { name: 5 }, 'name'],
    ['a numeric username', { username: 5 }, 'username'],
    ['a boolean password', { password: true }, 'password'],
    ['metadata as a string', { metadata: 'x' }, 'metadata'],
    ['metadata as a list', { metadata: [1] }, 'metadata'],
    ['metadata as null', { metadata: null }, 'metadata'],
    ['an unknown field', { region: 'eu' }, 'region'],
    ['socks5 with a username', { protocol: 'socks5', username: 'u' }, 'username'],
    ['socks5 with a password', { protocol: 'socks5', password: SECRET }, 'password'],
  ];
  for (const [what, body, path] of rejected) {
    it(`POST and PATCH refuse ${what} with 400 naming ${path}`, async () => {
      const created = await stack.http.post(base(), { hostname: 'p.test', port: 80, protocol: 'http', ...body }, as);
      expect(created.status, created.text).toBe(400);
      expect(created.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toContain(path);
      const existing = await createProxy({});
      const patched = await stack.http.patch(`${base()}/${existing.id}`, body, as);
      expect(patched.status, patched.text).toBe(400);
    });
  }

  it('a socks5 proxy takes no credentials, since Chromium cannot use them: 400 naming the field', async () => {
    const socks = await createProxy({ protocol: 'socks5', port: 1080 });
    expect(socks).toMatchObject({ protocol: 'socks5', username: null, hasPassword: false });
    const withPassword = await stack.http.patch(`${base()}/${socks.id}`, { password: SECRET }, as);
    expect(withPassword.status, withPassword.text).toBe(400);
    expect(withPassword.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toEqual(['password']);
    expect(withPassword.body.message).toMatch(/socks5/);
    // Switching a proxy with credentials to socks5 names the switch.
    const http = await createProxy({ username: 'u', password: SECRET });
    const switched = await stack.http.patch(`${base()}/${http.id}`, { protocol: 'socks5' }, as);
    expect(switched.status, switched.text).toBe(400);
    expect(switched.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toEqual(['protocol']);
    // …and goes through once the credentials are cleared in the same request.
    const cleared = await stack.http.patch(`${base()}/${http.id}`, { protocol: 'socks5', username: null, password: '' }, as);
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body).toMatchObject({ protocol: 'socks5', username: null, hasPassword: false });
    expect(() =>
      parseProxyList(JSON.stringify([{ protocol: 'socks5', hostname: 'a.test', port: 1080, username: 'u', password: 'p' }])),
    ).toThrow(/PROXY_LIST: 0.username: Chromium cannot authenticate to a socks5 proxy/);
  });

  it('POST without a required field is 400', async () => {
    for (const field of ['hostname', 'port', 'protocol']) {
      const body: Record<string, unknown> = { hostname: 'p.test', port: 80, protocol: 'http' };
      delete body[field];
      const created = await stack.http.post(base(), body, as);
      expect(created.status, `${field}: ${created.text}`).toBe(400);
    }
  });
});

describe('listing stored and dynamic proxies', () => {
  it('source=db lists the stored ones only; without it the provider’s follow', async () => {
    const fresh = await createProject(stack, owner.token);
    const a = await createProxy({ name: 'a', password: SECRET }, fresh.slug);
    const b = await createProxy({ name: 'b' }, fresh.slug);

    const stored = await stack.http.get(`/${fresh.slug}/api/proxies?source=db`, as);
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body).toEqual([a, b]);

    const all = await stack.http.get(`/${fresh.slug}/api/proxies`, as);
    expect(all.status, all.text).toBe(200);
    expect(all.body).toEqual([
      a,
      b,
      {
        id: 'pool-1',
        name: 'Pool one',
        hostname: 'pool1.example.test',
        port: 8000,
        protocol: 'http',
        username: 'pool',
        hasPassword: true,
        metadata: {},
        source: 'dynamic',
      },
      {
        name: null,
        hostname: 'pool2.example.test',
        port: 1080,
        protocol: 'socks5',
        username: null,
        hasPassword: false,
        metadata: { region: 'eu' },
        source: 'dynamic',
      },
    ]);
    const page = await stack.http.get(`/${fresh.slug}/api/proxies?limit=2&offset=1`, as);
    expect(page.body.map((proxy: { hostname: string }) => proxy.hostname)).toEqual(['p.test', 'pool1.example.test']);
    expect((await stack.http.get(`/${fresh.slug}/api/proxies?source=elsewhere`, as)).status).toBe(400);
    expect((await stack.http.get(`/${fresh.slug}/api/proxies/pool-1`, as)).body).toMatchObject({ id: 'pool-1', source: 'dynamic' });
  });

  it('a session can name a dynamic proxy by id; its credentials are copied for the launch', async () => {
    const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'via pool', proxyId: 'pool-1' }, as);
    expect(created.status, created.text).toBe(200);
    const one = await stack.http.get(`/${project.slug}/api/sessions/${created.body.id}`, as);
    expect(one.body).toMatchObject({
      proxyId: null,
      proxy: { protocol: 'http', hostname: 'pool1.example.test', port: 8000, username: 'pool', hasPassword: true },
    });
    const row = await stack.orm.em.fork().findOneOrFail(BrowserSession, { id: created.body.id });
    expect(row.proxy?.password).not.toContain(DYNAMIC_SECRET);
    expect(openProxyPassword(stack.serviceSecret, row.proxy?.password)).toBe(DYNAMIC_SECRET);
  });

  it('the config provider validates PROXY_LIST and scopes entries to projects', async () => {
    expect(() => parseProxyList('not json')).toThrow(ConfigError);
    expect(() => parseProxyList('{}')).toThrow(ConfigError);
    expect(() => parseProxyList(JSON.stringify([{ protocol: 'http', hostname: '', port: 80 }]))).toThrow(/PROXY_LIST: 0.hostname/);
    expect(() => parseProxyList(JSON.stringify([{ protocol: 'http', hostname: 'a.test', port: 0 }]))).toThrow(/PROXY_LIST: 0.port/);
    expect(() =>
      parseProxyList(
        JSON.stringify([
          { id: 'x', protocol: 'http', hostname: 'a.test', port: 1 },
          { id: 'x', protocol: 'http', hostname: 'b.test', port: 1 },
        ]),
      ),
    ).toThrow(/unique/);
    const only = randomUUID();
    const provider = configProxyProvider(
      JSON.stringify([
        { protocol: 'http', hostname: 'everyone.test', port: 1 },
        { protocol: 'http', hostname: 'scoped.test', port: 1, projects: [only] },
      ]),
    );
    const names = async (projectId: string) =>
      (await provider.listDynamicProxies({ userId: null, projectId })).map((proxy) => proxy.hostname);
    expect(await names(only)).toEqual(['everyone.test', 'scoped.test']);
    expect(await names(randomUUID())).toEqual(['everyone.test']);
    expect(proxyProviderFor(parseConfig({ NODE_ENV: 'test' }))).toBe(noDynamicProxies);
    expect(await noDynamicProxies.listDynamicProxies({ userId: null, projectId: only })).toEqual([]);
  });
});

describe('permissions', () => {
  it('creating needs proxies.write; reading needs proxies.read', async () => {
    const stored = await createProxy({ name: 'guarded' });
    const reader = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.proxies.read`] });
    const byReader = { apiKey: reader.secret };
    expect((await stack.http.post(base(), { hostname: 'p.test', port: 80, protocol: 'http' }, byReader)).status).toBe(403);
    expect((await stack.http.patch(`${base()}/${stored.id}`, { name: 'x' }, byReader)).status).toBe(403);
    expect((await stack.http.delete(`${base()}/${stored.id}`, byReader)).status).toBe(403);
    expect((await stack.http.get(`${base()}/${stored.id}`, byReader)).status).toBe(200);
    expect((await stack.http.get(base(), byReader)).body.map((p: { id?: string }) => p.id)).toContain(stored.id);

    const writer = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.proxies.write`] });
    const byWriter = { apiKey: writer.secret };
    expect((await stack.http.post(base(), { hostname: 'w.test', port: 80, protocol: 'http' }, byWriter)).status).toBe(200);
    expect((await stack.http.get(`${base()}/${stored.id}`, byWriter)).status).toBe(403);
    // Without any read grant the list is empty: neither stored nor dynamic proxies show.
    const listed = await stack.http.get(base(), byWriter);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body).toEqual([]);
  });

  it('a grant for one proxy id shows that proxy only, and no dynamic ones', async () => {
    const mine = await createProxy({ name: 'granted' });
    const other = await createProxy({ name: 'not granted' });
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.proxies.read.${mine.id}`] });
    const list = await stack.http.get(base(), { apiKey: key.secret });
    expect(list.body.map((p: { id?: string }) => p.id)).toEqual([mine.id]);
    expect((await stack.http.get(`${base()}/${mine.id}`, { apiKey: key.secret })).status).toBe(200);
    expect((await stack.http.get(`${base()}/${other.id}`, { apiKey: key.secret })).status).toBe(403);
    // No dynamic proxy is visible with a per-id grant, so one that is not there is not found.
    const missing = await stack.http.get(`${base()}/pool-1`, { apiKey: key.secret });
    expect(missing.status, missing.text).toBe(404);
    expect(missing.body).toMatchObject({ status: 'error', code: 'not_found' });
    expect((await stack.http.get(`${base()}/${randomUUID()}`, { apiKey: key.secret })).status).toBe(403);
  });

  it('other users and anonymous callers get 404', async () => {
    const stored = await createProxy({});
    for (const credentials of [{ token: stranger.token }, {}]) {
      expect((await stack.http.get(base(), credentials)).status).toBe(404);
      expect((await stack.http.post(base(), { hostname: 'p.test', port: 80, protocol: 'http' }, credentials)).status).toBe(404);
      expect((await stack.http.get(`${base()}/${stored.id}`, credentials)).status).toBe(404);
      expect((await stack.http.patch(`${base()}/${stored.id}`, { name: 'x' }, credentials)).status).toBe(404);
      expect((await stack.http.delete(`${base()}/${stored.id}`, credentials)).status).toBe(404);
    }
  });

  it('a session may not name a stored proxy the caller cannot read', async () => {
    const stored = await createProxy({});
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.sessions.write`] });
    const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'x', proxyId: stored.id }, { apiKey: key.secret });
    expect(created.status, created.text).toBe(403);
  });

  it('the OpenAPI document lists the proxy paths', async () => {
    const doc = await stack.http.get('/api/openapi.json');
    expect(Object.keys(doc.body.paths['/{project}/api/proxies']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.body.paths['/{project}/api/proxies/{proxyId}']).sort()).toEqual(['delete', 'get', 'patch']);
  });
});
