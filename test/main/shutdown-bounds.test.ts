import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDataDirOf } from '../../server/config.ts';
import { PASSWORD } from '../support/accounts.ts';
import {
  cleanupsAfterAll,
  type EmbeddedService,
  groupOf,
  hang,
  npmStartEmbedded,
  npmStartWithOwner,
  START_TIMEOUT_MS,
  until,
} from '../support/embeddedService.ts';
import { longWaitSource } from '../support/pipelines.ts';
import { groupAlive, processesMentioning } from '../support/processes.ts';

/**
 * A shutdown that always ends: `npm start` on embedded defaults, stopped while its PostgreSQL or
 * Temporal dev server hangs (SIGSTOP: connections open, nothing answers, the worst case for a
 * client's pool), ends within its bound and leaves nothing running. The embedded services run in
 * their own process group, so a Ctrl-C (SIGINT to the whole group, as a terminal sends it) reaches
 * only npm and node.
 */

/** start.ts's own bound is 9 s (plus 0.5 s to exit); the rest is slack for a loaded 2-core machine. */
const BOUND_MS = 11_000;

const cleanups = cleanupsAfterAll();

/** API traffic that needs the database, left waiting: what held the pool in the outage. */
function traffic(service: EmbeddedService) {
  for (let i = 0; i < 8; i += 1) {
    service.http
      .post('/api/auth/register', {
        email: `t-${randomBytes(4).toString('hex')}@example.test`,
        password: PASSWORD,
        firstName: 'A',
        lastName: 'B',
      })
      .catch(() => {});
  }
}

/** Milliseconds until npm and node are gone (the group empty), at most `BOUND_MS + 10 s`. */
async function timeUntilGone(service: EmbeddedService, since: number) {
  await until(() => !groupAlive(service.pid), BOUND_MS + 10_000, 50);
  return performance.now() - since;
}

describe('a shutdown with an embedded service down', () => {
  it.each([
    { how: 'Ctrl-C', down: 'PostgreSQL' as const },
    { how: 'Ctrl-C', down: 'Temporal' as const },
    { how: "SIGTERM to npm's pid", down: 'PostgreSQL' as const },
    { how: "SIGTERM to npm's pid", down: 'Temporal' as const },
  ])(
    '$how ends within its bound with $down hung, and leaves nothing running',
    { timeout: START_TIMEOUT_MS + 60_000 },
    async ({ how, down }) => {
      const service = await npmStartEmbedded(cleanups);
      hang(service, down);
      traffic(service);
      await new Promise((resolve) => setTimeout(resolve, 1_000));

      const signalledAt = performance.now();
      // A terminal's Ctrl-C goes to its foreground group: npm and node (the embedded services are not
      // in it). SIGTERM to npm's pid alone reaches node only because npm start hands it over.
      if (how === 'Ctrl-C') process.kill(-service.pid, 'SIGINT');
      else process.kill(service.pid, 'SIGTERM');
      const tookMs = await timeUntilGone(service, signalledAt);
      expect(groupAlive(service.pid), service.output().slice(-6000)).toBe(false);
      expect(tookMs, service.output().slice(-6000)).toBeLessThan(BOUND_MS);
      expect(service.output()).toContain(how === 'Ctrl-C' ? 'SIGINT: shutting down' : 'SIGTERM: shutting down');
      // Stopped by the service, last: the hung one is killed when it does not stop in time.
      expect(await until(() => processesMentioning(service.dataDir).length === 0, 5_000), service.output().slice(-6000)).toBe(true);
    },
  );
});

describe('a second Ctrl-C', () => {
  it('exits at once, after killing the browsers, while the first shutdown waits on a hung PostgreSQL', {
    timeout: START_TIMEOUT_MS + 120_000,
  }, async () => {
    const { service, http, owner, slug, sessionId } = await npmStartWithOwner(cleanups, 'running');
    const started = await http.post(`/${slug}/api/sessions/${sessionId}/start`, undefined, owner);
    expect(started.status, started.text).toBe(200);
    const browsers = () => processesMentioning(path.join(sharedDataDirOf(service.dataDir), 'browsers'));
    expect(browsers().length, 'a Chromium runs').toBeGreaterThan(0);

    hang(service, 'PostgreSQL');
    process.kill(-service.pid, 'SIGINT');
    // The first shutdown is under way: the api closed, the browser host waits on the database.
    expect(await until(() => service.output().includes('SIGINT: shutting down'), 5_000), service.output()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(groupAlive(service.pid), 'still shutting down').toBe(true);

    const againAt = performance.now();
    process.kill(-service.pid, 'SIGINT');
    await until(() => !groupAlive(service.pid), 10_000, 20);
    expect(groupAlive(service.pid), service.output().slice(-6000)).toBe(false);
    expect(performance.now() - againAt, service.output().slice(-6000)).toBeLessThan(1_500);
    expect(service.output()).toContain('SIGINT again: killing the browsers and exiting now');
    expect(browsers(), 'no Chromium outlives it').toEqual([]);
    expect(await until(() => processesMentioning(service.dataDir).length === 0, 5_000), service.output().slice(-6000)).toBe(true);
  });
});

describe('supervised embedded services', () => {
  it('restarts the embedded PostgreSQL and the Temporal dev server after a kill -9, a run in flight finishes, and a kill -9 of the service leaves nothing', {
    timeout: START_TIMEOUT_MS + 240_000,
  }, async () => {
    const { service, http, owner, slug, sessionId } = await npmStartWithOwner(cleanups, 'supervised');
    const pipeline = await http.put(
      `/${slug}/api/pipelines`,
      { name: 'through faults', description: '', source: longWaitSource(15_000) },
      owner,
    );
    expect(pipeline.status, pipeline.text).toBe(200);
    const started = await http.post(`/${slug}/api/pipelines/${pipeline.body.id}/start`, { session: sessionId }, owner);
    expect(started.status, started.text).toBe(200);
    const runUrl = `/${slug}/api/pipelines/${pipeline.body.id}/${started.body.id}`;
    await expect
      .poll(async () => (await http.get(runUrl, owner)).body.status?.pipeline, { timeout: 60_000, interval: 300 })
      .toBe('running');

    for (const which of ['PostgreSQL', 'Temporal'] as const) {
      const before = groupOf(service, which);
      process.kill(before, 'SIGKILL');
      const restarted = which === 'PostgreSQL' ? 'embedded PostgreSQL restarted' : 'the Temporal dev server restarted';
      // Meanwhile the API answers, 503 at worst (never a 500), until it answers from the database again.
      const statuses = new Set<number>();
      const deadline = performance.now() + 60_000;
      for (;;) {
        const { status } = await http.get(`/${slug}/api/sessions`, owner);
        statuses.add(status);
        if ((status === 200 && service.output().includes(restarted)) || performance.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(service.output(), service.output().slice(-6000)).toContain(restarted);
      expect(
        [...statuses].filter((status) => status !== 200 && status !== 503),
        `answers while ${which} was away`,
      ).toEqual([]);
      // Running again in a new process.
      expect(groupOf(service, which)).not.toBe(before);
    }
    expect(service.output()).toMatch(/embedded PostgreSQL exited \(SIGKILL\) unasked: restarting it/);
    expect(service.output()).toMatch(/the Temporal dev server exited \(SIGKILL\) unasked: restarting it/);

    await expect
      .poll(async () => (await http.get(runUrl, owner)).body.status?.pipeline, { timeout: 120_000, interval: 500 })
      .toMatch(/succeeded|failed|cancelled/);
    const run = (await http.get(runUrl, owner)).body;
    expect(run.status.pipeline, JSON.stringify(run)).toBe('succeeded');

    // kill -9 of the whole service (npm and node): the embedded services and browsers die with it.
    process.kill(-service.pid, 'SIGKILL');
    expect(await until(() => processesMentioning(service.dataDir).length === 0, 10_000), 'nothing of it is left running').toBe(true);
  });
});
