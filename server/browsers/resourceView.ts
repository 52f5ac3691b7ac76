import { z } from 'zod';
import type { Project, SessionResource } from '../../db/entities/index.ts';
import type { AppDeps } from '../trpc/context.ts';

export const resourceView = z.object({
  id: z.string(),
  session: z.string(),
  status: z.enum(['starting', 'running', 'stopping', 'stopped', 'failed']),
  vncUrl: z.string().nullable(),
  remoteUrl: z.string().nullable(),
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

/** When a running resource reaches its maximum lifetime (and its URL tokens expire). */
export function resourceExpiry(deps: Pick<AppDeps, 'config'>, resource: SessionResource) {
  const start = resource.startedAt ?? resource.created;
  return new Date(start.getTime() + deps.config.browsers.maxLifetimeSeconds * 1000);
}

/**
 * The resource as callers see it. The URLs carry a token for this resource only and are shown
 * only while it runs, and only to callers who may read it (the caller decides `withUrls`).
 */
export async function presentResource(
  deps: Pick<AppDeps, 'config' | 'resourceTokens'>,
  project: Project,
  resource: SessionResource,
  options: { withUrls: boolean },
): Promise<ResourceView> {
  const expires = resourceExpiry(deps, resource);
  let vncUrl: string | null = null;
  let remoteUrl: string | null = null;
  if (options.withUrls && resource.status === 'running') {
    const base = `${deps.config.publicUrl}/${project.slug}/api/sessions/${resource.session.id}/${resource.id}`;
    const cdpToken = await deps.resourceTokens.sign(resource.id, 'cdp', expires);
    const liveToken = await deps.resourceTokens.sign(resource.id, 'live', expires);
    remoteUrl = `${base.replace(/^http/, 'ws')}/cdp?token=${cdpToken}`;
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
