import { createAgentJobActivities } from './agentJobs.ts';
import { createBillingActivities } from './billing.ts';
import { createBrowserSessionActivities } from './browserSessions.ts';
import type { ActivityDeps } from './deps.ts';
import { createHousekeepingActivities } from './housekeeping.ts';
import { createMailActivities } from './mail.ts';
import { createPipelineRunActivities } from './pipelineRuns.ts';
import { createWebhookActivities } from './webhooks.ts';

/** Every activity of the control queue, built over its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createMailActivities(deps),
    ...createBrowserSessionActivities(deps),
    ...createPipelineRunActivities(deps),
    ...createHousekeepingActivities(deps),
    ...createAgentJobActivities(deps),
    ...createBillingActivities(deps),
    ...createWebhookActivities(deps),
  };
}
