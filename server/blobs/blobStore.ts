import type { MikroORM } from '@mikro-orm/postgresql';
import { StoredBlob } from '../../db/entities/index.ts';
import { openBytes, sealBytes } from '../auth/secrets.ts';

/**
 * Where the service keeps files that outlive a browser: a session's saved profile, recordings,
 * downloads. One interface, so that another store (a bucket) can take PostgreSQL's place; PostgreSQL
 * is the default, so a second host finds what the first stored with no shared disk.
 *
 * Keys are paths its owners choose, `<kind>/<owner>/<name>`; everything of one owner goes with
 * `deleteUnder('<kind>/<owner>/')`.
 */
export interface BlobStore {
  /** Stores `data` under `key`, replacing what was there. */
  put(key: string, data: Uint8Array): Promise<void>;
  /** The file, or undefined when there is none. */
  get(key: string): Promise<Buffer | undefined>;
  /** Its size in bytes as stored (sealed files: 28 bytes more), without reading it; undefined when there is none. */
  size(key: string): Promise<number | undefined>;
  /** Whether there was a file to delete. */
  delete(key: string): Promise<boolean>;
  /** Deletes every file whose key starts with `prefix`; how many went. */
  deleteUnder(prefix: string): Promise<number>;
  /** Deletes every file under `prefix` stored before `before`; how many went. */
  deleteOlder(prefix: string, before: Date): Promise<number>;
}

/** `prefix` as a LIKE pattern matching the keys that start with it. */
function startsWith(prefix: string) {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The default store: the `blobs` table of the service's own database. */
export class PostgresBlobStore implements BlobStore {
  private readonly orm: MikroORM;

  constructor(orm: MikroORM) {
    this.orm = orm;
  }

  async put(key: string, data: Uint8Array) {
    const bytes = Buffer.from(data.buffer, data.byteOffset, data.length);
    await this.orm.em.fork().upsert(StoredBlob, { key, data: bytes, bytes: bytes.length, created: new Date() });
  }

  async get(key: string) {
    const row = await this.orm.em.fork().findOne(StoredBlob, { key }, { populate: ['data'] });
    return row ? Buffer.from(row.data) : undefined;
  }

  async size(key: string) {
    const row = await this.orm.em.fork().findOne(StoredBlob, { key }, { fields: ['key', 'bytes'] });
    return row ? Number(row.bytes) : undefined;
  }

  async delete(key: string) {
    return (await this.orm.em.fork().nativeDelete(StoredBlob, { key })) > 0;
  }

  async deleteUnder(prefix: string) {
    return this.orm.em.fork().nativeDelete(StoredBlob, { key: { $like: startsWith(prefix) } });
  }

  async deleteOlder(prefix: string, before: Date) {
    return this.orm.em.fork().nativeDelete(StoredBlob, { key: { $like: startsWith(prefix) }, created: { $lt: before } });
  }
}

/**
 * `store` with every file sealed (AES-256-GCM) under the service secret and `purpose` at rest: what
 * is read back under another secret, or altered, reads as missing.
 */
export function sealedBlobs(store: BlobStore, serviceSecret: string, purpose: string): BlobStore {
  return {
    ...bind(store),
    put: (key, data) => store.put(key, sealBytes(serviceSecret, purpose, data)),
    get: async (key) => {
      const sealed = await store.get(key);
      return sealed ? (openBytes(serviceSecret, purpose, sealed) ?? undefined) : undefined;
    },
  };
}

function bind(store: BlobStore): BlobStore {
  return {
    put: store.put.bind(store),
    get: store.get.bind(store),
    size: store.size.bind(store),
    delete: store.delete.bind(store),
    deleteUnder: store.deleteUnder.bind(store),
    deleteOlder: store.deleteOlder.bind(store),
  };
}
