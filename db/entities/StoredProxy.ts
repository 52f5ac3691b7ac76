import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { Project } from './Project.ts';

export const StoredProxy = defineEntity({
  name: 'Proxy',
  tableName: 'proxies',
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    name: p.string().length(200).nullable(),
    hostname: p.string().length(255),
    port: p.integer(),
    protocol: p.string().length(20),
    username: p.string().length(255).nullable(),
    /** Sealed under the service secret (server/browsers/proxies/proxyPasswords.ts); opened only at launch. */
    password: p.text().nullable().hidden(),
    metadata: p.json<Record<string, unknown>>().onCreate(() => ({})),
    created: created(),
    updated: updated(),
  },
});

export type StoredProxy = InferEntity<typeof StoredProxy>;
