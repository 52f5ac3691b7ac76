import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod';
import { FunctionVersion, Pipeline, PipelineFunction, PipelineRun, PipelineVersion } from '../../../db/entities/index.ts';
import { evaluationStatuses, runStatuses } from '../../../db/entities/PipelineRun.ts';
import { BadRequest, Conflict, type ErrorIssue, NotFound } from '../../errors.ts';
import { authorizeCookieReads, executeFunction, readFunctionRun } from '../../functions/execute.ts';
import {
  compileSource,
  createFunction,
  createFunctionVersion,
  functionSlugSchema,
  requireSlug,
  slugConflict,
  slugTaken,
} from '../../functions/functionVersions.ts';
import { functionOutputsSchema, functionParametersSchema } from '../../functions/schemas.ts';
import { clientGone, markRunning } from '../../http/waitingAnswers.ts';
import { waitField } from '../../infra/waiting.ts';
import { functionActions, pipelineActions } from '../../permissions/permissions.ts';
import { screenshotsOf, screenshotView } from '../../pipelines/screenshots.ts';
import { isUuid } from '../../projects/projectRepository.ts';
import { findInProject, listReadable, loadChild } from '../../projects/projectRows.ts';
import { iso, metadataJson, pagination, sourceJson, statusOk } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, router } from '../base.ts';

/**
 * Functions (spec 4.6): a pipeline source published behind a slug with a typed interface
 * (parameters and outputs), executed by slug. Versions are made by server/functions/functionVersions.ts
 * and executed by server/functions/execute.ts (which the MCP endpoint uses too).
 *
 * Permissions: `functions.read` / `functions.write`, refined per function id; executing needs
 * read on the function and execute on what it runs (see executeFunction).
 */

const projectParam = z.string().max(100);
const idParam = z.string().max(100);

const fields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(10_000),
  source: sourceJson,
  metadata: metadataJson,
  outputType: z.string().min(1).max(40),
};

const definitionInput = z.strictObject({
  source: fields.source,
  parameters: functionParametersSchema.default([]),
  outputs: functionOutputsSchema.default([]),
  metadata: fields.metadata.default({}),
  outputType: fields.outputType.default('function'),
});

const compileErrorView = z.object({ node: z.string().nullable(), input: z.string().optional(), code: z.string(), message: z.string() });
const parameterView = z.object({ name: z.string(), refType: z.string(), description: z.string().optional() });
const outputView = z.object({
  name: z.string(),
  refType: z.string(),
  source: z.object({ nodeName: z.string(), outputName: z.string() }).optional(),
});

const functionView = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string(),
  /** The current version's id. */
  version: z.string(),
  created: z.string(),
  updated: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  parameters: z.array(parameterView),
  outputs: z.array(outputView),
  outputType: z.string(),
  sourcePipelineId: z.string().nullable(),
  sourcePipelineVersionId: z.string().nullable(),
});

const previousVersionView = z.object({
  id: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  sourcePipelineId: z.string().nullable(),
  sourcePipelineVersionId: z.string().nullable(),
  created: z.string(),
});

const functionDetailView = functionView.extend({
  source: z.record(z.string(), z.unknown()),
  errors: z.array(compileErrorView),
  versions: z.array(previousVersionView),
});

const executionView = z.object({
  identifier: z.string(),
  outputs: z.record(z.string(), z.unknown()),
  result: z.object({
    status: z.object({ pipeline: z.enum(runStatuses), 'pipeline-evaluation': z.enum(evaluationStatuses) }),
    result: z.record(z.string(), z.unknown()).nullable(),
    nodeOutputs: z.record(z.string(), z.unknown()),
    /**
     * The run read cookies (page.cookies, page.evaluate) and the caller may not read the
     * session's: `result` is null, `nodeOutputs` empty and the error message withheld. The
     * declared `outputs` are still answered.
     */
    outputsWithheld: z.boolean(),
    error: z.object({ node: z.string().nullable(), code: z.string(), message: z.string() }).nullable(),
  }),
  /** GET of a run only: its pictures (a function's run takes them where a node failed). */
  screenshots: z.array(screenshotView).optional(),
});

const versionsShown = 100;

type VersionFields = Pick<
  FunctionVersion,
  'id' | 'metadata' | 'parameters' | 'outputs' | 'outputType' | 'sourcePipelineId' | 'sourcePipelineVersion' | 'created'
>;

function presentFunction(fn: PipelineFunction, version: VersionFields | null) {
  return {
    id: fn.id,
    name: fn.name,
    slug: fn.slug,
    description: fn.description,
    version: fn.currentVersion?.id as string,
    created: iso(fn.created),
    updated: iso(fn.updated),
    metadata: version?.metadata ?? {},
    parameters: version?.parameters ?? [],
    outputs: version?.outputs ?? [],
    outputType: version?.outputType ?? 'function',
    sourcePipelineId: version?.sourcePipelineId ?? null,
    sourcePipelineVersionId: version?.sourcePipelineVersion?.id ?? null,
  };
}

function findFunction(ctx: ProjectContext, functionId: string, action: string) {
  return findInProject(ctx, PipelineFunction, functionId, action, 'Function');
}

async function currentVersion(ctx: ProjectContext, fn: PipelineFunction) {
  return fn.currentVersion ? ctx.em.findOneOrFail(FunctionVersion, { id: fn.currentVersion.id }) : null;
}

/**
 * The pipeline version an import reads (spec 4.6: "omitted fields fall back to the previous
 * function version"): the ids given, else those the previous version was imported from. The
 * previous version's pipeline version is only a fallback for that same pipeline. 400 naming each
 * id that is neither given nor inherited (the previous version was made by PUT, its pipeline
 * version was deleted, or `pipelineId` names another pipeline).
 */
function importSource(
  input: { pipelineId?: string; pipelineVersionId?: string },
  previous: Pick<FunctionVersion, 'sourcePipelineId' | 'sourcePipelineVersion'> | null,
) {
  const pipelineId = input.pipelineId ?? previous?.sourcePipelineId ?? undefined;
  const samePipeline = !!pipelineId && !!previous?.sourcePipelineId && pipelineId.toLowerCase() === previous.sourcePipelineId;
  const pipelineVersionId = input.pipelineVersionId ?? (samePipeline ? previous?.sourcePipelineVersion?.id : undefined);
  const issues: ErrorIssue[] = [];
  if (!pipelineId) {
    issues.push({
      path: ['pipelineId'],
      code: 'required',
      message: 'required: the previous function version was not imported from a pipeline',
    });
  }
  if (!pipelineVersionId) {
    issues.push({
      path: ['pipelineVersionId'],
      code: 'required',
      message: !pipelineId
        ? 'required: the previous function version was not imported from a pipeline'
        : samePipeline
          ? 'required: the pipeline version the previous function version came from no longer exists'
          : 'required: the previous function version did not come from this pipeline',
    });
  }
  if (!pipelineId || !pipelineVersionId) {
    const message = `Invalid input: ${issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`;
    throw new BadRequest('invalid_input', message, { issues });
  }
  return { pipelineId, pipelineVersionId };
}

async function presentDetail(ctx: ProjectContext, fn: PipelineFunction) {
  const version = await currentVersion(ctx, fn);
  const previous = await ctx.em.find(
    FunctionVersion,
    { function: fn.id, ...(version ? { id: { $ne: version.id } } : {}) },
    {
      orderBy: { created: 'desc', id: 'desc' },
      limit: versionsShown,
      fields: ['id', 'metadata', 'sourcePipelineId', 'sourcePipelineVersion', 'created'],
    },
  );
  return {
    ...presentFunction(fn, version),
    source: version?.source ?? {},
    errors: version?.errors ?? [],
    versions: previous.map((v) => ({
      id: v.id,
      metadata: v.metadata,
      sourcePipelineId: v.sourcePipelineId ?? null,
      sourcePipelineVersionId: v.sourcePipelineVersion?.id ?? null,
      created: iso(v.created),
    })),
  };
}

/** Executes the function; a waiting execution whose run is still going answers 202. */
async function execute(ctx: ProjectContext, slug: string, input: { args?: Record<string, unknown>; wait?: number }) {
  const execution = await executeFunction(ctx.deps, ctx.em, ctx.subject, ctx.project, slug, input.args ?? {}, {
    waitSeconds: input.wait,
    signal: input.wait ? clientGone(ctx.reply) : undefined,
  });
  const { pipeline } = execution.result.status;
  const running = pipeline === 'queued' || pipeline === 'running';
  markRunning(ctx.reply, running);
  if (running && ctx.reply) {
    // Where to follow it: GET …/functions/{functionId}/runs/{runId}.
    const run = await ctx.em.findOneOrFail(PipelineRun, { id: execution.identifier }, { populate: ['functionVersion'] });
    const functionId = (run.functionVersion as FunctionVersion).function.id;
    ctx.reply.header('location', `/${ctx.project.slug}/api/functions/${functionId}/runs/${run.id}`);
  }
  return execution;
}

const tags = ['functions'];
const base = '/{project}/api/functions';

const executeInput = { args: z.record(z.string(), z.unknown()).optional(), wait: waitField };
const executeDescription =
  'Runs the current version on a fresh browser with the settings of the project’s "Default session" (or the session the version’s metadata names as `session`) and waits for it. ' +
  'Needs read on the function and execute on what it runs: `pipelineRuns.execute.<pipelineVersionId>` for a version imported from a pipeline, else `functions.execute.<functionId>`. ' +
  'The declared `outputs` are always answered; `result.result` and `result.nodeOutputs` (and a failed node’s message) only to callers who may read the session’s cookies when the run read cookies (else `result.outputsWithheld` is true). ' +
  'Errors: 400 `invalid_args` (one issue per problem), 400 `version_has_errors`, 400 `no_session`, 400 `function_failed` (the node is named), 503 `function_timeout`, 503 `host_lost` (its browser host died mid-run; retry), 503 `host_shutdown` (its browser host was shut down mid-run; retry), 429 `call_queue_full` / `call_queue_timeout` (the project already runs CALLS_PER_PROJECT calls at once and the call could not wait its turn: the queue was full, or its wait timed out; retry later). ' +
  'With `wait` (seconds) it waits that long instead of the function’s time limit: a run still going then is answered with HTTP 202, `outputs` empty and `result.status` queued or running, and goes on (it is not stopped).';

export const functionsRouter = router({
  // Static segments first: the REST matcher takes the first matching path per method.
  executeBySlug: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/slug/{slug}/execute`,
        errorResponses: [402, 409, 429],
        tags,
        summary: 'Execute a function by slug: `{identifier, outputs, result}`',
        description: executeDescription,
      },
    })
    .input(z.strictObject({ project: projectParam, slug: z.string().max(100), ...executeInput }))
    .output(executionView)
    .mutation(({ ctx, input }) => execute(ctx, input.slug, input)),

  list: projectProcedure
    .meta({
      openapi: { method: 'GET', path: base, tags, summary: 'Functions of the project the caller may read, with their current interface' },
    })
    .input(z.strictObject({ project: projectParam, ...pagination }))
    .output(z.array(functionView))
    .query(async ({ ctx, input }) => {
      const fns = await listReadable(ctx, PipelineFunction, functionActions.read, { page: input });
      const versionIds = fns.map((fn) => fn.currentVersion?.id).filter((id): id is string => !!id);
      const versions = versionIds.length ? await ctx.em.find(FunctionVersion, { id: { $in: versionIds } }, { exclude: ['source'] }) : [];
      const byId = new Map(versions.map((v) => [v.id, v]));
      return fns.map((fn) => presentFunction(fn, byId.get(fn.currentVersion?.id ?? '') ?? null));
    }),

  create: projectProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: base,
        tags,
        summary:
          'Create a function and its first (current) version; compiler and interface errors are stored. Answers `{id, version, errors}`',
      },
    })
    .input(
      z.strictObject({
        project: projectParam,
        name: fields.name,
        description: fields.description.default(''),
        slug: functionSlugSchema,
        definition: definitionInput,
      }),
    )
    .output(z.object({ id: z.string(), version: z.string(), errors: z.array(compileErrorView) }))
    .mutation(async ({ ctx, input }) => {
      ctx.authorize(functionActions.write);
      await authorizeCookieReads(ctx.em, ctx.subject, ctx.project, {
        plan: compileSource(input.definition.source),
        metadata: input.definition.metadata,
      });
      const { fn, version } = await createFunction(ctx.em, ctx.project, {
        name: input.name,
        description: input.description,
        slug: input.slug,
        definition: input.definition,
      });
      return { id: fn.id, version: version.id, errors: version.errors };
    }),

  get: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/{functionId}`,
        tags,
        summary: 'One function: base fields, the current version (interface, source, errors) and previous versions',
      },
    })
    .input(z.strictObject({ project: projectParam, functionId: idParam }))
    .output(functionDetailView)
    .query(async ({ ctx, input }) => presentDetail(ctx, await findFunction(ctx, input.functionId, functionActions.read))),

  update: projectProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: `${base}/{functionId}`,
        tags,
        summary: 'Change name, description or slug; a given slug is slugified first ("My Tool" → "my-tool")',
      },
    })
    .input(
      z.strictObject({
        project: projectParam,
        functionId: idParam,
        name: fields.name.optional(),
        description: fields.description.optional(),
        slug: z.string().max(200).optional(),
      }),
    )
    .output(functionView.pick({ id: true, name: true, slug: true, description: true, version: true, created: true, updated: true }))
    .mutation(async ({ ctx, input }) => {
      const fn = await findFunction(ctx, input.functionId, functionActions.write);
      if (input.slug !== undefined) {
        const slug = requireSlug(input.slug);
        if (slug !== fn.slug && (await slugTaken(ctx.em, ctx.project, slug, fn.id))) throw slugConflict(slug);
        fn.slug = slug;
      }
      if (input.name !== undefined) fn.name = input.name;
      if (input.description !== undefined) fn.description = input.description;
      try {
        await ctx.em.flush();
      } catch (error) {
        if (error instanceof UniqueConstraintViolationException) throw slugConflict(fn.slug);
        throw error;
      }
      const {
        metadata: _m,
        parameters: _p,
        outputs: _o,
        outputType: _t,
        sourcePipelineId: _s,
        sourcePipelineVersionId: _v,
        ...shown
      } = presentFunction(fn, null);
      return shown;
    }),

  delete: projectProcedure
    .meta({ openapi: { method: 'DELETE', path: `${base}/{functionId}`, tags, summary: 'Delete a function and all its versions' } })
    .input(z.strictObject({ project: projectParam, functionId: idParam }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const fn = await findFunction(ctx, input.functionId, functionActions.write);
      const active = await ctx.em.count(PipelineRun, { functionVersion: { function: fn.id }, status: { $in: ['queued', 'running'] } });
      if (active > 0) throw new Conflict('function_running', `The function has ${active} active execution(s); wait for them to end`);
      // Versions (and their runs) reference the function with ON DELETE CASCADE.
      await ctx.em.nativeDelete(PipelineFunction, { id: fn.id });
      return { status: 'ok' as const };
    }),

  import: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{functionId}/import`,
        tags,
        summary: 'A new current version from a pipeline version’s source; omitted fields come from the previous function version',
        description:
          'Every field left out is the previous (current) function version’s: `pipelineId` its source pipeline, `pipelineVersionId` its source pipeline version (when `pipelineId` names that same pipeline), `metadata`, `parameters`, `outputs`, `outputType` its own. ' +
          'When the previous version has no such value (it was not imported, or `pipelineId` names another pipeline), `pipelineId` and `pipelineVersionId` are required: 400 naming each missing one. ' +
          'Needs write on the function and read on the pipeline.',
      },
    })
    .input(
      z.strictObject({
        project: projectParam,
        functionId: idParam,
        pipelineId: idParam.optional(),
        pipelineVersionId: idParam.optional(),
        metadata: fields.metadata.optional(),
        parameters: functionParametersSchema.optional(),
        outputs: functionOutputsSchema.optional(),
        outputType: fields.outputType.optional(),
      }),
    )
    .output(z.object({ version: z.string(), errors: z.array(compileErrorView) }))
    .mutation(async ({ ctx, input }) => {
      const fn = await findFunction(ctx, input.functionId, functionActions.write);
      const previous = await currentVersion(ctx, fn);
      const { pipelineId, pipelineVersionId } = importSource(input, previous);
      if (!isUuid(pipelineId) || !ctx.can(pipelineActions.read, pipelineId.toLowerCase())) throw new NotFound('Pipeline');
      const pipeline = await loadChild(ctx.em, Pipeline, pipelineId, { project: ctx.project.id }, 'Pipeline');
      const pipelineVersion = await loadChild(
        ctx.em,
        PipelineVersion,
        pipelineVersionId,
        { pipeline: pipeline.id, project: ctx.project.id },
        'Pipeline version',
      );
      const metadata = input.metadata ?? previous?.metadata ?? {};
      await authorizeCookieReads(ctx.em, ctx.subject, ctx.project, { plan: compileSource(pipelineVersion.source), metadata });
      const version = await createFunctionVersion(
        ctx.em,
        fn,
        {
          source: pipelineVersion.source,
          metadata,
          parameters: input.parameters ?? previous?.parameters ?? [],
          outputs: input.outputs ?? previous?.outputs ?? [],
          outputType: input.outputType ?? previous?.outputType ?? 'function',
        },
        { sourcePipelineId: pipeline.id, sourcePipelineVersion: pipelineVersion },
      );
      return { version: version.id, errors: version.errors };
    }),

  execute: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{functionId}/execute`,
        errorResponses: [402, 409, 429],
        tags,
        summary: 'Execute by id or slug (the spec’s by-id route); the slug route is the supported one',
        description: `\`functionId\` is the function's id or its slug. ${executeDescription}`,
      },
    })
    .input(z.strictObject({ project: projectParam, functionId: idParam, ...executeInput }))
    .output(executionView)
    .mutation(async ({ ctx, input }) => {
      let slug = input.functionId;
      if (isUuid(input.functionId)) {
        // By id: resolve the slug only for a caller who may read the function (404 otherwise).
        const fn = await findFunction(ctx, input.functionId, functionActions.read).catch(() => null);
        if (!fn) throw new NotFound('Function');
        slug = fn.slug;
      }
      return execute(ctx, slug, input);
    }),

  getRun: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/{functionId}/runs/{runId}`,
        tags,
        summary: 'An execution of the function: `{identifier, outputs, result}`, ended or still going',
        description:
          'How an execute with `wait` that answered 202 is followed to its end: `result.status` says where the run is; `outputs` are filled once it has succeeded, and a failed run’s `result.error` names the node. Needs what executing the function needs.',
      },
    })
    .input(z.strictObject({ project: projectParam, functionId: idParam, runId: idParam }))
    .output(executionView)
    .query(async ({ ctx, input }) => {
      const fn = await findFunction(ctx, input.functionId, functionActions.read);
      const execution = await readFunctionRun(ctx.em, ctx.subject, ctx.project, fn, input.runId);
      const shown = !execution.result.outputsWithheld;
      return {
        ...execution,
        screenshots: shown ? await screenshotsOf(ctx.em, ctx.deps.config, ctx.project, { run: execution.identifier }) : [],
      };
    }),
});
