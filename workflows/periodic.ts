import { sleep, workflowInfo } from '@temporalio/workflow';

/**
 * The shape of every periodic job of the control queue (the sweepers, housekeeping): a pass, a
 * wait as long as the pass asks, again — up to `passesPerRun` passes or until Temporal suggests a
 * fresh history, after which the workflow continues as new from the returned cursor. Each pass
 * is one activity, retried until it goes through, so an outage delays a job but never ends it.
 */
export type Pass<Cursor> = {
  /** Where the next pass goes on (null: from the start). */
  after: Cursor | null;
  /** How long to wait before it; 0 goes on at once (more pages are waiting). */
  nextSweepSeconds: number;
};

export async function repeatPasses<Cursor>(
  pass: (after: Cursor | null) => Promise<Pass<Cursor>>,
  after: Cursor | null,
  passesPerRun: number,
): Promise<Cursor | null> {
  let cursor = after;
  for (let done = 0; done < passesPerRun && !workflowInfo().continueAsNewSuggested; done++) {
    const result = await pass(cursor);
    cursor = result.after;
    if (result.nextSweepSeconds > 0) await sleep(result.nextSweepSeconds * 1000);
  }
  return cursor;
}
