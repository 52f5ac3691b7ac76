import { Context } from '@temporalio/activity';
import { Project } from '../db/entities/index.ts';
import { meter } from '../server/billing/metering.ts';
import { parseQuantity } from '../server/billing/money.ts';
import { enforceFunds, stopAccountWorkloads } from '../server/billing/shutdown.ts';
import { applyStripeEvent } from '../server/billing/stripeEvents.ts';
import type { BillingActivities, CallUsageReport, MeterAction, StripeEventInput } from '../workflows/contracts/billing.ts';
import type { ActivityDeps } from './deps.ts';

/** Control-queue activities of billing: a Stripe event applied, an account's work stopped. */
export function createBillingActivities({ orm, config, log }: ActivityDeps) {
  return {
    async applyStripeEvent(event: StripeEventInput) {
      const outcome = await applyStripeEvent(orm.em.fork(), config.billing, event);
      log.info({ eventId: event.id, type: event.type, outcome }, 'stripe event applied');
      return outcome;
    },

    async stopAccountWorkloads(userId: string) {
      const stopped = await stopAccountWorkloads(Context.current().client, orm.em.fork(), userId);
      log.warn({ userId, ...stopped }, 'funds exhausted: the account’s work was stopped');
      return stopped;
    },

    /**
     * A project browser for calls, metered as a resource's browser is (activities/browserSessions.ts
     * `recordUsage`): the growth of CPU seconds and network bytes since what earlier reports were
     * recorded up to, under the browser's own id, each report keyed by the cumulative total it
     * brings (`calls:<meterId>:<unit>:<total>`: the usage listing tells calls' usage by it), so a
     * retry meters nothing twice. Billing on or off alike.
     */
    async recordCallUsage(report: CallUsageReport): Promise<MeterAction> {
      const em = orm.em.fork();
      const project = await em.findOne(Project, { id: report.projectId });
      // Deleted meanwhile: its usage has no project to be drawn for.
      if (!project) return 'continue';
      let action: MeterAction = 'continue';
      for (const [unit, before, now] of [
        ['cpu', report.reported.cpuSeconds, report.cpuSeconds],
        ['network', report.reported.networkBytes, report.networkBytes],
      ] as const) {
        const grown = (parseQuantity(now) ?? 0n) - (parseQuantity(before) ?? 0n);
        if (grown <= 0n) continue;
        const answer = await meter(em.fork(), config.billing, project, {
          resourceId: report.meterId,
          unit,
          quantityMicro: grown,
          reportId: `calls:${report.meterId}:${unit}:${now}`,
        });
        if (answer.action === 'shutdown') action = 'shutdown';
        await enforceFunds(em, () => Context.current().client, config, answer);
      }
      return action;
    },
  } satisfies BillingActivities;
}
