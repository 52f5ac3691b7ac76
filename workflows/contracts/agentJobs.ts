import type { PipelineRunInput } from './pipelineRun.ts';

/**
 * The contract of `analysisJobWorkflow` and `generationJobWorkflow` (workflows/agentJobs.ts): what
 * a job is started with, and the activities it calls. Jobs are stopped by cancelling their
 * workflow, which records the agent as stopped and keeps what it has; they have no signals,
 * updates or queries.
 */
export type AgentJobInput = {
  /**
   * The browser the job explores (analysis) or dry-runs on (generation), and its host. A browser
   * started for a job stays with the session when the job ends (the next link of the chain uses
   * it) and stops on its idle timeout like any other.
   */
  hostId: string;
  resourceId: string;
};

export type AgentJobWorkflow = (jobId: string, input: AgentJobInput, maxSeconds: number) => Promise<void>;
/** Their workflow types: the api starts them by these names (server/agents/model/jobs.ts). */
export const analysisJobWorkflowType = 'analysisJobWorkflow';
export const generationJobWorkflowType = 'generationJobWorkflow';

/** Most compile-or-run attempts of one generation. */
export const GENERATION_ATTEMPTS = 4;

export type AgentJobKind = 'analysis' | 'generation';

/** A tool call the model asked for; the browser host carries it out in the job's tab. */
export type ToolCallRequest = { toolCallId: string; toolName: string; input: Record<string, unknown> };

export type AgentJobError = { code: string; message: string };

/**
 * Why a dry run does not verify its candidate: the run failed, or its result differs from the
 * analysis's output declarations (`failure` then holds one line per difference).
 */
export type DryRunFailure = { code: 'dry_run_failed' | 'output_mismatch'; failure: string };

/** What an analysis turn tells the workflow: the tool calls to run, or that the job is done. */
export type TurnResult = { calls: ToolCallRequest[]; done: boolean; error?: AgentJobError };

/** The jobs' activities on the control queue (activities/agentJobs.ts): model turns and bookkeeping. */
export type AgentJobActivities = {
  analysisTurn(jobId: string, step: number): Promise<TurnResult>;
  generationTurn(jobId: string, step: number): Promise<{ compiled: boolean; done: boolean; error?: AgentJobError }>;
  reportDryRunFailure(jobId: string, step: number, failure: string, code?: DryRunFailure['code']): Promise<void>;
  finishAgentJob(kind: AgentJobKind, jobId: string, error: AgentJobError | null): Promise<void>;
  /** The row and workflow input of a dry run of the generation's candidate. */
  prepareDryRun(jobId: string, resourceId: string, hostId: string): Promise<{ runId: string; input: PipelineRunInput }>;
  /** Answers the failure to feed back, or null when the dry run ran green with the declared outputs. */
  recordDryRun(jobId: string, runId: string): Promise<DryRunFailure | null>;
};

/** The jobs' activities on the host of the job's browser (activities/browserHost/agentJobs.ts). */
export type AgentJobHostActivities = {
  runAgentTools(call: { jobId: string; resourceId: string; calls: ToolCallRequest[]; step: number }): Promise<void>;
  releaseAgentTab(jobId: string): Promise<void>;
  /** Pictures of the pages a finished analysis's proposal acts on, its steps' elements boxed; answers how many were kept. */
  pictureProposal(call: { jobId: string; resourceId: string }): Promise<number>;
};
