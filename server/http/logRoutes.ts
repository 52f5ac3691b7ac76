import type { FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import { AnalysisJob, GenerationJob, PipelineRun, SessionResource } from '../../db/entities/index.ts';
import { readableAnalysis, readableGeneration } from '../agents/model/readableJobs.ts';
import type { AppDeps } from '../appDeps.ts';
import { NotFound } from '../errors.ts';
import { LogNotifications } from '../logs/logNotifications.ts';
import { logEntryView, serveLogs } from '../logs/logResponses.ts';
import { logStreams } from '../logs/logWriter.ts';
import { canSeeRunOutputs, pipelineActions, sessionActions } from '../permissions/permissions.ts';
import { isUuid } from '../projects/projectRepository.ts';
import { projectRequest } from '../requestEdge.ts';
import { type ResourceParams, resourceDocPath, resourceForCaller, resourcePath, resourcePathParams } from './browsers/resources.ts';
import type { RawRoutePaths } from './openapi.ts';

/** What both log routes take besides their path: paging for JSON, Accept and Last-Event-ID for SSE. */
const logParams = [
  { name: 'offset', in: 'query' as const, schema: { type: 'integer' as const, minimum: 0 } },
  { name: 'limit', in: 'query' as const, schema: { type: 'integer' as const, minimum: 1, maximum: 200 } },
  {
    name: 'Accept',
    in: 'header' as const,
    schema: { type: 'string' as const, enum: ['application/json', 'text/event-stream'] },
    description: 'text/event-stream for a live stream instead of a page of JSON',
  },
  {
    name: 'Last-Event-ID',
    in: 'header' as const,
    schema: { type: 'string' as const },
    description: 'SSE: resume after this entry',
  },
];

const entrySchema = z.toJSONSchema(logEntryView, { io: 'output', target: 'draft-2020-12' });

/**
 * A page of entries as JSON, or the live stream. Each server-sent event is `event: log`, `id:` the
 * entry's `seq` and `data:` the entry as JSON; `event: end` (data `{}`) closes a finished stream.
 * The stream's schema describes one event.
 */
const logsAnswer = (description: string) => ({
  '200': {
    description,
    content: {
      'application/json': { schema: { type: 'array' as const, items: entrySchema } },
      'text/event-stream': {
        schema: {
          type: 'object' as const,
          properties: {
            event: { enum: ['log', 'end'] },
            id: { type: 'string' as const, description: 'The entry’s seq: send it back as Last-Event-ID to resume' },
            data: {
              type: 'string' as const,
              contentMediaType: 'application/json',
              contentSchema: { anyOf: [entrySchema, { type: 'object', maxProperties: 0 }] },
            },
            retry: { type: 'integer' as const },
          },
        },
      },
    },
  },
});

const agentLogPath = (kind: 'analysis' | 'generation') => ({
  get: {
    summary: `The ${kind}'s messages and tool calls as log entries, secrets redacted: paged JSON, or SSE with Accept: text/event-stream (resumable with Last-Event-ID)`,
    tags: ['analysis and generation'],
    parameters: [
      ...['project', `${kind}Id`].map((name) => ({
        name,
        in: 'path' as const,
        required: true,
        schema: { type: 'string' as const },
      })),
      ...logParams,
    ],
    responses: logsAnswer('A page of log entries, or the live stream'),
  },
});

export const logRoutePaths: RawRoutePaths = {
  '/{project}/api/analysis/{analysisId}/logs': agentLogPath('analysis'),
  '/{project}/api/generation/{generationId}/logs': agentLogPath('generation'),
  [`${resourceDocPath}/logs`]: {
    get: {
      summary:
        'Browser logs (console, navigations, lifecycle, errors): paged JSON, or SSE with Accept: text/event-stream (resumable with Last-Event-ID)',
      tags: ['sessions'],
      parameters: [...resourcePathParams, ...logParams],
      responses: logsAnswer('A page of log entries (console, navigations, lifecycle, errors), or the live stream'),
    },
  },
  '/{project}/api/pipelines/{pipelineId}/{runId}/logs': {
    get: {
      summary: 'Run logs with secrets redacted: paged JSON, or SSE with Accept: text/event-stream (resumable with Last-Event-ID)',
      tags: ['pipelines'],
      parameters: [
        ...['project', 'pipelineId', 'runId'].map((name) => ({
          name,
          in: 'path' as const,
          required: true,
          schema: { type: 'string' as const },
        })),
        ...logParams,
      ],
      responses: logsAnswer('A page of log entries, or the live stream'),
    },
  },
};

/**
 * The log streams: a browser's (under its session resource) and a pipeline run's, both over
 * the one LISTEN connection of this process.
 */
export function registerLogRoutes(
  app: FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, Logger>,
  deps: AppDeps,
) {
  const notifications = new LogNotifications(deps.orm.config.get('clientUrl') as string, deps.log);
  // Open SSE streams end in preClose: the server's close waits for every open connection, and a
  // stream of a running browser would hold it until the browser stopped. Their clients reconnect
  // (to another replica) with Last-Event-ID.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  app.addHook('onClose', () => notifications.close());

  app.get<{ Params: ResourceParams }>(`${resourcePath}/logs`, async (req, reply) => {
    const { em, resource, can } = await resourceForCaller(deps, req, req.params, [sessionActions.read]);
    return serveLogs(req, reply, {
      em,
      notifications,
      closing: closing.signal,
      stream: logStreams.resource(resource.id),
      // The addresses it opened can be made of its cookies (by a page, or a run that read them).
      withheld: can(sessionActions.readCookies, resource.session.id) ? undefined : 'browser',
      isFinished: async () => {
        const current = await deps.orm.em.fork().findOne(SessionResource, { id: resource.id }, { fields: ['status'] });
        return !current || current.status === 'stopped' || current.status === 'failed';
      },
    });
  });

  for (const kind of ['analysis', 'generation'] as const) {
    app.get<{ Params: { project: string; jobId: string } }>(`/:project/api/${kind}/:jobId/logs`, async (req, reply) => {
      const ctx = await projectRequest(deps, req, req.params.project);
      const { jobId } = req.params;
      const job = kind === 'analysis' ? await readableAnalysis(ctx, jobId) : (await readableGeneration(ctx, jobId)).job;
      return serveLogs(req, reply, {
        em: ctx.em,
        notifications,
        closing: closing.signal,
        stream: kind === 'analysis' ? logStreams.analysis(job.id) : logStreams.generation(job.id),
        isFinished: async () => {
          const em = deps.orm.em.fork();
          const current =
            kind === 'analysis' ? await em.findOne(AnalysisJob, { id: job.id }) : await em.findOne(GenerationJob, { id: job.id });
          return !current || current.agent === 'stopped';
        },
      });
    });
  }

  app.get<{ Params: { project: string; pipelineId: string; runId: string } }>(
    '/:project/api/pipelines/:pipelineId/:runId/logs',
    async (req, reply) => {
      const ctx = await projectRequest(deps, req, req.params.project);
      const { pipelineId, runId } = req.params;
      if (!isUuid(pipelineId) || !isUuid(runId)) throw new NotFound('Run');
      ctx.authorize(pipelineActions.read, pipelineId.toLowerCase());
      const run = await ctx.em.findOne(PipelineRun, {
        id: runId.toLowerCase(),
        pipeline: pipelineId.toLowerCase(),
        project: ctx.project.id,
      });
      if (!run) throw new NotFound('Run');
      return serveLogs(req, reply, {
        em: ctx.em,
        notifications,
        closing: closing.signal,
        stream: logStreams.run(run.id),
        // Its lines quote what it opened and clicked, which can be made of the cookies it read.
        withheld: canSeeRunOutputs(ctx.subject, ctx.ref, { sessionId: run.session?.id ?? null, readsCookies: run.readsCookies })
          ? undefined
          : 'run',
        isFinished: async () => {
          const current = await deps.orm.em.fork().findOne(PipelineRun, { id: run.id }, { fields: ['status'] });
          return !current || !['queued', 'running'].includes(current.status);
        },
      });
    },
  );
}
