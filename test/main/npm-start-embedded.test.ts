import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedDataDirOf } from '../../server/config.ts';
import { freePort } from '../../server/infra/ports.ts';
import { embeddedDefaultsEnv, groupAlive, processesMentioning, spawnService } from '../support/processes.ts';

/**
 * `npm start` as the README runs it: no DATABASE_URL and no TEMPORAL_ADDRESS, so it brings up
 * its embedded PostgreSQL and a Temporal dev server under DATA_DIR. It must serve GET /api, and
 * on SIGTERM stop everything it started: no PostgreSQL or Temporal left running.
 */

const START_TIMEOUT_MS = 240_000;
const STOP_TIMEOUT_MS = 60_000;

const started: { child?: ChildProcess; dataDir: string }[] = [];

afterAll(async () => {
  for (const { child, dataDir } of started) {
    if (child?.pid && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
    for (const pid of processesMentioning(dataDir)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sharedDataDirOf(dataDir), { recursive: true, force: true });
  }
}, STOP_TIMEOUT_MS);

/** `command` run as `nobody` (no groups): another local user of the machine. */
function asAnotherUser(command: string[]) {
  return spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', ...command], { encoding: 'utf8' });
}

/** DATA_DIR 0700, everything in it 0600 (folders 0700), and another local user reads none of it. */
function expectPrivate(dataDir: string) {
  expect(statSync(dataDir).mode & 0o777, 'DATA_DIR').toBe(0o700);
  const files = readdirSync(dataDir, { recursive: true, encoding: 'utf8' }).map((name) => path.join(dataDir, name));
  for (const file of ['jwt-secret', 'temporal.sqlite', 'temporal.sqlite.log']) expect(files).toContain(path.join(dataDir, file));
  for (const file of files) {
    // SQLite's journal comes and goes while Temporal writes: a file gone since the listing is skipped.
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (!stat) continue;
    expect(stat.mode & 0o777, file).toBe(stat.isDirectory() ? 0o700 : 0o600);
  }
  for (const command of [
    ['cat', path.join(dataDir, 'jwt-secret')],
    ['cat', path.join(dataDir, 'temporal.sqlite')],
    ['ls', dataDir],
  ]) {
    const run = asAnotherUser(command);
    expect(run.status, `${command.join(' ')} as nobody`).not.toBe(0);
    expect(run.stderr).toMatch(/Permission denied/);
  }
  // The proof that `nobody` runs at all, and what it may reach: the folder beside DATA_DIR.
  expect(asAnotherUser(['test', '-x', sharedDataDirOf(dataDir)]).status).toBe(0);
}

async function npmStart(dataDir: string, port: number) {
  const env = await embeddedDefaultsEnv(dataDir, port);
  const app = spawnService('npm', ['start', '--silent'], env);
  started.push({ child: app.child, dataDir });
  return app;
}

describe('npm start on embedded defaults', () => {
  it('serves GET /api, and SIGTERM stops it and everything it started', { timeout: START_TIMEOUT_MS + STOP_TIMEOUT_MS }, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-embedded-'));
    // As an earlier version left it: open to every local user, its secret too.
    chmodSync(dataDir, 0o755);
    writeFileSync(path.join(dataDir, 'jwt-secret'), randomBytes(32).toString('hex'), { mode: 0o644 });
    const port = await freePort();
    const app = await npmStart(dataDir, port);

    const deadline = Date.now() + START_TIMEOUT_MS;
    let ready = false;
    while (!ready && Date.now() < deadline && app.child.exitCode === null) {
      ready = app.output().includes('API ready at');
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(ready, app.output().slice(-4000)).toBe(true);
    const api = await fetch(`http://127.0.0.1:${port}/api`);
    expect(api.status).toBe(200);
    expect(await api.json()).toMatchObject({ name: 'browserflow' });
    expect(processesMentioning(dataDir).length, 'PostgreSQL and Temporal run under DATA_DIR').toBeGreaterThanOrEqual(2);
    expectPrivate(dataDir);

    const pid = app.child.pid as number;
    process.kill(-pid, 'SIGTERM');
    const stopDeadline = Date.now() + STOP_TIMEOUT_MS;
    while ((groupAlive(pid) || processesMentioning(dataDir).length) && Date.now() < stopDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(groupAlive(pid), app.output().slice(-4000)).toBe(false);
    expect(processesMentioning(dataDir), 'nothing of it is left running').toEqual([]);
    const { code, signal } = await app.exited;
    expect({ code, signal }).not.toEqual({ code: null, signal: 'SIGKILL' });
    const logged = app.output();
    expect(logged).toContain('SIGTERM: shutting down');
    expect(logged).not.toMatch(/"level":(50|60)/);
  });

  it('killed (SIGTERM, then SIGKILL), leaves no PostgreSQL or Temporal dev server running, and the next start comes up', {
    timeout: 2 * START_TIMEOUT_MS + STOP_TIMEOUT_MS,
  }, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-crashed-'));
    const port = await freePort();
    const env = await embeddedDefaultsEnv(dataDir, port);
    const ready = async (app: ReturnType<typeof spawnService>) => {
      const deadline = Date.now() + START_TIMEOUT_MS;
      while (Date.now() < deadline && app.child.exitCode === null && !app.output().includes('API ready at')) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(app.output().includes('API ready at'), app.output().slice(-4000)).toBe(true);
    };
    const first = spawnService('npm', ['start', '--silent'], env);
    started.push({ child: first.child, dataDir });
    await ready(first);
    expect(processesMentioning(dataDir).length, 'PostgreSQL and Temporal run under DATA_DIR').toBeGreaterThanOrEqual(2);
    // The service's own process: asked to stop, then killed outright before its shutdown is done,
    // so no stop step and no exit hook of it runs.
    const service = processesMentioning('server/main/start.ts').filter((pid) => {
      try {
        // The node process, not the shell npm runs it from.
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return !command.includes('check-node') && readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`DATA_DIR=${dataDir}`);
      } catch {
        return false;
      }
    });
    expect(service).toHaveLength(1);
    process.kill(service[0] as number, 'SIGTERM');
    process.kill(service[0] as number, 'SIGKILL');
    await first.exited;
    // The kernel's parent-death signal ends them: SIGKILL for the dev server, SIGINT (a fast
    // shutdown) for PostgreSQL.
    const deadline = Date.now() + 15_000;
    while (processesMentioning(dataDir).length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(processesMentioning(dataDir), 'nothing outlives the killed start').toEqual([]);

    const second = spawnService('npm', ['start', '--silent'], env);
    started.push({ child: second.child, dataDir });
    await ready(second);
    expect((await fetch(`http://127.0.0.1:${port}/api`)).status).toBe(200);
    expect(second.output()).not.toMatch(/"level":(50|60)/);

    const pid = second.child.pid as number;
    process.kill(-pid, 'SIGTERM');
    const stopDeadline = Date.now() + STOP_TIMEOUT_MS;
    while ((groupAlive(pid) || processesMentioning(dataDir).length) && Date.now() < stopDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(processesMentioning(dataDir), 'nothing of either start is left running').toEqual([]);
  });

  it.runIf(process.getuid?.() === 0)(
    'as root, says in one line why PostgreSQL cannot use a DATA_DIR it cannot enter',
    { timeout: 120_000 },
    async () => {
      const parent = mkdtempSync(path.join(os.tmpdir(), 'bf-private-'));
      chmodSync(parent, 0o700);
      const dataDir = path.join(parent, 'data');
      mkdirSync(dataDir);
      started.push({ dataDir: parent });
      const app = await npmStart(dataDir, await freePort());
      const { code } = await app.exited;
      expect(code, app.output()).not.toBe(0);
      const fatal = app
        .output()
        .split('\n')
        .filter((line) => line.includes('"level":60'))
        .map((line) => JSON.parse(line) as { msg: string });
      expect(fatal).toHaveLength(1);
      expect(fatal[0]?.msg).toMatch(/cannot enter .*bf-private-.*chmod o\+x/);
      expect(fatal[0]?.msg).not.toContain('\n');
    },
  );
});
