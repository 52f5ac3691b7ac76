import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  TimeoutFailure,
} from '@temporalio/workflow';
import {
  isFlowStep,
  PipelineRunError,
  type RunNode,
  type RunStretch,
  runPlan,
  type StretchCall,
  type StretchNode,
} from '../server/pipelines/engine/interpreter.ts';
import { browserHostQueue, stopBrowserSignal } from './contracts/browserSession.ts';
import {
  type HostState,
  LOST_ATTEMPT_TYPE,
  nodeTime,
  type PipelineRunActivities,
  type PipelineRunHostActivities,
  type PipelineRunWorkflow,
  runEndedUpdate,
  runErrorCodes,
  runFailures,
  type StretchFailureDetails,
  type StretchProgress,
} from './contracts/pipelineRun.ts';
import { workflowIds } from './contracts/workflowIds.ts';
import { nodeRetryPolicy, retryPolicies } from './retryPolicies.ts';

/**
 * Runs started before stretches existed replay their history as they ran it: one activity per
 * node, bookkeeping as activities on the control queue. Every run started since has this marker.
 */
const STRETCHES_PATCH = 'run-stretches';
/**
 * Runs started since have a timed-out browser stretch checked against the host registry before
 * they end `host_lost`, and their lost attempts retried (`LOST_ATTEMPTS`); older histories replay
 * as they ran.
 */
const HOST_EVIDENCE_PATCH = 'host-loss-evidence';
/** Runs started since ask the registry whether a host that timed out was shut down (`host_shutdown`) rather than lost. */
const HOST_SHUTDOWN_PATCH = 'host-shutdown-evidence';

/** What a node's activity may spend waiting for the database beyond the node's own time (activities/runNode.ts). */
const INFRASTRUCTURE_ALLOWANCE_MS = 2 * 60_000;
/** A host that does not pick up a node in this time is taken as gone (when the registry agrees): the run fails, not hangs. */
const HOST_PICKUP_TIMEOUT = '15 seconds';
/**
 * Browser nodes heartbeat every second; a silent attempt is given up this fast. Sized for a loaded
 * machine: under bursts of starts the dev server took over 10 s to record heartbeats (issue 25).
 */
const NODE_HEARTBEAT_TIMEOUT = '20 seconds';
/**
 * Attempts of a browser stretch Temporal may give up (a heartbeat that did not reach it in time)
 * besides those its nodes' `retries` allow. A retry resumes where the lost attempt was
 * (activities/runStretch.ts); on a host that really died nobody picks it up, and the run ends
 * `host_lost` after the pickup time.
 */
const LOST_ATTEMPTS = 2;
/** Times a stretch nobody picked up while its host still heartbeats is started again: the host was busy, not gone. */
const PICKUP_RETRIES = 2;

const BOOKKEEPING = {
  startToCloseTimeout: '30 seconds',
  retry: retryPolicies.runBookkeeping,
} as const;
const control = proxyActivities<PipelineRunActivities>(BOOKKEEPING);
/** The same bookkeeping run by the workflow's own worker: no round trip through the task queue. */
const localControl = proxyLocalActivities<PipelineRunActivities>(BOOKKEEPING);

/** A node failed: the run fails with its error and the node named. */
class NodeFailed extends Error {
  override name = 'NodeFailed';
  readonly node: string;
  readonly code: string;
  /** A stretch's lost attempt: the nodes it may have been running (see `finishRun`). */
  readonly lostIn: string[] | undefined;
  constructor(node: string, code: string, message: string, lostIn?: string[]) {
    super(message);
    this.node = node;
    this.code = code;
    this.lostIn = lostIn;
  }
}

/**
 * Executes one pipeline run (workflow id `run-<runId>`): the plan's nodes in order, flow nodes
 * inside the workflow, every run of other nodes between them as one stretch (one activity: on the
 * host that holds the browser when it has a browser node, else a local activity of this worker);
 * the activity that ran a node stores its outputs and log lines, flow nodes' outputs are stored
 * with the run's end. Cancelling the workflow stops the run.
 */
export const pipelineRunWorkflow: PipelineRunWorkflow = async (runId, input) => {
  const hostQueue = browserHostQueue(input.hostId);
  const stretches = patched(STRETCHES_PATCH);
  const evidence = stretches && patched(HOST_EVIDENCE_PATCH);
  const shutdownEvidence = evidence && patched(HOST_SHUTDOWN_PATCH);
  const bookkeeping = stretches ? localControl : control;
  // Activities store the outputs of the nodes they run; the nodes the workflow runs itself
  // (flow.forEach, flow.condition) have theirs stored with the run's end.
  const activityNodes = new Set<string>();
  const flowOutputs: Record<string, Record<string, unknown>> = {};
  let ended = false;
  // Not cancellable: a stopped run's caller waits for its end like any other. No commands, so
  // histories without the update replay unchanged.
  setHandler(runEndedUpdate, () => CancellationScope.nonCancellable(() => condition(() => ended)));

  /** Activities that run nodes on the host that holds the run's browser. */
  const onHost = (options: NodeActivityOptions) =>
    proxyActivities<PipelineRunHostActivities>({
      ...options,
      taskQueue: hostQueue,
      scheduleToStartTimeout: HOST_PICKUP_TIMEOUT,
      heartbeatTimeout: NODE_HEARTBEAT_TIMEOUT,
    });

  // The first stretch marks the run running, unless the run starts with a flow node (or none).
  let marked = false;
  // A call's context opens with its first browser activity; a later one that finds none on the host lost it.
  let contextOpened = false;
  const callOf = () => {
    if (!input.call) return undefined;
    const open = !contextOpened;
    contextOpened = true;
    return { ...input.call, open };
  };
  const runStretch: RunStretch = async (call) => {
    const markRunning = !marked;
    marked = true;
    for (const node of call.nodes) activityNodes.add(pathOf(call, node));
    // A Temporal retry resumes after the last stored node and counts the lost attempt as one of
    // that node's (activities/runStretch.ts); node failures never come back retryable.
    const attempts = 1 + call.nodes.reduce((sum, node) => sum + (node.retries ?? 0), 0);
    if (!call.browser) {
      const options = nodeActivityOptions(stretchTimeMs(call.nodes), attempts);
      try {
        return await proxyLocalActivities<PipelineRunActivities>(options).runPureStretch({ ...call, runId, markRunning });
      } catch (error) {
        if (isCancellation(error)) throw error;
        throw stretchFailure(error, call, input.hostId, 'silent');
      }
    }
    const options = nodeActivityOptions(stretchTimeMs(call.nodes), attempts + (evidence ? LOST_ATTEMPTS : 0));
    const callContext = callOf();
    for (let pickups = 0; ; pickups++) {
      try {
        return await onHost(options).runBrowserStretch({
          ...call,
          runId,
          markRunning,
          resourceId: input.resourceId,
          ...(callContext ? { call: callContext } : {}),
        });
      } catch (error) {
        if (isCancellation(error)) throw error;
        const timeout = hostTimeout(error);
        // One timed-out activity is no evidence the host is gone: its own process's heartbeat in the
        // registry is. Nobody picked the stretch up, so nothing of it ran: it is started again.
        let host: HostState = 'silent';
        if (evidence && timeout !== undefined) {
          if (shutdownEvidence) host = await bookkeeping.hostState(input.hostId);
          else host = (await bookkeeping.hostAnswering(input.hostId)) ? 'answering' : 'silent';
        }
        if (host === 'answering' && timeout === 'SCHEDULE_TO_START' && pickups < PICKUP_RETRIES) continue;
        throw stretchFailure(error, call, input.hostId, host);
      }
    }
  };

  const runNode: RunNode = async (call) => {
    const path = [...call.path, call.node].join('.');
    activityNodes.add(path);
    // The node keeps its own waits inside `timeoutMs`; the grace lets it report which wait failed,
    // the allowance is for waiting out the database (never the node's failure).
    const time = (call.timeoutMs ?? nodeTime.defaultTimeoutMs) + nodeTime.overrunGraceMs + INFRASTRUCTURE_ALLOWANCE_MS;
    const options = nodeActivityOptions(time, 1 + (call.retries ?? 0));
    try {
      if (call.browser) {
        const callContext = callOf();
        return await onHost(options).runBrowserNode({
          runId,
          resourceId: input.resourceId,
          ...(callContext ? { call: callContext } : {}),
          path,
          type: call.type,
          inputs: call.inputs,
          timeoutMs: call.timeoutMs,
        });
      }
      const pure = proxyActivities<PipelineRunActivities>(options);
      return await pure.runPureNode({ runId, path, type: call.type, inputs: call.inputs });
    } catch (error) {
      if (isCancellation(error)) throw error;
      const cause = error instanceof ActivityFailure ? error.cause : error;
      throw new NodeFailed(path, runErrorOf(cause), cause instanceof Error ? cause.message : String(cause));
    }
  };

  try {
    // Inside the try, so a stop that arrives this early still records the end and releases the
    // browser; not cancellable, so the mark cannot land after that end (the first node sees the stop).
    const first = input.plan.steps[0];
    if (!stretches || !first || isFlowStep(first)) {
      marked = true;
      await CancellationScope.nonCancellable(() => bookkeeping.markRun(runId, { status: 'running', evaluation: 'running' }));
    }
    const { result } = await runPlan(input.plan, {
      args: input.args,
      onNodeDone: ({ key, outputs }) => {
        if (!activityNodes.has(key)) flowOutputs[key] = outputs;
      },
      ...(stretches ? { runStretch } : { runNode }),
    });
    // A stop that arrives while the success is recorded must not turn it into a cancellation.
    await CancellationScope.nonCancellable(() =>
      bookkeeping.finishRun(runId, { status: 'succeeded', evaluation: 'completed', result, flowOutputs }),
    );
  } catch (error) {
    await CancellationScope.nonCancellable(async () => {
      if (isCancellation(error)) {
        await bookkeeping.finishRun(runId, {
          status: 'cancelled',
          evaluation: 'stopped',
          flowOutputs,
          error: { node: null, code: runFailures.stopped, message: 'the run was stopped' },
        });
      } else if (error instanceof NodeFailed || error instanceof PipelineRunError) {
        await bookkeeping.finishRun(runId, {
          status: 'failed',
          evaluation: 'failed',
          flowOutputs,
          error: { node: error.node, code: error.code, message: error.message },
          ...(error instanceof NodeFailed && error.lostIn ? { lostIn: error.lostIn } : {}),
        });
      } else {
        const message = error instanceof Error ? error.message : String(error);
        await bookkeeping.finishRun(runId, {
          status: 'failed',
          evaluation: 'failed',
          flowOutputs,
          error: { node: null, code: runFailures.runFailed, message },
        });
      }
    });
  } finally {
    // The end is recorded (or could not be): whoever waits for the result is answered now, not
    // after the browser's release below.
    ended = true;
    await CancellationScope.nonCancellable(async () => {
      const host = proxyActivities<PipelineRunHostActivities>({
        taskQueue: hostQueue,
        scheduleToStartTimeout: HOST_PICKUP_TIMEOUT,
        startToCloseTimeout: '10 seconds',
        retry: retryPolicies.hostTwice,
      });
      await host.releaseRunPages(runId).catch(() => undefined);
      if (input.ownsResource) {
        await getExternalWorkflowHandle(workflowIds.browser(input.resourceId))
          .signal(stopBrowserSignal, 'the pipeline run that started it ended')
          .catch(() => undefined);
      }
    });
  }
};

type NodeActivityOptions = ReturnType<typeof nodeActivityOptions>;

/** A node's (or a stretch's) activity: its time, and attempts that never repeat what no retry mends. */
function nodeActivityOptions(startToCloseTimeout: number, maximumAttempts: number) {
  return {
    startToCloseTimeout,
    retry: nodeRetryPolicy(maximumAttempts),
  };
}

const pathOf = (call: StretchCall, node: StretchNode) => [...call.path, node.node].join('.');

/** A stretch's activity time: every attempt of every node at its full time, the waits between them, and the database allowance. */
function stretchTimeMs(nodes: StretchNode[]) {
  let total = INFRASTRUCTURE_ALLOWANCE_MS;
  for (const node of nodes) {
    const retries = node.retries ?? 0;
    total += ((node.timeoutMs ?? nodeTime.defaultTimeoutMs) + nodeTime.overrunGraceMs) * (1 + retries);
    for (let attempt = 1; attempt <= retries; attempt++) total += nodeTime.retryWaitMs(attempt);
  }
  return total;
}

/**
 * The run's error code for a node activity's failure: its type when it is one of the run's codes
 * (docs/pipelines.md, "Error codes"). Attempts lost to the last while their host answered
 * (activities/runStretch.ts) are the node's failure: the host lived. Any other type is the
 * service's own trouble on the way (the database stayed away), not the node's.
 */
function runErrorOf(cause: unknown) {
  if (!(cause instanceof ApplicationFailure) || !cause.type || cause.type === LOST_ATTEMPT_TYPE) return runFailures.nodeFailed;
  return runErrorCodes.includes(cause.type) ? cause.type : runFailures.runFailed;
}

const TIMEOUT_MESSAGES: Record<string, string> = {
  HEARTBEAT: `the browser host stopped answering while the node ran (silent for ${NODE_HEARTBEAT_TIMEOUT})`,
  SCHEDULE_TO_START: `no browser host picked the node up within ${HOST_PICKUP_TIMEOUT}: is the run's host running?`,
  START_TO_CLOSE: 'the node ran past its time',
};
/** Timeouts that may mean the host is gone (a stall it came back from is retried before the workflow sees it). */
const HOST_LOST_TIMEOUTS = new Set(['HEARTBEAT', 'SCHEDULE_TO_START']);

/** The timeout a failed stretch activity ended with, when it is one that may mean its host is gone. */
function hostTimeout(error: unknown) {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (!(cause instanceof TimeoutFailure) || !cause.timeoutType || !HOST_LOST_TIMEOUTS.has(cause.timeoutType)) return undefined;
  return cause.timeoutType;
}

/**
 * A failed stretch as the node that failed: named by the failure (activities/runStretch.ts), or,
 * when the attempt was lost (a timeout), by the progress its last heartbeat reported.
 */
function stretchFailure(error: unknown, call: StretchCall, hostId: string, host: HostState) {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  const nodeAt = (index: number) => pathOf(call, call.nodes[index] ?? (call.nodes[0] as StretchNode));
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0] as StretchFailureDetails | undefined;
    return new NodeFailed(details?.node ?? nodeAt(0), runErrorOf(cause), cause.message);
  }
  if (cause instanceof TimeoutFailure) {
    // The last heartbeat Temporal kept may lag behind what the stretch stored: the run's end names
    // the first of the nodes from there on whose outputs are not stored.
    const progress = cause.lastHeartbeatDetails as StretchProgress | undefined;
    const message = (cause.timeoutType && TIMEOUT_MESSAGES[cause.timeoutType]) || cause.message;
    const from = progress?.done ?? 0;
    const lostIn = call.nodes.slice(from).map((node) => pathOf(call, node));
    const node = nodeAt(progress?.running?.index ?? from);
    if (call.browser && cause.timeoutType && HOST_LOST_TIMEOUTS.has(cause.timeoutType)) {
      if (host === 'silent') return new NodeFailed(node, runFailures.hostLost, `browser host ${hostId} lost: ${message}`, lostIn);
      if (host === 'shut_down')
        return new NodeFailed(node, runFailures.hostShutdown, `browser host ${hostId} was shut down: ${message}`, lostIn);
      return new NodeFailed(
        node,
        runFailures.nodeFailed,
        `${message}; browser host ${hostId} still heartbeats, so it was not lost`,
        lostIn,
      );
    }
    return new NodeFailed(node, runFailures.nodeFailed, message, lostIn);
  }
  return new NodeFailed(nodeAt(0), runFailures.nodeFailed, cause instanceof Error ? cause.message : String(cause));
}
