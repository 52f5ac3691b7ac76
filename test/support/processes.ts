import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../server/infra/ports.ts';
import { HttpClient } from './http.ts';
import { PAGE_HOST } from './pages.ts';
import type { TestStack } from './stack.ts';

/** For tests that run the service's own processes (npm start, server/main/start.ts). */

export { findProcessesMentioning as processesMentioning } from '../../server/browsers/host/chromium/processes.ts';

export const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Whether anything of the process group led by `pid` still runs (one signal reaches them all). */
export function groupAlive(pid: number) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The environment of a start on embedded defaults under `dataDir`, on free ports: no
 * DATABASE_URL and no TEMPORAL_ADDRESS, and nothing else from the test run's environment that
 * points elsewhere.
 */
export async function embeddedDefaultsEnv(dataDir: string, port?: number): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.join(projectRoot, 'node_modules/.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    npm_config_update_notifier: 'false',
    NODE_ENV: 'development',
    PORT: String(port ?? (await freePort())),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
    TEMPORAL_DEV_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    BROWSER_WARM_POOL: '0',
    BROWSER_WARM_POOL_MAX: '0',
    BROWSER_ALLOWED_PRIVATE_DESTINATIONS: PAGE_HOST,
    LOG_LEVEL: 'info',
  };
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'PUBLIC_URL', 'SMTP_URL', 'JWT_SECRET', 'TEMPORAL_TASK_QUEUE']) delete env[name];
  return env;
}

/**
 * `command` in its own process group (one signal reaches all it starts) from the project root,
 * its output kept (the last 200 kB) for the test to read and to show on failure.
 */
export function spawnService(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { cwd: projectRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => output };
}

/**
 * Another api replica beside a test stack: `npm run start:api`'s main (server/main/api.ts) in its
 * own process, on the stack's settings (database, Temporal, JWT secret, so a key or a token works
 * on both) with its own port, and `databaseUrl` when it should reach the database another way.
 */
export async function startApiProcess(stack: TestStack, options: { databaseUrl?: string } = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const service = spawnService(process.execPath, ['server/main/api.ts'], {
    ...process.env,
    ...stack.settings,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: url,
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'bf-api-')),
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
  });
  const http = new HttpClient(url);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const exited = await Promise.race([service.exited, new Promise<false>((resolve) => setTimeout(() => resolve(false), 200))]);
    if (exited) throw new Error(`the api process exited (${exited.code ?? exited.signal}) before it answered:\n${service.output()}`);
    const answer = await http.get('/api').catch(() => undefined);
    if (answer?.status === 200) break;
    if (Date.now() > deadline) throw new Error(`the api process did not answer in 60 s:\n${service.output()}`);
  }
  return {
    url,
    http,
    output: service.output,
    /** SIGTERM, as a deployment stops it; SIGKILL if it has not gone in 30 s. */
    async stop() {
      const pid = service.child.pid;
      if (!pid || !groupAlive(pid)) return;
      process.kill(-pid, 'SIGTERM');
      const gone = await Promise.race([service.exited, new Promise<false>((resolve) => setTimeout(() => resolve(false), 30_000))]);
      if (!gone && groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    },
  };
}
