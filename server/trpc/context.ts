import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../appDeps.ts';
import { resolveSubject } from '../auth/subject.ts';

export async function createContext(deps: AppDeps, req: FastifyRequest, reply: FastifyReply) {
  const em = deps.orm.em.fork();
  const apiKeyHeader = req.headers['x-api-key'];
  const subject = await resolveSubject(em, deps.jwt, {
    cookieToken: req.cookies.token,
    authorization: req.headers.authorization,
    apiKeyHeader: Array.isArray(apiKeyHeader) ? apiKeyHeader[0] : apiKeyHeader,
  });
  return { deps, em, subject, req, reply, log: req.log };
}

export type Context = Awaited<ReturnType<typeof createContext>>;
