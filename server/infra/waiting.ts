import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { FastifyReply } from 'fastify';
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
 * Aborts when the HTTP client goes away before its answer is written. A reply's `close` comes
 * once the answer is written too, so the listener never outlives the request.
 */
export function clientGone(reply: FastifyReply | undefined): AbortSignal | undefined {
  const raw = reply?.raw;
  if (!raw) return undefined;
  const controller = new AbortController();
  raw.once('close', () => {
    if (!raw.writableEnded) controller.abort();
  });
  return controller.signal;
}

/**
 * Answers 202 on the reply when the object is still going: over REST the status says it; over
 * /trpc the object's own status does. The REST adapter keeps a 2xx status set here (server/app.ts).
 */
export function markRunning(reply: FastifyReply | undefined, running: boolean) {
  if (running) reply?.code(202);
}

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
 * Settles once the workflow has closed, however it closed (a failed, cancelled or gone workflow
 * has ended too); an engine that does not answer is a 503.
 */
function closed(handle: WorkflowHandle) {
  return handle.result().catch((error: unknown) => {
    if (error instanceof WorkflowFailedError || error instanceof WorkflowNotFoundError) return;
    throw new ServiceUnavailable('The workflow engine is unavailable: the end could not be awaited', error);
  });
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
      if (error instanceof WorkflowUpdateFailedError || error instanceof WorkflowNotFoundError) return closed(handle);
      throw new ServiceUnavailable('The workflow engine is unavailable: the run’s end could not be awaited', error);
    }
  });
}

/** Waits at most `seconds` for an analysis's or generation's workflow to close (its end recorded). */
export function waitForJobEnd(temporal: Client, kind: 'analysis' | 'generation', jobId: string, seconds: number, signal?: AbortSignal) {
  const workflowId = kind === 'analysis' ? workflowIds.analysis(jobId) : workflowIds.generation(jobId);
  return settlesWithin(temporal, seconds, signal, () => closed(temporal.workflow.getHandle(workflowId)));
}
