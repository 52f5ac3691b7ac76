import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';
import { Project } from './Project.ts';

/** Metered usage (CPU seconds, network bytes …) of one resource; billing reads these. */
export const UsageRecord = defineEntity({
  name: 'UsageRecord',
  tableName: 'usage_records',
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    resourceId: p.uuid().index(),
    unit: p.string().length(40),
    amount: p.decimal('string').precision(20).scale(6),
    created: created(),
  },
});

export type UsageRecord = InferEntity<typeof UsageRecord>;
