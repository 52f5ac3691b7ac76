import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';

const control = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

/**
 * One Stripe event, applied once: the workflow id is the event id (`stripe-event-<id>`), and
 * the activity records the event in the transaction that applies it (server/billing/stripeEvents.ts).
 */
export async function stripeEventWorkflow(event: import('../server/billing/stripeEvents.ts').StripeEventInput): Promise<string> {
  return control.applyStripeEvent(event);
}

/** Stops every running workload of an account whose funds ran out (server/billing/shutdown.ts). */
export async function fundsShutdownWorkflow(userId: string) {
  return control.stopAccountWorkloads(userId);
}
