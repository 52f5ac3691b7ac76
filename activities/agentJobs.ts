import { Context } from '@temporalio/activity';
import { AnalysisJob, GenerationJob, PipelineRun, SessionResource } from '../db/entities/index.ts';
import { candidatePlan } from '../server/agents/model/candidate.ts';
import { analysisTurn, generationTurn, reportDryRunFailure } from '../server/agents/model/conversation.ts';
import { checkOutputs } from '../server/agents/model/outputCheck.ts';
import type { OutputDeclaration } from '../server/agents/proposal.ts';
import { prepareArgs } from '../server/pipelines/engine/interpreter.ts';
import { nodeRegistry, planReadsCookies } from '../server/pipelines/engine/registry.ts';
import { openSecretValues, sealRunArgs } from '../server/pipelines/runSecrets.ts';
import { agentJobFinished } from '../server/webhooks/eventData.ts';
import { emitWebhookEvent } from '../server/webhooks/events.ts';
import type { AgentJobActivities, AgentJobKind, DryRunFailure } from '../workflows/contracts/agentJobs.ts';
import type { PipelineRunInput } from '../workflows/contracts/pipelineRun.ts';
import type { ActivityDeps } from './deps.ts';
import { withheldMessage } from './runNode.ts';

/**
 * Control-queue activities of the analysis and generation workflows: the model turns
 * (server/agents/model/conversation.ts), the job's end, and the dry run of a generation's candidate.
 */
export function createAgentJobActivities({
  orm,
  config,
  serviceSecret,
  log,
}: Pick<ActivityDeps, 'orm' | 'config' | 'serviceSecret'> & Partial<Pick<ActivityDeps, 'log'>>) {
  // The model side is a domain module: it gets the activity's client by argument.
  const deps = () => ({ orm, config, serviceSecret, temporal: () => Context.current().client });
  const entity = (kind: AgentJobKind) => (kind === 'analysis' ? AnalysisJob : GenerationJob);

  return {
    analysisTurn: (jobId: string, step: number) => analysisTurn(deps(), jobId, step),
    generationTurn: (jobId: string, step: number) => generationTurn(deps(), jobId, step),
    reportDryRunFailure: (jobId: string, step: number, failure: string, code?: DryRunFailure['code']) =>
      reportDryRunFailure(deps(), jobId, step, failure, code),

    /** The agent is done (finished, failed, or stopped): it keeps what it has. */
    async finishAgentJob(kind: AgentJobKind, jobId: string, error: { code: string; message: string } | null) {
      const em = orm.em.fork();
      const job = await em.findOne(entity(kind) as typeof AnalysisJob, { id: jobId });
      if (!job) return;
      if (job.agent !== 'stopped') {
        job.agent = 'stopped';
        if (error && !job.error) job.error = error;
        await em.flush();
      }
      // Again after a retry: the event's key makes it one delivery.
      await emitWebhookEvent(em, { config, log, temporal: () => Context.current().client }, agentJobFinished(config.publicUrl, kind, job));
    },

    /**
     * A run of the generation's candidate on the job's browser, in a fresh tab: its row (linked to
     * the job, with the analysis's secret values sealed as run secrets) and the workflow's input.
     */
    async prepareDryRun(jobId: string, resourceId: string, hostId: string): Promise<{ runId: string; input: PipelineRunInput }> {
      const em = orm.em.fork();
      const job = await em.findOneOrFail(GenerationJob, { id: jobId }, { populate: ['analysis', 'analysis.sealedSecrets', 'plan'] });
      // A copy: the dry run's own tab is set on its steps, never on the stored plan.
      const plan = structuredClone(candidatePlan(job));
      if (!plan) throw new Error('the candidate does not compile');
      for (const step of plan.steps) {
        if (nodeRegistry.get(step.type)?.opensPage) step.inputs.newTab = { kind: 'literal', value: true };
      }
      const analysis = job.analysis as AnalysisJob;
      const secretValues = openSecretValues(serviceSecret, analysis.sealedSecrets);
      const given = { ...analysis.values, ...secretValues };
      const args = Object.fromEntries(Object.entries(given).filter(([name]) => name in plan.parameters));
      const { values, problems } = prepareArgs(plan, args);
      if (problems.length)
        throw new Error(`the candidate's parameters cannot be given: ${problems.map((p) => `${p.parameter}: ${p.message}`).join('; ')}`);
      const { shownArgs, workflowArgs, sealedSecrets } = sealRunArgs(serviceSecret, plan.secrets, values);
      const resource = await em.findOneOrFail(SessionResource, { id: resourceId });
      const run = em.create(PipelineRun, {
        project: job.project,
        pipeline: null,
        version: null,
        generation: job,
        session: resource.session,
        resource,
        ownsResource: false,
        readsCookies: planReadsCookies(plan),
        args: shownArgs,
        sealedSecrets,
        // A dry run shows what the candidate did, page by page (the console puts them beside its steps).
        screenshots: 'steps',
      });
      await em.flush();
      return { runId: run.id, input: { plan, args: workflowArgs, hostId, resourceId, ownsResource: false } };
    },

    /**
     * Stores how the dry run went and checks a green run's result against the analysis's output
     * declarations; answers the failure or the mismatches to feed back, or null when it is verified.
     */
    async recordDryRun(jobId: string, runId: string): Promise<DryRunFailure | null> {
      const em = orm.em.fork();
      const job = await em.findOneOrFail(GenerationJob, { id: jobId }, { populate: ['analysis'] });
      const run = await em.findOneOrFail(PipelineRun, { id: runId });
      const status = run.status === 'succeeded' ? 'succeeded' : run.status === 'cancelled' ? 'cancelled' : 'failed';
      const result = run.result ?? null;
      const declarations = ((job.analysis as AnalysisJob | null)?.output?.outputs ?? []) as OutputDeclaration[];
      const prompt = (job.analysis as AnalysisJob | null)?.prompt;
      const mismatches = status === 'succeeded' ? checkOutputs(declarations, result, prompt) : undefined;
      job.dryRun = { status, runId, result, error: run.error ?? null, ...(mismatches ? { mismatches } : {}) };
      await em.flush();
      // What is told goes on to the job's messages, log and ending, which readers of the job see
      // without cookies.read: a candidate that read cookies is told what differs or failed, not the values.
      if (mismatches?.length) {
        const told = (mismatch: (typeof mismatches)[number]) =>
          run.readsCookies ? `${mismatch.output}: ${mismatch.kind}` : mismatch.message;
        return { code: 'output_mismatch', failure: mismatches.map(told).join('\n') };
      }
      if (status === 'succeeded') return null;
      return {
        code: 'dry_run_failed',
        failure: run.error
          ? `${run.error.node ?? 'run'}: ${run.error.code}: ${withheldMessage(run, run.error.message)}`
          : `the run ended ${run.status}`,
      };
    },
  } satisfies AgentJobActivities;
}
