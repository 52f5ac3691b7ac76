import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';
import { PipelineFunction } from './PipelineFunction.ts';
import type { CompileError } from './PipelineVersion.ts';
import { PipelineVersion } from './PipelineVersion.ts';
import { Project } from './Project.ts';

export type FunctionParameter = { name: string; refType: string; description?: string };
export type FunctionOutput = { name: string; refType: string; source?: { nodeName: string; outputName: string } };

/**
 * One version of a function: its own copy of the source (compiled, with errors and plan), its
 * declared parameters and outputs, and where it came from (a pipeline version, when imported).
 */
export const FunctionVersion = defineEntity({
  name: 'FunctionVersion',
  tableName: 'function_versions',
  properties: {
    id: id(),
    function: () => p.manyToOne(PipelineFunction).deleteRule('cascade').index(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    source: p.json<Record<string, unknown>>(),
    errors: p.json<CompileError[]>(),
    plan: p.json<Record<string, unknown>>().nullable().lazy(),
    parameters: p.json<FunctionParameter[]>(),
    outputs: p.json<FunctionOutput[]>(),
    metadata: p.json<Record<string, unknown>>(),
    outputType: p.string().length(40).default('function'),
    sourcePipelineId: p.uuid().nullable(),
    sourcePipelineVersion: () => p.manyToOne(PipelineVersion).nullable().deleteRule('set null'),
    predecessor: () => p.manyToOne(FunctionVersion).nullable().deleteRule('set null'),
    created: created(),
  },
});

export type FunctionVersion = InferEntity<typeof FunctionVersion>;
