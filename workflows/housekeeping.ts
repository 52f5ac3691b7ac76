import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { HousekeepingActivities, HousekeepingWorkflow } from './contracts/periodic.ts';
import { repeatPasses } from './periodic.ts';
import { retryPolicies } from './retryPolicies.ts';

const INTERVAL_SECONDS = 60 * 60;
/** A pass that fails (the database is down) is retried until it goes through. */
const PASS_TIMEOUT = '5 minutes';
/** Passes per run before continue-as-new keeps the history short. */
const PASSES_PER_RUN = 100;

const { deleteExpiredRows } = proxyActivities<HousekeepingActivities>({
  startToCloseTimeout: PASS_TIMEOUT,
  retry: retryPolicies.housekeepingPass,
});

/**
 * Deletes expired rows every hour (activities/housekeeping.ts): one per control task queue,
 * workflow id `housekeeping-<taskQueue>`, started by every control worker (the first start wins).
 */
export const housekeepingWorkflow: HousekeepingWorkflow = async () => {
  await repeatPasses(
    async () => {
      await deleteExpiredRows();
      return { after: null, nextSweepSeconds: INTERVAL_SECONDS };
    },
    null,
    PASSES_PER_RUN,
  );
  return continueAsNew<HousekeepingWorkflow>();
};
