import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { Project } from './Project.ts';
import { User } from './User.ts';

export const apiKeyAccessTypes = ['full', 'projects', 'custom'] as const;

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: id(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    name: p.string().length(200),
    accessType: p.enum(apiKeyAccessTypes),
    /** Public identifier shown on every read; not a credential by itself. */
    keyPrefix: p.string().length(32).unique(),
    /** SHA-256 of the full secret. The secret has 192 bits of entropy, so a fast hash is enough. */
    secretHash: p.string().length(64).hidden().lazy(),
    /** Permission strings for `custom` keys. */
    permissions: p.json<string[]>().default([]),
    /** The allow list of `projects` keys; rows vanish with the project (cascade). */
    projects: () => p.manyToMany(Project).pivotTable('api_key_projects'),
    lastUsed: p.datetime().nullable(),
    created: created(),
    updated: updated(),
  },
});

export type ApiKey = InferEntity<typeof ApiKey>;
