import type { ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { signalGroup } from './parentDeath.ts';

/** The first restart waits this long, each next one twice as long, up to `MAX_BACKOFF_MS`. */
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 15_000;

export type Supervised = {
  /** The child running now (the last one started). */
  readonly current: ChildProcess;
  /** No restart from now on: the child is being stopped on purpose. */
  stopping(): void;
};

/**
 * Keeps an embedded service of `npm start` (PostgreSQL, the Temporal dev server) running: when its
 * child exits without being asked to, what is left of its process group is killed and `start`
 * runs again after a backoff (0.5 s, 1 s, 2 s … at most 15 s, from 0.5 s again once one
 * succeeds), logged each time. Its clients reconnect on their own; meanwhile the API answers 503,
 * as in any outage of the database or of Temporal.
 */
export function supervise(options: { what: string; log: Logger; first: ChildProcess; start: () => Promise<ChildProcess> }): Supervised {
  const { what, log } = options;
  let current = options.first;
  let stopping = false;

  const restart = async () => {
    for (let attempt = 0; ; attempt += 1) {
      const backoff = Math.min(FIRST_BACKOFF_MS * 2 ** attempt, MAX_BACKOFF_MS);
      await new Promise((resolve) => setTimeout(resolve, backoff).unref());
      if (stopping) return;
      try {
        const child = await options.start();
        current = child;
        // A stop asked for while it started: it was not the current one then, so it is stopped here.
        if (stopping) {
          signalGroup(child.pid, 'SIGKILL');
          return;
        }
        log.warn(`${what} restarted (pid ${child.pid})`);
        watch(child);
        return;
      } catch (error) {
        log.warn({ err: error }, `${what} did not restart (attempt ${attempt + 1}): trying again`);
      }
    }
  };

  const watch = (child: ChildProcess) =>
    child.once('exit', (code, signal) => {
      if (stopping) return;
      // What it leaves of its group (PostgreSQL's backends, a shim's server) would hold the port.
      signalGroup(child.pid, 'SIGKILL');
      log.error(`${what} exited (${code ?? signal}) unasked: restarting it`);
      void restart();
    });
  watch(current);

  return {
    get current() {
      return current;
    },
    stopping() {
      stopping = true;
    },
  };
}
