/**
 * The contract of `analysisJobWorkflow` and `generationJobWorkflow` (workflows/agentJobs.ts): what
 * a job is started with. Jobs are stopped by cancelling their workflow, which records the agent
 * as stopped and keeps what it has; they have no signals, updates or queries.
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

/** Most compile-or-run attempts of one generation. */
export const GENERATION_ATTEMPTS = 4;
