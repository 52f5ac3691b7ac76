import { BrowserDownload } from '../../db/entities/index.ts';
import type { AppDeps } from '../appDeps.ts';
import { downloadBlobs, downloadKey } from '../browsers/downloads/downloadFiles.ts';
import { DomainError, NotFound } from '../errors.ts';
import { sessionActions } from '../permissions/permissions.ts';
import { isUuid } from '../projects/projectRepository.ts';
import { projectRequest } from '../requestEdge.ts';
import { appDeps, rawRouteGroup, routesOf } from './rawRoute.ts';

const route = routesOf<AppDeps>();

/**
 * Serves a browser's downloaded file (docs/browsers.md, Downloads) to whoever may read its session:
 * the bytes as the site sent them, always as an attachment (a file is never rendered as a page of
 * the service's origin). Anyone else gets the 404 of a file that does not exist. The list and the
 * delete are procedures (server/trpc/routers/resources.ts).
 */
export const downloadRoutes = rawRouteGroup(appDeps, [
  route({
    method: 'GET',
    path: '/{project}/api/sessions/{sessionId}/{resourceId}/downloads/{downloadId}',
    doc: {
      operationId: 'sessions-download',
      summary: 'A file the browser downloaded, as an attachment: for whoever may read the session',
      tags: ['sessions'],
      responses: {
        '200': {
          description: 'The file’s bytes, with its MIME type and name (Content-Disposition: attachment)',
          content: { 'application/octet-stream': { schema: { type: 'string' as const, format: 'binary' } } },
        },
        '404': { description: 'No such file (deleted, or past DOWNLOAD_RETENTION_DAYS), or the caller may not read the session' },
      },
    },
    serve: (deps) => async (req, reply) => {
      const ctx = await projectRequest(deps, req, req.params.project);
      const { sessionId, resourceId, downloadId } = req.params;
      if (!isUuid(sessionId) || !isUuid(resourceId) || !isUuid(downloadId)) throw new NotFound('Download');
      try {
        ctx.authorize(sessionActions.read, sessionId.toLowerCase());
      } catch (error) {
        if (error instanceof DomainError) throw new NotFound('Download');
        throw error;
      }
      const row = await ctx.em.findOne(BrowserDownload, {
        id: downloadId.toLowerCase(),
        resource: resourceId.toLowerCase(),
        session: sessionId.toLowerCase(),
        project: ctx.ref.id,
      });
      const data = row && (await downloadBlobs(deps.orm, deps.serviceSecret).get(downloadKey(row.resource.id, row.id)));
      if (!row || !data) throw new NotFound('Download');
      return reply
        .header('content-type', row.mimeType)
        .header('content-disposition', attachment(row.name))
        .header('content-length', String(data.length))
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .send(data);
    },
  }),
]);

/**
 * `attachment` with the name as RFC 6266 gives it: an ASCII fallback (quotes, backslashes and
 * anything outside printable ASCII replaced) and the exact name in `filename*` (RFC 5987).
 */
export function attachment(name: string) {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
