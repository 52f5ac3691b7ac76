import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { BrowserHostActivities } from '../activities/browserHost.ts';
import type { createActivities } from '../activities/index.ts';
import { PipelineRunError, runPlan } from '../server/pipelines/engine/interpreter.ts';
import { browserHostQueue, stopBrowserSignal } from './contracts/browserSession.ts';
import { nodeFailures, type PipelineRunInput, runEndedUpdate } from './contracts/pipelineRun.ts';
import { workflowIds } from './names.ts';

/** A node without its own timeout gets this per attempt. */
const DEFAULT_NODE_TIMEOUT_MS = 30_000;
/** Time past the node's own budget before the activity itself times out. */
const NODE_TIMEOUT_GRACE_MS = 5_000;
/** What a node's activity may spend waiting for the database beyond the node's own time (activities/runNode.ts). */
const INFRASTRUCTURE_ALLOWANCE_MS = 2 * 60_000;
/** A host that does not pick up a node in this time is taken as gone: the run fails, not hangs. */
const HOST_PICKUP_TIMEOUT = '15 seconds';
/** Browser nodes heartbeat every second; a silent host is noticed this fast. */
const NODE_HEARTBEAT_TIMEOUT = '10 seconds';

const control = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 10 },
});

/** A node failed: the run fails with its error and the node named. */
class NodeFailed extends Error {
  override name = 'NodeFailed';
  readonly node: string;
  readonly code: string;
  constructor(node: string, code: string, message: string) {
    super(message);
    this.node = node;
    this.code = code;
  }
}

/**
 * Executes one pipeline run (workflow id `run-<runId>`): the plan's nodes in order, browser nodes
 * on the host that holds the browser, pure nodes on the control queue; every node's outputs and
 * log lines are stored by the activity that ran it, flow nodes' outputs with the run's end.
 * Cancelling the workflow stops the run.
 */
export async function pipelineRunWorkflow(runId: string, input: PipelineRunInput): Promise<void> {
  const hostQueue = browserHostQueue(input.hostId);
  // Activities store the outputs of the nodes they run; the nodes the workflow runs itself
  // (flow.forEach, flow.condition) have theirs stored with the run's end.
  const activityNodes = new Set<string>();
  const flowOutputs: Record<string, Record<string, unknown>> = {};
  let ended = false;
  // Not cancellable: a stopped run's caller waits for its end like any other. No commands, so
  // histories without the update replay unchanged.
  setHandler(runEndedUpdate, () => CancellationScope.nonCancellable(() => condition(() => ended)));
  try {
    // Inside the try, so a stop that arrives this early still records the end and releases the
    // browser; not cancellable, so the mark cannot land after that end (the first node sees the stop).
    await CancellationScope.nonCancellable(() => control.markRun(runId, { status: 'running', evaluation: 'running' }));
    const { result } = await runPlan(input.plan, {
      args: input.args,
      onNodeDone: ({ key, outputs }) => {
        if (!activityNodes.has(key)) flowOutputs[key] = outputs;
      },
      runNode: async (call) => {
        const path = [...call.path, call.node].join('.');
        activityNodes.add(path);
        const options = {
          // The node keeps its own waits inside `timeoutMs`; the grace lets it report which wait failed.
          // The node keeps its own time; the allowance is for waiting out the database (never the node's failure).
          startToCloseTimeout: (call.timeoutMs ?? DEFAULT_NODE_TIMEOUT_MS) + NODE_TIMEOUT_GRACE_MS + INFRASTRUCTURE_ALLOWANCE_MS,
          retry: {
            maximumAttempts: 1 + (call.retries ?? 0),
            initialInterval: '500 milliseconds',
            nonRetryableErrorTypes: Object.values(nodeFailures),
          },
        };
        try {
          if (call.browser) {
            const host = proxyActivities<BrowserHostActivities>({
              ...options,
              taskQueue: hostQueue,
              scheduleToStartTimeout: HOST_PICKUP_TIMEOUT,
              heartbeatTimeout: NODE_HEARTBEAT_TIMEOUT,
            });
            return await host.runBrowserNode({
              runId,
              resourceId: input.resourceId,
              path,
              type: call.type,
              inputs: call.inputs,
              timeoutMs: call.timeoutMs,
            });
          }
          const pure = proxyActivities<ReturnType<typeof createActivities>>(options);
          return await pure.runPureNode({ runId, path, type: call.type, inputs: call.inputs });
        } catch (error) {
          if (isCancellation(error)) throw error;
          const cause = error instanceof ActivityFailure ? error.cause : error;
          const code = cause instanceof ApplicationFailure ? (cause.type ?? 'node_failed') : 'node_failed';
          throw new NodeFailed(path, code, cause instanceof Error ? cause.message : String(cause));
        }
      },
    });
    // A stop that arrives while the success is recorded must not turn it into a cancellation.
    await CancellationScope.nonCancellable(() =>
      control.finishRun(runId, { status: 'succeeded', evaluation: 'completed', result, flowOutputs }),
    );
  } catch (error) {
    await CancellationScope.nonCancellable(async () => {
      if (isCancellation(error)) {
        await control.finishRun(runId, {
          status: 'cancelled',
          evaluation: 'stopped',
          flowOutputs,
          error: { node: null, code: 'stopped', message: 'the run was stopped' },
        });
      } else if (error instanceof NodeFailed || error instanceof PipelineRunError) {
        await control.finishRun(runId, {
          status: 'failed',
          evaluation: 'failed',
          flowOutputs,
          error: { node: error.node, code: error.code, message: error.message },
        });
      } else {
        const message = error instanceof Error ? error.message : String(error);
        await control.finishRun(runId, {
          status: 'failed',
          evaluation: 'failed',
          flowOutputs,
          error: { node: null, code: 'run_failed', message },
        });
      }
    });
  } finally {
    // The end is recorded (or could not be): whoever waits for the result is answered now, not
    // after the browser's release below.
    ended = true;
    await CancellationScope.nonCancellable(async () => {
      const host = proxyActivities<BrowserHostActivities>({
        taskQueue: hostQueue,
        scheduleToStartTimeout: HOST_PICKUP_TIMEOUT,
        startToCloseTimeout: '10 seconds',
        retry: { maximumAttempts: 2 },
      });
      await host.releaseRunPages(runId).catch(() => undefined);
      if (input.ownsResource) {
        await getExternalWorkflowHandle(workflowIds.browser(input.resourceId))
          .signal(stopBrowserSignal, 'the pipeline run that started it ended')
          .catch(() => undefined);
      }
    });
  }
}
