import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Cross-site request forgery (docs/account-security.md): a change signed by the `token` cookie
 * alone must show it comes from the service's own pages (Origin, or Sec-Fetch-Site:
 * same-origin); one with neither header is not a browser's, and its cookie signs nothing; scripts,
 * which send an API key or a bearer token, are not asked. The headers
 * here are the ones a browser would send: a page can set neither.
 */

let stack: TestStack;
let user: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };

const FOREIGN = 'http://attacker.test';

beforeAll(async () => {
  stack = await startTestStack({ RATE_LIMITS: 'off' });
  user = await registerUser(stack);
  project = await createProject(stack, user.token);
});
afterAll(async () => {
  await stack?.close();
});

/** Header sets to try, as one type (a browser sends some of these, never all). */
const headerSets = (...sets: Record<string, string>[]) => sets;
const cookie = () => `token=${user.token}`;
const rename = () => ({ name: `renamed ${randomBytes(3).toString('hex')}` });

/** A PATCH of the project's name, signed by the cookie, with the headers a browser would add. */
function patchByCookie(headers: Record<string, string>) {
  return stack.http.request('PATCH', `/${project.slug}/api`, { body: rename(), headers: { cookie: cookie(), ...headers } });
}

describe('a change signed by the session cookie', () => {
  it('from another site’s page is refused with 403 on every way in, and nothing changes', async () => {
    const before = (await stack.http.get(`/${project.slug}/api`, { token: user.token })).body.name;
    const headers = { cookie: cookie(), origin: FOREIGN };
    const attempts = [
      stack.http.request('PUT', '/api/projects', {
        body: { name: 'forged', description: '', slug: `forged-${randomBytes(3).toString('hex')}`, public: false },
        headers,
      }),
      stack.http.request('PATCH', `/${project.slug}/api`, { body: rename(), headers }),
      stack.http.request('PUT', `/${project.slug}/api/sessions`, { body: { name: 'forged' }, headers }),
      stack.http.request('DELETE', `/${project.slug}/api`, { headers }),
      stack.http.request('PUT', '/api/api-keys', { body: { name: 'forged', accessType: 'full' }, headers }),
      stack.http.request('POST', '/trpc/projects.update', { body: { project: project.slug, ...rename() }, headers }),
    ];
    const answers = await Promise.all(attempts);
    for (const refused of answers) {
      expect(refused.status, refused.text).toBe(403);
      expect(refused.text).toContain('cross_site_request');
    }
    // REST's error body (tRPC wraps the same in its envelope).
    expect(answers[0]?.body).toMatchObject({ status: 'error', code: 'cross_site_request' });
    expect((await stack.http.get(`/${project.slug}/api`, { token: user.token })).body.name).toBe(before);
    const keys = await stack.http.get('/api/api-keys', { token: user.token });
    expect(keys.body.map((key: { name: string }) => key.name)).not.toContain('forged');
    const sessions = await stack.http.get(`/${project.slug}/api/sessions`, { token: user.token });
    expect(sessions.body.map((session: { name: string }) => session.name)).not.toContain('forged');
  });

  it('is refused when the browser says it is cross-site or same-site, or when its Origin is null', async () => {
    for (const headers of headerSets(
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site', origin: 'http://sibling.127.0.0.1.test' },
      { origin: 'null' },
      { origin: 'not a url' },
    )) {
      const refused = await patchByCookie(headers);
      expect(refused.status, `${JSON.stringify(headers)}: ${refused.text}`).toBe(403);
      expect(refused.body.code).toBe('cross_site_request');
    }
  });

  it('with no Origin and no Sec-Fetch-Site (a script’s cookie jar), the cookie signs nothing: it is answered as a call without credentials, and nothing changes', async () => {
    const before = (await stack.http.get(`/${project.slug}/api`, { token: user.token })).body.name;
    const refused = await patchByCookie({});
    // A private project is not found by an anonymous caller; the message says what to send.
    expect(refused.status, refused.text).toBe(404);
    expect(refused.body.message).toMatch(/no credentials were sent/);
    expect((await stack.http.get(`/${project.slug}/api`, { token: user.token })).body.name).toBe(before);
    // A script that keeps the cookie of its registration can still submit its verification token.
    const email = `jar-${randomBytes(4).toString('hex')}@example.test`;
    const registered = await stack.http.request('POST', '/api/auth/register', {
      body: { email, password: 'correct horse battery', firstName: 'Jar', lastName: 'Script' },
    });
    expect(registered.status, registered.text).toBe(200);
    const submitted = await stack.http.request('POST', '/api/auth/verify/submit', {
      body: { token: 'not-a-token' },
      headers: { cookie: `token=${registered.body.token}` },
    });
    expect(submitted.body.code, submitted.text).not.toBe('cross_site_request');
  });

  it('from the service’s own page works: its Origin, or Sec-Fetch-Site: same-origin', async () => {
    for (const headers of headerSets(
      { origin: stack.url },
      { 'sec-fetch-site': 'same-origin' },
      { origin: stack.url, 'sec-fetch-site': 'same-origin' },
    )) {
      const allowed = await patchByCookie(headers);
      expect(allowed.status, `${JSON.stringify(headers)}: ${allowed.text}`).toBe(200);
      expect(allowed.body.name).toMatch(/^renamed /);
    }
    const created = await stack.http.request('PUT', `/${project.slug}/api/sessions`, {
      body: { name: 'own page' },
      headers: { cookie: cookie(), origin: stack.url },
    });
    expect(created.status, created.text).toBe(200);
  });

  it('a read with the cookie from another site is not a change: it is answered', async () => {
    const read = await stack.http.request('GET', `/${project.slug}/api`, {
      headers: { cookie: cookie(), origin: FOREIGN, 'sec-fetch-site': 'cross-site' },
    });
    expect(read.status, read.text).toBe(200);
  });
});

describe('scripts', () => {
  it('an API key or a bearer token works with any Origin, even beside a cookie', async () => {
    const key = await createApiKey(stack, user.token, { accessType: 'full' });
    const headers = { origin: FOREIGN, 'sec-fetch-site': 'cross-site' };
    const byKey = await stack.http.request('PATCH', `/${project.slug}/api`, { body: rename(), headers, as: { apiKey: key.secret } });
    expect(byKey.status, byKey.text).toBe(200);
    const byBearer = await stack.http.request('PATCH', `/${project.slug}/api`, { body: rename(), headers, as: { token: user.token } });
    expect(byBearer.status, byBearer.text).toBe(200);
    // The header is the credential: a cookie the request also carries is not what signs it.
    const keyBesideCookie = await stack.http.request('PATCH', `/${project.slug}/api`, {
      body: rename(),
      headers: { ...headers, cookie: cookie() },
      as: { apiKey: key.secret },
    });
    expect(keyBesideCookie.status, keyBesideCookie.text).toBe(200);
  });
});

describe('signing in', () => {
  const login = (headers: Record<string, string>) =>
    stack.http.request('POST', '/api/auth/login', { body: { email: user.email, password: PASSWORD, remember: false }, headers });

  it('another site’s page cannot sign a visitor in (login CSRF) or register an account', async () => {
    for (const headers of headerSets({ origin: FOREIGN }, { 'sec-fetch-site': 'cross-site' })) {
      const refused = await login(headers);
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body.code).toBe('cross_site_request');
      expect(refused.headers.get('set-cookie')).toBeNull();
    }
    const email = `forged-${randomBytes(3).toString('hex')}@example.test`;
    const registered = await stack.http.request('POST', '/api/auth/register', {
      body: { email, password: PASSWORD, firstName: 'Mallory', lastName: 'Forged' },
      headers: { origin: FOREIGN },
    });
    expect(registered.status, registered.text).toBe(403);
    const tried = await stack.http.post('/api/auth/login', { email, password: PASSWORD, remember: false });
    expect(tried.status).toBe(401);
  });

  it('the service’s own sign-in page and a script (no Origin) sign in', async () => {
    for (const headers of headerSets({ origin: stack.url, 'sec-fetch-site': 'same-origin' }, {})) {
      const signedIn = await login(headers);
      expect(signedIn.status, signedIn.text).toBe(200);
      expect(signedIn.body.status).toBe('ok');
    }
  });
});
