import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { type AgentMessage, AnalysisJob, agentStates, jobStatuses, type TokenUsage } from './AnalysisJob.ts';
import { created, id, updated } from './common.ts';
import { Pipeline } from './Pipeline.ts';
import { type CompileError, PipelineVersion } from './PipelineVersion.ts';
import { Project } from './Project.ts';

/**
 * How the candidate's dry run on the session's browser went, and how its result compared with the
 * analysis's output declarations: `mismatches` (server/agents/model/outputCheck.ts) is empty when the
 * result is what was declared, absent when the run did not succeed or predates the check.
 */
export type DryRunResult = {
  status: 'succeeded' | 'failed' | 'cancelled';
  runId: string | null;
  result: Record<string, unknown> | null;
  error: { node: string | null; code: string; message: string } | null;
  mismatches?: { output: string; kind: string; message: string }[];
};

/**
 * The next link of an accepted analysis (server/agents/): its `generationJob` workflow turns the
 * analysis into a pipeline source, compiles it and dry-runs it, feeding errors back to the model.
 * Accepting it makes `source` a new version of the pipeline (`acceptedVersion`).
 */
export const GenerationJob = defineEntity({
  name: 'GenerationJob',
  tableName: 'generation_jobs',
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    pipeline: () => p.manyToOne(Pipeline).deleteRule('cascade').index(),
    /** The pipeline version the analysis started from. */
    version: () => p.manyToOne(PipelineVersion).nullable().deleteRule('set null'),
    analysis: () => p.manyToOne(AnalysisJob).nullable().deleteRule('set null').index(),
    model: p.string().length(64),
    /** The browser it dry-runs on. */
    resource: p.uuid().nullable(),
    status: p.enum(jobStatuses).default('pending'),
    agent: p.enum(agentStates).default('running'),
    messages: p
      .json<AgentMessage[]>()
      .onCreate(() => [])
      .lazy(),
    /**
     * The candidate source the job ended with, its compiler errors, its plan (null when it has
     * errors), and its dry run. The candidate is compiled once, when the model answers it: the dry
     * run and the accept read the plan stored here.
     */
    source: p.json<Record<string, unknown>>().nullable(),
    errors: p.json<CompileError[]>().onCreate(() => []),
    plan: p.json<Record<string, unknown>>().nullable().lazy(),
    dryRun: p.json<DryRunResult>().nullable(),
    attempts: p.integer().default(0),
    error: p.json<{ code: string; message: string }>().nullable(),
    usage: p.json<TokenUsage>().onCreate(() => ({ inputTokens: 0, outputTokens: 0, calls: 0 })),
    acceptedVersion: () => p.manyToOne(PipelineVersion).nullable().deleteRule('set null'),
    created: created(),
    updated: updated(),
  },
});

export type GenerationJob = InferEntity<typeof GenerationJob>;
