import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BrowserSession } from './BrowserSession.ts';
import { created, id, updated } from './common.ts';
import { Pipeline } from './Pipeline.ts';
import { PipelineVersion } from './PipelineVersion.ts';
import { Project } from './Project.ts';

/** A record's review status, and whether its agent (the job's workflow) still works. */
export const jobStatuses = ['pending', 'accepted', 'rejected'] as const;
export const agentStates = ['running', 'stopped'] as const;

/** Tokens an agent job used, summed over its model calls. */
export type TokenUsage = { inputTokens: number; outputTokens: number; calls: number };

/** One message of an agent's conversation, as stored and shown (secrets already replaced). */
export type AgentMessage = { role: 'system' | 'user' | 'assistant' | 'tool'; content: unknown; step: number; created: string };

/**
 * A model's study of a live page for a pipeline (server/agents/): its `analysisJob` workflow
 * explores the session's browser in a tab of its own and ends with a structured `output` (the
 * proposal), or an `error`. `agent` says whether the workflow still works; `status` is the review.
 */
export const AnalysisJob = defineEntity({
  name: 'AnalysisJob',
  tableName: 'analysis_jobs',
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    pipeline: () => p.manyToOne(Pipeline).deleteRule('cascade').index(),
    /** The pipeline's current version when the job was made. */
    version: () => p.manyToOne(PipelineVersion).nullable().deleteRule('set null'),
    session: () => p.manyToOne(BrowserSession).nullable().deleteRule('set null'),
    model: p.string().length(64),
    /** The prompt as the model sees it: values the prompt marked secret are placeholders. */
    prompt: p.text(),
    /** The prompt's secret values, encrypted (server/pipelines/runSecrets.ts); never shown. */
    sealedSecrets: p.text().nullable().hidden().lazy(),
    /** The prompt's other values, by parameter name: they become the parameters' defaults. */
    values: p.json<Record<string, string>>().onCreate(() => ({})),
    status: p.enum(jobStatuses).default('pending'),
    agent: p.enum(agentStates).default('running'),
    /** The browsers (session resources) the job used. */
    resources: p.json<string[]>().onCreate(() => []),
    messages: p
      .json<AgentMessage[]>()
      .onCreate(() => [])
      .lazy(),
    output: p.json<Record<string, unknown>>().nullable(),
    error: p.json<{ code: string; message: string }>().nullable(),
    usage: p.json<TokenUsage>().onCreate(() => ({ inputTokens: 0, outputTokens: 0, calls: 0 })),
    created: created(),
    updated: updated(),
  },
});

export type AnalysisJob = InferEntity<typeof AnalysisJob>;
