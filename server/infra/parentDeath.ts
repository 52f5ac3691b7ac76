import { spawnSync } from 'node:child_process';

let setprivWorks: boolean | undefined;

/**
 * The command line that runs `command` so that the kernel sends it `signal` when this process
 * ends, however it ends (kill -9 included, where no exit hook runs): util-linux's
 * `setpriv --pdeathsig` sets PR_SET_PDEATHSIG and execs the command, which keeps setpriv's pid, so
 * pid files and process groups stay right. Without setpriv (not Linux; util-linux is essential on
 * Debian), the command as is: a leftover is then ended by the next start (staleProcesses.ts).
 *
 * The signal is tied to the thread that spawned the child; Node spawns from its main thread, which
 * lives as long as the process. A shim in front of the real program must exec it (pyenv's does),
 * since a fork clears the setting.
 */
export function dyingWithThisProcess(command: string, args: string[], signal: 'KILL' | 'INT' | 'TERM'): [string, string[]] {
  setprivWorks ??= spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' }).status === 0;
  return setprivWorks ? ['setpriv', ['--pdeathsig', signal, '--', command, ...args]] : [command, args];
}

/** A child stopped by its signal and still there after this is killed (SIGKILL), with its process group. */
export const KILL_AFTER_MS = 2_000;

/** Sends `signal` to the process group `pid` leads; false when it is gone. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals) {
  if (!pid) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** How often a process that ends with its parent looks whether its parent is still there. */
const PARENT_CHECK_MS = 250;

/**
 * Calls `then` once, when the process that started this one has ended, however it ended: no
 * signal reaches this process when its parent is killed (-9), but the kernel hands it to another
 * parent (init, or a subreaper), so its parent pid changes. Node has no PR_SET_PDEATHSIG of its
 * own; reading the parent pid costs a system call.
 */
export function whenParentEnds(then: () => void) {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    then();
  }, PARENT_CHECK_MS).unref();
}
