import { SessionResource, UsageRecord } from '../db/entities/index.ts';
import { activeResourceStatuses, recordWorkflowStep, settleUnmanaged } from '../server/browsers/resourceStatus.ts';
import { workflowIds } from '../workflows/names.ts';
import type { ActivityDeps } from './index.ts';
import { type SweepCursor, sweepStuck } from './sweeps.ts';

type Usage = { cpuSeconds: number; memoryBytes: number; networkBytes: number };

/** Control-queue activities of the browserSession workflow: database only. */
export function createBrowserSessionActivities({ orm, config, log: logger }: ActivityDeps) {
  return {
    async markResource(resourceId: string, change: { status: 'stopping' | 'stopped' | 'failed'; reason?: string }) {
      await recordWorkflowStep(orm.em.fork(), resourceId, change, logger);
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
        settle: (resource, reason) => settleUnmanaged(em, resource, { status: 'failed', reason, severity: 'error' }),
      });
      if (swept.settled) logger.warn({ settled: swept.settled }, 'settled browser resources whose workflow was not running');
      return swept;
    },
  };
}
