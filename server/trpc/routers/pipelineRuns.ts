import { z } from 'zod';
import { BrowserSession, Pipeline, PipelineRun, PipelineVersion, screenshotModes } from '../../../db/entities/index.ts';
import { presentResource, resourceView } from '../../browsers/sessions/resourceView.ts';
import { waitThenMark } from '../../http/waitingAnswers.ts';
import { waitField, waitForRunEnd } from '../../infra/waiting.ts';
import {
  authorizeRunOnSession,
  canSeeRunOutputs,
  pipelineActions,
  RUN_WITHHELD_MESSAGE,
  sessionActions,
} from '../../permissions/permissions.ts';
import { startRun, stopRun } from '../../pipelines/runs.ts';
import { screenshotsOf, screenshotsOption, screenshotView } from '../../pipelines/screenshots.ts';
import { findInProject, loadChild } from '../../projects/projectRows.ts';
import { iso } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, router } from '../base.ts';

const tags = ['pipelines'];

export const runView = z.object({
  id: z.string(),
  status: z.object({
    pipeline: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    'pipeline-evaluation': z.enum(['pending', 'running', 'completed', 'failed', 'stopped']),
  }),
  pipeline: z.object({ id: z.string(), name: z.string() }),
  version: z.string(),
  session: z.string().nullable(),
  resources: z.array(resourceView),
  args: z.record(z.string(), z.unknown()),
  nodeOutputs: z.record(z.string(), z.unknown()),
  result: z.record(z.string(), z.unknown()).nullable(),
  /**
   * The run read cookies and the caller may not read the session's: `nodeOutputs` and `result`
   * are left out, and so is `error.message` (a page script can throw `document.cookie`).
   */
  outputsWithheld: z.boolean(),
  error: z.object({ node: z.string().nullable(), code: z.string(), message: z.string() }).nullable(),
  /** Which pictures the run takes, and those taken so far (left out with the outputs when withheld). */
  screenshotMode: z.enum(screenshotModes),
  screenshots: z.array(screenshotView),
  /** Whether the run was started with `record`, and its browser's recordings (GET), for callers who may read that session. */
  record: z.boolean(),
  recording: z.string().nullable(),
  created: z.string(),
  started: z.string().nullable(),
  finished: z.string().nullable(),
});

function loadPipeline(ctx: ProjectContext, pipelineId: string) {
  return findInProject(ctx, Pipeline, pipelineId, pipelineActions.read, 'Pipeline');
}

async function loadRun(ctx: ProjectContext, pipelineId: string, runId: string) {
  const pipeline = await loadPipeline(ctx, pipelineId);
  const run = await loadChild(ctx.em, PipelineRun, runId, { pipeline: pipeline.id }, 'Run', { populate: ['resource', 'resource.session'] });
  return { pipeline, run };
}

async function present(ctx: ProjectContext, pipeline: Pipeline, run: PipelineRun) {
  const resources = [];
  // URLs and status of the browser only for callers who may read that session.
  if (run.resource && run.session && ctx.can(sessionActions.read, run.session.id)) {
    resources.push(await presentResource(ctx.deps, ctx.project, run.resource, { withUrls: true, subject: ctx.subject }));
  }
  const version = run.version as PipelineVersion;
  const showOutputs = canSeeRunOutputs(ctx.subject, ctx.ref, { sessionId: run.session?.id ?? null, readsCookies: run.readsCookies });
  return {
    id: run.id,
    status: { pipeline: run.status, 'pipeline-evaluation': run.evaluation },
    pipeline: { id: pipeline.id, name: pipeline.name },
    version: version.id,
    session: run.session?.id ?? null,
    resources,
    args: run.args,
    nodeOutputs: showOutputs ? run.nodeOutputs : {},
    result: showOutputs ? (run.result ?? null) : null,
    outputsWithheld: !showOutputs,
    error: run.error ? (showOutputs ? run.error : { ...run.error, message: RUN_WITHHELD_MESSAGE }) : null,
    screenshotMode: run.screenshots,
    // A picture shows what the outputs would: withheld alike.
    screenshots: showOutputs ? await screenshotsOf(ctx.em, ctx.deps.config, ctx.project, { run: run.id }) : [],
    record: run.record,
    recording:
      resources.length && run.resource && run.session && (run.record || run.session.record)
        ? `/${ctx.project.slug}/api/sessions/${run.session.id}/${run.resource.id}/recordings`
        : null,
    created: iso(run.created),
    started: run.startedAt ? iso(run.startedAt) : null,
    finished: run.finishedAt ? iso(run.finishedAt) : null,
  };
}

export const pipelineRunsRouter = router({
  start: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/{project}/api/pipelines/{pipelineId}/start',
        errorResponses: [402, 409, 429],
        tags,
        summary: 'Run a version of the pipeline on a session',
        description:
          'Answers `{id}` at once; with `wait` (seconds), the run as GET answers it once it has ended, or, still going at the deadline, with HTTP 202. Waiting never stops the run. ' +
          'A run that uses no running browser of the session is a call: it runs in a fresh context of the project’s browser and may wait its turn (429 `call_queue_full` / `call_queue_timeout` when it cannot).',
      },
    })
    .input(
      z.strictObject({
        project: z.string().max(100),
        pipelineId: z.string().max(100),
        session: z.string().max(100),
        version: z.string().max(100).optional(),
        args: z.record(z.string(), z.unknown()).optional(),
        screenshots: screenshotsOption,
        /** Record the run's browser with rrweb from its first browser node on (docs/browsers.md, Recordings). */
        record: z.boolean().optional(),
        wait: waitField,
      }),
    )
    // The full run (with `wait`) or its id alone: a client reads `id` either way.
    .output(z.union([runView, z.object({ id: z.string() })]))
    .mutation(async ({ ctx, input }) => {
      const pipeline = await loadPipeline(ctx, input.pipelineId);
      const versionId = input.version ?? pipeline.currentVersion?.id ?? '';
      const version = await loadChild(ctx.em, PipelineVersion, versionId, { project: ctx.project.id, pipeline: pipeline.id }, 'Version');
      ctx.authorize(pipelineActions.execute, version.id);
      // A session the caller cannot see is 404; one it may see but not drive, 403.
      const session = await findInProject(ctx, BrowserSession, input.session, sessionActions.read, 'Session');
      const run = await startRun(ctx.deps, ctx.em, {
        project: ctx.project,
        pipeline,
        version,
        session,
        args: input.args ?? {},
        screenshots: input.screenshots,
        record: input.record,
        // Needs the plan, which startRun loads: whether it reads cookies decides what is required.
        authorize: (run) => authorizeRunOnSession(ctx.subject, ctx.ref, session.id, run),
      });
      if (!input.wait) return { id: run.id };
      const wait = input.wait;
      await waitThenMark(
        ctx.reply,
        (gone) => waitForRunEnd(ctx.deps.temporal, run.id, wait, gone),
        async () => {
          await ctx.em.refresh(run, { populate: ['resource', 'resource.session'] });
          return run.status === 'queued' || run.status === 'running';
        },
      );
      return present(ctx, pipeline, run);
    }),

  get: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/pipelines/{pipelineId}/{runId}',
        tags,
        summary: 'A run: status, outputs, result, its browser',
      },
    })
    .input(z.strictObject({ project: z.string().max(100), pipelineId: z.string().max(100), runId: z.string().max(100) }))
    .output(runView)
    .query(async ({ ctx, input }) => {
      const { pipeline, run } = await loadRun(ctx, input.pipelineId, input.runId);
      return present(ctx, pipeline, run);
    }),

  stop: projectProcedure
    .meta({ openapi: { method: 'POST', path: '/{project}/api/pipelines/{pipelineId}/{runId}/stop', tags, summary: 'Stop a run' } })
    .input(z.strictObject({ project: z.string().max(100), pipelineId: z.string().max(100), runId: z.string().max(100) }))
    .output(runView)
    .mutation(async ({ ctx, input }) => {
      const { pipeline, run } = await loadRun(ctx, input.pipelineId, input.runId);
      ctx.authorize(pipelineActions.execute, (run.version as PipelineVersion).id);
      const stopped = await stopRun(ctx.deps, ctx.em, run);
      return present(ctx, pipeline, stopped);
    }),
});
