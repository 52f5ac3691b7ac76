import type { AgentJobHostActivities } from '../../workflows/contracts/agentJobs.ts';
import type { BrowserSessionHostActivities } from '../../workflows/contracts/browserSession.ts';
import type { PipelineRunHostActivities } from '../../workflows/contracts/pipelineRun.ts';
import { createAgentJobHostActivities } from './agentJobs.ts';
import { createBrowserSessionHostActivities } from './browserSession.ts';
import { createHostBrowsers, type HostActivityDeps } from './hostBrowsers.ts';
import { createPipelineRunHostActivities } from './pipelineRun.ts';

/**
 * Every activity of one browser host's queue (`browsers.<hostId>`), one file per contract they
 * serve, over the host's browsers they share (./hostBrowsers.ts).
 */
export function createBrowserHostActivities(deps: HostActivityDeps) {
  const browsers = createHostBrowsers(deps);
  return {
    ...createBrowserSessionHostActivities(deps, browsers),
    ...createPipelineRunHostActivities(deps, browsers),
    ...createAgentJobHostActivities(deps, browsers),
  } satisfies BrowserSessionHostActivities & PipelineRunHostActivities & AgentJobHostActivities;
}
