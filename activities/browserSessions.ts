import type { MikroORM } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { SessionResource, UsageRecord } from '../db/entities/index.ts';
import type { ResourceStatus } from '../db/entities/SessionResource.ts';
import { activeResourceStatuses, summarizeLaunchFailure } from '../server/browsers/browserSessions.ts';
import { appendLogs, logStreams, type NewLogEntry } from '../server/logs/logWriter.ts';
import { workflowIds } from '../workflows/names.ts';
import type { ActivityDeps } from './index.ts';

type Usage = { cpuSeconds: number; memoryBytes: number; networkBytes: number };

/** Where a sweep goes on: after this resource, in (created, id) order. */
export type SweepCursor = { created: string; id: string };

/** Candidates one sweep examines (one `describe` each). */
const SWEEP_PAGE = 500;

/** Control-queue activities of the browserSession workflow: database only. */
export function createBrowserSessionActivities({ orm, config, log: logger }: ActivityDeps) {
  const log = (em: ReturnType<MikroORM['em']['fork']>, resource: SessionResource, entry: NewLogEntry) =>
    appendLogs(em, resource.project.id, logStreams.resource(resource.id), [entry]);

  return {
    async markResource(
      resourceId: string,
      change: { status: ResourceStatus; cdpEndpoint?: string; pid?: number | null; warm?: boolean; reason?: string },
    ) {
      const em = orm.em.fork();
      const resource = await em.findOne(SessionResource, { id: resourceId });
      if (!resource) return;
      // Reasons come from the host (Playwright's text with its call log, flags and paths): the
      // row and the resource's log, which callers read, get the summary; the server log the rest.
      const reason = change.reason === undefined ? undefined : summarizeLaunchFailure(change.reason);
      if (reason !== undefined && reason !== change.reason) {
        logger.warn({ resourceId, status: change.status, reason: change.reason }, 'browser resource settled');
      }
      resource.status = change.status;
      if (change.cdpEndpoint !== undefined) resource.cdpEndpoint = change.cdpEndpoint;
      if (change.pid !== undefined) resource.pid = change.pid;
      if (change.warm !== undefined) resource.warm = change.warm;
      if (change.status === 'running') {
        resource.startedAt ??= new Date();
        resource.lastActivity ??= new Date();
      }
      if (change.status === 'stopped' || change.status === 'failed') {
        resource.stoppedAt ??= new Date();
        resource.stopReason = reason ?? resource.stopReason ?? null;
        resource.cdpEndpoint = null;
      }
      await em.flush();
      const message =
        change.status === 'running'
          ? `browser running on host ${resource.hostId}${change.warm ? ' (from the warm pool)' : ''}`
          : change.status === 'stopped' || change.status === 'failed'
            ? `browser ${change.status}: ${reason ?? 'no reason given'}`
            : `browser ${change.status}`;
      await log(em, resource, {
        context: 'lifecycle',
        severity: change.status === 'failed' ? 'error' : 'info',
        message,
        area: 'lifecycle',
        object: { status: change.status, host: resource.hostId },
      });
    },

    /**
     * Stores the host's latest figures and meters the growth since the last report; returns
     * when the resource was last used (the CDP proxy and live view touch `lastActivity`). The
     * workflow reports usage since the resource took the browser (a warm one ran before). The
     * cumulative figures never go back: a process that left the measured tree (an orphaned
     * child, a zombie reaped elsewhere) takes its seconds with it, and those would otherwise be
     * billed a second time as the tree grows again.
     */
    async recordUsage(resourceId: string, usage: Usage) {
      const em = orm.em.fork();
      const resource = await em.findOne(SessionResource, { id: resourceId });
      if (!resource) return { lastActivity: null };
      const previous = resource.usage ?? { cpuSeconds: 0, memoryBytes: 0, networkBytes: 0 };
      const cpuSeconds = Math.max(previous.cpuSeconds, usage.cpuSeconds);
      const networkBytes = Math.max(previous.networkBytes, usage.networkBytes);
      const cpu = cpuSeconds - previous.cpuSeconds;
      const network = networkBytes - previous.networkBytes;
      if (cpu > 0) em.create(UsageRecord, { project: resource.project, resourceId, unit: 'cpu_seconds', amount: cpu.toFixed(6) });
      if (network > 0) em.create(UsageRecord, { project: resource.project, resourceId, unit: 'network_bytes', amount: String(network) });
      resource.usage = { cpuSeconds, memoryBytes: usage.memoryBytes, networkBytes };
      await em.flush();
      return { lastActivity: (resource.lastActivity ?? resource.startedAt ?? resource.created).toISOString() };
    },

    /**
     * Settles active resources whose workflow does not run: it never started (the api died
     * between committing the row and starting it) or it closed without settling the row. Only
     * rows untouched for the grace period are looked at — a live workflow writes usage every few
     * seconds — and Temporal has the last word, so a slow but running start is left alone. A
     * browser such a row held (warm or running) is destroyed by its host once the row no longer
     * holds it. One page of candidates per call, after `after`; the answer's `after` is where the
     * next call goes on (null: start over), so rows whose workflow runs for hours, however many,
     * cannot keep a stuck row from being reached.
     */
    async sweepStuckResources(after: SweepCursor | null = null) {
      const em = orm.em.fork();
      const cutoff = new Date(Date.now() - config.browsers.sweepGraceSeconds * 1000);
      const onward = after
        ? { $or: [{ created: { $gt: new Date(after.created) } }, { created: new Date(after.created), id: { $gt: after.id } }] }
        : {};
      const candidates = await em.find(
        SessionResource,
        { status: { $in: [...activeResourceStatuses] }, created: { $lt: cutoff }, updated: { $lt: cutoff }, ...onward },
        { orderBy: { created: 'asc', id: 'asc' }, limit: SWEEP_PAGE },
      );
      const temporal = Context.current().client;
      let settled = 0;
      for (const resource of candidates) {
        let reason: string;
        try {
          const described = await temporal.workflow.getHandle(workflowIds.browser(resource.id)).describe();
          if (described.status.name === 'RUNNING') continue;
          reason = `its workflow ended (${described.status.name.toLowerCase()}) without settling it`;
        } catch (error) {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
          reason = 'its workflow never started (the api stopped mid-start)';
        }
        // Conditional: a workflow that settles the row meanwhile keeps its own outcome.
        const changed = await em.nativeUpdate(
          SessionResource,
          { id: resource.id, status: { $in: [...activeResourceStatuses] } },
          { status: 'failed', stopReason: reason, stoppedAt: new Date(), cdpEndpoint: null },
        );
        if (!changed) continue;
        settled++;
        await log(em, resource, {
          context: 'lifecycle',
          severity: 'error',
          message: `browser failed: ${reason}`,
          area: 'lifecycle',
          object: { status: 'failed', host: resource.hostId },
        });
      }
      if (settled) logger.warn({ settled }, 'settled browser resources whose workflow was not running');
      const last = candidates.length === SWEEP_PAGE ? candidates.at(-1) : undefined;
      return {
        settled,
        after: last ? { created: last.created.toISOString(), id: last.id } : null,
        // The next page at once; after the last one, wait for the interval.
        nextSweepSeconds: last ? 0 : config.browsers.sweepIntervalSeconds,
      };
    },
  };
}
