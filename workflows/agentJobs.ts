import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import {
  type AgentJobActivities,
  type AgentJobHostActivities,
  type AgentJobInput,
  type AgentJobKind,
  type AgentJobWorkflow,
  GENERATION_ATTEMPTS,
} from './contracts/agentJobs.ts';
import { browserHostQueue } from './contracts/browserSession.ts';
import { type PipelineRunWorkflow, pipelineRunWorkflowType } from './contracts/pipelineRun.ts';
import { searchAttributeKeys, searchAttributesOf } from './contracts/searchAttributes.ts';
import { workflowIds } from './contracts/workflowIds.ts';
import { retryPolicies } from './retryPolicies.ts';

/** A model call may take this long (the activity's own timeout is shorter: server/agents/model/conversation.ts). */
const MODEL_TURN_TIMEOUT = '150 seconds';
const HOST_PICKUP_TIMEOUT = '15 seconds';

const control = proxyActivities<AgentJobActivities>({
  startToCloseTimeout: '30 seconds',
  retry: retryPolicies.agentJobControl,
});
const models = proxyActivities<AgentJobActivities>({
  startToCloseTimeout: MODEL_TURN_TIMEOUT,
  retry: retryPolicies.modelTurn,
});

const hostActivities = (hostId: string) =>
  proxyActivities<AgentJobHostActivities>({
    taskQueue: browserHostQueue(hostId),
    scheduleToStartTimeout: HOST_PICKUP_TIMEOUT,
    startToCloseTimeout: '90 seconds',
    heartbeatTimeout: '10 seconds',
    retry: retryPolicies.hostTwice,
  });

type Ending = { code: string; message: string } | null;

function failureOf(error: unknown): Ending {
  const cause = error instanceof ActivityFailure ? (error.cause ?? error) : error;
  const code = cause instanceof ApplicationFailure ? (cause.type ?? 'agent_failed') : 'agent_failed';
  return { code, message: cause instanceof Error ? cause.message : String(cause) };
}

/** A dry run is found as its generation is (project, pipeline, session), and by its own run id and host. */
function dryRunSearchAttributes(runId: string, hostId: string) {
  const own = workflowInfo().typedSearchAttributes;
  return searchAttributesOf({
    projectId: own.get(searchAttributeKeys.projectId),
    pipelineId: own.get(searchAttributeKeys.pipelineId),
    sessionId: own.get(searchAttributeKeys.sessionId),
    runId,
    hostId,
  });
}

/**
 * Ends a job whatever happened: the agent is marked stopped with what it has and its tab is closed
 * (the browser stays with the session). Not cancellable, so a stop still records the end.
 */
async function finish(kind: AgentJobKind, jobId: string, input: AgentJobInput, ending: Ending) {
  await CancellationScope.nonCancellable(async () => {
    await control.finishAgentJob(kind, jobId, ending);
    if (kind === 'analysis')
      await hostActivities(input.hostId)
        .releaseAgentTab(jobId)
        .catch(() => undefined);
  });
}

/**
 * An analysis (workflow id `analysis-<jobId>`): model turns on the control queue, each turn's tool
 * calls on the browser's host, until the model answers with a valid proposal or a bound is reached
 * (steps and tokens, checked by each turn; time, by the workflow's clock). Cancelling stops it.
 */
export const analysisJobWorkflow: AgentJobWorkflow = async (jobId, input, maxSeconds) => {
  const deadline = workflowInfo().startTime.getTime() + maxSeconds * 1000;
  let ending: Ending = null;
  try {
    for (let step = 1; ; step++) {
      if (Date.now() > deadline) {
        ending = { code: 'time_limit', message: `the job took its ${maxSeconds} seconds` };
        break;
      }
      const turn = await models.analysisTurn(jobId, step);
      if (turn.done) {
        ending = turn.error ?? null;
        break;
      }
      if (turn.calls.length)
        await hostActivities(input.hostId).runAgentTools({ jobId, resourceId: input.resourceId, calls: turn.calls, step });
    }
    // A proposal is shown on pictures of its pages; without them it is still the job's answer.
    // Histories of analyses before the pictures replay without the call.
    if (ending === null && patched('proposal-pictures')) {
      await hostActivities(input.hostId)
        .pictureProposal({ jobId, resourceId: input.resourceId })
        .catch((error: unknown) => {
          if (isCancellation(error)) throw error;
        });
    }
  } catch (error) {
    ending = isCancellation(error) ? { code: 'stopped', message: 'the agent was stopped' } : failureOf(error);
  }
  await finish('analysis', jobId, input, ending);
};

/**
 * A generation (workflow id `generation-<jobId>`): a model writes a source, the compiler checks it,
 * and a compiled candidate is dry-run on the session's browser in a fresh tab (a child run,
 * `run-<runId>`); compile and run failures and results that differ from the analysis's output declarations
 * (`output_mismatch`) go back to the model, at most GENERATION_ATTEMPTS times.
 */
export const generationJobWorkflow: AgentJobWorkflow = async (jobId, input, maxSeconds) => {
  const deadline = workflowInfo().startTime.getTime() + maxSeconds * 1000;
  let ending: Ending = { code: 'attempts_exhausted', message: `no candidate compiled and ran in ${GENERATION_ATTEMPTS} attempts` };
  try {
    for (let step = 1; step <= GENERATION_ATTEMPTS; step++) {
      if (Date.now() > deadline) {
        ending = { code: 'time_limit', message: `the job took its ${maxSeconds} seconds` };
        break;
      }
      const turn = await models.generationTurn(jobId, step);
      if (turn.done) {
        ending = turn.error ?? null;
        break;
      }
      if (!turn.compiled) {
        // The last word is the last candidate's: one that does not compile is not a dry-run failure.
        ending = { code: 'attempts_exhausted', message: `no candidate compiled and ran in ${GENERATION_ATTEMPTS} attempts` };
        continue;
      }
      const { runId, input: runInput } = await control.prepareDryRun(jobId, input.resourceId, input.hostId);
      await executeChild<PipelineRunWorkflow>(pipelineRunWorkflowType, {
        workflowId: workflowIds.run(runId),
        args: [runId, runInput],
        // A child does not inherit them. Only the start command's attributes change, so histories
        // of generations started before replay unchanged.
        typedSearchAttributes: dryRunSearchAttributes(runId, runInput.hostId),
      }).catch((error) => {
        if (isCancellation(error)) throw error;
      });
      const failure = await control.recordDryRun(jobId, runId);
      if (failure === null) {
        ending = null;
        break;
      }
      await control.reportDryRunFailure(jobId, step, failure.failure, failure.code);
      ending = { code: failure.code, message: failure.failure.replaceAll('\n', '; ') };
    }
  } catch (error) {
    ending = isCancellation(error) ? { code: 'stopped', message: 'the agent was stopped' } : failureOf(error);
  }
  await finish('generation', jobId, input, ending);
};
