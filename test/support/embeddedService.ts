import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { processTree, readProcessTable } from '../../server/browsers/host/chromium/processes.ts';
import { sharedDataDirOf } from '../../server/config.ts';
import { PASSWORD } from './accounts.ts';
import { type Credentials, HttpClient } from './http.ts';
import { embeddedDefaultsEnv, groupAlive, processesMentioning, spawnService } from './processes.ts';
import { startSmtpSink, tokenFromMail } from './smtp.ts';

/**
 * `npm start` on embedded defaults for tests that fault its embedded PostgreSQL and Temporal dev
 * server (test/shutdown-bounds.test.ts, test/main/hung-dependencies.test.ts). Both run in a process
 * group of their own, so one signal reaches all of it (PostgreSQL's postmaster and backends).
 */

export const START_TIMEOUT_MS = 240_000;

/** What the file's `npmStartEmbedded` calls (and the test) leave to end, run after all its tests, newest first. */
export function cleanupsAfterAll() {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }, 60_000);
  return cleanups;
}

/** Whether `condition` holds within `timeoutMs`, on the monotonic clock. */
export async function until(condition: () => boolean, timeoutMs: number, intervalMs = 50) {
  const deadline = performance.now() + timeoutMs;
  while (!condition() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, intervalMs));
  return condition();
}

/**
 * `npm start` under a fresh DATA_DIR, in its own process group (the test's terminal), once it is
 * ready. `cleanups` gets what kills whatever is left of it, stopped processes included.
 */
export async function npmStartEmbedded(cleanups: (() => Promise<void> | void)[], extraEnv: NodeJS.ProcessEnv = {}) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-bounds-'));
  const env: NodeJS.ProcessEnv = { ...(await embeddedDefaultsEnv(dataDir)), RATE_LIMITS: 'off', ...extraEnv };
  const app = spawnService('npm', ['start', '--silent'], env);
  const pid = app.child.pid as number;
  cleanups.push(() => {
    // Whatever a failed test left stopped must be able to die.
    for (const target of processesMentioning(dataDir)) {
      try {
        process.kill(target, 'SIGCONT');
        process.kill(target, 'SIGKILL');
      } catch {
        // gone
      }
    }
    if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sharedDataDirOf(dataDir), { recursive: true, force: true });
  });
  expect(await until(() => app.output().includes('API ready at') || app.child.exitCode !== null, START_TIMEOUT_MS, 250), app.output()).toBe(
    true,
  );
  expect(app.output()).toContain('API ready at');
  return { ...app, pid, dataDir, http: new HttpClient(`http://127.0.0.1:${env.PORT}`) };
}

export type EmbeddedService = Awaited<ReturnType<typeof npmStartEmbedded>>;

/** A verified user (through the SMTP sink) with a project of their own. */
export async function ownerWithProject(service: EmbeddedService, smtp: Awaited<ReturnType<typeof startSmtpSink>>) {
  const { http } = service;
  const email = `owner-${randomBytes(4).toString('hex')}@example.test`;
  await http.post('/api/auth/register', { email, password: PASSWORD, firstName: 'Ada', lastName: 'Lovelace' });
  const mail = await smtp.waitFor((m) => m.to.includes(email) && /verify/i.test(m.subject), 60_000);
  const owner: Credentials = { token: (await http.post('/api/auth/verify/submit', { token: tokenFromMail(mail) })).body.token };
  const slug = `p-${randomBytes(4).toString('hex')}`;
  expect((await http.put('/api/projects', { name: 'Faults', description: '', slug, public: false }, owner)).status).toBe(200);
  return { owner, slug };
}

/**
 * `npm start` sending its mail to an SMTP sink, a verified owner with a project, and a session
 * named `sessionName` in it: where a test that runs pipelines or browsers begins.
 */
export async function npmStartWithOwner(cleanups: (() => Promise<void> | void)[], sessionName: string) {
  const smtp = await startSmtpSink();
  cleanups.push(() => smtp.close());
  const service = await npmStartEmbedded(cleanups, { SMTP_URL: smtp.url });
  const { owner, slug } = await ownerWithProject(service, smtp);
  const session = await service.http.put(`/${slug}/api/sessions`, { name: sessionName }, owner);
  expect(session.status, session.text).toBe(200);
  return { service, http: service.http, owner, slug, sessionId: session.body.id as string };
}

export type EmbeddedDependency = 'PostgreSQL' | 'Temporal';

/** The process group of the embedded PostgreSQL (its postmaster leads it) or of the Temporal dev server. */
export function groupOf(service: EmbeddedService, which: EmbeddedDependency) {
  const file =
    which === 'PostgreSQL'
      ? path.join(sharedDataDirOf(service.dataDir), 'postgres', 'postmaster.pid')
      : path.join(service.dataDir, 'temporal.sqlite.pid');
  return Number.parseInt(readFileSync(file, 'utf8').split('\n')[0] as string, 10);
}

/** Hangs it: every process of its group stopped, its connections left open. Answers the group. */
export function hang(service: EmbeddedService, which: EmbeddedDependency) {
  const group = groupOf(service, which);
  expect(group).toBeGreaterThan(1);
  expect(group, `${which} runs in a process group of its own`).not.toBe(service.pid);
  process.kill(-group, 'SIGSTOP');
  return group;
}

/**
 * Hangs it whole: its leader and every process under it stopped, its connections left open. The
 * group is not enough for PostgreSQL: each backend and helper runs in a session of its own, so a
 * stopped postmaster alone still serves the connections already open. Answers what resumes them
 * (SIGCONT to the same processes), which a test must call in a `finally`.
 */
export function hangWhole(service: EmbeddedService, which: EmbeddedDependency) {
  const leader = groupOf(service, which);
  expect(leader).toBeGreaterThan(1);
  expect(leader, `${which} runs in a process group of its own`).not.toBe(service.pid);
  const pids = processTree(readProcessTable(), leader).map((proc) => proc.pid);
  expect(pids.length, `${which}'s processes`).toBeGreaterThan(0);
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  return {
    pids,
    resume() {
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // gone
        }
      }
    },
  };
}
