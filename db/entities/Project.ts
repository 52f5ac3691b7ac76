import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { User } from './User.ts';

export const Project = defineEntity({
  name: 'Project',
  tableName: 'projects',
  properties: {
    id: id(),
    name: p.string().length(200),
    description: p.text().default(''),
    slug: p.string().length(64).unique(),
    visibility: p.enum(['public', 'private'] as const).default('private'),
    owner: () => p.manyToOne(User).deleteRule('cascade').index(),
    created: created(),
    updated: updated(),
  },
});

export type Project = InferEntity<typeof Project>;
