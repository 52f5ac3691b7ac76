import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { BrowserHost } from '../../db/entities/index.ts';
import { findProcessesMentioning } from '../../server/browsers/host/chromium/processes.ts';
import { sharedDataDirOf } from '../../server/config.ts';
import { PAGE_HOST } from './pages.ts';
import type { TestStack } from './stack.ts';

/**
 * A browser host as its own process (`server/main/browserHost.ts`), as production runs it,
 * serving `stack`: started, killed (SIGKILL) or frozen (SIGSTOP/SIGCONT) by the test, restarted
 * with the same host id. What it writes (warnings and up) is passed on and kept in `output`.
 */
export function browserHostProcess(
  stack: TestStack,
  options: {
    hostId: string;
    dataDir: string;
    /** BROWSER_HOST_ADDRESS: where its relay listens (a loopback address of its own, e.g. 127.0.0.2). */
    address?: string;
    /** More of its environment (BROWSER_WARM_POOL, BROWSER_RELAY_SECRET, BROWSERS_PER_HOST, BROWSER_DRAIN_SECONDS, …). */
    env?: Record<string, string>;
  },
) {
  let child: ChildProcess | undefined;
  let output = '';
  const running = () => child && child.exitCode === null && child.signalCode === null;
  return {
    get output() {
      return output;
    },
    clearOutput() {
      output = '';
    },
    start() {
      const started = spawn(process.execPath, ['server/main/browserHost.ts'], {
        cwd: path.join(import.meta.dirname, '..', '..'),
        env: {
          ...process.env,
          NODE_ENV: 'test',
          DATABASE_URL: stack.config.databaseUrl,
          TEMPORAL_ADDRESS: stack.config.temporal.address,
          BROWSER_HOST_ID: options.hostId,
          DATA_DIR: options.dataDir,
          BROWSER_WARM_POOL: '0',
          BROWSER_WARM_POOL_MAX: '0',
          BROWSER_ALLOWED_PRIVATE_DESTINATIONS: PAGE_HOST,
          JWT_SECRET: stack.config.jwtSecret,
          LOG_LEVEL: 'warn',
          ...(options.address ? { BROWSER_HOST_ADDRESS: options.address } : {}),
          ...options.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const keep = (chunk: Buffer) => {
        process.stderr.write(chunk);
        output += chunk.toString('utf8');
      };
      started.stdout?.on('data', keep);
      started.stderr?.on('data', keep);
      child = started;
    },
    /** Whether the host's heartbeat row is fresh: it serves its queue. */
    async alive() {
      const row = await stack.orm.em.fork().findOne(BrowserHost, { id: options.hostId });
      return Boolean(row && Date.now() - row.heartbeatAt.getTime() < 10_000);
    },
    /** Waits until the host heartbeats (usable outside a test body, where `expect.poll` is not). */
    async ready(timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      while (!(await this.alive())) {
        if (Date.now() > until) throw new Error(`browser host ${options.hostId} did not heartbeat within ${timeoutMs} ms:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    /** Kills the process at once, as a crash would (Chromium is left to its own fate). */
    async kill() {
      const dying = child;
      if (!dying || !running()) return;
      const exited = new Promise((resolve) => dying.once('exit', resolve));
      // A frozen process takes a SIGKILL as well.
      dying.kill('SIGKILL');
      await exited;
    },
    /** Stops the process as an operator would (SIGTERM: it drains, then closes its browsers), killing it if that takes over 20 s. */
    async stop() {
      const stopping = child;
      if (!stopping || !running()) return;
      const exited = new Promise((resolve) => stopping.once('exit', resolve));
      stopping.kill('SIGTERM');
      const timer = setTimeout(() => stopping.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
    /** Sends SIGTERM, or SIGINT (a Ctrl-C): the host drains, then exits; answers its exit code once it has exited. */
    async terminate(signal: 'SIGTERM' | 'SIGINT' = 'SIGTERM') {
      const stopping = child;
      if (!stopping || !running()) return stopping?.exitCode ?? null;
      const exited = new Promise<number | null>((resolve) => stopping.once('exit', (code) => resolve(code)));
      stopping.kill(signal);
      return exited;
    },
    /** Whether the process still runs. */
    get running() {
      return Boolean(running());
    },
    /** Freezes the process (its browsers run on): a host that stalls, as under a long pause of the machine. */
    freeze() {
      if (running()) child?.kill('SIGSTOP');
    },
    thaw() {
      if (running()) child?.kill('SIGCONT');
    },
  };
}

/** Kills the Chromium processes that hosts with DATA_DIR `dataDir` left behind (a test's teardown: hosts killed mid-run leave theirs). */
export function killBrowsersLeftUnder(dataDir: string) {
  for (const pid of findProcessesMentioning(path.join(sharedDataDirOf(dataDir), 'browsers'))) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
}
