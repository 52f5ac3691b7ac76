import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { RunSweeperActivities, SweeperWorkflow } from './contracts/periodic.ts';
import { repeatPasses } from './periodic.ts';
import { retryPolicies } from './retryPolicies.ts';

/** A sweep that fails (the database is down) is retried until it goes through. */
const SWEEP_TIMEOUT = '2 minutes';
/** Sweeps per run before continue-as-new keeps the history short. */
const SWEEPS_PER_RUN = 200;

const { sweepStuckRuns } = proxyActivities<RunSweeperActivities>({
  startToCloseTimeout: SWEEP_TIMEOUT,
  retry: retryPolicies.sweep,
});

/**
 * Settles pipeline runs whose `run-<runId>` workflow never started or ended without recording
 * the end (activities/pipelineRuns.ts `sweepStuckRuns`), the runs' counterpart of the resource
 * sweeper beside it: one per control task queue, workflow id `run-sweeper-<taskQueue>`, started
 * by every control worker (the first start wins), the interval and grace from the worker's config,
 * the cursor carried across sweeps and continue-as-new.
 */
export const runSweeperWorkflow: SweeperWorkflow = async (after = null) =>
  continueAsNew<SweeperWorkflow>(await repeatPasses(sweepStuckRuns, after, SWEEPS_PER_RUN));
