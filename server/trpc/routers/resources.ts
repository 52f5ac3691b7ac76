import { z } from 'zod';
import { BrowserDownload, BrowserSession, SessionResource } from '../../../db/entities/index.ts';
import { deleteDownload, downloadBlobs, downloadUrl, presentDownload } from '../../browsers/downloads/downloadFiles.ts';
import { recordingBlobs } from '../../browsers/recordings/recordingFiles.ts';
import {
  presentRecordedPage,
  presentRecordings,
  recordingAccess,
  recordingEventsView,
  recordingsView,
} from '../../browsers/recordings/recordingViews.ts';
import { startBrowser, stopBrowser } from '../../browsers/sessions/browserSessions.ts';
import { presentResource, resourceView } from '../../browsers/sessions/resourceView.ts';
import { sessionActions } from '../../permissions/permissions.ts';
import { findInProject, loadChild } from '../../projects/projectRows.ts';
import { pagination, statusOk } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, router } from '../base.ts';

const tags = ['sessions'];
const ids = { project: z.string().max(100), sessionId: z.string().max(100) };

/** Authorises before loading, so a missing id and a forbidden one look alike. */
function loadSession(ctx: ProjectContext, sessionId: string, action: string) {
  return findInProject(ctx, BrowserSession, sessionId, action, 'Session');
}

async function loadResource(ctx: ProjectContext, sessionId: string, resourceId: string, action: string) {
  const session = await loadSession(ctx, sessionId, action);
  return loadChild(ctx.em, SessionResource, resourceId, { session: session.id }, 'Resource');
}

/** A downloaded file as the list shows it (docs/browsers.md, Downloads). */
const downloadView = z.object({
  id: z.string(),
  name: z.string(),
  size: z.number(),
  mimeType: z.string(),
  url: z.string().describe('Where its bytes are fetched: GET, with the resource’s read permission'),
  sourceUrl: z.string().describe('The address it was downloaded from (a data: or blob: URL as its scheme only)'),
  created: z.string(),
});
/** A browser whose recording the caller may read (`recordingActions`), and the store it lies in. */
async function loadRecorded(ctx: ProjectContext, sessionId: string, resourceId: string) {
  const session = await loadSession(ctx, sessionId, sessionActions.read);
  const resource = await loadChild(ctx.em, SessionResource, resourceId, { session: session.id }, 'Resource');
  for (const action of await recordingAccess(ctx.em, session, resource)) ctx.authorize(action, session.id);
  return { resource, blobs: recordingBlobs(ctx.deps.orm, ctx.deps.serviceSecret) };
}

export const resourcesRouter = router({
  start: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/{project}/api/sessions/{sessionId}/start',
        errorResponses: [402, 409, 429],
        tags,
        summary: 'Start a browser for the session',
      },
    })
    .input(z.strictObject(ids))
    .output(resourceView)
    .mutation(async ({ ctx, input }) => {
      const session = await loadSession(ctx, input.sessionId, sessionActions.write);
      const resource = await startBrowser(ctx.deps, ctx.em, ctx.project, session);
      return presentResource(ctx.deps, ctx.project, resource, { withUrls: true, subject: ctx.subject });
    }),

  get: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/sessions/{sessionId}/{resourceId}',
        tags,
        summary: 'A started browser: status, URLs and usage',
      },
    })
    .input(z.strictObject({ ...ids, resourceId: z.string().max(100) }))
    .output(resourceView)
    .query(async ({ ctx, input }) => {
      const resource = await loadResource(ctx, input.sessionId, input.resourceId, sessionActions.read);
      return presentResource(ctx.deps, ctx.project, resource, { withUrls: true, subject: ctx.subject });
    }),

  recordings: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/sessions/{sessionId}/{resourceId}/recordings',
        tags,
        summary: 'The browser’s recorded pages (rrweb), with what each holds',
        description:
          'A browser records when its session has `record: true` or a run on it was started with `record: true` (docs/browsers.md, Recordings). Needs `sessions.read` on the session, and `cookies.read` where the session has cookies or a run on the browser read them.',
      },
    })
    .input(z.strictObject({ ...ids, resourceId: z.string().max(100) }))
    .output(recordingsView)
    .query(async ({ ctx, input }) => {
      const { resource, blobs } = await loadRecorded(ctx, input.sessionId, input.resourceId);
      return presentRecordings(blobs, resource.id);
    }),

  recording: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/sessions/{sessionId}/{resourceId}/recordings/{page}',
        tags,
        summary: 'One recorded page’s rrweb events, for rrweb’s player',
      },
    })
    .input(z.strictObject({ ...ids, resourceId: z.string().max(100), page: z.coerce.number().int().min(0).max(100_000) }))
    .output(recordingEventsView)
    .query(async ({ ctx, input }) => {
      const { resource, blobs } = await loadRecorded(ctx, input.sessionId, input.resourceId);
      return presentRecordedPage(blobs, resource.id, input.page);
    }),

  stop: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/{project}/api/sessions/{sessionId}/{resourceId}/stop',
        tags,
        summary: 'Stop a started browser',
        description:
          'Answers as soon as the stop is requested, with the resource `stopping` (or as it already was, when stopped or failed); the teardown continues, and a later GET shows `stopped`.',
      },
    })
    .input(z.strictObject({ ...ids, resourceId: z.string().max(100) }))
    .output(resourceView)
    .mutation(async ({ ctx, input }) => {
      const resource = await loadResource(ctx, input.sessionId, input.resourceId, sessionActions.write);
      const stopped = await stopBrowser(ctx.deps, ctx.em, resource, 'stopped on request');
      return presentResource(ctx.deps, ctx.project, stopped, { withUrls: false });
    }),

  downloads: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/sessions/{sessionId}/{resourceId}/downloads',
        tags,
        summary: 'The files the browser downloaded, newest first; kept after it stops, for DOWNLOAD_RETENTION_DAYS',
      },
    })
    .input(z.strictObject({ ...ids, resourceId: z.string().max(100), ...pagination }))
    .output(z.array(downloadView))
    .query(async ({ ctx, input }) => {
      const resource = await loadResource(ctx, input.sessionId, input.resourceId, sessionActions.read);
      const rows = await ctx.em.find(
        BrowserDownload,
        { resource: resource.id },
        { orderBy: { created: 'desc', id: 'asc' }, limit: input.limit, offset: input.offset },
      );
      return rows.map((row) => presentDownload(row, downloadUrl(ctx.deps.config.publicUrl, ctx.project.slug, row)));
    }),

  deleteDownload: projectProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/{project}/api/sessions/{sessionId}/{resourceId}/downloads/{downloadId}',
        tags,
        summary: 'Delete a downloaded file',
      },
    })
    .input(z.strictObject({ ...ids, resourceId: z.string().max(100), downloadId: z.string().max(100) }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const resource = await loadResource(ctx, input.sessionId, input.resourceId, sessionActions.write);
      const row = await loadChild(ctx.em, BrowserDownload, input.downloadId, { resource: resource.id }, 'Download');
      await deleteDownload(ctx.em, downloadBlobs(ctx.deps.orm, ctx.deps.serviceSecret), row);
      return { status: 'ok' as const };
    }),
});
