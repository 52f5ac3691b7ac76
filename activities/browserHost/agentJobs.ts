import { ApplicationFailure, Context } from '@temporalio/activity';
import { AgentTabs } from '../../server/browsers/host/agentTools.ts';
import type { AgentJobHostActivities, ToolCallRequest } from '../../workflows/contracts/agentJobs.ts';
import { nodeFailures } from '../../workflows/contracts/pipelineRun.ts';
import type { HostActivityDeps, HostBrowsers } from './hostBrowsers.ts';

/** The host's side of an analysis (workflows/agentJobs.ts): its tool calls and pictures, in the job's own tab of the browser. */
export function createAgentJobHostActivities(
  { orm, config, log, serviceSecret }: HostActivityDeps,
  { pool, runs, contextOf }: HostBrowsers,
) {
  const agentTabs = new AgentTabs({ orm, serviceSecret });
  return {
    /** An analysis turn's tool calls, in the job's own tab of the browser (server/browsers/host/agentTools.ts). */
    async runAgentTools(call: { jobId: string; resourceId: string; calls: ToolCallRequest[]; step: number }) {
      const context = await contextOf(call.resourceId);
      if (!context) throw ApplicationFailure.nonRetryable('the job’s browser is no longer running on this host', nodeFailures.noPage);
      runs.touch(call.resourceId);
      const activity = Context.current();
      const beat = setInterval(() => activity.heartbeat(), 1000);
      try {
        await agentTabs.run(call.jobId, context, call.calls, call.step, (values) => pool.hideInLogs(call.resourceId, values));
      } finally {
        clearInterval(beat);
      }
    },

    /** Pictures of the pages a finished analysis's proposal acts on (server/browsers/host/agentTools.ts). */
    async pictureProposal(call: { jobId: string; resourceId: string }) {
      const context = await contextOf(call.resourceId);
      if (!context) return 0;
      const activity = Context.current();
      const beat = setInterval(() => activity.heartbeat(), 1000);
      try {
        return await agentTabs.pictureProposal(call.jobId, context, {
          maxBytes: config.screenshots.maxBytesPerRun,
          beat: () => runs.touch(call.resourceId),
        });
      } catch (error) {
        log.warn({ err: error, jobId: call.jobId }, 'the proposal could not be pictured');
        throw error;
      } finally {
        clearInterval(beat);
      }
    },

    /** Closes an analysis job's tab. */
    async releaseAgentTab(jobId: string) {
      await agentTabs.release(jobId);
    },
  } satisfies AgentJobHostActivities;
}
