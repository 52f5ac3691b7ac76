import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../appDeps.ts';
import { domainTRPCError } from '../errors.ts';
import { resolveCaller } from '../requestEdge.ts';

/**
 * `singleCall`: the context serves one procedure call only (a REST route's), so a middleware may
 * add to it in place (server/trpc/base.ts); a tRPC batch shares one context among its calls.
 */
export async function createContext(deps: AppDeps, req: FastifyRequest, reply: FastifyReply, singleCall = false) {
  // The request's EntityManager, forked on first use: a read answered from the access cache
  // (docs/benchmarks/project-get.md) never needs one.
  let forked: EntityManager | undefined;
  const em = () => {
    forked ??= deps.orm.em.fork();
    return forked;
  };
  // A bad credential (revoked key, ended session) fails here, before any procedure's middleware
  // could translate it: translated here, or the adapters would answer 500.
  const subject = await resolveCaller(deps, em, req).catch((error: unknown) => {
    throw domainTRPCError(error) ?? error;
  });
  return {
    deps,
    get em() {
      return em();
    },
    subject,
    req,
    reply,
    log: req.log,
    singleCall,
  };
}

export type Context = Awaited<ReturnType<typeof createContext>>;
