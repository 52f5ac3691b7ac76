import type { MikroORM } from '@mikro-orm/postgresql';
import { SessionResource, UsageRecord } from '../db/entities/index.ts';
import type { ResourceStatus } from '../db/entities/SessionResource.ts';
import { activeResourceStatuses, summarizeLaunchFailure } from '../server/browsers/browserSessions.ts';
import { appendLogs, logStreams, type NewLogEntry } from '../server/logs/logWriter.ts';
import { workflowIds } from '../workflows/names.ts';
import type { ActivityDeps } from './index.ts';
import { type SweepCursor, sweepStuck } from './sweeps.ts';

type Usage = { cpuSeconds: number; memoryBytes: number; networkBytes: number };

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
     * Settles active resources whose `browser-<id>` workflow does not run (activities/sweeps.ts).
     * Only rows untouched for the grace period are looked at: a live workflow writes usage every
     * few seconds. A browser such a row held (warm or running) is destroyed by its host once the
     * row no longer holds it.
     */
    async sweepStuckResources(after: SweepCursor | null = null) {
      const em = orm.em.fork();
      const swept = await sweepStuck(em, {
        entity: SessionResource,
        activeStatuses: activeResourceStatuses,
        after,
        graceSeconds: config.browsers.sweepGraceSeconds,
        intervalSeconds: config.browsers.sweepIntervalSeconds,
        workflowId: (resource) => workflowIds.browser(resource.id),
        leftUndone: 'settling it',
        async settle(resource, reason) {
          const changed = await em.nativeUpdate(
            SessionResource,
            { id: resource.id, status: { $in: [...activeResourceStatuses] } },
            { status: 'failed', stopReason: reason, stoppedAt: new Date(), cdpEndpoint: null },
          );
          if (!changed) return false;
          await log(em, resource, {
            context: 'lifecycle',
            severity: 'error',
            message: `browser failed: ${reason}`,
            area: 'lifecycle',
            object: { status: 'failed', host: resource.hostId },
          });
          return true;
        },
      });
      if (swept.settled) logger.warn({ settled: swept.settled }, 'settled browser resources whose workflow was not running');
      return swept;
    },
  };
}
