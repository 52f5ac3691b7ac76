import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { BrowserDownload, SessionResource } from '../../../db/entities/index.ts';
import { type BlobStore, PostgresBlobStore, sealedBlobs } from '../../blobs/blobStore.ts';

/**
 * A browser's downloaded files once they left it (docs/browsers.md, Downloads): the bytes in the
 * blob store under `downloads/<resource>/<id>`, sealed under the service secret, and a row of
 * `browser_downloads` saying what they are. Written by the browser's host as a download completes,
 * read and deleted through the API from any host, kept DOWNLOAD_RETENTION_DAYS.
 */

/** The blob store's key of one file: everything of a resource goes with `downloads/<resource>/`. */
export const downloadKey = (resourceId: string, downloadId: string) => `downloads/${resourceId}/${downloadId}`;

/** The blob store of downloaded files: the default store, sealed at rest. */
export function downloadBlobs(orm: MikroORM, serviceSecret: string): BlobStore {
  return sealedBlobs(new PostgresBlobStore(orm), serviceSecret, 'download');
}

/** A file as the API and a `page.download` node show it. */
export type DownloadView = {
  id: string;
  name: string;
  size: number;
  mimeType: string;
  /** Where its bytes are fetched (GET, with the resource's read permission). */
  url: string;
  /** The address it was downloaded from. */
  sourceUrl: string;
  created: string;
};

/** `/{project}/api/sessions/{session}/{resource}/downloads/{id}` under PUBLIC_URL, `project` its slug (as every link the API gives). */
export function downloadUrl(
  publicUrl: string,
  projectSlug: string,
  row: { session: { id: string }; resource: { id: string }; id: string },
) {
  return `${publicUrl}/${projectSlug}/api/sessions/${row.session.id}/${row.resource.id}/downloads/${row.id}`;
}

export function presentDownload(row: BrowserDownload, url: string): DownloadView {
  return {
    id: row.id,
    name: row.name,
    size: Number(row.bytes),
    mimeType: row.mimeType,
    url,
    sourceUrl: row.url,
    created: row.created.toISOString(),
  };
}

/** A finished download to keep: what the browser said of it, and its bytes. */
export type FinishedDownload = {
  resourceId: string;
  name: string;
  mimeType: string;
  sourceUrl: string;
  data: Buffer;
  runId?: string;
};

/**
 * Stores a finished download of `resourceId` and writes its row; answers the row. The bytes go
 * first: a row always has its file (a file without a row, left by a crash between, goes with the
 * retention).
 */
export async function keepDownload(orm: MikroORM, blobs: BlobStore, file: FinishedDownload) {
  const em = orm.em.fork();
  const resource = await em.findOneOrFail(SessionResource, { id: file.resourceId }, { fields: ['id', 'session', 'project'] });
  const id = randomUUID();
  await blobs.put(downloadKey(resource.id, id), file.data);
  const row = em.create(BrowserDownload, {
    id,
    project: resource.project,
    session: resource.session,
    resource,
    run: file.runId ?? null,
    name: file.name,
    bytes: file.data.length,
    mimeType: file.mimeType,
    url: sourceAddress(file.sourceUrl),
    created: new Date(),
  });
  await em.flush();
  return row;
}

/** A data: or blob: URL is the file itself (or a page's handle to it): only its scheme is kept. */
export function sourceAddress(url: string) {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'data' || scheme === 'blob') return `${scheme}:`;
  return url.slice(0, 4000);
}

/** Deletes one file and its row; answers whether there was one. */
export async function deleteDownload(em: EntityManager, blobs: BlobStore, row: BrowserDownload) {
  await em.nativeDelete(BrowserDownload, { id: row.id });
  return blobs.delete(downloadKey(row.resource.id, row.id));
}

/**
 * Housekeeping: deletes the files downloaded longer than `retentionDays` ago, rows and bytes
 * (and bytes whose row is gone, with its resource or session); answers how many rows went.
 */
export async function deleteExpiredDownloads(
  orm: MikroORM,
  blobs: Pick<BlobStore, 'deleteOlder'>,
  retentionDays: number,
  now = new Date(),
) {
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  const rows = await orm.em.fork().nativeDelete(BrowserDownload, { created: { $lt: before } });
  await blobs.deleteOlder('downloads/', before);
  return rows;
}

/** Common file types by extension; what a download's name does not say is `application/octet-stream`. */
const mimeTypes: Record<string, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  txt: 'text/plain',
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  xls: 'application/vnd.ms-excel',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  doc: 'application/msword',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  mp3: 'audio/mpeg',
  mp4: 'video/mp4',
  ics: 'text/calendar',
};

/** The MIME type a file's name says (CDP's download events carry none). */
export function mimeTypeOf(name: string) {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? '';
  return mimeTypes[extension] ?? 'application/octet-stream';
}
