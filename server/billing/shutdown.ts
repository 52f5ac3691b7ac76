import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { AnalysisJob, GenerationJob, PipelineRun, Project, SessionResource } from '../../db/entities/index.ts';
import {
  FUNDS_EXHAUSTED,
  type FundsShutdownWorkflow,
  fundsShutdownWorkflowType,
  type StoppedWorkloads,
} from '../../workflows/contracts/billing.ts';
import { stopBrowserSignal } from '../../workflows/contracts/browserSession.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { activeResourceStatuses } from '../browsers/sessions/resourceStatus.ts';
import type { Config } from '../config.ts';
import { workflowIsGone } from '../infra/workflowErrors.ts';
import { startDeliveries } from '../webhooks/events.ts';
import type { MeterAnswer } from './metering.ts';

/**
 * When an account's funds run out its work stops, through each workload's own workflow: browsers
 * get the stop signal, pipeline runs and agent jobs are cancelled. A workflow per exhaustion
 * (`funds-shutdown-<user>-<when>`) does it, so a crash half-way is finished by a retry, and every
 * later `shutdown` answer (re)starts it: a workload that slipped through is caught then.
 */

/**
 * Acts on metering's answer, wherever usage is reported (a browser's workflow, a model turn, a
 * coordinator's POST): starts (or joins) the shutdown it calls for; nothing when it says continue.
 */
export async function enforceFunds(em: EntityManager, client: Client | (() => Client), config: Config, answer: MeterAnswer) {
  // The funds events the report recorded (docs/webhooks.md); a start that fails is housekeeping's.
  await startDeliveries(em, { config, temporal: client }, answer.deliveries);
  if (answer.action !== 'shutdown' || !answer.exhaustedAt) return;
  // A getter is called only here: an activity's client is read only for a shutdown.
  const temporal = typeof client === 'function' ? client() : client;
  await temporal.workflow.start<FundsShutdownWorkflow>(fundsShutdownWorkflowType, {
    taskQueue: config.temporal.taskQueue,
    workflowId: workflowIds.fundsShutdown(answer.userId, answer.exhaustedAt),
    args: [answer.userId],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

/** Signals or cancels every running workload of the user's projects; answers what it reached. */
export async function stopAccountWorkloads(client: Client, em: EntityManager, userId: string): Promise<StoppedWorkloads> {
  const projects = (await em.find(Project, { owner: userId }, { fields: ['id'] })).map((project) => project.id);
  if (!projects.length) return { browsers: 0, runs: 0, jobs: 0 };
  const resources = await em.find(SessionResource, { project: { $in: projects }, status: { $in: [...activeResourceStatuses] } });
  const runs = await em.find(PipelineRun, { project: { $in: projects }, status: { $in: ['queued', 'running'] } });
  const analyses = await em.find(AnalysisJob, { project: { $in: projects }, agent: 'running' });
  const generations = await em.find(GenerationJob, { project: { $in: projects }, agent: 'running' });
  await Promise.all([
    ...runs.map((run) => ignoringGone(client.workflow.getHandle(workflowIds.run(run.id)).cancel())),
    ...analyses.map((job) => ignoringGone(client.workflow.getHandle(workflowIds.analysis(job.id)).cancel())),
    ...generations.map((job) => ignoringGone(client.workflow.getHandle(workflowIds.generation(job.id)).cancel())),
    ...resources.map((resource) =>
      ignoringGone(client.workflow.getHandle(workflowIds.browser(resource.id)).signal(stopBrowserSignal, FUNDS_EXHAUSTED)),
    ),
  ]);
  return { browsers: resources.length, runs: runs.length, jobs: analyses.length + generations.length };
}

/** A workflow that already ended has nothing left to stop. */
async function ignoringGone(call: Promise<unknown>) {
  try {
    await call;
  } catch (error) {
    if (workflowIsGone(error)) return;
    throw error;
  }
}
