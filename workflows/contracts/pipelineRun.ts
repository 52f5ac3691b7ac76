import { defineUpdate } from '@temporalio/workflow';
import type { Plan } from '../../server/pipelines/engine/plan.ts';

/**
 * The contract of `pipelineRunWorkflow` (workflows/pipelineRun.ts): what a run is started with,
 * and the node failure types no retry can mend. The api (server/pipelines/runs.ts) and the node
 * executors import this module, never the workflow's internals. Runs are stopped by cancelling
 * the workflow.
 */

export type PipelineRunInput = {
  plan: Plan;
  /** Arguments; secret parameters appear only as placeholders (server/pipelines/runSecrets.ts). */
  args: Record<string, unknown>;
  hostId: string;
  resourceId: string;
  /** The run started this browser and stops it when done. */
  ownsResource: boolean;
};

/** Node failure types that fail the node at once, whatever its `retries`. */
export const nodeFailures = {
  /** An input is not what the node takes (NodeInputError). */
  invalidInput: 'invalid_input',
  unknownType: 'unknown_type',
  /** The run's page or browser is gone. */
  noPage: 'no_page',
} as const;

/**
 * Answers once the run's end is recorded (its row holds the final status, outputs and error), or
 * the workflow gave up recording it: before the browser is released, which the caller need not
 * wait for. A function execution sends it with the start (update-with-start), so starting and
 * awaiting the result is one call. Never fails, and a cancelled run answers too.
 */
export const runEndedUpdate = defineUpdate<void>('runEnded');
