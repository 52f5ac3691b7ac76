import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHousekeepingActivities } from '../../../activities/housekeeping.ts';
import { BrowserDownload, BrowserSession, Project, SessionResource } from '../../../db/entities/index.ts';
import { PostgresBlobStore } from '../../../server/blobs/blobStore.ts';
import { deleteExpiredDownloads, downloadBlobs, downloadKey, keepDownload } from '../../../server/browsers/downloads/downloadFiles.ts';
import { userWithSession } from '../../support/pipelines.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

/**
 * Downloaded files are kept DOWNLOAD_RETENTION_DAYS: the hourly housekeeping deletes older rows
 * and their bytes in the blob store, and leaves newer ones (and other kinds of files) alone.
 */

let stack: TestStack;
let resourceId: string;

beforeAll(async () => {
  stack = await startTestStack({ DOWNLOAD_RETENTION_DAYS: '3' });
  const { slug, sessionId } = await userWithSession(stack, 'retention');
  const em = stack.orm.em.fork();
  const project = await em.findOneOrFail(Project, { slug });
  const resource = em.create(SessionResource, {
    session: em.getReference(BrowserSession, sessionId),
    project,
    status: 'stopped',
  });
  await em.flush();
  resourceId = resource.id;
});
afterAll(async () => {
  await stack?.close();
});

/** A file kept `daysAgo` days ago (its row and its bytes alike). */
async function keptDaysAgo(daysAgo: number, name: string) {
  const blobs = downloadBlobs(stack.orm, stack.config.jwtSecret as string);
  const row = await keepDownload(stack.orm, blobs, {
    resourceId,
    name,
    mimeType: 'text/csv',
    sourceUrl: 'https://x.test/',
    data: Buffer.from(name),
  });
  const connection = stack.orm.em.getConnection();
  await connection.execute(`update browser_downloads set created = now() - interval '${daysAgo} days' where id = ?`, [row.id]);
  await connection.execute(`update blobs set created = now() - interval '${daysAgo} days' where key = ?`, [
    downloadKey(resourceId, row.id),
  ]);
  return row.id;
}

async function present(id: string) {
  const row = await stack.orm.em.fork().findOne(BrowserDownload, { id });
  const bytes = await new PostgresBlobStore(stack.orm).size(downloadKey(resourceId, id));
  return { row: row !== null, bytes: bytes !== undefined };
}

it('deletes the files downloaded longer ago than DOWNLOAD_RETENTION_DAYS, rows and bytes, and keeps the rest', async () => {
  const old = await keptDaysAgo(4, 'old.csv');
  const recent = await keptDaysAgo(2, 'recent.csv');
  const fresh = await keptDaysAgo(0, 'fresh.csv');
  // Another kind of file in the blob store, as old: not a download, not this housekeeping's.
  const store = new PostgresBlobStore(stack.orm);
  await store.put('profiles/someone', Buffer.from('profile'));
  await stack.orm.em.getConnection().execute(`update blobs set created = now() - interval '30 days' where key = 'profiles/someone'`);
  // Bytes whose row went (with its session, say) go by their own age.
  await store.put(`downloads/${resourceId}/orphan`, Buffer.from('orphan'));
  await stack.orm.em
    .getConnection()
    .execute(`update blobs set created = now() - interval '5 days' where key = ?`, [`downloads/${resourceId}/orphan`]);

  const housekeeping = createHousekeepingActivities({
    orm: stack.orm,
    config: stack.config,
    log: stack.log,
    serviceSecret: stack.config.jwtSecret as string,
  });
  const deleted = await housekeeping.deleteExpiredRows();
  expect(deleted.browser_downloads).toBe(1);
  expect(await present(old)).toEqual({ row: false, bytes: false });
  expect(await present(recent)).toEqual({ row: true, bytes: true });
  expect(await present(fresh)).toEqual({ row: true, bytes: true });
  expect(await store.size(`downloads/${resourceId}/orphan`)).toBeUndefined();
  expect(await store.size('profiles/someone')).toBeDefined();

  // Counted from the moment it runs: a pass a day later takes the next one.
  const later = new Date(Date.now() + 1.5 * 86_400_000);
  expect(await deleteExpiredDownloads(stack.orm, store, 3, later)).toBe(1);
  expect(await present(recent)).toEqual({ row: false, bytes: false });
  expect(await present(fresh)).toEqual({ row: true, bytes: true });
});
