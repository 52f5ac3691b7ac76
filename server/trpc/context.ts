import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../appDeps.ts';
import { resolveCaller } from '../requestEdge.ts';

export async function createContext(deps: AppDeps, req: FastifyRequest, reply: FastifyReply) {
  const em = deps.orm.em.fork();
  const subject = await resolveCaller(deps, em, req);
  return { deps, em, subject, req, reply, log: req.log };
}

export type Context = Awaited<ReturnType<typeof createContext>>;
