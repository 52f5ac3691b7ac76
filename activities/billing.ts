import { Context } from '@temporalio/activity';
import { stopAccountWorkloads } from '../server/billing/shutdown.ts';
import { applyStripeEvent } from '../server/billing/stripeEvents.ts';
import type { BillingActivities, StripeEventInput } from '../workflows/contracts/billing.ts';
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
  } satisfies BillingActivities;
}
