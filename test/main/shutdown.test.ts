import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedDataDirOf } from '../../server/config.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { embeddedDefaultsEnv, processesMentioning, spawnService } from '../support/processes.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Graceful shutdown: open log streams do not hold the api's close, and a signal during start-up
 * stops what start-up had already started.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
}, 120_000);

describe('closing the api', () => {
  let stack: TestStack;

  it('ends an open SSE log stream of a running browser and returns at once', { timeout: 120_000 }, async () => {
    stack = await startTestStack({}, { browserHost: true });
    // The app is closed by the test; the rest of the stack (the browser host stops the browser) after.
    cleanups.push(() => stack.close());
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'shutdown' }, { token: owner.token });
    expect(created.status, created.text).toBe(200);
    const started = await stack.http.post(`/${project.slug}/api/sessions/${created.body.id}/start`, undefined, { token: owner.token });
    expect(started.status, started.text).toBe(200);

    const response = await fetch(`${stack.url}/${project.slug}/api/sessions/${created.body.id}/${started.body.id}/logs`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${owner.token}` },
    });
    expect(response.status).toBe(200);
    if (!response.body) throw new Error('no body');
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('event: log')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before any entry:\n${text}`);
      text += decoder.decode(value, { stream: true });
    }
    // The stream is live: the browser runs, nothing ends it by itself.
    const streamEnded = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return Date.now();
        text += decoder.decode(value, { stream: true });
      }
    })();

    const closing = Date.now();
    const within = <T>(promise: Promise<T>) =>
      Promise.race([promise, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 5_000))]);
    expect(await within(stack.app.close().then(() => 'closed')), 'app.close() returns within 5 s').toBe('closed');
    const endedAt = await within(streamEnded);
    expect(endedAt, 'the stream ends within 5 s').not.toBe('timeout');
    expect((endedAt as number) - closing).toBeLessThan(5_000);
    // The stream did not finish (the browser still runs): no `end` event, so a client reconnects.
    expect(text).not.toContain('event: end');
  });
});

/** `node server/main/start.ts` on embedded defaults (no DATABASE_URL, no TEMPORAL_ADDRESS) under `dataDir`. */
async function startAllInOne(dataDir: string) {
  const env = await embeddedDefaultsEnv(dataDir);
  // Its own process group: a terminal's Ctrl-C would reach PostgreSQL too; SIGTERM to the node
  // process alone is the harder case, where only start.ts can stop its children.
  const app = spawnService(process.execPath, ['server/main/start.ts'], env);
  const { child } = app;
  cleanups.push(() => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
    for (const pid of processesMentioning(dataDir)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sharedDataDirOf(dataDir), { recursive: true, force: true });
  });
  return app;
}

/** Whether `condition` holds within `timeoutMs`, on the monotonic clock (a wall-clock step must not cut the wait short). */
async function until(condition: () => boolean, timeoutMs: number, intervalMs = 50) {
  const deadline = performance.now() + timeoutMs;
  while (!condition() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, intervalMs));
  return condition();
}

describe('a signal during start-up', () => {
  it.each([
    {
      step: 'embedded PostgreSQL',
      log: 'starting embedded PostgreSQL',
      running: (dataDir: string) => processesMentioning(path.join(sharedDataDirOf(dataDir), 'postgres')).length > 0,
    },
    {
      step: 'the Temporal dev server',
      log: 'starting a local Temporal dev server',
      running: (dataDir: string) => processesMentioning(path.join(dataDir, 'temporal.sqlite')).length > 0,
    },
  ])('while $step starts stops everything started so far', { timeout: 180_000 }, async ({ log, running }) => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-shutdown-'));
    const app = await startAllInOne(dataDir);

    expect(await until(() => app.output().includes(log) || app.child.exitCode !== null, 150_000), app.output()).toBe(true);
    // SIGTERM once the step's process exists, while start-up waits for it to be ready.
    expect(await until(() => running(dataDir), 30_000, 20), app.output()).toBe(true);
    expect(app.output()).not.toContain('API ready at');
    process.kill(app.child.pid as number, 'SIGTERM');

    const exitedInTime = await Promise.race([
      app.exited.then(() => true),
      new Promise((resolve) => setTimeout(() => resolve(false), 60_000)),
    ]);
    expect(exitedInTime, app.output()).toBe(true);
    expect(await app.exited, app.output()).toEqual({ code: 0, signal: null });
    // The detached Temporal dev server and PostgreSQL are gone with it.
    expect(await until(() => processesMentioning(dataDir).length === 0, 10_000), app.output()).toBe(true);
    expect(app.output()).toContain('SIGTERM: shutting down');
    expect(app.output()).not.toContain('API ready at');
    expect(app.output()).not.toMatch(/"level":(50|60)/);
    // The worker stops before its connection closes (runWorker, server/infra/temporalRuntime.ts).
    expect(app.output()).not.toContain('IllegalStateError');
  });
});

describe('a signal once started', () => {
  it('runs the whole graceful shutdown, to exit code 0, and leaves nothing running', { timeout: 300_000 }, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-shutdown-'));
    const app = await startAllInOne(dataDir);
    expect(await until(() => app.output().includes('API ready at') || app.child.exitCode !== null, 240_000, 250), app.output()).toBe(true);
    expect(app.output()).toContain('API ready at');
    process.kill(app.child.pid as number, 'SIGTERM');
    // Exit code 0 comes only after every stop step ran: embedded PostgreSQL's own signal handler
    // (which exited at once, 143) no longer cuts the shutdown short.
    expect(await app.exited, app.output()).toEqual({ code: 0, signal: null });
    expect(await until(() => processesMentioning(dataDir).length === 0, 10_000), app.output()).toBe(true);
    expect(app.output()).not.toMatch(/"level":(50|60)/);
    // The worker stops before its connection closes (runWorker, server/infra/temporalRuntime.ts).
    expect(app.output()).not.toContain('IllegalStateError');
    // No step of a normal shutdown runs out of its time (the database's close is bounded by itself).
    expect(app.output()).not.toMatch(/took more than \d+ ms/);
  });
});
