import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../server/infra/ports.ts';
import { PAGE_HOST } from './pages.ts';

/** For tests that run the service's own processes (npm start, server/main/start.ts). */

export { findProcessesMentioning as processesMentioning } from '../../server/browsers/host/processes.ts';

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
