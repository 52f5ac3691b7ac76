// Every workflow the control worker runs. Workflow code is deterministic: no I/O, no clock, no
// Node built-ins (enforced by the linter); side effects live in activities/.

export { analysisJobWorkflow, generationJobWorkflow } from './agentJobs.ts';
export { callUsageWorkflow, fundsShutdownWorkflow, stripeEventWorkflow } from './billing.ts';
export { browserSessionWorkflow } from './browserSession.ts';
export { housekeepingWorkflow } from './housekeeping.ts';
export { deliverMailWorkflow } from './mail.ts';
export { pipelineRunWorkflow } from './pipelineRun.ts';
export { resourceSweeperWorkflow } from './resourceSweeper.ts';
export { runSweeperWorkflow } from './runSweeper.ts';
export { webhookDeliveryWorkflow } from './webhooks.ts';
