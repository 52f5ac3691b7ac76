import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import { BrowserHost, PipelineRun, SessionResource } from '../db/entities/index.ts';
import { HOST_HEARTBEAT_STALE_MS } from '../server/browsers/sessions/browserSessions.ts';
import { appendLogs, logStreams } from '../server/logs/logWriter.ts';
import { executeDataNode } from '../server/pipelines/engine/dataNodes.ts';
import { openRunSecrets, storedCookieValues } from '../server/pipelines/runSecrets.ts';
import { runFinished } from '../server/webhooks/eventData.ts';
import { emitWebhookEvent, type WebhookEmitter } from '../server/webhooks/events.ts';
import { type BrowserSessionWorkflow, stopBrowserSignal } from '../workflows/contracts/browserSession.ts';
import type { RunSweeperActivities, SweepCursor } from '../workflows/contracts/periodic.ts';
import type {
  HostState,
  NodeActivityCall,
  PipelineRunActivities,
  RunEnd,
  RunStatus,
  StretchActivityCall,
} from '../workflows/contracts/pipelineRun.ts';
import { workflowIds } from '../workflows/contracts/workflowIds.ts';
import type { ActivityDeps } from './deps.ts';
import { createRunNodeContext, runStatusLine, withheldMessage } from './runNode.ts';
import { StretchRunner } from './runStretch.ts';
import { sweepStuck } from './sweeps.ts';

/** Control-queue activities of the pipelineRun workflow, and the sweep of runs nothing settles. */
export function createPipelineRunActivities(deps: Pick<ActivityDeps, 'orm' | 'config' | 'serviceSecret'> & { log?: Logger }) {
  const { orm, config, serviceSecret } = deps;
  const withRunNode = createRunNodeContext(deps);
  const stretches = new StretchRunner(deps);
  const webhooks: WebhookEmitter = { config, log: deps.log, temporal: () => Context.current().client };

  /** `run.finished` or `function.finished`, once the run has ended (again, after a retry: recorded once). */
  async function announceEnd(em: ReturnType<typeof orm.em.fork>, run: PipelineRun | null) {
    if (run?.functionVersion) await em.populate(run, ['functionVersion']);
    const event = run && runFinished(config.publicUrl, run);
    if (event) await emitWebhookEvent(em, webhooks, event);
  }

  async function update(
    runId: string,
    patch: Partial<RunStatus> & {
      result?: Record<string, unknown>;
      error?: PipelineRun['error'];
      /** Outputs of nodes the workflow ran itself, by path; added to those the activities stored. */
      nodeOutputs?: Record<string, unknown>;
    },
    message: string,
    /** The run as the caller already read it (one query less on the way to the answer). */
    loaded?: { em: ReturnType<typeof orm.em.fork>; run: PipelineRun | null },
  ) {
    const em = loaded?.em ?? orm.em.fork();
    const run = loaded ? loaded.run : await em.findOne(PipelineRun, { id: runId });
    // An ended run keeps its end: a `running` mark that lands after a stop (the activity outlived
    // the cancelled workflow scope) or a retried finish must not undo it.
    if (!run || run.finishedAt) return;
    if (patch.status) run.status = patch.status;
    if (patch.evaluation) run.evaluation = patch.evaluation;
    if (patch.status === 'running') run.startedAt ??= new Date();
    if (patch.result !== undefined) run.result = patch.result;
    if (patch.error !== undefined) run.error = patch.error;
    if (patch.nodeOutputs && Object.keys(patch.nodeOutputs).length) run.nodeOutputs = { ...run.nodeOutputs, ...patch.nodeOutputs };
    if (patch.status && patch.status !== 'running' && patch.status !== 'queued') run.finishedAt ??= new Date();
    await em.flush();
    await appendLogs(em, run.project.id, logStreams.run(run.id), [runStatusLine(message, run)]);
  }

  return {
    async markRun(runId: string, patch: RunStatus) {
      await update(runId, patch, `run ${patch.status}`);
    },

    async finishRun(runId: string, patch: RunEnd) {
      const em = orm.em.fork();
      const run = await em.findOne(PipelineRun, { id: runId }, { populate: ['sealedSecrets', 'session'] });
      const lostAt = run && patch.lostIn?.find((path) => !Object.hasOwn(run.nodeOutputs, path));
      const secrets = openRunSecrets(serviceSecret, run?.sealedSecrets, storedCookieValues(run?.session?.cookies));
      // The result holds sealed values where it holds secrets: opened, then redacted for storing.
      const result = patch.result ? (secrets.redactor.object(secrets.reveal(patch.result)) as Record<string, unknown>) : undefined;
      const nodeOutputs = patch.flowOutputs
        ? (secrets.redactor.object(secrets.reveal(patch.flowOutputs)) as Record<string, unknown>)
        : undefined;
      const error = patch.error
        ? { ...patch.error, ...(lostAt ? { node: lostAt } : {}), message: secrets.redactor.text(patch.error.message) }
        : undefined;
      const message =
        patch.status === 'failed' && error
          ? `run failed${error.node ? ` at node ${error.node}` : ''}: ${run ? withheldMessage(run, error.message) : error.message}`
          : `run ${patch.status}`;
      const { flowOutputs: _flow, lostIn: _lost, ...status } = patch;
      await update(runId, { ...status, result, error, nodeOutputs }, message, { em, run });
      await announceEnd(em, run);
      // What this worker kept of the run's data-node stretches (a lost attempt's progress) is done with.
      stretches.release(runId);
    },

    /**
     * A stretch of data nodes (activities/runStretch.ts); the workflow runs it as a local activity.
     * Data nodes were once called pure nodes: this activity's name and runPureNode's stay, as
     * workflow histories record them.
     */
    async runPureStretch(call: StretchActivityCall) {
      return stretches.run(call, async (node, _path, inputs) => executeDataNode(node.type, inputs));
    },

    /** One data node: how runs started before stretches existed run them (workflows/pipelineRun.ts). */
    async runPureNode(call: NodeActivityCall) {
      return withRunNode(call, async (inputs) => executeDataNode(call.type, inputs));
    },

    async hostAnswering(hostId: string) {
      const host = await orm.em.fork().findOne(BrowserHost, { id: hostId }, { fields: ['heartbeatAt'] });
      return !!host && Date.now() - host.heartbeatAt.getTime() < HOST_HEARTBEAT_STALE_MS;
    },

    async hostState(hostId: string): Promise<HostState> {
      const host = await orm.em.fork().findOne(BrowserHost, { id: hostId }, { fields: ['heartbeatAt', 'drainingSince'] });
      if (host && Date.now() - host.heartbeatAt.getTime() < HOST_HEARTBEAT_STALE_MS) return 'answering';
      // A drain is begun only by a shutdown (server/browsers/host/browserHost.ts), and a restarted
      // process clears it with its first heartbeat.
      return host?.drainingSince ? 'shut_down' : 'silent';
    },

    /**
     * Settles runs still queued or running whose `run-<id>` workflow is closed or was never
     * started (the api stopped between writing the row and starting it; the workflow was
     * terminated, or its last bookkeeping failed), so no run stays "running" for ever; a browser
     * such a run started is stopped. Rows younger than the grace period are left alone (their
     * workflow may be starting). One page per call, (activities/sweeps.ts).
     */
    async sweepStuckRuns(after: SweepCursor | null = null) {
      const em = orm.em.fork();
      const temporal = Context.current().client;
      const swept = await sweepStuck(em, {
        entity: PipelineRun,
        activeStatuses: ['queued', 'running'],
        after,
        graceSeconds: config.browsers.sweepGraceSeconds,
        intervalSeconds: config.browsers.sweepIntervalSeconds,
        workflowId: (run) => workflowIds.run(run.id),
        leftUndone: 'recording the end',
        async settle(run, reason) {
          // Written with the browser it starts, a run has no workflow while that browser launches
          // (createRun, server/pipelines/runs.ts): not lost. A start that died mid-launch is
          // settled by the resource sweeper, and then this run on a later pass.
          if (run.ownsResource && run.resource) {
            const browser = await em.findOne(SessionResource, { id: run.resource.id }, { fields: ['status'] });
            if (browser?.status === 'starting') return false;
          }
          const changed = await em.nativeUpdate(
            PipelineRun,
            { id: run.id, status: { $in: ['queued', 'running'] } },
            {
              status: 'failed',
              evaluation: 'failed',
              error: { node: null, code: 'run_lost', message: `the run was lost: ${reason}` },
              finishedAt: new Date(),
            },
          );
          if (!changed) return false;
          // Settled already: a failure to record the event must not undo the pass (it is logged).
          await announceEnd(em, await em.fork().findOne(PipelineRun, { id: run.id })).catch((error: unknown) =>
            deps.log?.warn({ err: error, runId: run.id }, 'the run’s webhook event was not recorded'),
          );
          await appendLogs(em, run.project.id, logStreams.run(run.id), [
            {
              context: 'run',
              severity: 'error',
              message: `run failed: ${reason}`,
              area: 'run',
              object: { status: 'failed', evaluation: 'failed' },
            },
          ]);
          if (run.ownsResource && run.resource) {
            await temporal.workflow
              .getHandle<BrowserSessionWorkflow>(workflowIds.browser(run.resource.id))
              .signal(stopBrowserSignal, 'the pipeline run that started it was lost')
              .catch(() => undefined);
          }
          return true;
        },
      });
      if (swept.settled) deps.log?.warn({ settled: swept.settled }, 'settled pipeline runs whose workflow was not running');
      return swept;
    },
  } satisfies PipelineRunActivities & RunSweeperActivities;
}
