import { z } from 'zod';
import { AnalysisJob, GenerationJob, PipelineRun, SessionResource } from '../../db/entities/index.ts';
import { readableAnalysis, readableGeneration } from '../agents/model/readableJobs.ts';
import type { AppDeps } from '../appDeps.ts';
import { NotFound } from '../errors.ts';
import { LogNotifications } from '../logs/logNotifications.ts';
import { logEntryView, serveLogs } from '../logs/logResponses.ts';
import { logStreams } from '../logs/logWriter.ts';
import { can, canSeeRunOutputs, pipelineActions, sessionActions } from '../permissions/permissions.ts';
import { isUuid } from '../projects/projectRepository.ts';
import { projectRequest } from '../requestEdge.ts';
import { resourceForCaller, resourcePath } from './browsers/resources.ts';
import { rawRouteGroup, routesOf } from './rawRoute.ts';

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

type LogScope = { deps: AppDeps; notifications: LogNotifications; closing: AbortSignal };
const route = routesOf<LogScope>();

/** An analysis's or a generation's messages and tool calls. */
const agentLogRoute = (kind: 'analysis' | 'generation') =>
  route({
    method: 'GET',
    path: `/{project}/api/${kind}/{${kind}Id}/logs`,
    doc: {
      operationId: `logs-${kind}`,
      summary: `The ${kind}'s messages and tool calls as log entries, secrets redacted: paged JSON, or SSE with Accept: text/event-stream (resumable with Last-Event-ID)`,
      tags: ['analysis and generation'],
      parameters: logParams,
      responses: logsAnswer('A page of log entries, or the live stream'),
    },
    serve:
      ({ deps, notifications, closing }) =>
      async (req, reply) => {
        const { project, [`${kind}Id`]: jobId } = req.params as Record<string, string>;
        const ctx = await projectRequest(deps, req, project as string);
        const job =
          kind === 'analysis' ? await readableAnalysis(ctx, jobId as string) : (await readableGeneration(ctx, jobId as string)).job;
        return serveLogs(req, reply, {
          em: ctx.em,
          notifications,
          closing,
          stream: kind === 'analysis' ? logStreams.analysis(job.id) : logStreams.generation(job.id),
          isFinished: async () => {
            const em = deps.orm.em.fork();
            const current =
              kind === 'analysis' ? await em.findOne(AnalysisJob, { id: job.id }) : await em.findOne(GenerationJob, { id: job.id });
            return !current || current.agent === 'stopped';
          },
        });
      },
  });

/**
 * The log streams: a browser's (under its session resource), an agent job's and a pipeline
 * run's, all over the one LISTEN connection of this process.
 */
export const logRoutes = rawRouteGroup(
  (app, deps): LogScope => {
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
    return { deps, notifications, closing: closing.signal };
  },
  [
    route({
      method: 'GET',
      path: `${resourcePath}/logs`,
      doc: {
        operationId: 'logs-session-resource',
        summary:
          'Browser logs (console, navigations, lifecycle, errors): paged JSON, or SSE with Accept: text/event-stream (resumable with Last-Event-ID)',
        tags: ['sessions'],
        parameters: logParams,
        responses: logsAnswer('A page of log entries (console, navigations, lifecycle, errors), or the live stream'),
      },
      serve:
        ({ deps, notifications, closing }) =>
        async (req, reply) => {
          const { em, resource, can } = await resourceForCaller(deps, req, req.params, [sessionActions.read]);
          return serveLogs(req, reply, {
            em,
            notifications,
            closing,
            stream: logStreams.resource(resource.id),
            // The addresses it opened can be made of its cookies (by a page, or a run that read them).
            withheld: can(sessionActions.readCookies, resource.session.id) ? undefined : 'browser',
            isFinished: async () => {
              const current = await deps.orm.em.fork().findOne(SessionResource, { id: resource.id }, { fields: ['status'] });
              return !current || current.status === 'stopped' || current.status === 'failed';
            },
          });
        },
    }),
    agentLogRoute('analysis'),
    agentLogRoute('generation'),
    route({
      method: 'GET',
      path: '/{project}/api/pipelines/{pipelineId}/{runId}/logs',
      doc: {
        operationId: 'logs-pipeline-run',
        summary: 'Run logs with secrets redacted: paged JSON, or SSE with Accept: text/event-stream (resumable with Last-Event-ID)',
        tags: ['pipelines'],
        parameters: logParams,
        responses: logsAnswer('A page of log entries, or the live stream'),
      },
      serve:
        ({ deps, notifications, closing }) =>
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
            closing,
            stream: logStreams.run(run.id),
            // Its lines quote what it opened and clicked, which can be made of the cookies it read;
            // a call's browser lines quote addresses, withheld as a browser's log withholds them.
            withheld: !canSeeRunOutputs(ctx.subject, ctx.ref, { sessionId: run.session?.id ?? null, readsCookies: run.readsCookies })
              ? 'run'
              : can(ctx.subject, ctx.ref, sessionActions.readCookies, run.session?.id ?? undefined)
                ? undefined
                : 'runBrowser',
            isFinished: async () => {
              const current = await deps.orm.em.fork().findOne(PipelineRun, { id: run.id }, { fields: ['status'] });
              return !current || !['queued', 'running'].includes(current.status);
            },
          });
        },
    }),
  ],
);
