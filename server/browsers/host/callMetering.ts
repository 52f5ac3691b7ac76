import { setTimeout as sleep } from 'node:timers/promises';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Logger } from 'pino';
import { type CallUsageWorkflow, callUsageWorkflowType, FUNDS_EXHAUSTED } from '../../../workflows/contracts/billing.ts';
import { workflowIds } from '../../../workflows/contracts/workflowIds.ts';
import type { Config } from '../../config.ts';
import type { CallBrowserUsage } from './pool/projectBrowsers.ts';

/**
 * Metering of the project browsers that calls run in (docs/browsers.md, Contexts for calls): they
 * have no resource and no workflow of their own, so their host reports their usage, as a browser's
 * workflow reports a resource's: the cumulative CPU seconds and network bytes every check interval
 * and once more as the browser is destroyed, under the browser's own id (`meterId`, a UUID), with
 * billing on or off, as every browser is metered. A host loads no billing code
 * (.dependency-cruiser.cjs): each report is metered by a short workflow on the control queue
 * (`callUsageWorkflow`, workflows/billing.ts), keyed by the totals it brings, so a report sent again
 * is recorded once. A `shutdown` answer closes the project's browsers; the project's next call is
 * refused at its start (402, `requireFunds`), as any start is.
 */

type Deps = {
  config: Config;
  log: Logger;
  temporal: TemporalClient;
  /** Closes the project's browsers for calls, failing their calls with `why`. */
  closeProject: (projectId: string, why: string) => Promise<void>;
};

type Figures = { cpuSeconds: number; networkBytes: number };

export class CallMetering {
  readonly #deps: Deps;
  /** What each browser's reports were recorded up to. */
  readonly #reported = new Map<string, Figures>();
  /** The report under way per browser: one at a time, so none is metered from stale totals. */
  readonly #pending = new Map<string, Promise<void>>();

  constructor(deps: Deps) {
    this.#deps = deps;
  }

  /** The periodic report: each browser's growth, skipping one whose last report is still under way. */
  reportAll(usages: readonly CallBrowserUsage[]) {
    for (const usage of usages) if (!this.#pending.has(usage.meterId)) void this.report(usage);
  }

  /** Meters the browser's growth since its last report; `last` once it is destroyed (its figures are then forgotten). */
  report(usage: CallBrowserUsage, { last = false } = {}): Promise<void> {
    const before = this.#pending.get(usage.meterId) ?? Promise.resolve();
    const next: Promise<void> = before
      .then(() => this.#report(usage))
      .catch((error: unknown) =>
        this.#deps.log.warn({ err: error, projectId: usage.projectId }, 'could not meter a project browser: its next report brings it'),
      )
      .finally(() => {
        if (this.#pending.get(usage.meterId) !== next) return;
        this.#pending.delete(usage.meterId);
        if (last) this.#reported.delete(usage.meterId);
      });
    this.#pending.set(usage.meterId, next);
    return next;
  }

  /** Waits (at most `ms`) for the reports under way: the host's stop sends the last ones. */
  async settled(ms: number) {
    const timer = new AbortController();
    await Promise.race([Promise.all(this.#pending.values()), sleep(ms, undefined, { signal: timer.signal }).catch(() => {})]);
    timer.abort();
  }

  async #report(usage: CallBrowserUsage) {
    const { config, temporal } = this.#deps;
    const reported = this.#reported.get(usage.meterId) ?? { cpuSeconds: 0, networkBytes: 0 };
    const now = {
      cpuSeconds: Math.max(reported.cpuSeconds, usage.cpuSeconds),
      networkBytes: Math.max(reported.networkBytes, usage.networkBytes),
    };
    if (now.cpuSeconds === reported.cpuSeconds && now.networkBytes === reported.networkBytes) return;
    const action = await temporal.workflow.execute<CallUsageWorkflow>(callUsageWorkflowType, {
      taskQueue: config.temporal.taskQueue,
      workflowId: workflowIds.callUsage(usage.meterId, now.cpuSeconds, now.networkBytes),
      args: [{ meterId: usage.meterId, projectId: usage.projectId, ...now, reported }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    this.#reported.set(usage.meterId, now);
    if (action === 'shutdown') await this.#deps.closeProject(usage.projectId, FUNDS_EXHAUSTED);
  }
}
