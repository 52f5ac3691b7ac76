import { readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

/**
 * `npm start` after a crash (kill -9, a power cut): the embedded PostgreSQL and the Temporal dev
 * server it started may still run, holding their ports and files. Each left a pid file under
 * DATA_DIR; a process named there whose command line still names this DATA_DIR's files is ours,
 * and is stopped before the new start. A pid reused by an unrelated process is left alone.
 */
export async function stopStaleProcess(options: {
  pidFile: string;
  /** Text the process's command line must contain to be ours (its data folder or file). */
  marker: string;
  what: string;
  /** The signal that asks it to stop cleanly (PostgreSQL: SIGINT, a fast shutdown). */
  signal: NodeJS.Signals;
  /** Signal the process group the pid leads, not the pid alone. */
  group?: boolean;
  /** Remove the pid file afterwards (PostgreSQL removes its own). */
  removePidFile?: boolean;
  log: Logger;
}) {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(options.pidFile, 'utf8').split('\n')[0] ?? '', 10);
  } catch {
    return false;
  }
  const ours = Number.isInteger(pid) && pid > 1 && commandLine(pid).includes(options.marker);
  if (ours) {
    options.log.warn(`stopping the ${options.what} an earlier start left running (pid ${pid})`);
    const target = options.group ? -pid : pid;
    send(target, options.signal);
    const deadline = Date.now() + 15_000;
    while (commandLine(pid).includes(options.marker) && Date.now() < deadline) await sleep(100);
    if (commandLine(pid).includes(options.marker)) {
      send(target, 'SIGKILL');
      while (commandLine(pid).includes(options.marker)) await sleep(50);
    }
  }
  if (options.removePidFile) rmSync(options.pidFile, { force: true });
  return ours;
}

/** The process's command line, or '' when there is none (gone, or a zombie). */
function commandLine(pid: number) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

function send(target: number, signal: NodeJS.Signals) {
  try {
    process.kill(target, signal);
  } catch {
    // gone meanwhile
  }
}
