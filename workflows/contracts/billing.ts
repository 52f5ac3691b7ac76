/**
 * The contract of billing's workflows (workflows/billing.ts) and of metering's answer to the
 * workflows that report usage: why a workload stops when its account's funds run out.
 */
export const FUNDS_EXHAUSTED = 'the account has no funds left';

/** What metering answers a reporter: go on, or stop the workload. */
export type MeterAction = 'continue' | 'shutdown';

/** A Stripe event as its workflow gets it: verified by the webhook, reduced to what applying it reads. */
export type StripeEventInput = { id: string; type: string; created: number; object: Record<string, unknown> };

/** What a funds shutdown reached. */
export type StoppedWorkloads = { browsers: number; runs: number; jobs: number };

export type StripeEventWorkflow = (event: StripeEventInput) => Promise<string>;
export type FundsShutdownWorkflow = (userId: string) => Promise<StoppedWorkloads>;
/** Their workflow types: server/billing starts them by these names. */
export const stripeEventWorkflowType = 'stripeEventWorkflow';
export const fundsShutdownWorkflowType = 'fundsShutdownWorkflow';

/** Billing's activities on the control queue (activities/billing.ts). */
export type BillingActivities = {
  /** Answers what became of the event (applied, or why not). */
  applyStripeEvent(event: StripeEventInput): Promise<string>;
  stopAccountWorkloads(userId: string): Promise<StoppedWorkloads>;
};
