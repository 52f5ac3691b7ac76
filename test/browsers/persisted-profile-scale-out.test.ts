import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerUser } from '../support/accounts.ts';
import { browserHostProcess, killBrowsersLeftUnder } from '../support/browserHostProcess.ts';
import { startLoginSite } from '../support/loginSite.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A persisted profile follows its session to another host: saved by the first host at a stop and
 * at its drain, found by the second in the blob store (the database), with no disk shared between
 * them (each host has a DATA_DIR of its own).
 */
const suffix = Date.now().toString(36);
const dataDirs = [mkdtempSync(path.join(os.tmpdir(), 'bf-persist-a-')), mkdtempSync(path.join(os.tmpdir(), 'bf-persist-b-'))];
const hostIds = [`persist-a-${suffix}`, `persist-b-${suffix}`];
let stack: TestStack;
let site: Awaited<ReturnType<typeof startLoginSite>>;
let hosts: ReturnType<typeof browserHostProcess>[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  site = await startLoginSite();
  hosts = hostIds.map((hostId, i) =>
    browserHostProcess(stack, { hostId, dataDir: dataDirs[i] as string, env: { BROWSER_WARM_RECENT: '0', BROWSER_DRAIN_SECONDS: '1' } }),
  );
}, 120_000);

afterAll(async () => {
  for (const host of hosts) await host.kill();
  for (const dir of dataDirs) killBrowsersLeftUnder(dir);
  await site?.close();
  await stack?.close();
});

const loggedIn = (user: string) => ({ server: user, localStorage: user, indexedDB: user, serviceWorkers: 1 });

describe('a persisted profile on another host', () => {
  it('is restored on a second host after a stop, and after a drain, on the first', async () => {
    const owner = await registerUser(stack);
    const as = { token: owner.token };
    const base = `/${(await createProject(stack, owner.token)).slug}/api/sessions`;
    const start = async (sessionId: string, host: string) => {
      const started = await stack.http.post(`${base}/${sessionId}/start`, undefined, as);
      expect(started.status, started.text).toBe(200);
      expect(started.body.host).toBe(host);
      return { remoteUrl: started.body.remoteUrl as string, path: `${base}/${sessionId}/${started.body.id}` };
    };
    const create = async (name: string) => {
      const created = await stack.http.put(base, { name, persist: true }, as);
      expect(created.status, created.text).toBe(200);
      return created.body.id as string;
    };
    const [a, b] = hosts as [ReturnType<typeof browserHostProcess>, ReturnType<typeof browserHostProcess>];
    const [hostA, hostB] = hostIds as [string, string];

    // Only the first host runs: both sessions log in there.
    a.start();
    await a.ready();
    const stopped = await create('stopped on host a');
    const drained = await create('drained on host a');
    const first = await start(stopped, hostA);
    await site.logIn(first.remoteUrl, 'frank');
    await stopAndWait(stack.http, first.path, as);
    const second = await start(drained, hostA);
    await site.logIn(second.remoteUrl, 'grace');

    // The first host is shut down (SIGTERM): it drains, and has the browser still running stopped, which saves it.
    await a.stop();
    await expect.poll(async () => (await stack.http.get(second.path, as)).body.status, { timeout: 30_000 }).toBe('stopped');
    expect((await stack.http.get(second.path, as)).body.stopReason).toMatch(/drained/);

    // The second host, which never saw either, restores both from the database.
    b.start();
    await b.ready();
    const again = await start(stopped, hostB);
    expect(await site.whoIsThere(again.remoteUrl)).toEqual(loggedIn('frank'));
    await stopAndWait(stack.http, again.path, as);
    const afterDrain = await start(drained, hostB);
    expect(await site.whoIsThere(afterDrain.remoteUrl)).toEqual(loggedIn('grace'));
    await stopAndWait(stack.http, afterDrain.path, as);
  }, 300_000);
});
