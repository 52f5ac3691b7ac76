/**
 * The contract of billing's workflows (workflows/billing.ts) and of metering's answer to the
 * workflows that report usage: why a workload stops when its account's funds run out.
 */
export const FUNDS_EXHAUSTED = 'the account has no funds left';

/** What metering answers a reporter: go on, or stop the workload. */
export type MeterAction = 'continue' | 'shutdown';
