import { LimitReached } from '../../errors.ts';

/** The limits of one project's calls in contexts (server/config.ts `calls`). */
export type CallLimits = { perProject: number; queueMax: number; queueTimeoutSeconds: number };

type Waiter = { grant: (release: () => void) => void; refuse: (error: Error) => void };

/**
 * Calls in contexts (docs/browsers.md, Contexts for calls) count against a per-project limit of
 * concurrent calls, CALLS_PER_PROJECT, not against the project's browser limit. A call beyond it
 * waits its turn, in order, in a bounded queue: refused (429) only when the queue already holds
 * CALL_QUEUE_MAX calls (`call_queue_full`) or its wait passes CALL_QUEUE_TIMEOUT_SECONDS
 * (`call_queue_timeout`). Runs that are not calls never take a place here, so they never wait
 * behind calls. The count is this api process's: each replica admits its own.
 */
export class CallQueue {
  readonly #limits: () => CallLimits;
  readonly #running = new Map<string, number>();
  readonly #waiting = new Map<string, Waiter[]>();

  constructor(limits: CallLimits | (() => CallLimits)) {
    this.#limits = typeof limits === 'function' ? limits : () => limits;
  }

  /** Calls of `projectId` running / waiting now. */
  running(projectId: string) {
    return this.#running.get(projectId) ?? 0;
  }

  waiting(projectId: string) {
    return this.#waiting.get(projectId)?.length ?? 0;
  }

  /**
   * A place for one call of `projectId`: at once while the project runs fewer than its limit, else
   * after those ahead of it. Answers its release (idempotent), which hands the place on. Aborting
   * `signal` leaves the queue (the abort's reason is thrown).
   */
  async acquire(projectId: string, signal?: AbortSignal): Promise<() => void> {
    const { perProject, queueMax, queueTimeoutSeconds } = this.#limits();
    if (this.running(projectId) < perProject && this.waiting(projectId) === 0) return this.#take(projectId);
    if (this.waiting(projectId) >= queueMax) {
      throw new LimitReached(
        'call_queue_full',
        `This project already runs its maximum of ${perProject} calls at once (CALLS_PER_PROJECT) and ${queueMax} more wait their turn (CALL_QUEUE_MAX): the call queue is full; try again later`,
        { retryable: true },
      );
    }
    signal?.throwIfAborted();
    return new Promise<() => void>((resolve, reject) => {
      const queue = this.#waiting.get(projectId) ?? [];
      this.#waiting.set(projectId, queue);
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        const at = queue.indexOf(waiter);
        if (at >= 0) queue.splice(at, 1);
        if (queue.length === 0 && this.#waiting.get(projectId) === queue) this.#waiting.delete(projectId);
      };
      const waiter: Waiter = {
        grant: (release) => {
          leave();
          resolve(release);
        },
        refuse: (error) => {
          leave();
          reject(error);
        },
      };
      const timer = setTimeout(
        () =>
          waiter.refuse(
            new LimitReached(
              'call_queue_timeout',
              `The call waited ${queueTimeoutSeconds} s (CALL_QUEUE_TIMEOUT_SECONDS) for one of the project's ${perProject} places for calls at once (CALLS_PER_PROJECT) and was not run; try again later`,
              { retryable: true },
            ),
          ),
        queueTimeoutSeconds * 1000,
      );
      timer.unref();
      const aborted = () => waiter.refuse(signal?.reason instanceof Error ? signal.reason : new Error('the call was cancelled'));
      signal?.addEventListener('abort', aborted, { once: true });
      queue.push(waiter);
    });
  }

  #take(projectId: string) {
    this.#running.set(projectId, this.running(projectId) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.get(projectId)?.[0];
      // The place goes straight to the next in line: nobody arriving meanwhile overtakes it.
      if (next) next.grant(this.#handOver(projectId));
      else {
        const left = this.running(projectId) - 1;
        if (left > 0) this.#running.set(projectId, left);
        else this.#running.delete(projectId);
      }
    };
  }

  /** The release of a place handed from one call to the next (the count stays). */
  #handOver(projectId: string) {
    this.#running.set(projectId, this.running(projectId) - 1);
    return this.#take(projectId);
  }
}
