import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { FunctionVersion } from './FunctionVersion.ts';
import { Project } from './Project.ts';

/** A function (spec "Function"): a pipeline version published behind a slug, executed by slug. */
export const PipelineFunction = defineEntity({
  name: 'PipelineFunction',
  tableName: 'functions',
  uniques: [{ properties: ['project', 'slug'] }],
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    name: p.string().length(200),
    slug: p.string().length(64),
    description: p.text().default(''),
    currentVersion: () => p.manyToOne(FunctionVersion).nullable().deleteRule('set null'),
    created: created(),
    updated: updated(),
  },
});

export type PipelineFunction = InferEntity<typeof PipelineFunction>;
