import { z } from 'zod';
import type { Project, SessionResource } from '../../../db/entities/index.ts';
import type { AppDeps } from '../../appDeps.ts';
import type { Subject } from '../../auth/subject.ts';
import { browserUrlRights, projectRef } from '../../permissions/permissions.ts';

export const resourceView = z.object({
  id: z.string(),
  session: z.string(),
  status: z.enum(['starting', 'running', 'stopping', 'stopped', 'failed']),
  vncUrl: z
    .string()
    .nullable()
    .describe('live view; null unless running. Input is forwarded only for callers who may write the session (sessions.write)'),
  remoteUrl: z
    .string()
    .nullable()
    .describe('CDP WebSocket; null unless running and the caller may write the session and read its cookies (cookies.read)'),
  host: z.string().nullable(),
  warm: z.boolean(),
  started: z.string().nullable(),
  stopped: z.string().nullable(),
  stopReason: z.string().nullable(),
  expires: z.string().nullable(),
  usage: z.object({ cpuSeconds: z.number(), memoryBytes: z.number(), networkBytes: z.number() }).nullable(),
  created: z.string(),
});

export type ResourceView = z.infer<typeof resourceView>;

/** When a running resource reaches its maximum lifetime. */
export function resourceExpiry(deps: Pick<AppDeps, 'config'>, resource: SessionResource) {
  const start = resource.startedAt ?? resource.created;
  return new Date(start.getTime() + deps.config.browsers.maxLifetimeSeconds * 1000);
}

/**
 * How long a URL token stays good for opening a connection. Short, since a URL leaks (browser
 * history, a pasted log); each read of the resource issues fresh ones, and a connection already
 * open is not cut when its token expires.
 */
export const RESOURCE_URL_TOKEN_SECONDS = 15 * 60;

/**
 * What a caller may do with a running browser through its URLs. The CDP endpoint is full control
 * of the browser, cookie jar included (Storage.getCookies), so remoteUrl needs both
 * `sessions.write` and `cookies.read`; the live view shows the page to any reader, and forwards
 * input only for writers.
 */
/**
 * The resource as callers see it. The URLs carry fresh tokens for this resource only and are shown
 * only while it runs, and only to callers who may read it (the caller decides `withUrls`); what
 * they allow follows from `subject` (`browserUrlRights`).
 */
export async function presentResource(
  deps: Pick<AppDeps, 'config' | 'resourceTokens'>,
  project: Project,
  resource: SessionResource,
  options: { withUrls: true; subject: Subject } | { withUrls: false },
): Promise<ResourceView> {
  const expires = resourceExpiry(deps, resource);
  let vncUrl: string | null = null;
  let remoteUrl: string | null = null;
  if (options.withUrls && resource.status === 'running') {
    const rights = browserUrlRights(options.subject, projectRef(project), resource.session.id);
    const tokenExpiry = new Date(Math.min(expires.getTime(), Date.now() + RESOURCE_URL_TOKEN_SECONDS * 1000));
    const base = `${deps.config.publicUrl}/${project.slug}/api/sessions/${resource.session.id}/${resource.id}`;
    if (rights.remote) {
      const cdpToken = await deps.resourceTokens.sign(resource.id, 'cdp', tokenExpiry, { control: true });
      remoteUrl = `${base.replace(/^http/, 'ws')}/cdp?token=${cdpToken}`;
    }
    const liveToken = await deps.resourceTokens.sign(resource.id, 'live', tokenExpiry, { control: rights.control });
    vncUrl = `${base}/live?token=${liveToken}`;
  }
  return {
    id: resource.id,
    session: resource.session.id,
    status: resource.status,
    vncUrl,
    remoteUrl,
    host: resource.hostId ?? null,
    warm: resource.warm,
    started: resource.startedAt?.toISOString() ?? null,
    stopped: resource.stoppedAt?.toISOString() ?? null,
    stopReason: resource.stopReason ?? null,
    expires: resource.status === 'running' || resource.status === 'starting' ? expires.toISOString() : null,
    usage: resource.usage ?? null,
    created: resource.created.toISOString(),
  };
}
