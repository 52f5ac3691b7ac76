import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserflowClient } from '../../client/index.ts';
import { BrowserHost } from '../../db/entities/index.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { browserHostProcess } from '../support/browserHostProcess.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let second: ReturnType<typeof browserHostProcess>;
const secondId = `second-${Date.now()}`;
let admin: Awaited<ReturnType<typeof registerUser>>;
let user: Awaited<ReturnType<typeof registerUser>>;

beforeAll(async () => {
  // The stack's own host keeps one warm browser of the default settings; the second runs apart.
  stack = await startTestStack({ BROWSER_WARM_POOL: '1' }, { browserHost: true });
  second = browserHostProcess(stack, { hostId: secondId, dataDir: mkdtempSync(path.join(os.tmpdir(), 'bf-host2-')) });
  second.start();
  // ADMIN_EMAILS of the test stack.
  admin = await registerUser(stack, { email: 'admin@example.test' });
  user = await registerUser(stack);
  for (const deadline = Date.now() + 30_000; !(await second.alive()); await sleep(300)) {
    if (Date.now() > deadline) throw new Error(`the second host did not heartbeat within 30 s:\n${second.output}`);
  }
});
afterAll(async () => {
  await second?.kill();
  await stack?.close();
});

type Host = {
  id: string;
  address: string;
  relayPort: number | null;
  capacity: number;
  load: number;
  warmBrowsers: { count: number; bySignature: Record<string, number> };
  warmSignatures: string[];
  warmPool: { floor: number; max: number; target: number; size: number } | null;
  lastHeartbeat: string;
  drainingSince: string | null;
  state: 'live' | 'draining' | 'gone';
};

describe('GET /api/admin/hosts', () => {
  it('a global admin sees both running hosts, their load and warm browsers, a draining host and a host long gone', async () => {
    const ownId = stack.config.browsers.hostId;
    // A host that stopped heartbeating a while ago keeps its row.
    const em = stack.orm.em.fork();
    em.create(BrowserHost, {
      id: `retired-${Date.now()}`,
      address: '10.0.0.9',
      capacity: 4,
      heartbeatAt: new Date(Date.now() - 10 * 60_000),
      warmSignatures: [],
    });
    // One that heartbeats but was asked to stop: it finishes its browsers and takes no new ones.
    em.create(BrowserHost, {
      id: `draining-${Date.now()}`,
      address: '10.0.0.10',
      capacity: 4,
      heartbeatAt: new Date(),
      warmSignatures: [],
      drainingSince: new Date(),
    });
    await em.flush();
    await expect
      .poll(async () => {
        const hosts = (await stack.http.get('/api/admin/hosts', { token: admin.token })).body as Host[];
        return hosts.find((host) => host.id === ownId)?.warmBrowsers.count;
      })
      .toBe(1);

    // A browser of the admin's own project holds a place on one of the two.
    const project = await createProject(stack, admin.token);
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'held' }, { token: admin.token });
    const started = await stack.http.post(`/${project.slug}/api/sessions/${session.body.id}/start`, undefined, { token: admin.token });
    expect(started.status, started.text).toBe(200);

    const answer = await stack.http.get('/api/admin/hosts', { token: admin.token });
    expect(answer.status, answer.text).toBe(200);
    const hosts = answer.body as Host[];
    const own = hosts.find((host) => host.id === ownId);
    const other = hosts.find((host) => host.id === secondId);
    const retired = hosts.find((host) => host.id.startsWith('retired-'));
    const draining = hosts.find((host) => host.id.startsWith('draining-'));
    expect(own).toMatchObject({ state: 'live', address: stack.config.browsers.hostAddress, capacity: stack.config.browsers.perHost });
    expect(other).toMatchObject({ state: 'live', warmBrowsers: { count: 0, bySignature: {} } });
    expect(retired).toMatchObject({ state: 'gone', load: 0, address: '10.0.0.9', drainingSince: null });
    expect(draining).toMatchObject({ state: 'draining', address: '10.0.0.10' });
    expect(Date.parse(draining?.drainingSince ?? '')).toBeGreaterThan(Date.now() - 60_000);
    expect(own?.warmSignatures.length).toBeGreaterThan(0);
    // A fixed pool of 1 (the test stack sets no room above BROWSER_WARM_POOL); a row without figures shows none.
    expect(own?.warmPool).toMatchObject({ floor: 1, max: 1, target: 1 });
    expect(retired?.warmPool).toBeNull();
    expect((own?.load ?? 0) + (other?.load ?? 0)).toBe(1);
    expect(Object.values(own?.warmBrowsers.bySignature ?? {}).reduce((sum, n) => sum + n, 0)).toBe(own?.warmBrowsers.count);
    for (const host of [own, other]) expect(Date.now() - Date.parse(host?.lastHeartbeat ?? '')).toBeLessThan(15_000);

    // The same through the SDK, with the admin's full-access key.
    const key = await createApiKey(stack, admin.token, { accessType: 'full' });
    const viaSdk = await createBrowserflowClient({ url: stack.url, apiKey: key.secret }).admin.hosts.query();
    expect(viaSdk.map((host) => host.id)).toEqual(expect.arrayContaining([ownId, secondId]));

    await stopAndWait(stack.http, `/${project.slug}/api/sessions/${session.body.id}/${started.body.id}`, { token: admin.token });
  });

  it('a signed-in user who is not a global admin gets 403 with the error body', async () => {
    const answer = await stack.http.get('/api/admin/hosts', { token: user.token });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ status: 'error', code: 'forbidden' });
  });

  it('an API key of a non-admin gets 403, as does an admin’s key narrowed to projects', async () => {
    const key = await createApiKey(stack, user.token, { accessType: 'full' });
    const answer = await stack.http.get('/api/admin/hosts', { apiKey: key.secret });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ status: 'error', code: 'forbidden' });

    const project = await createProject(stack, admin.token);
    const narrowed = await createApiKey(stack, admin.token, { accessType: 'projects', projectIds: [project.id] });
    expect((await stack.http.get('/api/admin/hosts', { apiKey: narrowed.secret })).status).toBe(403);
  });

  it('an anonymous caller gets 401', async () => {
    const answer = await stack.http.get('/api/admin/hosts');
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ status: 'error', code: 'unauthenticated' });
  });
});
