import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionResource } from '../../db/entities/index.ts';
import { isAlive } from '../../server/browsers/host/chromium/processes.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { readUntilStopped, stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Stopping a browser: the stop answers once it is requested and the teardown goes on in the
 * resource's workflow. To see the teardown from outside, a test freezes the browser (SIGSTOP):
 * its host then waits out the close (5 s) before it kills it, so the resource stays `stopping`
 * for at least that long, whatever the machine's speed.
 */

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };

beforeAll(async () => {
  // One browser per project: a start right after a stop must not be refused for the stopping one.
  stack = await startTestStack({ BROWSERS_PER_PROJECT: '1' }, { browserHost: true });
  site = await startTestSite();
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

const as = () => ({ token: owner.token });
const sessions = () => `/${project.slug}/api/sessions`;

async function createSession(name: string) {
  const created = await stack.http.put(sessions(), { name }, as());
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

async function start(sessionId: string) {
  const started = await stack.http.post(`${sessions()}/${sessionId}/start`, undefined, as());
  expect(started.status, started.text).toBe(200);
  expect(started.body.status).toBe('running');
  const { pid } = await stack.orm.em.fork().findOneOrFail(SessionResource, { id: started.body.id });
  if (!pid) throw new Error('no pid recorded for the browser');
  return { resource: started.body, pid };
}

/** Drives the browser behind `remoteUrl` to a page of the test site and reads it. */
async function visit(remoteUrl: string, path: string) {
  const browser = await chromium.connectOverCDP(remoteUrl, { timeout: 30_000 });
  try {
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(`${site.url}${path}`);
    return await page.textContent('#greeting');
  } finally {
    await browser.close();
  }
}

/** Freezes a browser's main process: its graceful close cannot finish, the host kills it after its wait. */
function freeze(pid: number) {
  process.kill(pid, 'SIGSTOP');
}

describe('stopping a browser', () => {
  it('answers at once with the browser stopping; it is stopped later, and a start right after gets a new, working browser', async () => {
    const sessionId = await createSession('stop then start');
    const first = await start(sessionId);
    expect(await visit(first.resource.remoteUrl, '/first')).toBe('Hello from the test site');
    freeze(first.pid);

    const base = `${sessions()}/${sessionId}/${first.resource.id}`;
    const stopped = await stack.http.post(`${base}/stop`, undefined, as());
    expect(stopped.status, stopped.text).toBe(200);
    // The frozen browser takes its host 5 s to tear down: an answer that waited would say stopped.
    expect(stopped.body).toMatchObject({ status: 'stopping', remoteUrl: null, vncUrl: null, stopReason: 'stopped on request' });
    const read = await stack.http.get(base, as());
    expect(read.body).toMatchObject({ status: 'stopping', remoteUrl: null, vncUrl: null });
    // Its URL no longer opens anything, and the session no longer counts it as running.
    await expect(chromium.connectOverCDP(first.resource.remoteUrl, { timeout: 5000 })).rejects.toThrow();
    expect((await stack.http.get(`${sessions()}/${sessionId}`, as())).body).toMatchObject({ status: 'idle' });
    // Asking again changes nothing.
    const again = await stack.http.post(`${base}/stop`, undefined, as());
    expect(again.status, again.text).toBe(200);
    expect(again.body.status).toBe('stopping');

    // A start right now, on the same session and within the project's limit of one browser, gets
    // another browser: a new resource, a new process, and it works.
    const second = await start(sessionId);
    expect(second.resource.id).not.toBe(first.resource.id);
    expect(second.pid).not.toBe(first.pid);
    expect(await visit(second.resource.remoteUrl, '/second')).toBe('Hello from the test site');

    // The first one ends stopped, its process gone, its log telling the steps.
    const ended = await readUntilStopped(stack.http, base, as());
    expect(ended).toMatchObject({ status: 'stopped', stopReason: 'stopped on request' });
    expect(ended.stopped).toEqual(expect.any(String));
    await expect.poll(() => isAlive(first.pid), { timeout: 30_000, interval: 200 }).toBe(false);
    const logs = await stack.http.get(`${base}/logs?limit=200`, as());
    const messages = logs.body.map((entry: { message: string }) => entry.message);
    expect(messages.indexOf('browser stopping')).toBeGreaterThan(-1);
    expect(messages.indexOf('browser stopped: stopped on request')).toBeGreaterThan(messages.indexOf('browser stopping'));

    // The second browser was never the closing one: it still works after the first is gone.
    expect(await visit(second.resource.remoteUrl, '/still-there')).toBe('Hello from the test site');

    // A stop of a stopped resource answers it as it is.
    const late = await stack.http.post(`${base}/stop`, undefined, as());
    expect(late.status, late.text).toBe(200);
    expect(late.body).toEqual(ended);

    const secondEnd = await stopAndWait(stack.http, `${sessions()}/${sessionId}/${second.resource.id}`, as());
    expect(secondEnd.ended.status).toBe('stopped');
  }, 120_000);

  it('lets the session be deleted right after the stop, once its browser has stopped', async () => {
    const sessionId = await createSession('stop then delete');
    const { resource, pid } = await start(sessionId);
    freeze(pid);
    const stopped = await stack.http.post(`${sessions()}/${sessionId}/${resource.id}/stop`, undefined, as());
    expect(stopped.body.status).toBe('stopping');
    // The delete waits for the teardown rather than dropping a row whose browser still runs.
    const deleted = await stack.http.delete(`${sessions()}/${sessionId}`, as());
    expect(deleted.status, deleted.text).toBe(200);
    await expect.poll(() => isAlive(pid), { timeout: 10_000, interval: 200 }).toBe(false);
    expect(await stack.orm.em.fork().count(SessionResource, { id: resource.id })).toBe(0);
  }, 120_000);
});
