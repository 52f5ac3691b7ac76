/**
 * The api side of analysis and generation jobs: create and start them, stop them, and the state
 * rules of accepting (spec section 3). Workflows: workflows/agentJobs.ts.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AnalysisJob, type BrowserSession, GenerationJob, type Pipeline, type Project } from '../../../db/entities/index.ts';
import {
  type AgentJobInput,
  type AgentJobKind,
  type AgentJobWorkflow,
  analysisJobWorkflowType,
  generationJobWorkflowType,
} from '../../../workflows/contracts/agentJobs.ts';
import { searchAttributesOf, type WorkflowTags } from '../../../workflows/contracts/searchAttributes.ts';
import { workflowIds } from '../../../workflows/contracts/workflowIds.ts';
import { requireFunds } from '../../billing/ledger.ts';
import type { BrowserStartDeps } from '../../browsers/sessions/browserSessions.ts';
import { BadRequest, ServiceUnavailable } from '../../errors.ts';
import { cancelAndAwait } from '../../infra/workflowHandles.ts';
import { encryptSecrets } from '../../pipelines/runSecrets.ts';
import { startOrShareBrowser } from '../../pipelines/runs.ts';
import { createVersion } from '../../pipelines/versions.ts';
import { readPromptValues } from '../promptValues.ts';
import { candidatePlan } from './candidate.ts';
import { requireModel } from './models.ts';

type Deps = BrowserStartDeps & { serviceSecret: string };

const STOP_WAIT_MS = 10_000;

/** Creates an analysis of `pipeline` on `session` and starts its workflow on the session's browser. */
export async function startAnalysis(
  deps: Deps,
  em: EntityManager,
  target: { project: Project; pipeline: Pipeline; session: BrowserSession; model: string; prompt: string },
) {
  requireModel(deps.config, 'analysis', target.model);
  const { prompt, values } = readPromptValues(target.prompt);
  const secrets = Object.fromEntries(values.filter((value) => value.secret).map((value) => [value.name, value.value]));
  await requireFunds(em, deps.config.billing, target.project);
  const { resource } = await startOrShareBrowser(deps, em, target.project, target.session);
  const job = em.create(AnalysisJob, {
    project: target.project,
    pipeline: target.pipeline,
    version: target.pipeline.currentVersion ?? null,
    session: target.session,
    model: target.model,
    prompt,
    sealedSecrets: Object.keys(secrets).length ? encryptSecrets(deps.serviceSecret, secrets) : null,
    values: Object.fromEntries(values.filter((value) => !value.secret).map((value) => [value.name, value.value])),
    resources: [resource.id],
  });
  await em.flush();
  await startJobWorkflow(deps, em, 'analysis', job, resource, {
    projectId: target.project.id,
    pipelineId: target.pipeline.id,
    sessionId: target.session.id,
  });
  return job;
}

/**
 * Accepts an analysis (its agent stopped, with an output): a pending generation with `model`
 * starts on the analysis's session. 400 otherwise.
 */
export async function acceptAnalysis(deps: Deps, em: EntityManager, analysis: AnalysisJob, model: string, project: Project) {
  requireModel(deps.config, 'generation', model);
  if (analysis.agent !== 'stopped')
    throw new BadRequest('analysis_running', 'The analysis is still running: stop it or wait until it ends');
  if (!analysis.output) throw new BadRequest('analysis_without_output', 'The analysis ended without an output to accept');
  if (analysis.status === 'rejected') throw new BadRequest('analysis_rejected', 'The analysis was rejected');
  if (!analysis.session) throw new BadRequest('session_gone', 'The analysis’s session was deleted');
  await em.populate(analysis, ['session', 'pipeline']);
  await requireFunds(em, deps.config.billing, project);
  const { resource } = await startOrShareBrowser(deps, em, project, analysis.session as BrowserSession);
  analysis.status = 'accepted';
  const job = em.create(GenerationJob, {
    project,
    pipeline: analysis.pipeline,
    version: analysis.version ?? null,
    analysis,
    model,
    resource: resource.id,
  });
  await em.flush();
  await startJobWorkflow(deps, em, 'generation', job, resource, {
    projectId: project.id,
    pipelineId: analysis.pipeline.id,
    sessionId: analysis.session?.id,
  });
  return job;
}

/**
 * Starts a job's workflow on `resource`'s browser, found by `attributes` and its host. A workflow
 * that does not start leaves the job stopped with `not_started` (503).
 */
async function startJobWorkflow(
  deps: Deps,
  em: EntityManager,
  kind: AgentJobKind,
  job: AnalysisJob | GenerationJob,
  resource: { id: string; hostId?: string | null },
  attributes: Omit<WorkflowTags, 'hostId'>,
) {
  const input: AgentJobInput = { hostId: resource.hostId as string, resourceId: resource.id };
  try {
    await deps.temporal.workflow.start<AgentJobWorkflow>(kind === 'analysis' ? analysisJobWorkflowType : generationJobWorkflowType, {
      taskQueue: deps.config.temporal.taskQueue,
      workflowId: jobWorkflowId(kind, job.id),
      args: [job.id, input, deps.config.agents.maxSeconds],
      typedSearchAttributes: searchAttributesOf({ ...attributes, hostId: input.hostId }),
    });
  } catch (error) {
    job.agent = 'stopped';
    job.error = { code: 'not_started', message: 'the job could not be started' };
    await em.flush();
    throw new ServiceUnavailable('The job could not be started: the workflow engine is unavailable', error);
  }
}

/** Stops a job's agent: cancels its workflow and waits (briefly) until it has recorded the stop. */
export async function stopJob(deps: Pick<Deps, 'temporal'>, em: EntityManager, kind: AgentJobKind, job: AnalysisJob | GenerationJob) {
  if (job.agent === 'stopped') return job;
  await cancelAndAwait(deps.temporal.workflow.getHandle<AgentJobWorkflow>(jobWorkflowId(kind, job.id)), STOP_WAIT_MS, {
    unavailable: 'The job could not be stopped: the workflow engine is unavailable',
  });
  await em.refresh(job);
  if ((job.agent as string) !== 'stopped') {
    // The workflow is gone or did not answer in time: the record says what is true.
    job.agent = 'stopped';
    job.error ??= { code: 'stopped', message: 'the agent was stopped' };
    await em.flush();
  }
  return job;
}

const jobWorkflowId = (kind: AgentJobKind, jobId: string) =>
  kind === 'analysis' ? workflowIds.analysis(jobId) : workflowIds.generation(jobId);

/**
 * Why a generation's candidate is not verified, or null when its dry run ran green and its result
 * is what the analysis declared. A candidate never dry-run (it did not compile, or the job was
 * stopped first) is not verified either.
 */
export function unverifiedBecause(job: GenerationJob): string | null {
  const run = job.dryRun;
  if (!run) return 'its candidate was never dry-run';
  if (run.status !== 'succeeded') return `its dry run ${run.status === 'cancelled' ? 'was cancelled' : 'failed'}`;
  if (!run.mismatches) return 'its dry run was not checked against the analysis’s output declarations';
  if (run.mismatches.length) return `its dry run’s result differs from what the analysis declared (${run.mismatches.length} difference(s))`;
  return null;
}

/**
 * Accepts a generation (stopped, its source compiles): a new version of the pipeline, made current.
 * A candidate that is not verified (unverifiedBecause) is accepted only with `force`.
 */
export async function acceptGeneration(em: EntityManager, job: GenerationJob, { force = false }: { force?: boolean } = {}) {
  if (job.agent !== 'stopped') throw new BadRequest('generation_running', 'The generation is still running: stop it or wait until it ends');
  if (job.status === 'rejected') throw new BadRequest('generation_rejected', 'The generation was rejected');
  if (job.status === 'accepted' && job.acceptedVersion) throw new BadRequest('generation_accepted', 'The generation was already accepted');
  if (!job.source) throw new BadRequest('generation_without_output', 'The generation ended without a source');
  await em.populate(job, ['plan']);
  const compiled = { errors: job.errors, plan: candidatePlan(job) };
  const { errors } = compiled;
  if (errors.length) {
    throw new BadRequest('generation_does_not_compile', `The generated source has ${errors.length} compiler error(s)`, {
      issues: errors.map((error) => ({ path: error.node ? [error.node] : [], message: error.message, code: error.code })),
    });
  }
  const unverified = unverifiedBecause(job);
  if (unverified && !force) {
    throw new BadRequest(
      'generation_unverified',
      `The generation is not verified: ${unverified}. Send {"force": true} to accept it anyway`,
      {
        issues: (job.dryRun?.mismatches ?? []).map((mismatch) => ({
          path: [mismatch.output],
          message: mismatch.message,
          code: mismatch.kind,
        })),
      },
    );
  }
  await em.populate(job, ['pipeline']);
  const version = await createVersion(em, job.pipeline as Pipeline, {
    source: job.source,
    compiled,
    metadata: { generatedBy: { generation: job.id, analysis: job.analysis?.id ?? null, model: job.model } },
  });
  job.status = 'accepted';
  job.acceptedVersion = version;
  await em.flush();
  return version;
}
