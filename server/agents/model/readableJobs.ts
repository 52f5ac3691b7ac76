import type { EntityManager } from '@mikro-orm/postgresql';
import { AnalysisJob, GenerationJob } from '../../../db/entities/index.ts';
import type { Subject } from '../../auth/subject.ts';
import { NotFound } from '../../errors.ts';
import { agentJobRights, type ProjectRef } from '../../permissions/permissions.ts';
import { isUuid } from '../../projects/projectRepository.ts';

/**
 * How every route of one job (its procedures, its log stream) finds it. The spec's paths name the
 * job alone (`…/analysis/{analysisId}`), not its pipeline, so there is no parent to authorise
 * before the load: the job is looked up by id within the project in scope, then the caller must
 * be able to read it (pipelines.read on its pipeline, sessions.read on its session). A job the
 * caller may not read answers the same 404 as an unknown id or a job of another project, so the
 * answer never tells that it exists.
 */

/** The project the caller entered (loaded and authorised from the path) and who the caller is. */
type JobScope = { em: EntityManager; subject: Subject; ref: ProjectRef };

export async function readableAnalysis(scope: JobScope, id: string, populate: 'messages'[] = []) {
  const job = isUuid(id) ? await scope.em.findOne(AnalysisJob, { id: id.toLowerCase(), project: scope.ref.id }, { populate }) : null;
  if (!job || !agentJobRights.read(scope.subject, scope.ref, job.pipeline.id, job.session?.id ?? null)) throw new NotFound('Analysis');
  return job;
}

/** A generation is read through its analysis's session; `analysis` is that job, loaded. */
export async function readableGeneration(scope: JobScope, id: string, populate: 'messages'[] = []) {
  const job = isUuid(id)
    ? await scope.em.findOne(GenerationJob, { id: id.toLowerCase(), project: scope.ref.id }, { populate: [...populate, 'analysis'] })
    : null;
  const analysis = (job?.analysis as AnalysisJob | null | undefined) ?? null;
  if (!job || !agentJobRights.read(scope.subject, scope.ref, job.pipeline.id, analysis?.session?.id ?? null))
    throw new NotFound('Generation');
  return { job, analysis };
}
