import type { RetryPolicy } from '@temporalio/workflow';
import { launchFailures } from './contracts/browserSession.ts';
import { nodeFailures } from './contracts/pipelineRun.ts';

/**
 * How the workflows' activities are retried, each policy named once (the timeouts stay at the top
 * of each workflow). Temporal's defaults fill what a policy leaves out: a first wait of 1 second,
 * a backoff coefficient of 2, and no `maximumAttempts`, i.e. retried until it goes through.
 */
export const retryPolicies = {
  /** Periodic sweeps (stuck runs, stuck resources): until the sweep goes through, up to a minute apart. */
  sweep: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  /** The hourly housekeeping pass: until it goes through, up to its own timeout apart. */
  housekeepingPass: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
  /**
   * Settling a browser's row must outlast a database outage of any length: a workflow that gave
   * up would leave the row counting against the limits and, mid-stop, the browser running.
   */
  settleBrowser: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
  /** Usage is cumulative, so a report that fails is made good by the next one: fail fast, carry on. */
  metering: { initialInterval: '500 milliseconds', maximumInterval: '2 seconds', maximumAttempts: 3 },
  /** Work retried only for the service's own failures (the database is down): a Stripe event, a webhook delivery's try. */
  service: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
  /** An SMTP server that is down for a while must not lose a verification mail: retried for hours. */
  mail: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes', maximumAttempts: 30 },
  /** A run's bookkeeping (its status, its end) on the control queue. */
  runBookkeeping: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 10 },
  /** An agent job's database steps on the control queue. */
  agentJobControl: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 5 },
  /** A model turn: a provider's passing failure is tried again, a lasting one ends the job. */
  modelTurn: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 3 },
  /** A launch on a browser's host: once more, unless it failed for a reason a retry cannot mend. */
  browserLaunch: { maximumAttempts: 2, nonRetryableErrorTypes: Object.values(launchFailures) },
  /** An activity on a browser's host whose caller handles its failure: one more try. */
  hostTwice: { maximumAttempts: 2 },
  /** Stopping a browser on its host (idempotent). */
  browserStop: { maximumAttempts: 3 },
} satisfies Record<string, RetryPolicy>;

/** A node's (or a stretch's) activity: `maximumAttempts` tries, never repeating what no retry mends. */
export function nodeRetryPolicy(maximumAttempts: number): RetryPolicy {
  return { maximumAttempts, initialInterval: '500 milliseconds', nonRetryableErrorTypes: Object.values(nodeFailures) };
}
