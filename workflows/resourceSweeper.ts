import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { ResourceSweeperActivities, SweeperWorkflow } from './contracts/periodic.ts';
import { repeatPasses } from './periodic.ts';
import { retryPolicies } from './retryPolicies.ts';

/** A sweep that fails (the database is down) is retried until it goes through. */
const SWEEP_TIMEOUT = '2 minutes';
/** Sweeps per run before continue-as-new keeps the history short. */
const SWEEPS_PER_RUN = 200;

const { sweepStuckResources } = proxyActivities<ResourceSweeperActivities>({
  startToCloseTimeout: SWEEP_TIMEOUT,
  retry: retryPolicies.sweep,
});

/**
 * Settles session resources whose `browser-<resourceId>` workflow never started or ended without
 * settling them (the api died between writing the row and starting the workflow, or the workflow
 * was terminated), so they stop counting against the limits. One per control task queue,
 * workflow id `resource-sweeper-<taskQueue>`, started by every control worker (the first start
 * wins). The activity answers how long to wait, so the interval follows the worker's config.
 * Each sweep examines one page of candidates; the cursor to the next page is carried across
 * sweeps and continue-as-new, so every candidate is reached however many there are.
 */
export const resourceSweeperWorkflow: SweeperWorkflow = async (after = null) =>
  continueAsNew<SweeperWorkflow>(await repeatPasses(sweepStuckResources, after, SWEEPS_PER_RUN));
