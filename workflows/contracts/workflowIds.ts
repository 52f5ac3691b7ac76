/** Workflow ids derive from database ids, so a retry or a double click cannot start two. */
export const workflowIds = {
  mail: (mailId: string) => `mail-${mailId}`,
  /** One per delivery; a resend is a delivery of its own. */
  webhook: (deliveryId: string) => `webhook-${deliveryId}`,
  browser: (resourceId: string) => `browser-${resourceId}`,
  run: (runId: string) => `run-${runId}`,
  analysis: (jobId: string) => `analysis-${jobId}`,
  generation: (jobId: string) => `generation-${jobId}`,
  /** One per Stripe event: a delivery of an event already applied joins or finds that workflow. */
  stripeEvent: (eventId: string) => `stripe-event-${eventId}`,
  /** One per exhaustion of an account's funds (a later one, after a credit, is another). */
  fundsShutdown: (userId: string, exhaustedAt: Date) => `funds-shutdown-${userId}-${exhaustedAt.getTime()}`,
  /** One per report of a project browser for calls, by the totals it brings: a report sent again joins or finds it. */
  callUsage: (meterId: string, cpuSeconds: number, networkBytes: number) => `call-usage-${meterId}-${cpuSeconds}-${networkBytes}`,
  /** One sweeper per control task queue (test stacks share a Temporal server, each its own queue). */
  resourceSweeper: (taskQueue: string) => `resource-sweeper-${taskQueue}`,
  runSweeper: (taskQueue: string) => `run-sweeper-${taskQueue}`,
  housekeeping: (taskQueue: string) => `housekeeping-${taskQueue}`,
};
