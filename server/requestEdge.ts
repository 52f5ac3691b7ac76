import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyRequest } from 'fastify';
import type { Project } from '../db/entities/index.ts';
import type { AppDeps } from './appDeps.ts';
import { resolveSubject, type Subject } from './auth/subject.ts';
import { projectNotFound } from './errors.ts';
import { authorize, can, type ProjectRef, projectActions, projectRef } from './permissions/permissions.ts';
import { findProject } from './projects/projectRepository.ts';

/**
 * The one request edge. Every way into the api — tRPC procedures (server/trpc/base.ts), raw
 * Fastify routes (streams, WebSockets) and the MCP endpoint — resolves its caller and enters a
 * project here, so the credential rules and the project read check are written once.
 */

function header(req: FastifyRequest, name: string) {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Who is calling: a session (cookie or bearer token), an API key, or nobody. `from` narrows where
 * credentials are read: `headers` for endpoints only scripts call (MCP: a browser's cookie must not
 * drive them), `cookie` for the browser redirects of external sign-in.
 */
export function resolveCaller(
  deps: Pick<AppDeps, 'jwt' | 'access'>,
  em: EntityManager,
  req: FastifyRequest,
  from: 'any' | 'cookie' | 'headers' = 'any',
) {
  return resolveSubject(em, deps, {
    cookieToken: from === 'headers' ? undefined : req.cookies.token,
    authorization: from === 'cookie' ? undefined : header(req, 'authorization'),
    apiKeyHeader: from === 'cookie' ? undefined : header(req, 'x-api-key'),
  });
}

/** A project the caller may read, with the permission module's answers bound to it. */
export type ProjectScope = {
  project: Project;
  ref: ProjectRef;
  /** Throws PermissionDenied (or NotFound) unless the caller may do `action` (on `resourceId`). */
  authorize: (action: string, resourceId?: string) => void;
  can: (action: string, resourceId?: string) => boolean;
};

/**
 * The project named by a path segment (slug or id), loaded from the path, never from a body.
 * A caller who may not read it gets the same 404 as for a project that does not exist.
 */
export async function enterProject(
  deps: Pick<AppDeps, 'access'>,
  em: EntityManager,
  subject: Subject,
  projectParam: unknown,
): Promise<ProjectScope> {
  const project = typeof projectParam === 'string' ? await findProject(deps.access, em, projectParam) : null;
  if (!project) throw projectNotFound(subject);
  const ref = projectRef(project);
  authorize(subject, ref, projectActions.read);
  return {
    project,
    ref,
    authorize: (action, resourceId) => authorize(subject, ref, action, resourceId),
    can: (action, resourceId) => can(subject, ref, action, resourceId),
  };
}

/** For raw routes what projectProcedure does for procedures: the caller, then the project from the path. */
export async function projectRequest(deps: Pick<AppDeps, 'jwt' | 'orm' | 'access'>, req: FastifyRequest, projectParam: string) {
  const em = deps.orm.em.fork();
  const subject = await resolveCaller(deps, em, req);
  return { em, subject, ...(await enterProject(deps, em, subject, projectParam)) };
}
