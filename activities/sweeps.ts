import type { EntityManager, EntityName } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { SweepCursor, SweepPass } from '../workflows/contracts/periodic.ts';

/** Candidates one sweep examines (one `describe` each). */
const SWEEP_PAGE = 500;

type Row = { id: string; created: Date };

/**
 * One pass of a sweeper: rows in an active status, untouched for the grace period, whose
 * workflow does not run — it never started (the api stopped between committing the row and
 * starting it) or it closed without settling the row. Temporal has the last word, so a slow but
 * running workflow is left alone. One page of candidates after `after`; the answer's `after` is
 * where the next pass goes on (null: start over), so rows whose workflow runs for hours, however
 * many, cannot keep a stuck row from being reached.
 */
export async function sweepStuck<T extends Row>(
  em: EntityManager,
  options: {
    entity: EntityName<T>;
    activeStatuses: readonly string[];
    after: SweepCursor | null;
    graceSeconds: number;
    intervalSeconds: number;
    workflowId: (row: T) => string;
    /** What a closed workflow left undone, for the reason: "settling it", "recording the end". */
    leftUndone: string;
    /**
     * Settles the row with `reason`, conditionally on its status still being active (whatever
     * settled it meanwhile keeps its own outcome); answers whether it did.
     */
    settle: (row: T, reason: string) => Promise<boolean>;
  },
): Promise<SweepPass> {
  const { after } = options;
  const cutoff = new Date(Date.now() - options.graceSeconds * 1000);
  const onward = after
    ? { $or: [{ created: { $gt: new Date(after.created) } }, { created: new Date(after.created), id: { $gt: after.id } }] }
    : {};
  const candidates = (await em.find(
    options.entity,
    { status: { $in: [...options.activeStatuses] }, created: { $lt: cutoff }, updated: { $lt: cutoff }, ...onward } as never,
    { orderBy: { created: 'asc', id: 'asc' }, limit: SWEEP_PAGE } as never,
  )) as T[];
  const temporal = Context.current().client;
  let settled = 0;
  for (const row of candidates) {
    let reason: string;
    try {
      const described = await temporal.workflow.getHandle(options.workflowId(row)).describe();
      if (described.status.name === 'RUNNING') continue;
      reason = `its workflow ended (${described.status.name.toLowerCase()}) without ${options.leftUndone}`;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      reason = 'its workflow never started (the api stopped mid-start)';
    }
    if (await options.settle(row, reason)) settled++;
  }
  const last = candidates.length === SWEEP_PAGE ? candidates.at(-1) : undefined;
  return {
    settled,
    after: last ? { created: last.created.toISOString(), id: last.id } : null,
    // The next page at once; after the last one, wait for the interval.
    nextSweepSeconds: last ? 0 : options.intervalSeconds,
  };
}
