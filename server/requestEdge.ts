import type { FastifyRequest } from 'fastify';
import type { Project } from '../db/entities/index.ts';
import type { AppDeps } from './appDeps.ts';
import { type EntityManagerOf, resolveSubject, type Subject } from './auth/subject.ts';
import { PermissionDenied, projectNotFound } from './errors.ts';
import { authorize, can, type ProjectRef, projectActions, projectRef } from './permissions/permissions.ts';
import { type FoundProject, lookUpProject, type ProjectSnapshot } from './projects/projectRepository.ts';

/**
 * The one request edge. Every way into the api — tRPC procedures (server/trpc/base.ts), raw
 * Fastify routes (streams, WebSockets) and the MCP endpoint — resolves its caller and enters a
 * project here, so the credential rules and the project read check are written once.
 */

/** A request header's value (the first, when it was sent more than once). */
export function header(req: FastifyRequest, name: string) {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const unsafeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Whether a browser says the request comes from a page of this service: `Sec-Fetch-Site:
 * same-origin`, or an `Origin` that is PUBLIC_URL's or the request's own (scheme and Host, as a
 * proxy trusted by TRUST_PROXY reports them). A page cannot set either header, and a browser
 * sends Origin with every POST, PUT, PATCH and DELETE. The request's own Host is as good as
 * PUBLIC_URL: a foreign page that reaches this service under its own name (DNS rebinding) gets
 * no cookie of this service's name with it.
 */
function fromOwnPage(config: AppDeps['config'], req: FastifyRequest) {
  if (header(req, 'sec-fetch-site') === 'same-origin') return true;
  const origin = header(req, 'origin');
  if (!origin) return false;
  const sent = originOf(origin);
  // `Origin: null` (sandboxed frames, file pages, some redirects) and garbage match nothing.
  return sent !== null && (sent === originOf(config.publicUrl) || sent === originOf(`${req.protocol}://${req.host}`));
}

/** An origin as URL writes it (lower-case host, no default port), or null for what is not one. */
function originOf(text: string) {
  try {
    const { origin } = new URL(text);
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** Whether a browser says the request comes from another site's page. */
function fromForeignPage(config: AppDeps['config'], req: FastifyRequest) {
  const site = header(req, 'sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') return true;
  return header(req, 'origin') !== undefined && !fromOwnPage(config, req);
}

/**
 * Cross-site request forgery. The `token` cookie is SameSite=Lax, which keeps it off another
 * site's POST, but a sibling subdomain counts as the same site, and Lax is the browser's promise,
 * not ours. So an unsafe request that a browser says comes from another site's page (a foreign or
 * `null` Origin, `Sec-Fetch-Site` cross-site or same-site) is refused with 403
 * `cross_site_request`, whether it carries the cookie (forgery) or no credential at all (login
 * CSRF: signing the victim into the attacker's account). A request that sends an API key or an
 * Authorization header is a script's: another site's page cannot send one without a CORS
 * preflight, which this service never grants. Answers whether the cookie may sign the request:
 * only when the browser says it comes from this service's own pages. A request with neither
 * header is not a browser's (every browser sends Origin with a cross-origin change): its cookie
 * (a script's cookie jar) is not taken as a credential, so a change that needs a signed-in caller
 * answers 401, while one that needs none (sign-in, the verification submit) goes on.
 */
function cookieMaySign(config: AppDeps['config'], req: FastifyRequest, signedByCookie: boolean) {
  if (!unsafeMethods.has(req.method)) return true;
  if (fromForeignPage(config, req)) {
    throw new PermissionDenied(
      signedByCookie
        ? 'A change signed by the session cookie must come from this service’s own pages (Origin or Sec-Fetch-Site); scripts send an API key or a bearer token'
        : 'Sign-in and account changes are not taken from another site’s pages',
      'cross_site_request',
    );
  }
  return fromOwnPage(config, req);
}

/**
 * Who is calling: a session (cookie or bearer token), an API key, or nobody. `from` narrows where
 * credentials are read: `headers` for endpoints only scripts call (MCP: a browser's cookie must not
 * drive them), `cookie` for the browser redirects of external sign-in. Every unsafe request that a
 * browser could have been made to send (no credential header) is checked for forgery first
 * (`cookieMaySign`).
 */
export async function resolveCaller(
  deps: Pick<AppDeps, 'jwt' | 'access' | 'config'>,
  em: EntityManagerOf,
  req: FastifyRequest,
  from: 'any' | 'cookie' | 'headers' = 'any',
) {
  const source = {
    cookieToken: from === 'headers' ? undefined : req.cookies.token,
    authorization: from === 'cookie' ? undefined : header(req, 'authorization'),
    apiKeyHeader: from === 'cookie' ? undefined : header(req, 'x-api-key'),
  };
  if (
    from !== 'headers' &&
    !source.authorization &&
    !source.apiKeyHeader &&
    !cookieMaySign(deps.config, req, Boolean(source.cookieToken))
  ) {
    source.cookieToken = undefined;
  }
  return resolveSubject(em, deps, source);
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
export async function projectRequest(deps: Pick<AppDeps, 'jwt' | 'orm' | 'access' | 'config'>, req: FastifyRequest, projectParam: string) {
  const em = deps.orm.em.fork();
  const subject = await resolveCaller(deps, em, req);
  return { em, subject, ...(await enterProject(deps, em, subject, projectParam)) };
}
