import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession, Project, SessionResource, StoredProxy } from '../../db/entities/index.ts';
import { buildApp } from '../../server/app.ts';
import { JwtSigner } from '../../server/auth/jwt.ts';
import { parseLaunchArgs } from '../../server/browsers/launch/launchSettings.ts';
import { openProxyPassword } from '../../server/browsers/proxies/proxyPasswords.ts';
import { ResourceTokens } from '../../server/browsers/tokens/resourceTokens.ts';
import { BadRequest } from '../../server/errors.ts';
import { createLogger } from '../../server/logger.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import type { Credentials } from '../support/http.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const PROXY_SECRET = 'pr0xy-s3cret-never-shown';

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let stranger: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let as: Credentials;

beforeAll(async () => {
  stack = await startTestStack({ RATE_LIMITS: 'off' });
  // No answer of this file may carry a proxy password.
  const request = stack.http.request.bind(stack.http);
  stack.http.request = (async (...args: Parameters<typeof request>) => {
    const response = await request(...args);
    expect(response.text, `${args[0]} ${args[1]} leaks a proxy password`).not.toContain(PROXY_SECRET);
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

const base = () => `/${project.slug}/api/sessions`;

async function createSession(body: Record<string, unknown>, slug = project.slug, credentials: Credentials = as) {
  const created = await stack.http.put(`/${slug}/api/sessions`, { name: `s-${randomUUID().slice(0, 8)}`, ...body }, credentials);
  expect(created.status, created.text).toBe(200);
  expect(Object.keys(created.body)).toEqual(['id']);
  return created.body.id as string;
}

const cookie = {
  name: 'sid',
  value: 'abc123',
  domain: 'Shop.Example.test',
  path: '/',
  expires: -1,
  httpOnly: true,
  secure: true,
  sameSite: 'Lax',
};

describe('the default session', () => {
  it('a new project comes with "Default session"', async () => {
    const fresh = await createProject(stack, owner.token);
    const list = await stack.http.get(`/${fresh.slug}/api/sessions`, as);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({
      name: 'Default session',
      description: '',
      image: 'chromium',
      args: '',
      screen: { width: 1280, height: 720 },
      status: 'idle',
      proxy: null,
      proxyId: null,
      manager: { runningResources: 0, lastStarted: null },
    });
    const one = await stack.http.get(`/${fresh.slug}/api/sessions/${list.body[0].id}`, as);
    expect(one.body).toMatchObject({ cookies: [], resources: [] });
  });

  /** An app on the stack's database whose warnings are kept; `hooks` run after the Default session. */
  async function appKeepingWarnings(hooks: ((projectId: string) => Promise<void>)[] = []) {
    // The warnings as the log writes them (an error as its serialised fields, `message` among them).
    const warnings: Record<string, unknown>[] = [];
    const log = createLogger({ logLevel: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const secret = stack.config.jwtSecret as string;
    const app = await buildApp({
      config: stack.config,
      orm: stack.orm,
      jwt: new JwtSigner(secret),
      serviceSecret: secret,
      resourceTokens: new ResourceTokens(secret),
      temporal: stack.temporal,
      log,
      onProjectCreated: hooks,
    });
    const createProjectThrough = async (name: string) => {
      const created = await app.inject({
        method: 'PUT',
        url: '/api/projects',
        headers: { authorization: `Bearer ${owner.token}` },
        payload: { name, slug: `${name}-${randomUUID().slice(0, 8)}` },
      });
      expect(created.statusCode, created.body).toBe(200);
      return created.json().id as string;
    };
    return { app, warnings, createProjectThrough };
  }

  it('a failing project-created hook is logged and loses no project', async () => {
    const { app, warnings, createProjectThrough } = await appKeepingWarnings([
      async () => {
        throw new Error('hook broke');
      },
    ]);
    try {
      const id = await createProjectThrough('hooked');
      const em = stack.orm.em.fork();
      expect(await em.count(Project, { id })).toBe(1);
      expect(await em.count(BrowserSession, { project: id, name: 'Default session' })).toBe(1);
      expect(warnings).toContainEqual(expect.objectContaining({ projectId: id }));
    } finally {
      await app.close();
    }
  });

  it('a Default session the database refuses is logged and loses no project', async () => {
    // PostgreSQL itself refuses the row (for new rows only: NOT VALID), so provisioning fails as
    // it would on a real database error.
    const connection = stack.orm.em.getConnection();
    await connection.execute(
      `alter table browser_sessions add constraint test_no_default_session check (name <> 'Default session') not valid`,
    );
    const { app, warnings, createProjectThrough } = await appKeepingWarnings();
    try {
      const id = await createProjectThrough('undefaulted');
      const em = stack.orm.em.fork();
      expect(await em.count(Project, { id })).toBe(1);
      expect(await em.count(BrowserSession, { project: id })).toBe(0);
      const warning = warnings.find((entry) => entry.projectId === id);
      expect(String((warning?.err as Error | undefined)?.message)).toContain('test_no_default_session');
      // The project works: sessions can be created in it.
      const listed = await app.inject({ method: 'GET', url: `/${id}/api/sessions`, headers: { authorization: `Bearer ${owner.token}` } });
      expect(listed.statusCode, listed.body).toBe(200);
      expect(listed.json()).toEqual([]);
    } finally {
      await app.close();
      await connection.execute('alter table browser_sessions drop constraint test_no_default_session');
    }
  });
});

describe('creating, reading, changing and deleting sessions', () => {
  it('a session keeps every field, with the proxy normalised and its password hidden', async () => {
    const id = await createSession({
      name: 'Shop',
      description: 'logged in',
      screen: { width: 1920, height: 1080 },
      args: '--lang=de-DE --user-agent="Mozilla/5.0 (X11; Linux)"',
      image: 'chromium',
      cookies: [cookie, { name: 'pref', value: 'dark', url: 'https://shop.example.test/account' }],
      proxy: { protocol: 'HTTP', hostname: '  Proxy.Example.TEST ', port: '8080', username: '', password: PROXY_SECRET },
      persist: true,
    });
    const one = await stack.http.get(`${base()}/${id}`, as);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual({
      id,
      name: 'Shop',
      description: 'logged in',
      image: 'chromium',
      args: '--lang=de-DE --user-agent="Mozilla/5.0 (X11; Linux)"',
      screen: { width: 1920, height: 1080 },
      status: 'idle',
      proxy: { protocol: 'http', hostname: 'proxy.example.test', port: 8080, username: null, hasPassword: true },
      proxyId: null,
      persist: true,
      locale: 'en-US',
      timezone: 'UTC',
      fingerprint: 'desktop',
      manager: { runningResources: 0, lastStarted: null },
      record: false,
      created: expect.any(String),
      updated: expect.any(String),
      // A domain without a path gets `/`; domains are stored lower-case.
      cookies: [
        { ...cookie, domain: 'shop.example.test' },
        { name: 'pref', value: 'dark', url: 'https://shop.example.test/account' },
      ],
      resources: [],
    });
    // The password is kept for the launch, sealed: the row does not hold it in clear.
    const stored = await stack.orm.em.fork().findOneOrFail(BrowserSession, { id });
    expect(stored.proxy).toEqual({
      protocol: 'http',
      hostname: 'proxy.example.test',
      port: 8080,
      username: null,
      password: expect.any(String),
    });
    expect(stored.proxy?.password).not.toContain(PROXY_SECRET);
    expect(openProxyPassword(stack.serviceSecret, stored.proxy?.password)).toBe(PROXY_SECRET);
  });

  it('fields left out get defaults', async () => {
    const id = await createSession({ name: 'Bare' });
    const one = await stack.http.get(`${base()}/${id}`, as);
    expect(one.body).toMatchObject({
      name: 'Bare',
      description: '',
      image: 'chromium',
      args: '',
      screen: { width: 1280, height: 720 },
      cookies: [],
      persist: false,
    });
  });

  it('PATCH changes the given fields only, and proxy null removes the proxy', async () => {
    const id = await createSession({
      name: 'Before',
      description: 'kept',
      proxy: { protocol: 'https', hostname: 'secure.test', port: 1080, username: 'u', password: 'p' },
    });
    const patched = await stack.http.patch(
      `${base()}/${id}`,
      {
        name: 'After',
        screen: { width: 800, height: 600 },
        cookies: [{ name: 'a', value: '1', domain: '.example.test' }],
        args: '--mute-audio',
      },
      as,
    );
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'After',
      description: 'kept',
      screen: { width: 800, height: 600 },
      args: '--mute-audio',
      cookies: [{ name: 'a', value: '1', domain: '.example.test', path: '/' }],
      proxy: { protocol: 'https', hostname: 'secure.test', port: 1080, username: 'u', hasPassword: true },
    });
    const cleared = await stack.http.patch(`${base()}/${id}`, { proxy: null, cookies: [] }, as);
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body).toMatchObject({ name: 'After', proxy: null, cookies: [] });
    const emptyPatch = await stack.http.patch(`${base()}/${id}`, {}, as);
    expect(emptyPatch.status, emptyPatch.text).toBe(200);
  });

  it('cookies in the shape capture answers (Storage.getCookies) are accepted and read back', async () => {
    // Verbatim from Chromium 156's Storage.getCookies: a session cookie, a persistent one, and a
    // partitioned (CHIPS) one.
    const captured = [
      {
        name: 'b',
        value: '2',
        domain: '127.0.0.1',
        path: '/x',
        expires: -1,
        size: 2,
        httpOnly: true,
        secure: false,
        session: true,
        priority: 'Medium',
        sourceScheme: 'NonSecure',
        sourcePort: 44047,
      },
      {
        name: 'a',
        value: '1',
        domain: 'localhost',
        path: '/',
        expires: 1795378456.975308,
        size: 2,
        httpOnly: false,
        secure: false,
        session: false,
        sameSite: 'Lax',
        priority: 'High',
        sourceScheme: 'NonSecure',
        sourcePort: 44047,
      },
      {
        name: 'z',
        value: '1',
        domain: 'x.test',
        path: '/',
        expires: -1,
        size: 2,
        httpOnly: false,
        secure: true,
        session: true,
        priority: 'Low',
        sourceScheme: 'Secure',
        sourcePort: 443,
        partitionKey: { topLevelSite: 'https://x.test', hasCrossSiteAncestor: false },
      },
    ];
    const id = await createSession({});
    const patched = await stack.http.patch(`${base()}/${id}`, { cookies: captured }, as);
    expect(patched.status, patched.text).toBe(200);
    // The read-only fields are dropped; every field a cookie can be set with is kept.
    const expected = captured.map(({ size: _size, session: _session, ...settable }) => settable);
    expect(patched.body.cookies).toEqual(expected);
    expect((await stack.http.get(`${base()}/${id}`, as)).body.cookies).toEqual(expected);
    const stored = await stack.orm.em.fork().findOneOrFail(BrowserSession, { id });
    expect(stored.cookies).toEqual(expected);
    // An older capture's sameParty (gone from Chromium) is taken and dropped too.
    const older = await stack.http.patch(`${base()}/${id}`, { cookies: [{ ...captured[0], sameParty: false }] }, as);
    expect(older.status, older.text).toBe(200);
    expect(older.body.cookies).toEqual([expected[0]]);
  });

  it('DELETE removes the session; after that it is 404', async () => {
    const id = await createSession({});
    const deleted = await stack.http.delete(`${base()}/${id}`, as);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ status: 'ok' });
    expect((await stack.http.get(`${base()}/${id}`, as)).status).toBe(404);
    expect((await stack.http.delete(`${base()}/${id}`, as)).status).toBe(404);
    expect((await stack.http.patch(`${base()}/${id}`, { name: 'x' }, as)).status).toBe(404);
  });

  it('unknown and malformed ids are 404', async () => {
    expect((await stack.http.get(`${base()}/${randomUUID()}`, as)).status).toBe(404);
    expect((await stack.http.get(`${base()}/not-a-uuid`, as)).status).toBe(404);
  });

  it('lists page with limit and offset, in creation order', async () => {
    const fresh = await createProject(stack, owner.token);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await createSession({ name: `n${i}` }, fresh.slug));
    const all = await stack.http.get(`/${fresh.slug}/api/sessions`, as);
    expect(all.body.map((s: { name: string }) => s.name)).toEqual(['Default session', 'n0', 'n1', 'n2']);
    for (const item of all.body) expect(item.cookies).toBeUndefined();
    const page = await stack.http.get(`/${fresh.slug}/api/sessions?limit=2&offset=1`, as);
    expect(page.body.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, 2));
    expect((await stack.http.get(`/${fresh.slug}/api/sessions?limit=201`, as)).status).toBe(400);
    expect((await stack.http.get(`/${fresh.slug}/api/sessions?offset=-1`, as)).status).toBe(400);
  });
});

describe('validation', () => {
  const rejected: [string, Record<string, unknown>, string][] = [
    ['screen too small', { screen: { width: 100, height: 720 } }, 'screen.width'],
    ['screen too large', { screen: { width: 1280, height: 5000 } }, 'screen.height'],
    ['screen not whole', { screen: { width: 1280.5, height: 720 } }, 'screen.width'],
    ['screen as strings', { screen: { width: '1280', height: '720' } }, 'screen.width'],
    ['screen missing height', { screen: { width: 1280 } }, 'screen.height'],
    ['cookie without url or domain', { cookies: [{ name: 'a', value: 'b' }] }, 'cookies.0.domain'],
    ['cookie with url and domain', { cookies: [{ name: 'a', value: 'b', url: 'https://a.test/', domain: 'a.test' }] }, 'cookies.0.url'],
    ['cookie with url and path', { cookies: [{ name: 'a', value: 'b', url: 'https://a.test/', path: '/' }] }, 'cookies.0.path'],
    ['cookie with a non-http url', { cookies: [{ name: 'a', value: 'b', url: 'file:///etc/passwd' }] }, 'cookies.0.url'],
    ['cookie with bad expires', { cookies: [{ ...cookie, expires: -5 }] }, 'cookies.0.expires'],
    ['cookie expiring after year 9999', { cookies: [{ ...cookie, expires: 1e12 }] }, 'cookies.0.expires'],
    [
      'cookie sameSite None without secure',
      { cookies: [{ name: 'a', value: 'b', domain: 'a.test', sameSite: 'None' }] },
      'cookies.0.secure',
    ],
    ['cookie with an unknown sameSite', { cookies: [{ ...cookie, sameSite: 'lax' }] }, 'cookies.0.sameSite'],
    ['cookie with an unknown field', { cookies: [{ ...cookie, colour: 'red' }] }, 'cookies.0.colour'],
    ['cookie with an unknown priority', { cookies: [{ ...cookie, priority: 'Urgent' }] }, 'cookies.0.priority'],
    ['cookie with an unknown sourceScheme', { cookies: [{ ...cookie, sourceScheme: 'Https' }] }, 'cookies.0.sourceScheme'],
    ['cookie with sourcePort 0', { cookies: [{ ...cookie, sourcePort: 0 }] }, 'cookies.0.sourcePort'],
    ['cookie with sourcePort 65536', { cookies: [{ ...cookie, sourcePort: 65536 }] }, 'cookies.0.sourcePort'],
    ['cookie with a fractional sourcePort', { cookies: [{ ...cookie, sourcePort: 80.5 }] }, 'cookies.0.sourcePort'],
    // Chromium refuses these at launch ("Invalid cookie fields"), so they are refused when saved.
    [
      'cookie with a partitionKey as a string',
      { cookies: [{ ...cookie, partitionKey: 'https://example.test' }] },
      'cookies.0.partitionKey',
    ],
    [
      'cookie with a partitionKey that is not a site',
      { cookies: [{ ...cookie, partitionKey: { topLevelSite: 'example', hasCrossSiteAncestor: false } }] },
      'cookies.0.partitionKey.topLevelSite',
    ],
    [
      'cookie with a partitionKey site with a path',
      { cookies: [{ ...cookie, partitionKey: { topLevelSite: 'https://example.test/a', hasCrossSiteAncestor: false } }] },
      'cookies.0.partitionKey.topLevelSite',
    ],
    [
      'cookie with a partitionKey without hasCrossSiteAncestor',
      { cookies: [{ ...cookie, partitionKey: { topLevelSite: 'https://example.test' } }] },
      'cookies.0.partitionKey.hasCrossSiteAncestor',
    ],
    [
      'partitioned cookie without secure',
      { cookies: [{ ...cookie, secure: false, partitionKey: { topLevelSite: 'https://example.test', hasCrossSiteAncestor: false } }] },
      'cookies.0.secure',
    ],
    ['cookie of an opaque partition', { cookies: [{ ...cookie, partitionKeyOpaque: true }] }, 'cookies.0.partitionKeyOpaque'],
    ['__Secure- cookie without secure', { cookies: [{ ...cookie, name: '__Secure-id', secure: false }] }, 'cookies.0.secure'],
    ['__host- cookie over http', { cookies: [{ name: '__host-id', value: '1', url: 'http://a.test/' }] }, 'cookies.0.secure'],
    ['__Host- cookie with a path', { cookies: [{ ...cookie, name: '__Host-id', path: '/a' }] }, 'cookies.0.path'],
    ['cookie with size as a string', { cookies: [{ ...cookie, size: '3' }] }, 'cookies.0.size'],
    ['cookie name with ";"', { cookies: [{ ...cookie, name: 'a;b' }] }, 'cookies.0.name'],
    ['cookie without a name', { cookies: [{ ...cookie, name: '' }] }, 'cookies.0.name'],
    ['cookie httpOnly as a string', { cookies: [{ ...cookie, httpOnly: 'true' }] }, 'cookies.0.httpOnly'],
    ['cookie path without a slash', { cookies: [{ ...cookie, path: 'x' }] }, 'cookies.0.path'],
    ['cookies not a list', { cookies: { name: 'a' } }, 'cookies'],
    ['proxy with an unknown protocol', { proxy: { protocol: 'ftp', hostname: 'p.test', port: 21 } }, 'proxy.protocol'],
    ['proxy with port 0', { proxy: { protocol: 'http', hostname: 'p.test', port: 0 } }, 'proxy.port'],
    ['proxy with an empty hostname', { proxy: { protocol: 'http', hostname: ' ', port: 80 } }, 'proxy.hostname'],
    ['proxy with credentials in the hostname', { proxy: { protocol: 'http', hostname: 'u:p@p.test', port: 80 } }, 'proxy.hostname'],
    ['proxy with an unknown field', { proxy: { protocol: 'http', hostname: 'p.test', port: 80, secret: 1 } }, 'proxy.secret'],
    // Chromium cannot authenticate to socks5: such a session would save and never start.
    ['socks5 proxy with a username', { proxy: { protocol: 'SOCKS5', hostname: 'p.test', port: 1080, username: 'u' } }, 'proxy.username'],
    ['socks5 proxy with a password', { proxy: { protocol: 'socks5', hostname: 'p.test', port: 1080, password: 'pw' } }, 'proxy.password'],
    ['name empty', { name: '  ' }, 'name'],
    ['persist as a string', { persist: 'yes' }, 'persist'],
    ['an unknown field', { colour: 'red' }, 'colour'],
  ];
  for (const [what, body, path] of rejected) {
    it(`PUT and PATCH refuse ${what} with 400 naming ${path}`, async () => {
      const created = await stack.http.put(base(), { name: 'bad', ...body }, as);
      expect(created.status, created.text).toBe(400);
      expect(created.body.status).toBe('error');
      expect(created.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toContain(path);
      const id = await createSession({});
      const patched = await stack.http.patch(`${base()}/${id}`, body, as);
      expect(patched.status, patched.text).toBe(400);
    });
  }

  const deniedArgs: [string, string][] = [
    ['--remote-debugging-port=9222', '--remote-debugging-port'],
    ['--lang=en --remote-debugging-address=0.0.0.0', '--remote-debugging-address'],
    ['--REMOTE-DEBUGGING-PIPE', '--remote-debugging-pipe'],
    ['--user-data-dir=/etc', '--user-data-dir'],
    ['--no-sandbox', '--no-sandbox'],
    ['--disable-web-security', '--disable-web-security'],
    ['--load-extension=/tmp/x', '--load-extension'],
    ['--renderer-cmd-prefix="sh -c id"', '--renderer-cmd-prefix'],
    ['--gpu-launcher=/bin/sh', '--gpu-launcher'],
    ['--browser-subprocess-path=/bin/sh', '--browser-subprocess-path'],
    ['--enable-logging=stderr', '--enable-logging'],
    ['--proxy-server=http://p.test:80', '--proxy-server'],
    ['--app=file:///etc/shadow', '--app'],
    ['--debug', '--debug'],
    ['--enable-blink-features=MojoJS', '--enable-blink-features'],
    ['--disable-features=IsolateOrigins,site-per-process', '--disable-features'],
    ['--force-webrtc-ip-handling-policy=default', '--force-webrtc-ip-handling-policy'],
    ['--lang=de --no-such-flag', '--no-such-flag'],
    ['-remote-debugging-port=9222', '-remote-debugging-port=9222'],
    ['https://example.test', 'https://example.test'],
  ];
  for (const [args, named] of deniedArgs) {
    it(`refuses args ${args} naming ${named}`, async () => {
      const created = await stack.http.put(base(), { name: 'bad', args }, as);
      expect(created.status, created.text).toBe(400);
      expect(created.body.code).toBe('invalid_launch_args');
      expect(created.body.message).toContain(named);
      const id = await createSession({});
      const patched = await stack.http.patch(`${base()}/${id}`, { args }, as);
      expect(patched.status, patched.text).toBe(400);
      expect(patched.body.message).toContain(named);
    });
  }

  it('an unknown image is 400', async () => {
    const created = await stack.http.put(base(), { name: 'bad', image: 'firefox' }, as);
    expect(created.status, created.text).toBe(400);
    expect(created.body.code).toBe('unknown_image');
    const id = await createSession({});
    expect((await stack.http.patch(`${base()}/${id}`, { image: 'chrome-beta' }, as)).status).toBe(400);
  });

  it('launch args parse like a shell and keep the allowed flags', () => {
    expect(parseLaunchArgs('')).toEqual([]);
    expect(parseLaunchArgs('  --lang=de   --user-agent="A B" --user-agent=\'c d\' --user-agent=with\\ space ')).toEqual([
      '--lang=de',
      '--user-agent=A B',
      '--user-agent=c d',
      '--user-agent=with space',
    ]);
    expect(() => parseLaunchArgs('--user-agent="unterminated')).toThrow(BadRequest);
    expect(() => parseLaunchArgs('--mute-audio '.repeat(101))).toThrow(/at most 100 flags/);
    expect(() => parseLaunchArgs('--remote-debugging-targets=x')).toThrow(/--remote-debugging-targets is not allowed/);
  });

  it('a session saved with a flag the allow-list no longer takes does not start: 400 naming it, nothing reserved', async () => {
    const plain = await createSession({ args: '--lang=de' });
    const proxied = await createSession({ args: '--lang=de', proxy: { protocol: 'http', hostname: 'p.example.test', port: 8080 } });
    const em = stack.orm.em.fork();
    // As a row saved under a longer list would be: written past the API's check.
    await em.nativeUpdate(BrowserSession, { id: { $in: [plain, proxied] } }, { args: '--lang=de --app=file:///etc/shadow' });
    for (const id of [plain, proxied]) {
      const started = await stack.http.post(`${base()}/${id}/start`, undefined, as);
      expect(started.status, started.text).toBe(400);
      expect(started.body.code).toBe('invalid_launch_args');
      expect(started.body.message).toContain('--app');
      expect(await em.count(SessionResource, { session: id })).toBe(0);
    }
    // Changing the args mends it.
    const mended = await stack.http.patch(`${base()}/${plain}`, { args: '--lang=de' }, as);
    expect(mended.status, mended.text).toBe(200);
  });
});

describe('proxies named by id', () => {
  it('a session may use a stored proxy of its project; deleting the proxy drops the reference', async () => {
    const proxy = await stack.http.post(
      `/${project.slug}/api/proxies`,
      { hostname: 'stored.test', port: 3128, protocol: 'http', password: PROXY_SECRET },
      as,
    );
    expect(proxy.status, proxy.text).toBe(200);
    const id = await createSession({ proxyId: proxy.body.id });
    const one = await stack.http.get(`${base()}/${id}`, as);
    expect(one.body).toMatchObject({ proxyId: proxy.body.id, proxy: null });
    // Switching to an inline proxy drops the reference, and back.
    const inline = await stack.http.patch(`${base()}/${id}`, { proxy: { protocol: 'http', hostname: 'inline.test', port: 80 } }, as);
    expect(inline.body).toMatchObject({ proxyId: null, proxy: { hostname: 'inline.test' } });
    const back = await stack.http.patch(`${base()}/${id}`, { proxyId: proxy.body.id }, as);
    expect(back.body).toMatchObject({ proxyId: proxy.body.id, proxy: null });
    expect((await stack.http.delete(`/${project.slug}/api/proxies/${proxy.body.id}`, as)).status).toBe(200);
    expect((await stack.http.get(`${base()}/${id}`, as)).body.proxyId).toBeNull();
  });

  it('a proxy of another project, an unknown id, or both proxy and proxyId are 400', async () => {
    const other = await createProject(stack, owner.token);
    const foreign = await stack.http.post(`/${other.slug}/api/proxies`, { hostname: 'other.test', port: 80, protocol: 'http' }, as);
    expect(foreign.status).toBe(200);
    for (const proxyId of [foreign.body.id, randomUUID(), 'nope']) {
      const created = await stack.http.put(base(), { name: 'x', proxyId }, as);
      expect(created.status, created.text).toBe(400);
      expect(created.body.code).toBe('unknown_proxy');
    }
    const both = await stack.http.put(
      base(),
      { name: 'x', proxyId: foreign.body.id, proxy: { protocol: 'http', hostname: 'a.test', port: 1 } },
      as,
    );
    expect(both.status, both.text).toBe(400);
  });

  it('an empty proxyId is 400, not taken as "no proxy"', async () => {
    const stored = await stack.http.post(`/${project.slug}/api/proxies`, { hostname: 'kept.test', port: 80, protocol: 'http' }, as);
    const id = await createSession({ proxyId: stored.body.id });
    for (const proxyId of ['', '   ']) {
      const created = await stack.http.put(base(), { name: 'x', proxyId }, as);
      expect(created.status, created.text).toBe(400);
      expect(created.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toContain('proxyId');
      const patched = await stack.http.patch(`${base()}/${id}`, { proxyId }, as);
      expect(patched.status, patched.text).toBe(400);
    }
    // The refused PATCH left the reference as it was; null is how it is removed.
    expect((await stack.http.get(`${base()}/${id}`, as)).body.proxyId).toBe(stored.body.id);
    const removed = await stack.http.patch(`${base()}/${id}`, { proxyId: null }, as);
    expect(removed.body.proxyId).toBeNull();
  });
});

describe('running resources', () => {
  it('a running resource makes the session running, is listed with its URLs, and blocks DELETE', async () => {
    const id = await createSession({ name: 'busy' });
    const em = stack.orm.em.fork();
    const resource = em.create(SessionResource, {
      session: em.getReference(BrowserSession, id),
      project: em.getReference(Project, project.id),
      status: 'running',
      hostId: 'local',
      startedAt: new Date(),
    });
    em.create(SessionResource, {
      session: em.getReference(BrowserSession, id),
      project: em.getReference(Project, project.id),
      status: 'stopped',
      startedAt: new Date(Date.now() - 60_000),
      stoppedAt: new Date(),
    });
    await em.flush();

    const list = await stack.http.get(`${base()}?limit=200`, as);
    const listed = list.body.find((s: { id: string }) => s.id === id);
    expect(listed).toMatchObject({ status: 'running', manager: { runningResources: 1, lastStarted: resource.startedAt?.toISOString() } });

    const one = await stack.http.get(`${base()}/${id}`, as);
    expect(one.body.status).toBe('running');
    expect(one.body.resources).toHaveLength(1);
    expect(one.body.resources[0]).toMatchObject({ id: resource.id, session: id, status: 'running', host: 'local' });
    expect(one.body.resources[0].remoteUrl).toMatch(new RegExp(`^ws://.*/${project.slug}/api/sessions/${id}/${resource.id}/cdp\\?token=`));
    expect(one.body.resources[0].vncUrl).toMatch(/\/live\?token=/);

    const refused = await stack.http.delete(`${base()}/${id}`, as);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.code).toBe('session_running');

    resource.status = 'stopped';
    await em.flush();
    expect((await stack.http.get(`${base()}/${id}`, as)).body).toMatchObject({ status: 'idle', resources: [] });
    expect((await stack.http.delete(`${base()}/${id}`, as)).status).toBe(200);
    expect(await stack.orm.em.fork().count(SessionResource, { session: id })).toBe(0);
  });
});

describe('permissions', () => {
  it('cookies are hidden from a key without cookies.read, shown with it', async () => {
    const id = await createSession({ cookies: [cookie] });
    const reader = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.sessions.read`] });
    const one = await stack.http.get(`${base()}/${id}`, { apiKey: reader.secret });
    expect(one.status, one.text).toBe(200);
    expect(one.body).not.toHaveProperty('cookies');
    expect(one.body.resources).toEqual([]);
    expect(one.text).not.toContain('abc123');

    const cookieReader = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.sessions.read`, `${project.slug}.cookies.read`],
    });
    const withCookies = await stack.http.get(`${base()}/${id}`, { apiKey: cookieReader.secret });
    expect(withCookies.body.cookies).toEqual([{ ...cookie, domain: 'shop.example.test' }]);

    // Reading does not allow writing.
    expect((await stack.http.patch(`${base()}/${id}`, { name: 'no' }, { apiKey: reader.secret })).status).toBe(403);
    expect((await stack.http.put(base(), { name: 'no' }, { apiKey: reader.secret })).status).toBe(403);
    expect((await stack.http.delete(`${base()}/${id}`, { apiKey: reader.secret })).status).toBe(403);
  });

  it('a grant for one session id shows that session only', async () => {
    const mine = await createSession({ name: 'granted' });
    const other = await createSession({ name: 'not granted' });
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.sessions.read.${mine}`] });
    const list = await stack.http.get(base(), { apiKey: key.secret });
    expect(list.status, list.text).toBe(200);
    expect(list.body.map((s: { id: string }) => s.id)).toEqual([mine]);
    expect((await stack.http.get(`${base()}/${mine}`, { apiKey: key.secret })).status).toBe(200);
    expect((await stack.http.get(`${base()}/${other}`, { apiKey: key.secret })).status).toBe(403);
    // A forbidden id and a missing one answer alike.
    expect((await stack.http.get(`${base()}/${randomUUID()}`, { apiKey: key.secret })).status).toBe(403);
  });

  it('a write grant on one session lets PATCH that one only', async () => {
    const mine = await createSession({});
    const other = await createSession({});
    const key = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.sessions.write.${mine}`] });
    expect((await stack.http.patch(`${base()}/${mine}`, { name: 'renamed' }, { apiKey: key.secret })).status).toBe(200);
    expect((await stack.http.patch(`${base()}/${other}`, { name: 'renamed' }, { apiKey: key.secret })).status).toBe(403);
  });

  it('other users get 404 for everything; anonymous callers too', async () => {
    const id = await createSession({});
    for (const credentials of [{ token: stranger.token }, {}]) {
      expect((await stack.http.get(base(), credentials)).status).toBe(404);
      expect((await stack.http.put(base(), { name: 'x' }, credentials)).status).toBe(404);
      expect((await stack.http.get(`${base()}/${id}`, credentials)).status).toBe(404);
      expect((await stack.http.patch(`${base()}/${id}`, { name: 'x' }, credentials)).status).toBe(404);
      expect((await stack.http.delete(`${base()}/${id}`, credentials)).status).toBe(404);
    }
    expect((await stack.http.get(`${base()}/${id}`, as)).status).toBe(200);
  });

  it('a public project shows no sessions to strangers', async () => {
    const open = await createProject(stack, owner.token, { public: true });
    const list = await stack.http.get(`/${open.slug}/api/sessions`, { token: stranger.token });
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual([]);
    const own = await stack.http.get(`/${open.slug}/api/sessions`, as);
    expect((await stack.http.get(`/${open.slug}/api/sessions/${own.body[0].id}`, { token: stranger.token })).status).toBe(403);
  });
});

describe('the project', () => {
  it('deleting a project removes its sessions and proxies', async () => {
    const doomed = await createProject(stack, owner.token);
    await createSession({ name: 'gone' }, doomed.slug);
    const proxy = await stack.http.post(`/${doomed.slug}/api/proxies`, { hostname: 'gone.test', port: 80, protocol: 'http' }, as);
    expect(proxy.status).toBe(200);
    const em = stack.orm.em.fork();
    expect(await em.count(BrowserSession, { project: doomed.id })).toBe(2);
    expect((await stack.http.delete(`/${doomed.slug}/api`, as)).status).toBe(200);
    expect(await em.count(BrowserSession, { project: doomed.id })).toBe(0);
    expect(await em.count(StoredProxy, { project: doomed.id })).toBe(0);
  });

  it('the OpenAPI document lists the session paths', async () => {
    const doc = await stack.http.get('/api/openapi.json');
    expect(Object.keys(doc.body.paths['/{project}/api/sessions']).sort()).toEqual(['get', 'put']);
    expect(Object.keys(doc.body.paths['/{project}/api/sessions/{sessionId}']).sort()).toEqual(['delete', 'get', 'patch']);
  });
});
