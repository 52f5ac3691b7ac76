import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SessionResource } from '../../../db/entities/index.ts';
import type { AppDeps } from '../../appDeps.ts';
import { browserDialUrl } from '../../browsers/cdp/browserDial.ts';
import type { ResourceTokenUse } from '../../browsers/tokens/resourceTokens.ts';
import { NotFound, Unauthenticated } from '../../errors.ts';
import { isUuid } from '../../projects/projectRepository.ts';
import { projectRequest } from '../../requestEdge.ts';

/** What the raw routes of a running browser share: their path, the token parameter, and how a request finds its resource. */

export type ResourceParams = { project: string; sessionId: string; resourceId: string };

export const resourcePath = '/{project}/api/sessions/{sessionId}/{resourceId}';

/** What the browser routes' handlers share (server/http/browsers/index.ts makes it). */
export type BrowserScope = { deps: AppDeps; closing: AbortSignal; touch: ActivityTouch };

export const tokenParam = {
  name: 'token',
  in: 'query' as const,
  required: true,
  schema: { type: 'string' as const },
  description: 'the token inside remoteUrl / vncUrl',
};

const tokenQuery = z.object({ token: z.string().min(1).max(2000) });
/** At most one `lastActivity` write per resource this often (a busy live view sends many events). */
const ACTIVITY_TOUCH_MS = 10_000;

/** Resource by ids, for the token routes: the token is the credential. */
export async function resourceByToken(deps: AppDeps, params: ResourceParams, query: unknown, use: ResourceTokenUse) {
  const parsed = tokenQuery.safeParse(query);
  if (!parsed.success || !isUuid(params.resourceId) || !isUuid(params.sessionId))
    throw new Unauthenticated('A valid token is required', 'invalid_token');
  const grant = await deps.resourceTokens.verify(parsed.data.token, params.resourceId.toLowerCase(), use);
  if (!grant) throw new Unauthenticated('The token is invalid or expired', 'invalid_token');
  const em = deps.orm.em.fork();
  const resource = await em.findOne(
    SessionResource,
    { id: params.resourceId.toLowerCase(), session: params.sessionId.toLowerCase() },
    { populate: ['cdpEndpoint', 'project'] },
  );
  if (!resource || (resource.project.slug !== params.project.toLowerCase() && resource.project.id !== params.project.toLowerCase())) {
    throw new NotFound('Resource');
  }
  if (resource.status !== 'running' || !resource.cdpEndpoint) throw new NotFound('Running browser', 'browser_not_running');
  return { em, resource, grant };
}

/**
 * `resourceByToken` for a WebSocket route, before its upgrade: also where its browser is dialed
 * (a fresh relay URL), so a host that cannot be reached is a 503 and never an opened socket.
 */
export async function browserByToken(deps: AppDeps, params: ResourceParams, query: unknown, use: ResourceTokenUse) {
  const target = await resourceByToken(deps, params, query, use);
  return { ...target, browserUrl: await browserDialUrl(deps, target.em, target.resource) };
}

/** Resource by ids, for the API-credential routes (logs, capture). */
export async function resourceForCaller(deps: AppDeps, req: FastifyRequest, params: ResourceParams, actions: string[]) {
  const ctx = await projectRequest(deps, req, params.project);
  if (!isUuid(params.sessionId) || !isUuid(params.resourceId)) throw new NotFound('Resource');
  for (const action of actions) ctx.authorize(action, params.sessionId.toLowerCase());
  const resource = await ctx.em.findOne(
    SessionResource,
    { id: params.resourceId.toLowerCase(), session: params.sessionId.toLowerCase(), project: ctx.project.id },
    { populate: ['cdpEndpoint'] },
  );
  if (!resource) throw new NotFound('Resource');
  return { ...ctx, resource };
}

export type ActivityTouch = (resourceId: string, force?: boolean) => void;

/**
 * Records use of a resource; `force` for the last word of a closing connection. One per app:
 * shared by every connection to a resource, so many viewers or clients still write once per
 * interval; kept below the idle timeout so a browser in use is never taken for idle.
 */
export function activityRecorder(deps: AppDeps): ActivityTouch {
  const touchEvery = Math.min(ACTIVITY_TOUCH_MS, (deps.config.browsers.idleTimeoutSeconds * 1000) / 3);
  const lastTouch = new Map<string, number>();
  return (resourceId: string, force = false) => {
    const now = Date.now();
    if (!force && now - (lastTouch.get(resourceId) ?? 0) < touchEvery) return;
    lastTouch.set(resourceId, now);
    if (lastTouch.size > 10_000) {
      for (const [id, at] of lastTouch) if (now - at >= touchEvery) lastTouch.delete(id);
    }
    void deps.orm.em
      .fork()
      .nativeUpdate(SessionResource, { id: resourceId }, { lastActivity: new Date() })
      .catch(() => {});
  };
}
