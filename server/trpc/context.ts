import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../appDeps.ts';
import { domainTRPCError } from '../errors.ts';
import { resolveCaller } from '../requestEdge.ts';

export async function createContext(deps: AppDeps, req: FastifyRequest, reply: FastifyReply) {
  const em = deps.orm.em.fork();
  // A bad credential (revoked key, ended session) fails here, before any procedure's middleware
  // could translate it: translated here, or the adapters would answer 500.
  const subject = await resolveCaller(deps, em, req).catch((error: unknown) => {
    throw domainTRPCError(error) ?? error;
  });
  return { deps, em, subject, req, reply, log: req.log };
}

export type Context = Awaited<ReturnType<typeof createContext>>;
