import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { PipelineVersion } from './PipelineVersion.ts';
import { Project } from './Project.ts';

export const Pipeline = defineEntity({
  name: 'Pipeline',
  tableName: 'pipelines',
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    name: p.string().length(200),
    description: p.text().default(''),
    /** The current version; null only between creating a pipeline and its first version. */
    currentVersion: () => p.manyToOne(PipelineVersion).nullable().deleteRule('set null'),
    created: created(),
    updated: updated(),
  },
});

export type Pipeline = InferEntity<typeof Pipeline>;
