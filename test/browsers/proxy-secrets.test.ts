import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealProxyPassword } from '../../server/browsers/proxies/proxyPasswords.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { startAuthProxy, startTestSite } from '../support/pages.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Proxy passwords are sealed at rest (a database dump does not reveal them) and opened only by the
 * browser host at launch: each kind of stored proxy password still gets a browser through a proxy
 * that demands it, and rows saved in clear before sealing keep working.
 */

const STORED_PW = 'stored-proxy-pw-4f1c';
const INLINE_PW = 'inline-proxy-pw-9a2e';
const POOL_PW = 'pool-proxy-pw-7d3b';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let storedProxy: Awaited<ReturnType<typeof startAuthProxy>>;
let inlineProxy: Awaited<ReturnType<typeof startAuthProxy>>;
let poolProxy: Awaited<ReturnType<typeof startAuthProxy>>;

beforeAll(async () => {
  [storedProxy, inlineProxy, poolProxy] = await Promise.all([
    startAuthProxy('storeduser', STORED_PW),
    startAuthProxy('inlineuser', INLINE_PW),
    startAuthProxy('pooluser', POOL_PW),
  ]);
  // The pool proxy's port is known before the stack starts, so PROXY_LIST can name it.
  const proxyList = [
    { id: 'pool-1', protocol: 'http', hostname: poolProxy.host, port: poolProxy.port, username: 'pooluser', password: POOL_PW },
  ];
  stack = await startTestStack({ PROXY_LIST: JSON.stringify(proxyList) }, { browserHost: true });
  site = await startTestSite();
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  await Promise.all([storedProxy?.close(), inlineProxy?.close(), poolProxy?.close()]);
  await site?.close();
  await stack?.close();
});

const as = () => ({ token: owner.token });

async function sql<T>(query: string, params: unknown[] = []) {
  return (await stack.orm.em.getConnection().execute(query, params)) as T[];
}

/** The row as a database dump shows it. */
async function dumpOf(table: 'proxies' | 'browser_sessions', id: string) {
  const [row] = await sql<Record<string, unknown>>(`select row_to_json(t)::text as dump from "${table}" t where id = ?`, [id]);
  return String(row?.dump);
}

async function createSession(body: Record<string, unknown>) {
  const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: `s-${Date.now()}`, ...body }, as());
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

async function createStoredProxy(password: string) {
  const created = await stack.http.post(
    `/${project.slug}/api/proxies`,
    { protocol: 'http', hostname: storedProxy.host, port: storedProxy.port, username: 'storeduser', password },
    as(),
  );
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

/** Starts the session, loads a page of the test site through its proxy, and stops it again. */
async function reachThroughProxy(sessionId: string, proxy: typeof storedProxy, secret: string) {
  const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, as());
  expect(started.status, started.text).toBe(200);
  const resource = started.body;
  const path = `/via-${sessionId}`;
  try {
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    try {
      const page = await browser.contexts()[0]!.newPage();
      await page.goto(`${site.url}${path}`);
      expect(await page.textContent('#greeting')).toBe('Hello from the test site');
    } finally {
      await browser.close();
    }
    expect(proxy.relayed).toContain(`${site.url}${path}`);
  } finally {
    // Until stopped: the host writes what the browser logged last as it closes it.
    await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${resource.id}`, as());
  }
  // The host still redacts the opened password from the browser's log.
  const logs = await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resource.id}/logs?limit=200`, as());
  expect(logs.status, logs.text).toBe(200);
  expect(logs.text).not.toContain(secret);
}

describe('proxy passwords at rest', () => {
  it('a stored proxy’s password is sealed in its row, on create and on update, and opened for the launch', async () => {
    const proxyId = await createStoredProxy('wrong-first-password');
    expect(await dumpOf('proxies', proxyId)).not.toContain('wrong-first-password');
    const patched = await stack.http.patch(`/${project.slug}/api/proxies/${proxyId}`, { password: STORED_PW }, as());
    expect(patched.status, patched.text).toBe(200);
    expect(patched.text).not.toContain(STORED_PW);
    const dump = await dumpOf('proxies', proxyId);
    expect(dump).not.toContain(STORED_PW);
    expect(dump).toMatch(/"password":"v1\./);

    const sessionId = await createSession({ proxyId });
    expect(await dumpOf('browser_sessions', sessionId)).not.toContain(STORED_PW);
    await reachThroughProxy(sessionId, storedProxy, STORED_PW);
  });

  it('a session’s inline proxy password is sealed in its row, on create and on update, and opened for the launch', async () => {
    const inline = { protocol: 'http', hostname: inlineProxy.host, port: inlineProxy.port, username: 'inlineuser' };
    const sessionId = await createSession({ proxy: { ...inline, password: 'wrong-first-password' } });
    expect(await dumpOf('browser_sessions', sessionId)).not.toContain('wrong-first-password');
    const patched = await stack.http.patch(
      `/${project.slug}/api/sessions/${sessionId}`,
      { proxy: { ...inline, password: INLINE_PW } },
      as(),
    );
    expect(patched.status, patched.text).toBe(200);
    expect(patched.text).not.toContain(INLINE_PW);
    const dump = await dumpOf('browser_sessions', sessionId);
    expect(dump).not.toContain(INLINE_PW);
    expect(dump).toMatch(/"password":\s*"v1\./);

    await reachThroughProxy(sessionId, inlineProxy, INLINE_PW);
  });

  it('a dynamic proxy a session names is copied inline sealed, and opened for the launch', async () => {
    const sessionId = await createSession({ proxyId: 'pool-1' });
    expect(await dumpOf('browser_sessions', sessionId)).not.toContain(POOL_PW);
    await reachThroughProxy(sessionId, poolProxy, POOL_PW);
  });

  it('passwords saved in clear before sealing still work', async () => {
    const proxyId = await createStoredProxy('replaced-below');
    await sql(`update proxies set password = ? where id = ?`, [STORED_PW, proxyId]);
    expect(await dumpOf('proxies', proxyId)).toContain(STORED_PW);
    await reachThroughProxy(await createSession({ proxyId }), storedProxy, STORED_PW);

    const sessionId = await createSession({});
    const legacy = { protocol: 'http', hostname: inlineProxy.host, port: inlineProxy.port, username: 'inlineuser', password: INLINE_PW };
    await sql(`update browser_sessions set proxy = ?::jsonb where id = ?`, [JSON.stringify(legacy), sessionId]);
    await reachThroughProxy(sessionId, inlineProxy, INLINE_PW);
  });

  it('a password sealed under another service secret fails the start, without sending it anywhere', async () => {
    const proxyId = await createStoredProxy('replaced-below');
    const foreign = sealProxyPassword('another service secret of at least thirty-two characters', STORED_PW);
    await sql(`update proxies set password = ? where id = ?`, [foreign, proxyId]);
    const sessionId = await createSession({ proxyId });
    const relayedBefore = storedProxy.relayed.length;
    const started = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, as());
    expect(started.status, started.text).toBe(503);
    expect(started.body).toMatchObject({ code: 'browser_start_failed' });
    expect(started.text).toContain('the proxy password cannot be read');
    expect(started.text).not.toContain(STORED_PW);
    expect(started.text).not.toContain(String(foreign));
    expect(storedProxy.relayed.length).toBe(relayedBefore);
  });
});
