import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BrowserSession } from './BrowserSession.ts';
import { created, id, updated } from './common.ts';
import { FunctionVersion } from './FunctionVersion.ts';
import { GenerationJob } from './GenerationJob.ts';
import { Pipeline } from './Pipeline.ts';
import { PipelineVersion } from './PipelineVersion.ts';
import { Project } from './Project.ts';
import { SessionResource } from './SessionResource.ts';

export const runStatuses = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
/** What pictures a run's host takes (docs/pipelines.md, Screenshots). */
export const screenshotModes = ['none', 'failures', 'steps'] as const;
export const evaluationStatuses = ['pending', 'running', 'completed', 'failed', 'stopped'] as const;

/** One run of a pipeline version against a session; its `pipelineRun` workflow executes it. */
export const PipelineRun = defineEntity({
  name: 'PipelineRun',
  tableName: 'pipeline_runs',
  /** The project's runs by time: the console's runs overview (server/trpc/routers/projectOverview.ts). */
  indexes: [{ properties: ['project', 'created'] }],
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    /** A pipeline version's run, or (with `functionVersion`) a function execution's. */
    pipeline: () => p.manyToOne(Pipeline).nullable().deleteRule('cascade').index(),
    version: () => p.manyToOne(PipelineVersion).nullable().deleteRule('cascade').index(),
    functionVersion: () => p.manyToOne(FunctionVersion).nullable().deleteRule('cascade').index(),
    /** A generation job's dry run of its candidate (no pipeline version yet: `plan` holds it). */
    generation: () => p.manyToOne(GenerationJob).nullable().deleteRule('cascade').index(),
    session: () => p.manyToOne(BrowserSession).nullable().deleteRule('set null'),
    /** The browser it ran on, and whether the run started that browser itself. */
    resource: () => p.manyToOne(SessionResource).nullable().deleteRule('set null'),
    ownsResource: p.boolean().default(false),
    /**
     * Whether the version's plan has a node that reads cookies (server/pipelines/engine/registry.ts),
     * fixed when the run starts: its outputs are then shown only to callers with cookies.read.
     */
    readsCookies: p.boolean().default(false),
    /** Pictures of its pages: none, where a node failed, or after every browser node too (RunScreenshot). */
    screenshots: p.enum(screenshotModes).default('failures'),
    /** Its browser records every page with rrweb from the run's first browser node on (docs/browsers.md, Recordings). */
    record: p.boolean().default(false),
    status: p.enum(runStatuses).default('queued'),
    evaluation: p.enum(evaluationStatuses).default('pending'),
    /** Arguments (secret parameters redacted) and results. */
    args: p.json<Record<string, unknown>>().onCreate(() => ({})),
    /** Values of secret parameters, encrypted (server/pipelines/runSecrets.ts); never shown. */
    sealedSecrets: p.text().nullable().hidden().lazy(),
    nodeOutputs: p.json<Record<string, unknown>>().onCreate(() => ({})),
    result: p.json<Record<string, unknown>>().nullable(),
    error: p.json<{ node: string | null; code: string; message: string }>().nullable(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    created: created(),
    updated: updated(),
  },
});

export type PipelineRun = InferEntity<typeof PipelineRun>;
