import type { WorkflowHandle } from '@temporalio/client';
import { ServiceUnavailable } from '../errors.ts';
import { workflowIsGone } from './workflowErrors.ts';

/**
 * Cancels a workflow and waits, at most `timeoutMs`, until it has closed: a cancelled workflow
 * records its stop, then closes. Answers whether it closed in time. A workflow already gone has
 * nothing left to stop and counts as closed; a cancel the engine refuses otherwise is a 503
 * (`unavailable`). `closing` says what counts as closed: by default any end of `result()`.
 */
export async function cancelAndAwait(
  handle: WorkflowHandle,
  timeoutMs: number,
  { unavailable, closing = anyEnd }: { unavailable: string; closing?: (handle: WorkflowHandle) => Promise<unknown> },
) {
  try {
    await handle.cancel();
  } catch (error) {
    if (!workflowIsGone(error)) throw new ServiceUnavailable(unavailable, error);
  }
  return within(closing(handle), timeoutMs);
}

const anyEnd = (handle: WorkflowHandle) => handle.result().catch(() => undefined);

/** Whether `work` settled within `timeoutMs` (its failure is thrown); false once the time is up. */
export async function within(work: Promise<unknown>, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs));
  });
  const settled = work.then(() => true);
  // A failure after the time is up has nobody left to tell.
  settled.catch(() => {});
  try {
    return await Promise.race([settled, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
