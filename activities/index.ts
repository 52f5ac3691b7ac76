import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from '../server/config.ts';
import { createAgentJobActivities } from './agentJobs.ts';
import { createBillingActivities } from './billing.ts';
import { createBrowserSessionActivities } from './browserSessions.ts';
import { createHousekeepingActivities } from './housekeeping.ts';
import { createMailActivities } from './mail.ts';
import { createPipelineRunActivities } from './pipelineRuns.ts';

export type ActivityDeps = { config: Config; orm: MikroORM; log: Logger };

/** Every activity of the control queue, built over its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createMailActivities(deps),
    ...createBrowserSessionActivities(deps),
    ...createPipelineRunActivities(deps),
    ...createHousekeepingActivities(deps),
    ...createAgentJobActivities(deps),
    ...createBillingActivities(deps),
  };
}
