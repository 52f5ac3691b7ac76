import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { type BrowserSession, PipelineRun, type SessionResource } from '../../../db/entities/index.ts';
import type { BlobStore } from '../../blobs/blobStore.ts';
import { NotFound } from '../../errors.ts';
import { recordingActions } from '../../permissions/permissions.ts';
import { readEvents, readManifest } from './recordingFiles.ts';

/** What the API shows of a browser's recordings (docs/browsers.md, Recordings). */
export const recordedPageView = z.object({
  page: z.number().int(),
  url: z.string(),
  started: z.string(),
  ended: z.string(),
  events: z.number().int(),
  bytes: z.number().int(),
});

export const recordingsView = z.object({
  resourceId: z.string(),
  pages: z.array(recordedPageView),
  bytes: z.number().int(),
  /** Why recording stopped before the browser did (RECORDING_MAX_BYTES), or null. */
  stopped: z.string().nullable(),
});

export const recordingEventsView = recordedPageView.omit({ events: true }).extend({
  resourceId: z.string(),
  /** rrweb events, as its player takes them. */
  events: z.array(z.unknown()),
  eventCount: z.number().int(),
});

/** The actions a caller needs on `session` to read `resource`'s recording (`recordingActions`). */
export async function recordingAccess(em: EntityManager, session: BrowserSession, resource: SessionResource) {
  const runsReadCookies = (await em.count(PipelineRun, { resource: resource.id, readsCookies: true })) > 0;
  return recordingActions({ sessionHasCookies: session.cookies.length > 0, runsReadCookies });
}

export async function presentRecordings(blobs: BlobStore, resourceId: string) {
  const manifest = await readManifest(blobs, resourceId);
  return {
    resourceId,
    pages: (manifest?.pages ?? []).map(({ page, url, started, ended, events, bytes }) => ({ page, url, started, ended, events, bytes })),
    bytes: manifest?.bytes ?? 0,
    stopped: manifest?.stopped ?? null,
  };
}

export async function presentRecordedPage(blobs: BlobStore, resourceId: string, page: number) {
  const recorded = (await readManifest(blobs, resourceId))?.pages.find((entry) => entry.page === page);
  if (!recorded) throw new NotFound('Recording');
  const events = await readEvents(blobs, resourceId, recorded);
  const { url, started, ended, bytes } = recorded;
  return { resourceId, page, url, started, ended, bytes, events, eventCount: events.length };
}
