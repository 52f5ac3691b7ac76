import { setTimeout as sleep } from 'node:timers/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Logger } from 'pino';
import { Project } from '../../../db/entities/index.ts';
import { FUNDS_EXHAUSTED } from '../../../workflows/contracts/billing.ts';
import { meter } from '../../billing/metering.ts';
import { parseQuantity } from '../../billing/money.ts';
import { enforceFunds } from '../../billing/shutdown.ts';
import type { Config } from '../../config.ts';
import type { CallBrowserUsage } from './pool/projectBrowsers.ts';

/**
 * Metering of the project browsers that calls run in (docs/browsers.md, Contexts for calls): they
 * have no resource and no workflow, so their host reports their usage itself, as a browser's
 * workflow reports a resource's (activities/browserSessions.ts `recordUsage`): the growth of CPU
 * seconds and network bytes every check interval and once more as the browser is destroyed, under
 * the browser's own id (`meterId`, a UUID), each report keyed by the cumulative total it brings
 * (`calls:<meterId>:<unit>:<total>`: the usage listing tells calls' usage by it), so a report sent
 * again is recorded once. A `shutdown` answer closes the project's browsers; the
 * project's next call is refused at its start (402, `requireFunds`), as any start is.
 */

type Deps = {
  orm: MikroORM;
  config: Config;
  log: Logger;
  temporal: TemporalClient;
  /** Closes the project's browsers for calls, failing their calls with `why`. */
  closeProject: (projectId: string, why: string) => Promise<void>;
};

type Figures = { cpu: number; network: number };

export class CallMetering {
  readonly #deps: Deps;
  /** What each browser's reports brought its totals to. */
  readonly #reported = new Map<string, Figures>();
  /** The report under way per browser: one at a time, so none is metered from stale totals. */
  readonly #pending = new Map<string, Promise<void>>();

  constructor(deps: Deps) {
    this.#deps = deps;
  }

  /** Whether the deployment bills: with billing off, calls are not metered. */
  get enabled() {
    return this.#deps.config.billing.enabled;
  }

  /** The periodic report: each browser's growth, skipping one whose last report is still under way. */
  reportAll(usages: readonly CallBrowserUsage[]) {
    for (const usage of usages) if (!this.#pending.has(usage.meterId)) void this.report(usage);
  }

  /** Meters the browser's growth since its last report; `last` once it is destroyed (its figures are then forgotten). */
  report(usage: CallBrowserUsage, { last = false } = {}): Promise<void> {
    if (!this.enabled) return Promise.resolve();
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
    const { orm, config, temporal } = this.#deps;
    const em = orm.em.fork();
    const project = await em.findOne(Project, { id: usage.projectId });
    // Deleted meanwhile: its usage has no project to be drawn for.
    if (!project) return;
    const reported = this.#reported.get(usage.meterId) ?? { cpu: 0, network: 0 };
    let shutdown = false;
    for (const [unit, now] of [
      ['cpu', usage.cpuSeconds],
      ['network', usage.networkBytes],
    ] as const) {
      const grown = (parseQuantity(now) ?? 0n) - (parseQuantity(reported[unit]) ?? 0n);
      if (grown <= 0n) continue;
      const answer = await meter(em.fork(), config.billing, project, {
        resourceId: usage.meterId,
        unit,
        quantityMicro: grown,
        reportId: `calls:${usage.meterId}:${unit}:${now}`,
      });
      reported[unit] = now;
      this.#reported.set(usage.meterId, reported);
      if (answer.action === 'shutdown') shutdown = true;
      await enforceFunds(em, temporal, config, answer);
    }
    if (shutdown) await this.#deps.closeProject(usage.projectId, FUNDS_EXHAUSTED);
  }
}
