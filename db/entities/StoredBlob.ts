import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created } from './common.ts';

/**
 * One stored file of the default blob store (server/blobs/blobStore.ts): a session's saved
 * profile, a browser's recording or download. Keyed by a path its owner chooses
 * (`profiles/<session>`, `downloads/<resource>/<id>`), so that an owner's files go together with
 * one prefix. Lists never load `data`.
 */
export const StoredBlob = defineEntity({
  name: 'StoredBlob',
  tableName: 'blobs',
  // Housekeeping's deletion of old files of one kind.
  indexes: [{ properties: ['created'] }],
  properties: {
    key: p.string().length(500).primary(),
    bytes: p.bigint('number'),
    data: p.blob().lazy().hidden(),
    created: created(),
  },
});

export type StoredBlob = InferEntity<typeof StoredBlob>;
