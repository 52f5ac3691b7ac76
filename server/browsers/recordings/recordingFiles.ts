import { gunzipSync } from 'node:zlib';
import type { MikroORM } from '@mikro-orm/postgresql';
import { type BlobStore, PostgresBlobStore, sealedBlobs } from '../../blobs/blobStore.ts';

/**
 * How a browser's recordings lie in the blob store (docs/browsers.md, Recordings): under
 * `recordings/<resourceId>/`, one manifest and, per recorded page (tab), numbered parts. A part is
 * gzip of rrweb event batches, one JSON array a line, written by the browser's host as they come;
 * the manifest is rewritten after each part. Everything is sealed under the service secret.
 */

/** What one recorded page (tab) of a browser holds. */
export type RecordedPage = {
  /** Its number in the browser, from 0, in the order the recorder found the pages. */
  page: number;
  /** The first address it recorded. */
  url: string;
  started: string;
  ended: string;
  parts: number;
  events: number;
  /** Compressed, as stored. */
  bytes: number;
};

export type RecordingManifest = {
  pages: RecordedPage[];
  /** Compressed bytes of every part. */
  bytes: number;
  /** Why recording stopped before the browser did (its bound), or null. */
  stopped: string | null;
};

/** Every browser's recordings lie under this key prefix. */
export const RECORDINGS_ROOT = 'recordings/';
export const recordingPrefix = (resourceId: string) => `${RECORDINGS_ROOT}${resourceId}/`;
export const manifestKey = (resourceId: string) => `${recordingPrefix(resourceId)}manifest`;
export const partKey = (resourceId: string, page: number, part: number) => `${recordingPrefix(resourceId)}${page}-${part}`;

/** The recordings' view of the service's blob store: sealed under the service secret. */
export function recordingBlobs(orm: MikroORM, serviceSecret: string): BlobStore {
  return sealedBlobs(new PostgresBlobStore(orm), serviceSecret, 'recordings');
}

export async function readManifest(blobs: BlobStore, resourceId: string): Promise<RecordingManifest | null> {
  const bytes = await blobs.get(manifestKey(resourceId));
  return bytes ? (JSON.parse(bytes.toString('utf8')) as RecordingManifest) : null;
}

/**
 * The rrweb events of one recorded page, in order. A part that housekeeping already deleted (its
 * retention ended while the browser still recorded) is skipped.
 */
export async function readEvents(blobs: BlobStore, resourceId: string, page: RecordedPage): Promise<unknown[]> {
  const events: unknown[] = [];
  for (let part = 0; part < page.parts; part++) {
    const bytes = await blobs.get(partKey(resourceId, page.page, part));
    if (!bytes) continue;
    for (const line of gunzipSync(bytes).toString('utf8').split('\n')) {
      if (line) events.push(...(JSON.parse(line) as unknown[]));
    }
  }
  return events;
}

/**
 * `json` (rrweb events as JSON text) with every value of `secrets` replaced by asterisks, as it
 * appears in JSON text (escaped): what the browser did not mask (a secret a page prints as text)
 * is still never stored.
 */
export function scrubSecrets(json: string, secrets: Iterable<string>): string {
  let scrubbed = json;
  for (const secret of secrets) {
    if (!secret) continue;
    const encoded = JSON.stringify(secret).slice(1, -1);
    if (scrubbed.includes(encoded)) scrubbed = scrubbed.split(encoded).join('*'.repeat(secret.length));
  }
  return scrubbed;
}
