import { z } from 'zod';
import { Pipeline, PipelineRun, PipelineVersion } from '../../../db/entities/index.ts';
import { evaluationStatuses, runStatuses } from '../../../db/entities/PipelineRun.ts';
import { BadRequest, Conflict, NotFound } from '../../errors.ts';
import { authorize, can, pipelineActions, projectActions, projectRef } from '../../permissions/permissions.ts';
import { createPipeline, createVersion, makeCurrent } from '../../pipelines/versions.ts';
import { findProject } from '../../projects/projectRepository.ts';
import { findChild, findInProject, listReadable, readableIds } from '../../projects/projectRows.ts';
import { enterProject } from '../../requestEdge.ts';
import { iso, metadataJson, pagination, sourceJson, statusOk } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, publicProcedure, router } from '../base.ts';

/**
 * Pipelines CRUD and versions (spec 4.5, without runs, the node catalog and the model jobs).
 * A pipeline points to its current version; versions are immutable and linked to their
 * predecessors. Every version is made by server/pipelines/versions.ts, which compiles it.
 *
 * Permissions: `pipelines.read` / `pipelines.write`, refined per pipeline id. A version is
 * governed by its pipeline's id.
 */

const projectParam = z.string().max(100);
const idParam = z.string().max(100);

const fields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(10_000),
  /** Any JSON object: what it means is the compiler's to say, and its verdict is stored as `errors`. */
  source: sourceJson,
  metadata: metadataJson,
};

/** How many of a pipeline's latest runs its detail view lists, and of a version's run ids. */
const runsShown = 50;
const runIdsShown = 200;
const maxHistoryDepth = 100;

const compileErrorView = z.object({
  node: z.string().nullable(),
  input: z.string().optional(),
  code: z.string(),
  message: z.string(),
});

const runSummaryView = z.object({
  id: z.string(),
  status: z.object({ pipeline: z.enum(runStatuses), 'pipeline-evaluation': z.enum(evaluationStatuses) }),
  version: z.string(),
  session: z.string().nullable(),
  created: z.string(),
});

const pipelineView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  /** The current version's id. */
  version: z.string(),
  created: z.string(),
  updated: z.string(),
});

const pipelineDetailView = pipelineView.extend({
  source: z.record(z.string(), z.unknown()),
  errors: z.array(compileErrorView),
  metadata: z.record(z.string(), z.unknown()),
  runs: z.array(runSummaryView),
});

/** The shallow view of lists and history: no source. */
const versionView = z.object({
  id: z.string(),
  pipeline: z.string(),
  predecessor: z.string().nullable(),
  errorCount: z.number().int(),
  metadata: z.record(z.string(), z.unknown()),
  created: z.string(),
});

const versionDetailView = versionView.omit({ errorCount: true }).extend({
  source: z.record(z.string(), z.unknown()),
  errors: z.array(compileErrorView),
  /** Ids of the version's latest runs, newest first. */
  runs: z.array(z.string()),
  runCount: z.number().int(),
});

function presentPipeline(pipeline: Pipeline) {
  return {
    id: pipeline.id,
    name: pipeline.name,
    description: pipeline.description,
    // Never null once created: createPipeline makes the first version in the same transaction.
    version: pipeline.currentVersion?.id as string,
    created: iso(pipeline.created),
    updated: iso(pipeline.updated),
  };
}

type ShallowVersion = Pick<PipelineVersion, 'id' | 'pipeline' | 'predecessor' | 'errors' | 'metadata' | 'created' | 'project'>;

function presentVersion(version: ShallowVersion) {
  return {
    id: version.id,
    pipeline: version.pipeline.id,
    predecessor: version.predecessor?.id ?? null,
    errorCount: version.errors.length,
    metadata: version.metadata,
    created: iso(version.created),
  };
}

/** Authorises first (so a missing id and a forbidden one look alike), then loads. */
function findPipeline(ctx: ProjectContext, pipelineId: string, action: string) {
  return findInProject(ctx, Pipeline, pipelineId, action, 'Pipeline');
}

/**
 * A version of this project the caller may read. Its permission is its pipeline's, known only
 * after loading, so a version the caller may not read answers 404 like a missing one.
 */
async function findVersion(ctx: ProjectContext, versionId: string) {
  const version = await findChild(ctx.em, PipelineVersion, versionId, { project: ctx.project.id });
  if (!version || !ctx.can(pipelineActions.read, version.pipeline.id)) throw new NotFound('Pipeline version');
  return version;
}

/** `all` when the caller reads every pipeline of the project, else the ids its grants name. */
async function presentDetail(ctx: ProjectContext, pipeline: Pipeline) {
  const versionId = pipeline.currentVersion?.id;
  const [version, runs] = await Promise.all([
    versionId ? ctx.em.findOneOrFail(PipelineVersion, { id: versionId }) : null,
    ctx.em.find(
      PipelineRun,
      { pipeline: pipeline.id },
      {
        orderBy: { created: 'desc', id: 'desc' },
        limit: runsShown,
        fields: ['id', 'status', 'evaluation', 'version', 'session', 'created'],
      },
    ),
  ]);
  return {
    ...presentPipeline(pipeline),
    source: version?.source ?? {},
    errors: version?.errors ?? [],
    metadata: version?.metadata ?? {},
    runs: runs.map((run) => ({
      id: run.id,
      status: { pipeline: run.status, 'pipeline-evaluation': run.evaluation },
      version: (run.version as PipelineVersion).id,
      session: run.session?.id ?? null,
      created: iso(run.created),
    })),
  };
}

/**
 * The predecessors of a version, nearest first, at most `depth` of them, in one recursive query.
 * The walk ends before the first version the caller may not read (or of another project).
 */
async function history(ctx: ProjectContext, start: PipelineVersion, depth: number) {
  const chain = await ctx.em.getConnection().execute<{ id: string; step: number }[]>(
    `with recursive chain (id, predecessor_id, step) as (
         select id, predecessor_id, 0 from pipeline_versions where id = ?
         union all
         select v.id, v.predecessor_id, c.step + 1 from pipeline_versions v join chain c on v.id = c.predecessor_id where c.step < ?
       )
       select id, step from chain where step > 0 order by step`,
    [start.id, depth],
    'all',
  );
  if (chain.length === 0) return [];
  const versions = await ctx.em.find(PipelineVersion, { id: { $in: chain.map((row) => row.id) } }, { exclude: ['source'] });
  const byId = new Map(versions.map((version) => [version.id, version]));
  const walked: ShallowVersion[] = [];
  for (const { id } of chain) {
    const version = byId.get(id);
    if (!version || version.project.id !== ctx.project.id || !ctx.can(pipelineActions.read, version.pipeline.id)) break;
    walked.push(version);
  }
  return walked;
}

/**
 * Fork's body names the target `project`, and the REST adapter lets a path parameter overwrite a
 * body field of the same name; so this one route names its path's project `sourceProject`, and
 * this procedure does for it what projectProcedure does for `project` (load it, require read).
 */
const sourceProjectProcedure = publicProcedure.use(async ({ ctx, next, getRawInput }) => {
  const raw = (await getRawInput()) as { sourceProject?: unknown } | undefined;
  return next({ ctx: await enterProject(ctx.deps, ctx.em, ctx.subject, raw?.sourceProject) });
});

const tags = ['pipelines'];
const base = '/{project}/api/pipelines';

/**
 * Static segments first: the REST matcher takes the first path that matches per method, so
 * `…/pipelines/versions…` must be tried before `…/pipelines/{pipelineId}…`.
 */
const versionsRouter = router({
  list: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/versions`,
        tags,
        summary: 'Versions of the pipelines the caller may read, newest first; `pipeline` narrows to one pipeline',
      },
    })
    .input(z.strictObject({ project: projectParam, ...pagination, pipeline: idParam.optional() }))
    .output(z.array(versionView))
    .query(async ({ ctx, input }) => {
      let pipelines: 'all' | string[];
      if (input.pipeline !== undefined) {
        const pipeline = await findPipeline(ctx, input.pipeline, pipelineActions.read);
        pipelines = [pipeline.id];
      } else {
        pipelines = await readableIds(ctx, Pipeline, pipelineActions.read);
        if (pipelines.length === 0) return [];
      }
      const versions = await ctx.em.find(
        PipelineVersion,
        pipelines === 'all' ? { project: ctx.project.id } : { project: ctx.project.id, pipeline: { $in: pipelines } },
        { orderBy: { created: 'desc', id: 'desc' }, limit: input.limit, offset: input.offset, exclude: ['source'] },
      );
      return versions.map(presentVersion);
    }),

  get: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/versions/{versionId}`,
        tags,
        summary: 'One version: source, compiler errors, metadata, predecessor and run references',
      },
    })
    .input(z.strictObject({ project: projectParam, versionId: idParam }))
    .output(versionDetailView)
    .query(async ({ ctx, input }) => {
      const version = await findVersion(ctx, input.versionId);
      const [runs, runCount] = await Promise.all([
        ctx.em.find(PipelineRun, { version: version.id }, { orderBy: { created: 'desc', id: 'desc' }, limit: runIdsShown, fields: ['id'] }),
        ctx.em.count(PipelineRun, { version: version.id }),
      ]);
      const { errorCount: _count, ...shallow } = presentVersion(version);
      return { ...shallow, source: version.source, errors: version.errors, runs: runs.map((run) => run.id), runCount };
    }),

  history: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/versions/{versionId}/history`,
        tags,
        summary: 'The predecessors of a version, nearest first, up to `depth` (default 10, at most 100)',
      },
    })
    .input(
      z.strictObject({
        project: projectParam,
        versionId: idParam,
        depth: z.coerce.number().int().min(1).max(maxHistoryDepth).default(10),
      }),
    )
    .output(z.array(versionView))
    .query(async ({ ctx, input }) => {
      const version = await findVersion(ctx, input.versionId);
      return (await history(ctx, version, input.depth)).map(presentVersion);
    }),

  fork: sourceProjectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/{sourceProject}/api/pipelines/versions/{versionId}/fork',
        tags,
        summary: 'A new pipeline seeded with this version, in this project or another (`project`) the caller can write',
        description:
          '`sourceProject` is the `{project}` segment of the path (slug or id); `project` in the body is the target (slug or id, default the same project). Answers the new pipeline’s id; its first version’s metadata records `forkedFrom`.',
      },
    })
    .input(
      z.strictObject({
        sourceProject: projectParam,
        versionId: idParam,
        name: fields.name.optional(),
        description: fields.description.optional(),
        project: projectParam.optional(),
      }),
    )
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const version = await findVersion(ctx, input.versionId);
      const target = input.project === undefined ? ctx.project : await findProject(ctx.deps.access, ctx.em, input.project);
      // A target the caller cannot see answers like a missing one; a visible one without write, 403.
      if (!target || !can(ctx.subject, projectRef(target), projectActions.read)) throw new NotFound('Target project');
      authorize(ctx.subject, projectRef(target), pipelineActions.write);
      const original = await ctx.em.findOneOrFail(Pipeline, { id: version.pipeline.id });
      const { pipeline } = await createPipeline(ctx.em, target, {
        name: input.name ?? original.name,
        description: input.description ?? original.description,
        source: version.source,
        metadata: { ...version.metadata, forkedFrom: { project: ctx.project.id, pipeline: original.id, version: version.id } },
      });
      return { id: pipeline.id };
    }),

  switch: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/versions/{versionId}/switch`,
        tags,
        summary: 'Make this version current in `pipeline`; a version of another pipeline is copied into it first',
      },
    })
    .input(z.strictObject({ project: projectParam, versionId: idParam, pipeline: idParam }))
    .output(z.object({ version: z.string(), copied: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const version = await findVersion(ctx, input.versionId);
      const target = await findPipeline(ctx, input.pipeline, pipelineActions.write);
      if (version.pipeline.id === target.id) {
        await makeCurrent(ctx.em, target, version);
        return { version: version.id, copied: false };
      }
      // A copy, not a shared row: each pipeline's chain of predecessors stays its own, and the
      // copy follows the target's current version.
      const copy = await createVersion(ctx.em, target, {
        source: version.source,
        metadata: { ...version.metadata, copiedFrom: { pipeline: version.pipeline.id, version: version.id } },
      });
      return { version: copy.id, copied: true };
    }),
});

export const pipelinesRouter = router({
  // First: see above.
  versions: versionsRouter,

  list: projectProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: 'Pipelines of the project the caller may read' } })
    .input(z.strictObject({ project: projectParam, ...pagination }))
    .output(z.array(pipelineView))
    .query(async ({ ctx, input }) => {
      const pipelines = await listReadable(ctx, Pipeline, pipelineActions.read, { page: input });
      return pipelines.map(presentPipeline);
    }),

  create: projectProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: base,
        tags,
        summary: 'Create a pipeline; a given source is compiled and its errors stored. Answers its id',
      },
    })
    .input(
      z.strictObject({
        project: projectParam,
        name: fields.name,
        description: fields.description.default(''),
        source: fields.source.optional(),
      }),
    )
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      ctx.authorize(pipelineActions.write);
      const { pipeline } = await createPipeline(ctx.em, ctx.project, {
        name: input.name,
        description: input.description,
        source: input.source,
      });
      return { id: pipeline.id };
    }),

  get: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/{pipelineId}`,
        tags,
        summary: 'One pipeline with its current version’s source, errors and metadata, and its latest runs',
      },
    })
    .input(z.strictObject({ project: projectParam, pipelineId: idParam }))
    .output(pipelineDetailView)
    .query(async ({ ctx, input }) => presentDetail(ctx, await findPipeline(ctx, input.pipelineId, pipelineActions.read))),

  update: projectProcedure
    .meta({ openapi: { method: 'PATCH', path: `${base}/{pipelineId}`, tags, summary: 'Rename a pipeline or change its description' } })
    .input(
      z.strictObject({
        project: projectParam,
        pipelineId: idParam,
        name: fields.name.optional(),
        description: fields.description.optional(),
      }),
    )
    .output(pipelineView)
    .mutation(async ({ ctx, input }) => {
      const pipeline = await findPipeline(ctx, input.pipelineId, pipelineActions.write);
      if (input.name !== undefined) pipeline.name = input.name;
      if (input.description !== undefined) pipeline.description = input.description;
      await ctx.em.flush();
      // The list view: writing does not imply reading the source.
      return presentPipeline(pipeline);
    }),

  updateSource: projectProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: `${base}/{pipelineId}/source`,
        tags,
        summary: 'A new version from `source` and/or `metadata` (the other carried over); it becomes current',
      },
    })
    .input(
      z.strictObject({
        project: projectParam,
        pipelineId: idParam,
        source: fields.source.optional(),
        metadata: fields.metadata.optional(),
      }),
    )
    .output(z.object({ version: z.string(), errors: z.array(compileErrorView) }))
    .mutation(async ({ ctx, input }) => {
      const pipeline = await findPipeline(ctx, input.pipelineId, pipelineActions.write);
      if (input.source === undefined && input.metadata === undefined) {
        throw new BadRequest('invalid_input', 'Give `source`, `metadata`, or both', {
          issues: [{ path: ['source'], message: 'source and/or metadata required' }],
        });
      }
      const version = await createVersion(ctx.em, pipeline, { source: input.source, metadata: input.metadata });
      return { version: version.id, errors: version.errors };
    }),

  delete: projectProcedure
    .meta({
      openapi: { method: 'DELETE', path: `${base}/{pipelineId}`, tags, summary: 'Delete a pipeline with its versions and runs' },
    })
    .input(z.strictObject({ project: projectParam, pipelineId: idParam }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const pipeline = await findPipeline(ctx, input.pipelineId, pipelineActions.write);
      // Removing the rows under a live run would leave its workflow writing to nothing; stop it first.
      const active = await ctx.em.count(PipelineRun, { pipeline: pipeline.id, status: { $in: ['queued', 'running'] } });
      if (active > 0) throw new Conflict('pipeline_running', `The pipeline has ${active} active run(s); stop them before deleting it`);
      // Versions and runs reference the pipeline with ON DELETE CASCADE.
      await ctx.em.nativeDelete(Pipeline, { id: pipeline.id });
      return { status: 'ok' as const };
    }),
});
