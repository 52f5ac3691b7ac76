import type { StretchProgress } from '../workflows/contracts/pipelineRun.ts';

/** An attempt as the registry knows it. */
export type RegisteredAttempt = {
  attempt: number;
  progress: () => StretchProgress;
  /** Tells the attempt to stop (at once: its node call is abandoned, as a stop does). */
  supersede: () => void;
  /** Resolves once the attempt has ended and its browser call has settled. */
  settled: Promise<void>;
};

/**
 * The attempts of the stretches under way in this process, by run and activity. Temporal gives
 * an attempt up when its heartbeats stop reaching it (a host that stalled, or lost its connection)
 * and sends a retry to the same host queue, where the earlier attempt may still be running: the
 * retry stops it, waits until its browser call has settled (never two attempts on one page), and
 * resumes from its progress, which is fresher than the last heartbeat Temporal kept.
 */
export class StretchAttempts {
  readonly #runs = new Map<string, Map<string, RegisteredAttempt>>();

  /** Registers an attempt; answers the progress of an earlier attempt of the same stretch here, once it has ended. */
  async take(runId: string, key: string, attempt: RegisteredAttempt): Promise<StretchProgress | undefined> {
    const stretches = this.#runs.get(runId) ?? new Map<string, RegisteredAttempt>();
    this.#runs.set(runId, stretches);
    const before = stretches.get(key);
    if (before && before.attempt > attempt.attempt) {
      // A late start of an attempt Temporal already gave up: the newer one keeps the stretch.
      attempt.supersede();
      return undefined;
    }
    stretches.set(key, attempt);
    if (!before || before.attempt >= attempt.attempt) return undefined;
    before.supersede();
    await before.settled;
    return before.progress();
  }

  /** Forgets an attempt that ended for good (unless a newer one took its place). */
  leave(runId: string, key: string, attempt: number) {
    const stretches = this.#runs.get(runId);
    if (stretches?.get(key)?.attempt !== attempt) return;
    stretches.delete(key);
    if (stretches.size === 0) this.#runs.delete(runId);
  }

  release(runId: string) {
    this.#runs.delete(runId);
  }
}
