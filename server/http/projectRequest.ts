import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../appDeps.ts';
import { resolveSubject } from '../auth/subject.ts';
import { NotFound } from '../errors.ts';
import { authorize, projectActions, projectRef } from '../permissions/permissions.ts';
import { findProject } from '../projects/projectRepository.ts';

/**
 * For raw routes (streams, WebSockets) what projectProcedure does for procedures: resolve the
 * caller, load the project from the path, and check read access (404 otherwise).
 */
export async function projectRequest(deps: AppDeps, req: FastifyRequest, projectParam: string) {
  const em = deps.orm.em.fork();
  const apiKeyHeader = req.headers['x-api-key'];
  const subject = await resolveSubject(em, deps.jwt, {
    cookieToken: req.cookies.token,
    authorization: req.headers.authorization,
    apiKeyHeader: Array.isArray(apiKeyHeader) ? apiKeyHeader[0] : apiKeyHeader,
  });
  const project = await findProject(em, projectParam);
  if (!project) throw new NotFound('Project');
  const ref = projectRef(project);
  authorize(subject, ref, projectActions.read);
  return { em, subject, project, authorize: (action: string, id?: string) => authorize(subject, ref, action, id) };
}
