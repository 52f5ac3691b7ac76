import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Pipeline, PipelineVersion, type Project } from '../../db/entities/index.ts';
import { compilePipeline } from './compiler.ts';

/**
 * Creating pipeline versions: every path that makes one (PATCH source, create, fork, switch with a
 * copy, generation accept) goes through `createVersion`, so each version carries its compiler
 * errors and plan and the pipeline's chain of predecessors stays linear.
 */

/**
 * A source as written and stored: any JSON object, which may not compile (a version keeps its
 * errors). The grammar a source that compiles follows is `PipelineSource` (language.ts).
 */
export type StoredSource = Record<string, unknown>;
export type VersionMetadata = Record<string, unknown>;

/** What a pipeline holds before anyone writes a graph: no nodes, so no errors. */
export function emptySource(): StoredSource {
  return { nodes: {} };
}

export type VersionInput = {
  /** Left out: the current version's source (or an empty graph when there is none). */
  source?: StoredSource;
  /** Left out: the current version's metadata (or `{}`). */
  metadata?: VersionMetadata;
  /** Left out: the pipeline's current version. `null`: the version starts a new chain. */
  predecessor?: PipelineVersion | null;
  /** Default true: the new version becomes the pipeline's current version. */
  makeCurrent?: boolean;
  /** `source` compiled already (a generation's candidate, checked before it is accepted): not compiled again. */
  compiled?: ReturnType<typeof compilePipeline>;
};

/**
 * Compiles `source` and stores a new version of `pipeline`; by default it becomes current.
 *
 * The pipeline row is locked for the duration, so two concurrent edits each see the other's
 * version as their predecessor instead of both branching off the same one (and the one written
 * last silently dropping the other from the history). The pipeline must already be in the
 * database. Runs in (or nests into) a transaction and flushes; the caller's EntityManager sees
 * the version and the updated pipeline afterwards.
 */
export async function createVersion(em: EntityManager, pipeline: Pipeline, input: VersionInput = {}) {
  return em.transactional(async (tx) => {
    const locked = await tx.findOneOrFail(Pipeline, { id: pipeline.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const current = locked.currentVersion ? await tx.findOne(PipelineVersion, { id: locked.currentVersion.id }, { refresh: true }) : null;
    const source = input.source ?? current?.source ?? emptySource();
    const metadata = input.metadata ?? current?.metadata ?? {};
    const predecessor = input.predecessor === undefined ? current : input.predecessor;
    // The compiler is pure and never throws on bad input: a source with errors is stored with
    // them (and no plan), and starting a run of it is refused.
    const { errors, plan } = (input.source && input.compiled) || compilePipeline(source);
    const version = tx.create(PipelineVersion, {
      pipeline: locked,
      project: locked.project,
      source,
      errors,
      plan: plan ? (plan as unknown as Record<string, unknown>) : null,
      metadata,
      predecessor,
    });
    if (input.makeCurrent ?? true) locked.currentVersion = version;
    await tx.flush();
    return version;
  });
}

export type NewPipeline = {
  name: string;
  description: string;
  source?: StoredSource;
  metadata?: VersionMetadata;
};

/** A pipeline and its first version, together: a pipeline is never seen without a current version. */
export async function createPipeline(em: EntityManager, project: Project, input: NewPipeline) {
  return em.transactional(async (tx) => {
    const pipeline = tx.create(Pipeline, { project, name: input.name, description: input.description, currentVersion: null });
    await tx.flush();
    const version = await createVersion(tx, pipeline, {
      source: input.source ?? emptySource(),
      metadata: input.metadata ?? {},
      predecessor: null,
    });
    return { pipeline, version };
  });
}

/**
 * Makes an existing version of `pipeline` its current one (switching back to an earlier version,
 * or to one a copy produced). The version must belong to the pipeline.
 */
export async function makeCurrent(em: EntityManager, pipeline: Pipeline, version: PipelineVersion) {
  if (version.pipeline.id !== pipeline.id) throw new Error(`version ${version.id} is not a version of pipeline ${pipeline.id}`);
  await em.transactional(async (tx) => {
    const locked = await tx.findOneOrFail(Pipeline, { id: pipeline.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    locked.currentVersion = tx.getReference(PipelineVersion, version.id);
    await tx.flush();
  });
}
