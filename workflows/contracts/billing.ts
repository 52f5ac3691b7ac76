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

/**
 * A host's report of one of its project browsers for calls (docs/browsers.md, Contexts for calls):
 * its cumulative figures now, and those its earlier reports were recorded up to. Metered on the
 * control queue, as a resource's browser is by its workflow (activities/browserSessions.ts).
 */
export type CallUsageReport = {
  /** The id its usage is metered under: a UUID of the browser's own. */
  meterId: string;
  projectId: string;
  cpuSeconds: number;
  networkBytes: number;
  /** What the host's earlier reports of this browser were recorded up to. */
  reported: { cpuSeconds: number; networkBytes: number };
};

export type StripeEventWorkflow = (event: StripeEventInput) => Promise<string>;
/** Meters one report of a project browser for calls; answers what metering answered. */
export type CallUsageWorkflow = (report: CallUsageReport) => Promise<MeterAction>;
export type FundsShutdownWorkflow = (userId: string) => Promise<StoppedWorkloads>;
/** Their workflow types: server/billing starts them by these names. */
export const stripeEventWorkflowType = 'stripeEventWorkflow';
export const fundsShutdownWorkflowType = 'fundsShutdownWorkflow';
/** Started by a browser host (server/browsers/host/callMetering.ts), which loads no billing code. */
export const callUsageWorkflowType = 'callUsageWorkflow';

/** Billing's activities on the control queue (activities/billing.ts). */
export type BillingActivities = {
  /** Answers what became of the event (applied, or why not). */
  applyStripeEvent(event: StripeEventInput): Promise<string>;
  stopAccountWorkloads(userId: string): Promise<StoppedWorkloads>;
  /** Meters the growth a report of a project browser for calls brings; a report sent again is recorded once. */
  recordCallUsage(report: CallUsageReport): Promise<MeterAction>;
};
