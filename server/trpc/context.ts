import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Project } from '../../db/entities/index.ts';
import type { AppDeps } from '../appDeps.ts';
import type { Subject } from '../auth/subject.ts';
import { domainTRPCError } from '../errors.ts';
import { authorize, can, type ProjectRef } from '../permissions/permissions.ts';
import type { ProjectSnapshot } from '../projects/projectRepository.ts';
import { type ReadableProject, resolveCaller } from '../requestEdge.ts';

/** What every procedure is called with. */
export type Context = {
  deps: AppDeps;
  /** The request's EntityManager, forked on first use. */
  readonly em: EntityManager;
  subject: Subject;
  req: FastifyRequest;
  reply: FastifyReply;
  log: FastifyRequest['log'];
};

/**
 * A REST route's context: made for its one call, so middlewares add to it in place (`enter`, and
 * server/http/restRoutes.ts merges `next({ ctx })` into it). A class, with its getters on the
 * prototype: an object literal with a getter costs V8 a slow definition per request
 * (docs/benchmarks/project-get.md).
 */
export class CallContext implements Context {
  readonly deps: AppDeps;
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
  readonly log: FastifyRequest['log'];
  subject: Subject = { kind: 'anonymous' };
  #em: EntityManager | undefined;
  #project: ReadableProject | undefined;
  // A project procedure's scope, set by `enter`.
  ref: ProjectRef | undefined = undefined;
  projectSnapshot: ProjectSnapshot | undefined = undefined;
  authorize: ((action: string, resourceId?: string) => void) | undefined = undefined;
  can: ((action: string, resourceId?: string) => boolean) | undefined = undefined;

  constructor(deps: AppDeps, req: FastifyRequest, reply: FastifyReply) {
    this.deps = deps;
    this.req = req;
    this.reply = reply;
    this.log = req.log;
  }

  get em() {
    this.#em ??= this.deps.orm.em.fork();
    return this.#em;
  }

  /** The entered project as an entity of this request's EntityManager, mapped on first use. */
  get project(): Project | undefined {
    return this.#project?.found.entity();
  }

  /** What projectProcedure adds: the project the path names, and the permission answers bound to it. */
  enter(readable: ReadableProject) {
    const { subject } = this;
    const { ref } = readable;
    this.#project = readable;
    this.ref = ref;
    this.projectSnapshot = readable.found.snapshot;
    this.authorize = (action, resourceId) => authorize(subject, ref, action, resourceId);
    this.can = (action, resourceId) => can(subject, ref, action, resourceId);
  }
}

// A bad credential (revoked key, ended session) fails here, before any procedure's middleware
// could translate it: translated here, or the adapters would answer 500.
function translatedCaller(deps: AppDeps, em: () => EntityManager, req: FastifyRequest) {
  return resolveCaller(deps, em, req).catch((error: unknown) => {
    throw domainTRPCError(error) ?? error;
  });
}

/** A REST route's context (see CallContext). */
export async function createCallContext(deps: AppDeps, req: FastifyRequest, reply: FastifyReply) {
  const ctx = new CallContext(deps, req, reply);
  ctx.subject = await translatedCaller(deps, () => ctx.em, req);
  return ctx;
}

/** A tRPC request's context, shared by the calls of its batch. */
export async function createContext(deps: AppDeps, req: FastifyRequest, reply: FastifyReply): Promise<Context> {
  // The request's EntityManager, forked on first use: a read answered from the access cache
  // (docs/benchmarks/project-get.md) never needs one.
  let forked: EntityManager | undefined;
  const em = () => {
    forked ??= deps.orm.em.fork();
    return forked;
  };
  const subject = await translatedCaller(deps, em, req);
  return {
    deps,
    get em() {
      return em();
    },
    subject,
    req,
    reply,
    log: req.log,
  };
}
