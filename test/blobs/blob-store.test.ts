import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initORM, migrate } from '../../db/orm.ts';
import { createScratchDatabase } from '../../scripts/scratch-database.ts';
import { type BlobStore, PostgresBlobStore, sealedBlobs } from '../../server/blobs/blobStore.ts';
import { testDatabaseBase } from '../support/stack.ts';

let orm: Awaited<ReturnType<typeof initORM>>;
let drop: () => Promise<void>;
let store: BlobStore;

beforeAll(async () => {
  const scratch = await createScratchDatabase(testDatabaseBase, 'blobs');
  drop = scratch.drop;
  orm = await initORM(scratch.url);
  await migrate(orm);
  store = new PostgresBlobStore(orm);
});

afterAll(async () => {
  await orm?.close(true);
  await drop?.();
});

describe('the blob store in PostgreSQL', () => {
  it('keeps a file byte for byte, replaces it under the same key, and deletes it', async () => {
    const data = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 256));
    await store.put('downloads/r1/a', data);
    expect((await store.get('downloads/r1/a'))?.equals(data)).toBe(true);
    expect(await store.size('downloads/r1/a')).toBe(70_000);
    await store.put('downloads/r1/a', Buffer.from('two'));
    expect((await store.get('downloads/r1/a'))?.toString()).toBe('two');
    expect(await store.delete('downloads/r1/a')).toBe(true);
    expect(await store.delete('downloads/r1/a')).toBe(false);
    expect(await store.get('downloads/r1/a')).toBeUndefined();
    expect(await store.size('downloads/r1/a')).toBeUndefined();
  });

  it('deletes everything of one owner, and only that, by prefix (LIKE characters taken literally)', async () => {
    for (const key of ['rec/a_b/1', 'rec/a_b/2', 'rec/axb/1', 'rec/a%/1', 'other/a_b/1']) await store.put(key, Buffer.from(key));
    expect(await store.deleteUnder('rec/a_b/')).toBe(2);
    expect(await store.get('rec/axb/1')).toBeDefined();
    expect(await store.deleteUnder('rec/a%/')).toBe(1);
    expect(await store.get('other/a_b/1')).toBeDefined();
  });

  it('deletes the files of a kind stored before a time', async () => {
    await store.put('old/1', Buffer.from('x'));
    const cut = new Date(Date.now() + 1000);
    expect(await store.deleteOlder('old/', new Date(Date.now() - 60_000))).toBe(0);
    expect(await store.deleteOlder('old/', cut)).toBe(1);
  });

  it('seals files at rest: the table holds no clear text, and another secret reads nothing', async () => {
    const sealed = sealedBlobs(store, 'secret-one-0123456789abcdef0123456789', 'profile');
    await sealed.put('profiles/s1', Buffer.from('session cookie: abc123'));
    expect((await sealed.get('profiles/s1'))?.toString()).toBe('session cookie: abc123');
    const raw = await store.get('profiles/s1');
    expect(raw?.includes(Buffer.from('abc123'))).toBe(false);
    const other = sealedBlobs(store, 'secret-two-0123456789abcdef0123456789', 'profile');
    expect(await other.get('profiles/s1')).toBeUndefined();
    expect(await sealedBlobs(store, 'secret-one-0123456789abcdef0123456789', 'recording').get('profiles/s1')).toBeUndefined();
  });
});
