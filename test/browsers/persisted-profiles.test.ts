import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoredBlob } from '../../db/entities/index.ts';
import { profileKey } from '../../server/browsers/sessions/sessionProfiles.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { startLoginSite } from '../support/loginSite.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Profiles that persist (docs/sessions-and-proxies.md): a session with `persist: true` keeps its
 * browser's cookies, localStorage, IndexedDB and service workers from one start to the next,
 * sealed in the blob store between them; one browser at a time holds it.
 */

let stack: TestStack;
let site: Awaited<ReturnType<typeof startLoginSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };

beforeAll(async () => {
  // A bound small enough for a test to pass it with a few megabytes of random data.
  stack = await startTestStack({ PROFILE_MAX_MB: '1' }, { browserHost: true });
  site = await startLoginSite();
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

const as = () => ({ token: owner.token });
const sessions = () => `/${project.slug}/api/sessions`;

async function createSession(name: string, persist?: boolean) {
  const created = await stack.http.put(sessions(), { name, ...(persist === undefined ? {} : { persist }) }, as());
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

async function start(sessionId: string) {
  const started = await stack.http.post(`${sessions()}/${sessionId}/start`, undefined, as());
  expect(started.status, started.text).toBe(200);
  expect(started.body.status).toBe('running');
  return {
    id: started.body.id as string,
    remoteUrl: started.body.remoteUrl as string,
    path: `${sessions()}/${sessionId}/${started.body.id}`,
  };
}

async function logMessages(resourcePath: string) {
  const logs = await stack.http.get(`${resourcePath}/logs?limit=200`, as());
  expect(logs.status, logs.text).toBe(200);
  return (logs.body as { message: string; severity: string }[]).map((entry) => entry.message);
}

const loggedIn = (user: string) => ({ server: user, localStorage: user, indexedDB: user, serviceWorkers: 1 });
const nobody = { server: null, localStorage: null, indexedDB: null, serviceWorkers: 0 };

describe('a session that persists its profile', () => {
  it('keeps the login across a stop and a start (cookie, localStorage, IndexedDB, service worker), and stores the cookie for cookies.read', async () => {
    const sessionId = await createSession('persisted', true);
    const read = await stack.http.get(`${sessions()}/${sessionId}`, as());
    expect(read.body).toMatchObject({ persist: true, cookies: [] });

    const first = await start(sessionId);
    expect(await site.whoIsThere(first.remoteUrl)).toEqual(nobody);
    await site.logIn(first.remoteUrl, 'alice');
    expect(await site.whoIsThere(first.remoteUrl)).toEqual(loggedIn('alice'));
    const { ended } = await stopAndWait(stack.http, first.path, as());
    expect(ended.status).toBe('stopped');
    const firstLog = await logMessages(first.path);
    expect(firstLog).toContain('no profile saved yet: the browser starts with a fresh one, saved when it stops');
    expect(firstLog.find((message) => message.startsWith('profile saved ('))).toBeDefined();

    // The browser's cookies are the session's now, for a reader with cookies.read (the owner).
    const after = await stack.http.get(`${sessions()}/${sessionId}`, as());
    expect(after.body.cookies).toEqual([
      expect.objectContaining({ name: 'sid', value: 'alice-token', domain: new URL(site.url).hostname, path: '/', httpOnly: true }),
    ]);

    const second = await start(sessionId);
    expect(await site.whoIsThere(second.remoteUrl), JSON.stringify(firstLog)).toEqual(loggedIn('alice'));
    expect((await logMessages(second.path)).find((message) => message.startsWith('profile restored ('))).toBeDefined();
    await stopAndWait(stack.http, second.path, as());
  }, 180_000);

  it('forgets everything between starts without persist', async () => {
    const sessionId = await createSession('not persisted');
    expect((await stack.http.get(`${sessions()}/${sessionId}`, as())).body).toMatchObject({ persist: false });
    const first = await start(sessionId);
    await site.logIn(first.remoteUrl, 'bob');
    expect(await site.whoIsThere(first.remoteUrl)).toEqual(loggedIn('bob'));
    await stopAndWait(stack.http, first.path, as());
    expect((await stack.http.get(`${sessions()}/${sessionId}`, as())).body.cookies).toEqual([]);
    const second = await start(sessionId);
    expect(await site.whoIsThere(second.remoteUrl)).toEqual(nobody);
    await stopAndWait(stack.http, second.path, as());
    const blob = await stack.orm.em.fork().findOne(StoredBlob, { key: profileKey(sessionId) });
    expect(blob).toBeNull();
  }, 180_000);

  it('answers 409 profile_in_use to a second start while a browser of it runs', async () => {
    const sessionId = await createSession('one at a time', true);
    const first = await start(sessionId);
    const second = await stack.http.post(`${sessions()}/${sessionId}/start`, undefined, as());
    expect(second.status, second.text).toBe(409);
    expect(second.body).toMatchObject({ status: 'error', code: 'profile_in_use' });
    expect(second.body.message).toMatch(/one browser at a time/);
    await stopAndWait(stack.http, first.path, as());
    // Stopped: the next start goes through.
    const third = await start(sessionId);
    await stopAndWait(stack.http, third.path, as());
  }, 120_000);

  it('keeps the profile sealed at rest, and deletes it with the session', async () => {
    const sessionId = await createSession('deleted', true);
    const first = await start(sessionId);
    await site.logIn(first.remoteUrl, 'carol');
    await stopAndWait(stack.http, first.path, as());
    const blob = await stack.orm.em.fork().findOne(StoredBlob, { key: profileKey(sessionId) }, { populate: ['data'] });
    expect(blob).not.toBeNull();
    // Sealed: not a gzip stream (1f 8b) as the host made it, and no user name in clear.
    expect(Buffer.from(blob!.data).subarray(0, 2).toString('hex')).not.toBe('1f8b');
    expect(Buffer.from(blob!.data).includes('carol')).toBe(false);

    const deleted = await stack.http.delete(`${sessions()}/${sessionId}`, as());
    expect(deleted.status, deleted.text).toBe(200);
    expect(await stack.orm.em.fork().count(StoredBlob, { key: { $like: `profiles/${sessionId}/%` } })).toBe(0);
  }, 120_000);

  it('forgets the saved profile when persist is turned off', async () => {
    const sessionId = await createSession('turned off', true);
    const first = await start(sessionId);
    await site.logIn(first.remoteUrl, 'heidi');
    await stopAndWait(stack.http, first.path, as());
    expect(await stack.orm.em.fork().count(StoredBlob, { key: profileKey(sessionId) })).toBe(1);
    const patched = await stack.http.patch(`${sessions()}/${sessionId}`, { persist: false }, as());
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.persist).toBe(false);
    expect(await stack.orm.em.fork().count(StoredBlob, { key: profileKey(sessionId) })).toBe(0);
    const second = await start(sessionId);
    // The cookie written back at the stop is a stored cookie now, set at every start; the rest is gone.
    expect(await site.whoIsThere(second.remoteUrl)).toEqual({ ...nobody, server: 'heidi' });
    await stopAndWait(stack.http, second.path, as());
  }, 120_000);

  it('over PROFILE_MAX_MB saves nothing, says so in the log, and keeps the profile saved before', async () => {
    const sessionId = await createSession('too large', true);
    const first = await start(sessionId);
    await site.logIn(first.remoteUrl, 'dave');
    await stopAndWait(stack.http, first.path, as());

    const second = await start(sessionId);
    // 3 MB that do not compress, in IndexedDB: past the 1 MB bound.
    const noise = randomBytes(3 * 2 ** 20).toString('base64');
    await site.withPage(second.remoteUrl, async (tab) => {
      await tab.goto(`${site.url}/home`);
      await tab.evaluate(
        (value) =>
          new Promise<void>((resolve, reject) => {
            const open = indexedDB.open('bulk', 1);
            open.onupgradeneeded = () => open.result.createObjectStore('b');
            open.onsuccess = () => {
              const tx = open.result.transaction('b', 'readwrite');
              tx.objectStore('b').put(value, 'noise');
              tx.oncomplete = () => resolve();
              tx.onerror = () => reject(tx.error);
            };
          }),
        noise,
      );
    });
    await stopAndWait(stack.http, second.path, as());
    const log = await logMessages(second.path);
    expect(log.find((message) => message.startsWith('profile not saved: it takes'))).toMatch(
      /over the bound of 1 MB \(PROFILE_MAX_MB\).*The profile saved before \(if any\) is kept/,
    );

    const third = await start(sessionId);
    expect(await site.whoIsThere(third.remoteUrl)).toEqual(loggedIn('dave'));
    const bulk = await site.withPage(third.remoteUrl, async (tab) => {
      await tab.goto(`${site.url}/home`);
      return tab.evaluate(() => indexedDB.databases().then((all) => all.map((db) => db.name)));
    });
    expect(bulk).not.toContain('bulk');
    await stopAndWait(stack.http, third.path, as());
  }, 180_000);
});

describe('a persisted browser stopped for being idle', () => {
  let idleStack: TestStack;
  let idleOwner: Awaited<ReturnType<typeof registerUser>>;
  let idleProject: { slug: string };
  beforeAll(async () => {
    idleStack = await startTestStack({ BROWSER_IDLE_TIMEOUT_SECONDS: '5' }, { browserHost: true });
    idleOwner = await registerUser(idleStack);
    idleProject = await createProject(idleStack, idleOwner.token);
  });
  afterAll(async () => {
    await idleStack?.close();
  });

  it('saves its profile at the idle stop too', async () => {
    const asIdle = { token: idleOwner.token };
    const base = `/${idleProject.slug}/api/sessions`;
    const created = await idleStack.http.put(base, { name: 'idle', persist: true }, asIdle);
    const sessionId = created.body.id as string;
    const startOnce = async () => {
      const started = await idleStack.http.post(`${base}/${sessionId}/start`, undefined, asIdle);
      expect(started.status, started.text).toBe(200);
      return { remoteUrl: started.body.remoteUrl as string, path: `${base}/${sessionId}/${started.body.id}` };
    };
    const first = await startOnce();
    await site.logIn(first.remoteUrl, 'erin');
    // Left alone, it is stopped for being idle.
    await expect
      .poll(async () => (await idleStack.http.get(first.path, asIdle)).body.status, { timeout: 60_000, interval: 500 })
      .toBe('stopped');
    const ended = (await idleStack.http.get(first.path, asIdle)).body;
    expect(ended).toMatchObject({ status: 'stopped', stopReason: 'idle for more than 5 s' });

    const second = await startOnce();
    expect(await site.whoIsThere(second.remoteUrl)).toEqual(loggedIn('erin'));
    await stopAndWait(idleStack.http, second.path, asIdle);
  }, 180_000);
});

describe('a persisted profile without the sandbox (BROWSER_SANDBOX=off)', () => {
  let plainStack: TestStack;
  beforeAll(async () => {
    plainStack = await startTestStack({ BROWSER_SANDBOX: 'off' }, { browserHost: true });
  });
  afterAll(async () => {
    await plainStack?.close();
  });

  it('is packed and unpacked by the host itself', async () => {
    const user = await registerUser(plainStack);
    const asUser = { token: user.token };
    const base = `/${(await createProject(plainStack, user.token)).slug}/api/sessions`;
    const sessionId = (await plainStack.http.put(base, { name: 'unsandboxed', persist: true }, asUser)).body.id as string;
    const startOnce = async () => {
      const started = await plainStack.http.post(`${base}/${sessionId}/start`, undefined, asUser);
      expect(started.status, started.text).toBe(200);
      return { remoteUrl: started.body.remoteUrl as string, path: `${base}/${sessionId}/${started.body.id}` };
    };
    const first = await startOnce();
    await site.logIn(first.remoteUrl, 'ivan');
    await stopAndWait(plainStack.http, first.path, asUser);
    const second = await startOnce();
    // On a failure, the browsers' own account of their profile.
    const profileLog = async (path: string) =>
      ((await plainStack.http.get(`${path}/logs?limit=200`, asUser)).body as { message: string }[])
        .map((entry) => entry.message)
        .filter((message) => message.includes('profile'));
    const seen = await site.whoIsThere(second.remoteUrl);
    expect(seen, JSON.stringify([await profileLog(first.path), await profileLog(second.path)])).toEqual(loggedIn('ivan'));
    await stopAndWait(plainStack.http, second.path, asUser);
  }, 180_000);
});
