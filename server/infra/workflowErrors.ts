import {
  isGrpcCancelledError,
  isGrpcDeadlineError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ServiceUnavailable } from '../errors.ts';

/**
 * Whether a cancel or signal failed because the workflow has already ended (or never ran): there
 * is nothing left to stop, which is not a fault of the engine.
 */
export function workflowIsGone(error: unknown) {
  return error instanceof WorkflowNotFoundError || (error instanceof Error && /not found|already completed/i.test(error.message));
}

/**
 * Whether a call failed because the engine did not answer in time: its deadline passed or the
 * server cancelled it (the dev server's history store falling behind under a burst of starts does
 * both). The engine is up, so a call that is safe to repeat is repeated. Whatever the client's own
 * retries gave up on (an engine that is away), or a call its deadline ended unanswered (an engine
 * that stopped answering), is not this: that stays a 503 at once.
 */
export function engineWasSlow(error: unknown) {
  // Our own deadline passed with no answer at all (engineDeadlines, ./temporalClient.ts): the
  // engine is not answering, whatever the gRPC error it carries as its cause says.
  if (error instanceof ServiceUnavailable) return false;
  return error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isGrpcDeadlineError(error) || isGrpcCancelledError(error);
}

/**
 * Runs `call` again while it fails with `engineWasSlow`, with a growing pause, until `budgetMs`
 * has passed; then, or on any other failure, throws what it threw. Only for calls that are safe
 * to repeat: a start that uses the existing workflow of its id, an update with a fixed id.
 *
 * A repeat after a slow try may find the workflow that try started already ended (a short one
 * finishes within the pause): `startOnce` then refuses it as already started. That is the first
 * try's success, so `joined` answers in its place (the workflow's handle, its update's result).
 */
export async function repeatWhileEngineSlow<T>(
  call: () => Promise<T>,
  options: {
    budgetMs?: number;
    joined?: () => Promise<T>;
    /** Each repeat is logged here (a warning: the engine is falling behind), naming `what`. */
    log?: { warn: (fields: object, message: string) => void };
    what?: string;
  } = {},
): Promise<T> {
  const started = Date.now();
  const deadline = started + (options.budgetMs ?? 30_000);
  let slow = false;
  for (let pauseMs = 200, tries = 1; ; pauseMs = Math.min(pauseMs * 2, 2_000), tries++) {
    try {
      return await call();
    } catch (error) {
      if (slow && options.joined && error instanceof WorkflowExecutionAlreadyStartedError) return options.joined();
      if (!engineWasSlow(error) || Date.now() + pauseMs >= deadline) throw error;
      slow = true;
      options.log?.warn(
        { try: tries, waitedMs: Date.now() - started, reason: error instanceof Error ? error.message : String(error) },
        `the workflow engine was slow to answer ${options.what ?? 'a call'}: repeating it in ${pauseMs} ms`,
      );
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

/**
 * A start that is safe to repeat: a second start of the same id joins the workflow the first
 * started, and never starts another once that one has ended. Ids made from a row's id only.
 */
export const startOnce = { workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'REJECT_DUPLICATE' } as const;
