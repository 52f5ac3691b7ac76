import { Context } from '@temporalio/activity';
import { SessionResource } from '../db/entities/index.ts';
import { meter } from '../server/billing/metering.ts';
import { parseQuantity } from '../server/billing/money.ts';
import { enforceFunds } from '../server/billing/shutdown.ts';
import { activeResourceStatuses, recordWorkflowStep, settleUnmanaged } from '../server/browsers/sessions/resourceStatus.ts';
import { sessionStopped } from '../server/webhooks/eventData.ts';
import { emitWebhookEvent } from '../server/webhooks/events.ts';
import type { MeterAction } from '../workflows/contracts/billing.ts';
import type { BrowserSessionActivities, BrowserUsage } from '../workflows/contracts/browserSession.ts';
import type { ResourceSweeperActivities, SweepCursor } from '../workflows/contracts/periodic.ts';
import { workflowIds } from '../workflows/contracts/workflowIds.ts';
import type { ActivityDeps } from './deps.ts';
import { sweepStuck } from './sweeps.ts';

/** Control-queue activities of the browserSession workflow: database only. */
export function createBrowserSessionActivities({ orm, config, log: logger }: Omit<ActivityDeps, 'serviceSecret'>) {
  const webhooks = { config, log: logger, temporal: () => Context.current().client };
  return {
    async markResource(resourceId: string, change: { status: 'stopping' | 'stopped' | 'failed'; reason?: string }) {
      await recordWorkflowStep(orm.em.fork(), resourceId, change, logger);
      if (change.status === 'stopping') return;
      const em = orm.em.fork();
      const resource = await em.findOne(SessionResource, { id: resourceId });
      if (resource) await emitWebhookEvent(em, webhooks, sessionStopped(config.publicUrl, resource));
    },

    /**
     * Stores the host's latest figures and meters the growth since the last report; returns
     * when the resource was last used (the CDP proxy and live view touch `lastActivity`). The
     * workflow reports usage since the resource took the browser (a warm one ran before). The
     * cumulative figures never go back: a process that left the measured tree (an orphaned
     * child, a zombie reaped elsewhere) takes its seconds with it, and those would otherwise be
     * billed a second time as the tree grows again.
     */
    async recordUsage(resourceId: string, usage: BrowserUsage): Promise<{ lastActivity: string | null; action: MeterAction }> {
      const em = orm.em.fork();
      const resource = await em.findOne(SessionResource, { id: resourceId }, { populate: ['project'] });
      if (!resource) return { lastActivity: null, action: 'continue' };
      const previous = resource.usage ?? { cpuSeconds: 0, memoryBytes: 0, networkBytes: 0 };
      const cpuSeconds = Math.max(previous.cpuSeconds, usage.cpuSeconds);
      const networkBytes = Math.max(previous.networkBytes, usage.networkBytes);
      let action: MeterAction = 'continue';
      // Each report is keyed by the cumulative figure it brings the total to: a retry of this
      // activity (the figures stored or not) meters nothing twice.
      for (const [unit, before, now] of [
        ['cpu', previous.cpuSeconds, cpuSeconds],
        ['network', previous.networkBytes, networkBytes],
      ] as const) {
        const grown = (parseQuantity(now) ?? 0n) - (parseQuantity(before) ?? 0n);
        if (grown <= 0n) continue;
        const answer = await meter(em.fork(), config.billing, resource.project, {
          resourceId,
          unit,
          quantityMicro: grown,
          reportId: `${resourceId}:${unit}:${now}`,
        });
        if (answer.action === 'shutdown') action = 'shutdown';
        await enforceFunds(em, () => Context.current().client, config, answer);
      }
      resource.usage = { cpuSeconds, memoryBytes: usage.memoryBytes, networkBytes };
      await em.flush();
      return { lastActivity: (resource.lastActivity ?? resource.startedAt ?? resource.created).toISOString(), action };
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
          const settled = await settleUnmanaged(em, resource, { status: 'failed', reason, severity: 'error' });
          if (!settled) return false;
          // Settled already: a failure to record the event must not undo the pass (it is logged).
          const row = await em.fork().findOne(SessionResource, { id: resource.id });
          if (row) {
            await emitWebhookEvent(em, webhooks, sessionStopped(config.publicUrl, row)).catch((error: unknown) =>
              logger.warn({ err: error, resourceId: resource.id }, 'the browser’s webhook event was not recorded'),
            );
          }
          return true;
        },
      });
      if (swept.settled) logger.warn({ settled: swept.settled }, 'settled browser resources whose workflow was not running');
      return swept;
    },
  } satisfies BrowserSessionActivities & ResourceSweeperActivities;
}
