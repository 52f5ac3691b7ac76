import { WorkflowNotFoundError } from '@temporalio/client';

/**
 * Whether a cancel or signal failed because the workflow has already ended (or never ran): there
 * is nothing left to stop, which is not a fault of the engine.
 */
export function workflowIsGone(error: unknown) {
  return error instanceof WorkflowNotFoundError || (error instanceof Error && /not found|already completed/i.test(error.message));
}
