import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';
import { Pipeline } from './Pipeline.ts';
import { Project } from './Project.ts';

/** A compile error as the compiler reports it. */
export type CompileError = { node: string | null; input?: string; code: string; message: string };

/**
 * An immutable version of a pipeline's source, with the compiler's errors and plan. Versions
 * form a linked list through `predecessor`.
 */
export const PipelineVersion = defineEntity({
  name: 'PipelineVersion',
  tableName: 'pipeline_versions',
  properties: {
    id: id(),
    pipeline: () => p.manyToOne(Pipeline).deleteRule('cascade').index(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    source: p.json<Record<string, unknown>>(),
    errors: p.json<CompileError[]>(),
    /** The compiled execution plan; null when the source has errors. */
    plan: p.json<Record<string, unknown>>().nullable().lazy(),
    metadata: p.json<Record<string, unknown>>(),
    predecessor: () => p.manyToOne(PipelineVersion).nullable().deleteRule('set null').index(),
    created: created(),
  },
});

export type PipelineVersion = InferEntity<typeof PipelineVersion>;
