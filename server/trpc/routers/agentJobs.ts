import { z } from 'zod';
import type { DryRunResult } from '../../../db/entities/GenerationJob.ts';
import { AnalysisJob, BrowserSession, GenerationJob, Pipeline, PipelineRun } from '../../../db/entities/index.ts';
import { acceptAnalysis, acceptGeneration, startAnalysis, stopJob } from '../../agents/model/jobs.ts';
import { allowedModels } from '../../agents/model/models.ts';
import { readableAnalysis, readableGeneration } from '../../agents/model/readableJobs.ts';
import { waitThenMark } from '../../http/waitingAnswers.ts';
import { waitField, waitForJobEnd } from '../../infra/waiting.ts';
import { agentJobRights, canSeeRunOutputs, pipelineActions, RUN_WITHHELD_MESSAGE, sessionActions } from '../../permissions/permissions.ts';
import { screenshotsOf, screenshotView } from '../../pipelines/screenshots.ts';
import { findInProject } from '../../projects/projectRows.ts';
import { iso, pagination } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, router } from '../base.ts';

const tags = ['analysis and generation'];
const id = z.string().max(100);

const modelView = z.object({
  id: z.string(),
  provider: z.string(),
  model: z.string(),
  description: z.string(),
  capabilities: z.object({ toolCalls: z.boolean(), structuredOutput: z.boolean(), vision: z.boolean(), languageModel: z.boolean() }),
  pricing: z.object({ inputPerMTok: z.string(), outputPerMTok: z.string() }).nullable(),
});
const usageView = z.object({ inputTokens: z.number(), outputTokens: z.number(), calls: z.number() });
const endingView = z.object({ code: z.string(), message: z.string() }).nullable();
const messageView = z.object({ role: z.string(), step: z.number(), content: z.unknown(), created: z.string() });

const analysisSummary = z.object({
  id: z.string(),
  version: z.string().nullable(),
  session: z.string().nullable(),
  prompt: z.string(),
  status: z.enum(['pending', 'accepted', 'rejected']),
  agent: z.enum(['running', 'stopped']),
  model: z.string(),
  error: endingView,
  created: z.string(),
  updated: z.string(),
});
const analysisDetail = analysisSummary.extend({
  resources: z.array(z.string()),
  generations: z.array(z.object({ id: z.string(), status: z.string(), agent: z.string() })),
  messages: z.array(messageView),
  output: z.record(z.string(), z.unknown()).nullable(),
  usage: usageView,
  /** Pictures of the pages the proposal acts on, each with its steps' elements boxed (taken as the analysis ends). */
  screenshots: z.array(screenshotView),
});
const generationSummary = z.object({
  id: z.string(),
  version: z.string().nullable(),
  analysis: z.string().nullable(),
  status: z.enum(['pending', 'accepted', 'rejected']),
  agent: z.enum(['running', 'stopped']),
  model: z.string(),
  error: endingView,
  created: z.string(),
  updated: z.string(),
});
const generationDetail = generationSummary.extend({
  analysisPrompt: z.string().nullable(),
  analysisOutput: z.record(z.string(), z.unknown()).nullable(),
  messages: z.array(messageView),
  output: z.record(z.string(), z.unknown()).nullable(),
  // The candidate's compiler errors, then (code `output_mismatch`, with the `output`) each way its
  // dry run's result differs from the analysis's output declarations.
  errors: z.array(
    z.object({
      node: z.string().nullable(),
      input: z.string().optional(),
      output: z.string().optional(),
      code: z.string(),
      message: z.string(),
    }),
  ),
  dryRun: z
    .object({
      status: z.string(),
      runId: z.string().nullable(),
      result: z.record(z.string(), z.unknown()).nullable(),
      error: z.object({ node: z.string().nullable(), code: z.string(), message: z.string() }).nullable(),
      mismatches: z.array(z.object({ output: z.string(), kind: z.string(), message: z.string() })).optional(),
      /** As a run's: true when the candidate read cookies the caller may not read (result, error message and pictures left out). */
      outputsWithheld: z.boolean(),
      /** The dry run's pictures, one after each browser step (and where one failed). */
      screenshots: z.array(screenshotView),
    })
    .nullable(),
  attempts: z.number(),
  acceptedVersion: z.string().nullable(),
  usage: usageView,
});

// The spec's paths name the job alone, not its pipeline: a job is found by its id in the project
// (server/agents/model/readableJobs.ts).
const analysisPath = '/{project}/api/analysis/{analysisId}';
const generationPath = '/{project}/api/generation/{generationId}';
const analysisInput = z.strictObject({ project: id, analysisId: id });
const generationInput = z.strictObject({ project: id, generationId: id });

function loadPipeline(ctx: ProjectContext, pipelineId: string) {
  return findInProject(ctx, Pipeline, pipelineId, pipelineActions.read, 'Pipeline');
}

const analysisView = (job: AnalysisJob) => ({
  id: job.id,
  version: job.version?.id ?? null,
  session: job.session?.id ?? null,
  prompt: job.prompt,
  status: job.status,
  agent: job.agent,
  model: job.model,
  error: job.error ?? null,
  created: iso(job.created),
  updated: iso(job.updated),
});

const generationView = (job: GenerationJob) => ({
  id: job.id,
  version: job.version?.id ?? null,
  analysis: job.analysis?.id ?? null,
  status: job.status,
  agent: job.agent,
  model: job.model,
  error: job.error ?? null,
  created: iso(job.created),
  updated: iso(job.updated),
});

/**
 * What tells an analysis's procedures from a generation's: the rest of the six procedures both
 * kinds have (models, list, get, reject, stop, delete) is one definition, `jobProcedures`.
 */
type JobKind<
  Job extends AnalysisJob | GenerationJob,
  Input extends z.ZodType<JobInput>,
  Summary extends z.ZodType,
  Detail extends z.ZodType,
> = {
  kind: 'analysis' | 'generation';
  /** The kind's noun with its article, as the summaries say it. */
  one: string;
  many: string;
  path: `/${string}`;
  input: Input;
  summary: Summary;
  view: (job: Job) => z.input<Summary>;
  /** The pipeline's jobs the caller may read, newest first. */
  readable: (ctx: ProjectContext, pipeline: Pipeline) => Promise<Job[]>;
  /** The job the caller may read, else 404. */
  load: (ctx: ProjectContext, input: z.output<Input>) => Promise<Job>;
  detail: Detail;
  detailSummary: string;
  present: (ctx: ProjectContext, input: z.output<Input>) => Promise<z.input<Detail>>;
};
type JobInput = { project: string };

function jobProcedures<
  Job extends AnalysisJob | GenerationJob,
  Input extends z.ZodType<JobInput>,
  Summary extends z.ZodType,
  Detail extends z.ZodType,
>(kind: JobKind<Job, Input, Summary, Detail>) {
  const { path, input, summary } = kind;
  // tRPC's inferred input and output types do not resolve inside a generic function: resolvers
  // here cast to the schemas' types (`given`, `as never`), and the schemas given to .input() and
  // .output() type the procedures outside (and check their values at run time).
  const given = (raw: unknown) => raw as z.output<Input>;
  const loadForReview = async (ctx: ProjectContext, raw: unknown) => {
    const job = await kind.load(ctx, given(raw));
    agentJobRights.review(ctx.subject, ctx.ref, job.pipeline.id);
    return job;
  };
  return {
    models: projectProcedure
      .meta({
        openapi: { method: 'GET', path: `/{project}/api/pipelines/${kind.kind}/models`, tags, summary: `The models ${kind.kind} may use` },
      })
      .input(z.strictObject({ project: id }))
      .output(z.array(modelView))
      .query(({ ctx }) => allowedModels(ctx.deps.config, kind.kind)),

    list: projectProcedure
      .meta({
        openapi: {
          method: 'GET',
          path: `/{project}/api/pipelines/{pipelineId}/${kind.kind}`,
          tags,
          summary: `The pipeline’s ${kind.many}, newest first`,
        },
      })
      .input(z.strictObject({ project: id, pipelineId: id, ...pagination }))
      .output(z.array(summary))
      .query(async ({ ctx, input }) => {
        const pipeline = await loadPipeline(ctx, input.pipelineId);
        return (await kind.readable(ctx, pipeline)).slice(input.offset, input.offset + input.limit).map(kind.view) as never;
      }),

    get: projectProcedure
      .meta({ openapi: { method: 'GET', path, tags, summary: kind.detailSummary } })
      .input(input)
      .output(kind.detail)
      .query(async ({ ctx, input }) => (await kind.present(ctx, given(input))) as never),

    reject: projectProcedure
      .meta({ openapi: { method: 'POST', path: `${path}/reject`, tags, summary: `Reject ${kind.one}` } })
      .input(input)
      .output(summary)
      .mutation(async ({ ctx, input }) => {
        const job = await loadForReview(ctx, input);
        job.status = 'rejected';
        await ctx.em.flush();
        return kind.view(job) as never;
      }),

    stop: projectProcedure
      .meta({ openapi: { method: 'POST', path: `${path}/stop`, tags, summary: `Stop ${kind.one}’s agent; it keeps what it has` } })
      .input(input)
      .output(summary)
      .mutation(async ({ ctx, input }) => {
        const job = await loadForReview(ctx, input);
        return kind.view((await stopJob(ctx.deps, ctx.em, kind.kind, job)) as Job) as never;
      }),

    delete: projectProcedure
      .meta({ openapi: { method: 'DELETE', path, tags, summary: `Delete ${kind.one} (a running agent is stopped first)` } })
      .input(input)
      .output(z.object({ id: z.string() }))
      .mutation(async ({ ctx, input }) => {
        const job = await loadForReview(ctx, input);
        await stopJob(ctx.deps, ctx.em, kind.kind, job);
        await ctx.em.remove(job).flush();
        return { id: job.id };
      }),
  };
}

/** An analysis as GET answers it. */
async function presentAnalysis(ctx: ProjectContext, analysisId: string) {
  const job = await readableAnalysis(ctx, analysisId, ['messages']);
  const generations = await ctx.em.find(GenerationJob, { analysis: job.id }, { orderBy: { created: 'asc' } });
  return {
    ...analysisView(job),
    resources: job.resources,
    generations: generations.map((generation) => ({ id: generation.id, status: generation.status, agent: generation.agent })),
    messages: job.messages,
    output: job.output ?? null,
    usage: job.usage,
    screenshots: await screenshotsOf(ctx.em, ctx.deps.config, ctx.project, { analysis: job.id }),
  };
}

/**
 * A generation's dry run as its run would show it (GET …/runs/{runId}): a candidate that reads
 * cookies has their values in its result, its error and its pictures, which only callers who may
 * read the session's cookies see; the rest see that they are withheld.
 */
async function presentDryRun(ctx: ProjectContext, dryRun: DryRunResult) {
  const run = dryRun.runId ? await ctx.em.findOne(PipelineRun, { id: dryRun.runId, project: ctx.project.id }) : null;
  const showOutputs =
    !run || canSeeRunOutputs(ctx.subject, ctx.ref, { sessionId: run.session?.id ?? null, readsCookies: run.readsCookies });
  if (!showOutputs) {
    return {
      ...dryRun,
      result: null,
      error: dryRun.error ? { ...dryRun.error, message: RUN_WITHHELD_MESSAGE } : null,
      // A difference may quote the value it found.
      ...(dryRun.mismatches ? { mismatches: dryRun.mismatches.map((mismatch) => ({ ...mismatch, message: RUN_WITHHELD_MESSAGE })) } : {}),
      outputsWithheld: true,
      screenshots: [],
    };
  }
  const screenshots = run ? await screenshotsOf(ctx.em, ctx.deps.config, ctx.project, { run: run.id }) : [];
  return { ...dryRun, outputsWithheld: false, screenshots };
}

/** A generation as GET answers it. */
async function presentGeneration(ctx: ProjectContext, generationId: string) {
  const { job, analysis } = await readableGeneration(ctx, generationId, ['messages']);
  const dryRun = job.dryRun ? await presentDryRun(ctx, job.dryRun) : null;
  return {
    ...generationView(job),
    analysisPrompt: analysis?.prompt ?? null,
    analysisOutput: analysis?.output ?? null,
    messages: job.messages,
    output: job.source ?? null,
    errors: [
      ...job.errors,
      ...(dryRun?.mismatches ?? []).map((mismatch) => ({
        node: null,
        output: mismatch.output,
        code: 'output_mismatch',
        message: mismatch.message,
      })),
    ],
    dryRun,
    attempts: job.attempts,
    acceptedVersion: job.acceptedVersion?.id ?? null,
    usage: job.usage,
  };
}

const analysis = jobProcedures({
  kind: 'analysis',
  one: 'an analysis',
  many: 'analyses',
  path: analysisPath,
  input: analysisInput,
  summary: analysisSummary,
  view: analysisView,
  readable: async (ctx, pipeline) => {
    const jobs = await ctx.em.find(AnalysisJob, { pipeline: pipeline.id }, { orderBy: { created: 'desc', id: 'desc' } });
    return jobs.filter((job) => agentJobRights.read(ctx.subject, ctx.ref, pipeline.id, job.session?.id ?? null));
  },
  load: (ctx, input) => readableAnalysis(ctx, input.analysisId),
  detail: analysisDetail,
  detailSummary: 'An analysis: messages, output, resources, generations, usage',
  present: (ctx, input) => presentAnalysis(ctx, input.analysisId),
});

const generation = jobProcedures({
  kind: 'generation',
  one: 'a generation',
  many: 'generations',
  path: generationPath,
  input: generationInput,
  summary: generationSummary,
  view: generationView,
  readable: async (ctx, pipeline) => {
    const jobs = await ctx.em.find(
      GenerationJob,
      { pipeline: pipeline.id },
      { orderBy: { created: 'desc', id: 'desc' }, populate: ['analysis'] },
    );
    return jobs.filter((job) =>
      agentJobRights.read(ctx.subject, ctx.ref, pipeline.id, (job.analysis as AnalysisJob | null)?.session?.id ?? null),
    );
  },
  load: async (ctx, input) => (await readableGeneration(ctx, input.generationId)).job,
  detail: generationDetail,
  detailSummary: 'A generation: the analysis’s prompt and output, messages, the final graph, compile and dry-run results',
  present: (ctx, input) => presentGeneration(ctx, input.generationId),
});

// The order of the keys is the order of the OpenAPI document's operations.
export const agentJobsRouter = router({
  analysisModels: analysis.models,
  generationModels: generation.models,
  listAnalyses: analysis.list,

  startAnalysis: projectProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/{project}/api/pipelines/{pipelineId}/analysis',
        errorResponses: [402, 429],
        tags,
        summary: 'Start an analysis of a live session: a model (or builtin) proposes the pipeline’s next version',
        description:
          'Quoted values in the prompt become parameters; values named like a secret (password, token …) are sealed and reach no model. Needs pipelines.write on the pipeline and sessions.write on the session. ' +
          'Answers `{id}` at once; with `wait` (seconds), the analysis as GET answers it once its agent has stopped, or, still running at the deadline, with HTTP 202. Waiting never stops the agent.',
      },
    })
    .input(
      z.strictObject({
        project: id,
        pipelineId: id,
        session: id,
        model: z.string().min(1).max(64),
        prompt: z.string().min(1).max(4000),
        wait: waitField,
      }),
    )
    // The analysis as GET answers it (with `wait`), or its id alone.
    .output(z.union([analysisDetail, z.object({ id: z.string() })]))
    .mutation(async ({ ctx, input }) => {
      const pipeline = await loadPipeline(ctx, input.pipelineId);
      const session = await findInProject(ctx, BrowserSession, input.session, sessionActions.read, 'Session');
      agentJobRights.start(ctx.subject, ctx.ref, pipeline.id, session.id);
      const job = await startAnalysis(ctx.deps, ctx.em, {
        project: ctx.project,
        pipeline,
        session,
        model: input.model,
        prompt: input.prompt,
      });
      if (!input.wait) return { id: job.id };
      const wait = input.wait;
      await waitThenMark(
        ctx.reply,
        (gone) => waitForJobEnd(ctx.deps.temporal, 'analysis', job.id, wait, gone),
        async () => {
          await ctx.em.refresh(job);
          return job.agent === 'running';
        },
      );
      return presentAnalysis(ctx, job.id);
    }),

  getAnalysis: analysis.get,

  // Accepting differs in kind: an analysis starts a generation, a generation becomes a version.
  acceptAnalysis: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${analysisPath}/accept`,
        errorResponses: [402, 429],
        tags,
        summary: 'Accept a finished analysis: starts a generation with the given model (answers its id)',
        description:
          'Answers the generation’s `{id}` at once; with `wait` (seconds), the generation as GET answers it once its agent has stopped, or, still running at the deadline, with HTTP 202. Waiting never stops the agent.',
      },
    })
    .input(analysisInput.extend({ model: z.string().min(1).max(64), wait: waitField }))
    // The generation as GET answers it (with `wait`), or its id alone.
    .output(z.union([generationDetail, z.object({ id: z.string() })]))
    .mutation(async ({ ctx, input }) => {
      const job = await readableAnalysis(ctx, input.analysisId);
      agentJobRights.start(ctx.subject, ctx.ref, job.pipeline.id, job.session?.id ?? '');
      const generation = await acceptAnalysis(ctx.deps, ctx.em, job, input.model, ctx.project);
      if (!input.wait) return { id: generation.id };
      const wait = input.wait;
      await waitThenMark(
        ctx.reply,
        (gone) => waitForJobEnd(ctx.deps.temporal, 'generation', generation.id, wait, gone),
        async () => {
          await ctx.em.refresh(generation);
          return generation.agent === 'running';
        },
      );
      return presentGeneration(ctx, generation.id);
    }),

  rejectAnalysis: analysis.reject,
  stopAnalysis: analysis.stop,
  deleteAnalysis: analysis.delete,
  listGenerations: generation.list,
  getGeneration: generation.get,

  acceptGeneration: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${generationPath}/accept`,
        tags,
        summary: 'Accept a stopped generation whose source compiles: a new current version (answers its id)',
        description:
          'A generation whose dry run failed, never ran, or gave a result that differs from the analysis’s output declarations is unverified: it answers 400 generation_unverified unless the body is {"force": true}.',
      },
    })
    .input(
      generationInput.extend({
        force: z.boolean().optional().describe('Accept a generation whose dry run did not verify its candidate.'),
      }),
    )
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const { job } = await readableGeneration(ctx, input.generationId);
      agentJobRights.review(ctx.subject, ctx.ref, job.pipeline.id);
      const version = await acceptGeneration(ctx.em, job, { force: input.force ?? false });
      return { id: version.id };
    }),

  rejectGeneration: generation.reject,
  stopGeneration: generation.stop,
  deleteGeneration: generation.delete,
});
