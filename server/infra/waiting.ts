import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { z } from 'zod';
import { type PipelineRunWorkflow, runEndedUpdate } from '../../workflows/contracts/pipelineRun.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { ServiceUnavailable } from '../errors.ts';

/**
 * Waiting starts (docs/api-contract.md, "Waiting starts"): a start given `wait` seconds answers the
 * finished object when it ends in that time, else the running one with 202. Waiting is a Temporal
 * long poll (a run's `runEnded` update, a job workflow's result) cut at the deadline or when the
 * client goes away: it never cancels the work, and no poll outlives the request.
 */

/** Most seconds a start may wait. */
export const MAX_WAIT_SECONDS = 60;

const waitMessage = `\`wait\` is a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`;

/** The `wait` body field of the starts that can wait; absent or 0 answers at once, as without it. */
export const waitField = z
  .number({ error: waitMessage })
  .int({ error: waitMessage })
  .min(0, { error: waitMessage })
  .max(MAX_WAIT_SECONDS, { error: waitMessage })
  .optional()
  .describe(
    `Seconds (0–${MAX_WAIT_SECONDS}) to wait for the end: the finished object if it ends in time, else the running one with HTTP 202. Absent or 0: answer at once.`,
  );

/**
 * Runs `poll` (Temporal calls that settle when the work ends) for at most `seconds`, or until
 * `signal` aborts: answers whether it settled in time. At the deadline the poll's calls are
 * cancelled (the client's abort signal), so none goes on after the answer; the work goes on.
 */
async function settlesWithin(temporal: Client, seconds: number, signal: AbortSignal | undefined, poll: () => Promise<unknown>) {
  // A client already gone has nothing to wait for (the engine's calls only hear a later abort).
  if (signal?.aborted) return false;
  const stop = new AbortController();
  const stopped = new Promise<false>((resolve) => stop.signal.addEventListener('abort', () => resolve(false), { once: true }));
  const timer = setTimeout(() => stop.abort(), seconds * 1000);
  const onGone = () => stop.abort();
  signal?.addEventListener('abort', onGone, { once: true });
  const settled = temporal.withAbortSignal(stop.signal, poll).then(() => true);
  // A failure after the deadline (the cancelled call) has nobody left to tell.
  settled.catch(() => {});
  try {
    return await Promise.race([settled, stopped]);
  } catch {
    // The work has started: an engine that cannot tell its end answers the running object (202),
    // never an error that would lose its id and invite a second start.
    return false;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onGone);
    stop.abort();
  }
}

/**
 * Settles once the workflow has closed. However it closed counts (a cancelled run's workflow
 * records the end, then closes), and so does one that is gone: there is nothing to wait for. An
 * engine that does not answer is a 503, not a closed workflow.
 */
export function workflowClosed(handle: WorkflowHandle) {
  return handle.result().then(
    () => true as const,
    (error: unknown) => {
      if (error instanceof WorkflowFailedError || error instanceof WorkflowNotFoundError) return true as const;
      throw new ServiceUnavailable('The workflow engine is unavailable: the end could not be awaited', error);
    },
  );
}

/**
 * A `runEnded` update that failed because its workflow closed first (it refused the update, or is
 * gone): its close tells the end, so the caller awaits that. Anything else means the engine is
 * away: a 503.
 */
export function requireRefusedUpdate(error: unknown) {
  if (error instanceof WorkflowUpdateFailedError || error instanceof WorkflowNotFoundError) return;
  throw new ServiceUnavailable('The workflow engine is unavailable: the run’s end could not be awaited', error);
}

/**
 * Waits at most `seconds` for the run's end to be recorded: its workflow's `runEnded` update, which
 * answers before the browser is released; a workflow that refuses it (closed already) is awaited
 * to its close. Answers whether it ended in time.
 */
export function waitForRunEnd(temporal: Client, runId: string, seconds: number, signal?: AbortSignal) {
  const handle = temporal.workflow.getHandle<PipelineRunWorkflow>(workflowIds.run(runId));
  return settlesWithin(temporal, seconds, signal, async () => {
    try {
      await handle.executeUpdate(runEndedUpdate);
    } catch (error) {
      requireRefusedUpdate(error);
      return workflowClosed(handle);
    }
  });
}

/** Waits at most `seconds` for an analysis's or generation's workflow to close (its end recorded). */
export function waitForJobEnd(temporal: Client, kind: 'analysis' | 'generation', jobId: string, seconds: number, signal?: AbortSignal) {
  const workflowId = kind === 'analysis' ? workflowIds.analysis(jobId) : workflowIds.generation(jobId);
  return settlesWithin(temporal, seconds, signal, () => workflowClosed(temporal.workflow.getHandle(workflowId)));
}
