/**
 * The contract of the control queue's periodic jobs: the sweepers (workflows/resourceSweeper.ts,
 * workflows/runSweeper.ts) and housekeeping (workflows/housekeeping.ts). Each runs once per
 * control task queue, started by every control worker (server/main/controlWorker.ts); each pass is one
 * activity.
 */

/** Where a sweep goes on: after this row, in (created, id) order. */
export type SweepCursor = { created: string; id: string };

/** One sweep: how many rows it settled, where the next goes on (null: from the start), and when. */
export type SweepPass = { settled: number; after: SweepCursor | null; nextSweepSeconds: number };

export type SweeperWorkflow = (after?: SweepCursor | null) => Promise<never>;
export type HousekeepingWorkflow = () => Promise<never>;
/** Their workflow types, by which server/main/controlWorker.ts starts them. */
export const resourceSweeperWorkflowType = 'resourceSweeperWorkflow';
export const runSweeperWorkflowType = 'runSweeperWorkflow';
export const housekeepingWorkflowType = 'housekeepingWorkflow';

/** Settles session resources whose workflow is not running (activities/browserSessions.ts). */
export type ResourceSweeperActivities = { sweepStuckResources(after: SweepCursor | null): Promise<SweepPass> };
/** Settles pipeline runs whose workflow is not running (activities/pipelineRuns.ts). */
export type RunSweeperActivities = { sweepStuckRuns(after: SweepCursor | null): Promise<SweepPass> };
/** Deletes expired rows (activities/housekeeping.ts); answers how many of each table went. */
export type HousekeepingActivities = { deleteExpiredRows(): Promise<Record<string, number>> };
