import type { FastifyReply } from 'fastify';
import { FunctionVersion, PipelineRun, RunScreenshot } from '../../db/entities/index.ts';
import { readableAnalysis, readableGeneration } from '../agents/model/readableJobs.ts';
import type { AppDeps } from '../appDeps.ts';
import { DomainError, NotFound } from '../errors.ts';
import { readFunctionRun } from '../functions/execute.ts';
import { canSeeRunOutputs, functionActions, pipelineActions } from '../permissions/permissions.ts';
import { isUuid } from '../projects/projectRepository.ts';
import { projectRequest } from '../requestEdge.ts';
import { appDeps, rawRouteGroup, routesOf } from './rawRoute.ts';

const route = routesOf<AppDeps>();

/**
 * Serves run and proposal screenshots. A proposal's are for the analysis's readers. Who may read
 * a run's is who may read the run with its outputs: a pipeline
 * run's readers (pipelines.read), a generation's for its dry runs, a function run's as GET of the
 * run decides; and, for a run that read cookies, only those who may read the session's cookies.
 * Anyone else gets the 404 of a screenshot that does not exist.
 */
export const screenshotRoutes = rawRouteGroup(appDeps, [
  route({
    method: 'GET',
    path: '/{project}/api/screenshots/{screenshotId}',
    doc: {
      operationId: 'pipelines-screenshot',
      summary:
        'A screenshot (JPEG), as a run’s or an analysis’s `screenshots` list it: for whoever may read the run and its outputs, or the analysis',
      tags: ['pipelines'],
      responses: {
        '200': {
          description: 'The picture, secrets in text fields drawn as dots (docs/pipelines.md, Screenshots)',
          content: { 'image/jpeg': { schema: { type: 'string' as const, contentMediaType: 'image/jpeg' } } },
        },
        '404': { description: 'No such screenshot, or the caller may not read its run or the run’s outputs' },
      },
    },
    serve: (deps) => async (req, reply) => {
      const ctx = await projectRequest(deps, req, req.params.project);
      const { screenshotId } = req.params;
      if (!isUuid(screenshotId)) throw new NotFound('Screenshot');
      const shot = await ctx.em.findOne(RunScreenshot, { id: screenshotId.toLowerCase(), project: ctx.ref.id }, { populate: ['image'] });
      if (!shot) throw new NotFound('Screenshot');
      try {
        await authorizeReading(ctx, shot);
      } catch (error) {
        // Refused or not found: the same 404 as a screenshot that does not exist.
        if (error instanceof DomainError) throw new NotFound('Screenshot');
        throw error;
      }
      return sendImage(reply, shot.image);
    },
  }),
]);

type ProjectRequest = Awaited<ReturnType<typeof projectRequest>>;

/** Throws a domain error unless the caller may read what the picture is of (see screenshotRoutes). */
async function authorizeReading(ctx: ProjectRequest, shot: RunScreenshot) {
  if (shot.analysis) {
    await readableAnalysis(ctx, shot.analysis.id);
    return;
  }
  const run = await ctx.em.findOneOrFail(PipelineRun, { id: shot.run?.id as string });
  if (run.pipeline) ctx.authorize(pipelineActions.read, run.pipeline.id);
  else if (run.generation) await readableGeneration(ctx, run.generation.id);
  else if (run.functionVersion) {
    const version = await ctx.em.findOneOrFail(FunctionVersion, { id: run.functionVersion.id }, { populate: ['function'] });
    // As GET …/functions/{functionId}/runs/{runId}: read on the function, then its run's own rule.
    ctx.authorize(functionActions.read, version.function.id);
    await readFunctionRun(ctx.em, ctx.subject, ctx.project, version.function, run.id);
  } else throw new NotFound('Screenshot');
  if (!canSeeRunOutputs(ctx.subject, ctx.ref, { sessionId: run.session?.id ?? null, readsCookies: run.readsCookies })) {
    throw new NotFound('Screenshot');
  }
}

function sendImage(reply: FastifyReply, image: Uint8Array) {
  return reply
    .header('content-type', 'image/jpeg')
    .header('cache-control', 'private, max-age=3600')
    .header('x-content-type-options', 'nosniff')
    .send(image);
}
