import { proxyActivities } from '@temporalio/workflow';
import type { BillingActivities, CallUsageWorkflow, FundsShutdownWorkflow, StripeEventWorkflow } from './contracts/billing.ts';
import { retryPolicies } from './retryPolicies.ts';

const control = proxyActivities<BillingActivities>({
  startToCloseTimeout: '1 minute',
  retry: retryPolicies.service,
});

/**
 * One Stripe event, applied once: the workflow id is the event id (`stripe-event-<id>`), and
 * the activity records the event in the transaction that applies it (server/billing/stripeEvents.ts).
 */
export const stripeEventWorkflow: StripeEventWorkflow = async (event) => control.applyStripeEvent(event);

/** Stops every running workload of an account whose funds ran out (server/billing/shutdown.ts). */
export const fundsShutdownWorkflow: FundsShutdownWorkflow = async (userId) => control.stopAccountWorkloads(userId);

/**
 * One usage report of a browser host's project browser for calls: metered on the control queue,
 * as a resource's browser is by its own workflow, billing on or off (docs/billing.md, Metering).
 */
export const callUsageWorkflow: CallUsageWorkflow = async (report) => control.recordCallUsage(report);
