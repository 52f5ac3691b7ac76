import type { GenerationJob } from '../../../db/entities/index.ts';
import { compilePipeline } from '../../pipelines/compiler.ts';
import type { Plan } from '../../pipelines/engine/plan.ts';

/**
 * A generation's candidate plan: the one its turn compiled and stored (populate `plan` first), or
 * null when the candidate has errors or there is none. A job from before plans were stored has only
 * its source: it is compiled here, once more, as it was then.
 */
export function candidatePlan(job: GenerationJob): Plan | null {
  if (job.plan) return job.plan as unknown as Plan;
  if (!job.source || job.errors.length) return null;
  return compilePipeline(job.source).plan;
}
