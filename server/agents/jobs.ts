/**
 * The api side of analysis and generation jobs: create and start them, stop them, and the state
 * rules of accepting (spec section 3). Workflows: workflows/agentJobs.ts.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AnalysisJob, type BrowserSession, GenerationJob, type Pipeline, type Project } from '../../db/entities/index.ts';
import { analysisJobWorkflow, generationJobWorkflow } from '../../workflows/agentJobs.ts';
import type { AgentJobInput } from '../../workflows/contracts/agentJobs.ts';
import { searchAttributesOf } from '../../workflows/contracts/searchAttributes.ts';
import { workflowIds } from '../../workflows/names.ts';
import { requireFunds } from '../billing/ledger.ts';
import type { BrowserStartDeps } from '../browsers/browserSessions.ts';
import { BadRequest, ServiceUnavailable } from '../errors.ts';
import { workflowIsGone } from '../infra/workflowErrors.ts';
import { compilePipeline } from '../pipelines/compiler.ts';
import { encryptSecrets } from '../pipelines/runSecrets.ts';
import { startOrShareBrowser } from '../pipelines/runs.ts';
import { createVersion } from '../pipelines/versions.ts';
import { requireModel } from './models.ts';
import { readPromptValues } from './promptValues.ts';

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
  const input: AgentJobInput = { hostId: resource.hostId as string, resourceId: resource.id };
  await startOrFail(deps, em, job, () =>
    deps.temporal.workflow.start(analysisJobWorkflow, {
      taskQueue: deps.config.temporal.taskQueue,
      workflowId: workflowIds.analysis(job.id),
      args: [job.id, input, deps.config.agents.maxSeconds],
      typedSearchAttributes: searchAttributesOf({
        projectId: target.project.id,
        pipelineId: target.pipeline.id,
        sessionId: target.session.id,
        hostId: input.hostId,
      }),
    }),
  );
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
  const input: AgentJobInput = { hostId: resource.hostId as string, resourceId: resource.id };
  await startOrFail(deps, em, job, () =>
    deps.temporal.workflow.start(generationJobWorkflow, {
      taskQueue: deps.config.temporal.taskQueue,
      workflowId: workflowIds.generation(job.id),
      args: [job.id, input, deps.config.agents.maxSeconds],
      typedSearchAttributes: searchAttributesOf({
        projectId: project.id,
        pipelineId: analysis.pipeline.id,
        sessionId: analysis.session?.id,
        hostId: input.hostId,
      }),
    }),
  );
  return job;
}

async function startOrFail(deps: Deps, em: EntityManager, job: AnalysisJob | GenerationJob, start: () => Promise<unknown>) {
  try {
    await start();
  } catch (error) {
    job.agent = 'stopped';
    job.error = { code: 'not_started', message: 'the job could not be started' };
    await em.flush();
    throw new ServiceUnavailable('The job could not be started: the workflow engine is unavailable', error);
  }
}

/** Stops a job's agent: cancels its workflow and waits (briefly) until it has recorded the stop. */
export async function stopJob(
  deps: Pick<Deps, 'temporal'>,
  em: EntityManager,
  kind: 'analysis' | 'generation',
  job: AnalysisJob | GenerationJob,
) {
  if (job.agent === 'stopped') return job;
  const handle = deps.temporal.workflow.getHandle(kind === 'analysis' ? workflowIds.analysis(job.id) : workflowIds.generation(job.id));
  try {
    await handle.cancel();
  } catch (error) {
    if (!workflowIsGone(error)) {
      throw new ServiceUnavailable('The job could not be stopped: the workflow engine is unavailable', error);
    }
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    handle.result().catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, STOP_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  await em.refresh(job);
  if ((job.agent as string) !== 'stopped') {
    // The workflow is gone or did not answer in time: the record says what is true.
    job.agent = 'stopped';
    job.error ??= { code: 'stopped', message: 'the agent was stopped' };
    await em.flush();
  }
  return job;
}

/** Accepts a generation (stopped, its source compiles): a new version of the pipeline, made current. */
export async function acceptGeneration(em: EntityManager, job: GenerationJob) {
  if (job.agent !== 'stopped') throw new BadRequest('generation_running', 'The generation is still running: stop it or wait until it ends');
  if (job.status === 'rejected') throw new BadRequest('generation_rejected', 'The generation was rejected');
  if (job.status === 'accepted' && job.acceptedVersion) throw new BadRequest('generation_accepted', 'The generation was already accepted');
  if (!job.source) throw new BadRequest('generation_without_output', 'The generation ended without a source');
  const compiled = compilePipeline(job.source);
  const { errors } = compiled;
  if (errors.length) {
    throw new BadRequest('generation_does_not_compile', `The generated source has ${errors.length} compiler error(s)`, {
      issues: errors.map((error) => ({ path: error.node ? [error.node] : [], message: error.message, code: error.code })),
    });
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
