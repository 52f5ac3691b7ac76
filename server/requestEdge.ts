import type { FastifyRequest } from 'fastify';
import type { Project } from '../db/entities/index.ts';
import type { AppDeps } from './appDeps.ts';
import { type EntityManagerOf, resolveSubject, type Subject } from './auth/subject.ts';
import { projectNotFound } from './errors.ts';
import { authorize, can, type ProjectRef, projectActions, projectRef } from './permissions/permissions.ts';
import { type FoundProject, lookUpProject, type ProjectSnapshot } from './projects/projectRepository.ts';

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
  em: EntityManagerOf,
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
  /** The project as an entity of the request's EntityManager: mapped into it on first use. */
  project: Project;
  /** The same project's fields, read-only, with no EntityManager involved: what reads answer from. */
  projectSnapshot: ProjectSnapshot;
  ref: ProjectRef;
  /** Throws PermissionDenied (or NotFound) unless the caller may do `action` (on `resourceId`). */
  authorize: (action: string, resourceId?: string) => void;
  can: (action: string, resourceId?: string) => boolean;
};

/** A project found by path that the caller may read, with the permission module's view of it. */
export type ReadableProject = { found: FoundProject; ref: ProjectRef };

/**
 * The project named by a path segment (slug or id), loaded from the path, never from a body.
 * A caller who may not read it gets the same 404 as for a project that does not exist.
 */
export async function readableProject(
  deps: Pick<AppDeps, 'access'>,
  em: EntityManagerOf,
  subject: Subject,
  projectParam: unknown,
): Promise<ReadableProject> {
  const found = typeof projectParam === 'string' ? await lookUpProject(deps.access, em, projectParam) : null;
  if (!found) throw projectNotFound(subject);
  const ref = projectRef(found.snapshot);
  authorize(subject, ref, projectActions.read);
  return { found, ref };
}

/** The same, as a scope to merge into a context. */
export async function enterProject(
  deps: Pick<AppDeps, 'access'>,
  em: EntityManagerOf,
  subject: Subject,
  projectParam: unknown,
): Promise<ProjectScope> {
  const { found, ref } = await readableProject(deps, em, subject, projectParam);
  return {
    // A getter: most reads never need the entity, and mapping it is most of such a request's work
    // (docs/benchmarks/project-get.md). Copying the scope (a spread, tRPC's `next({ ctx })`) maps it.
    get project() {
      return found.entity();
    },
    projectSnapshot: found.snapshot,
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
