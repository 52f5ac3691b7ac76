import { defineUpdate } from '@temporalio/workflow';
import { planErrorCodes, type StretchCall } from '../../server/pipelines/engine/interpreter.ts';
import { nodeErrorCodes } from '../../server/pipelines/engine/nodeErrors.ts';
import type { Plan } from '../../server/pipelines/engine/plan.ts';

/**
 * The contract of `pipelineRunWorkflow` (workflows/pipelineRun.ts): what a run is started with,
 * the activities it calls, and the node failure types no retry can mend. The api
 * (server/pipelines/runs.ts) and the node executors import this module, never the workflow's
 * internals. Runs are stopped by cancelling the workflow.
 */

export type PipelineRunInput = {
  plan: Plan;
  /** Arguments; secret parameters appear only as placeholders (server/pipelines/runSecrets.ts). */
  args: Record<string, unknown>;
  hostId: string;
  /** The browser the run uses; empty for a call (`call`). */
  resourceId: string;
  /** The run started this browser and stops it when done. */
  ownsResource: boolean;
  /**
   * Set when the run is a call (docs/browsers.md, Contexts for calls): it runs in a fresh context
   * of its project's browser on `hostId`, opened by its first browser stretch and closed at its end.
   */
  call?: CallTarget;
};

/** A call's context: the project whose browser it opens in, and the session whose launch settings and cookies it takes. */
export type CallTarget = { projectId: string; sessionId: string };

/** What a browser activity of a call is given besides the run: its target, and whether this is where its context opens. */
export type CallOfActivity = CallTarget & { open: boolean };

export type PipelineRunWorkflow = (runId: string, input: PipelineRunInput) => Promise<void>;
/** Its workflow type: the api starts it by this name (server/pipelines/runs.ts), a generation as its child. */
export const pipelineRunWorkflowType = 'pipelineRunWorkflow';

/**
 * A node's time, where it runs and for the workflow that bounds its activity: an attempt gets its
 * `timeoutMs` (this when the plan gives none) and this grace before it is failed (its own waits end
 * within its time, so it can say which wait failed); between attempts it waits as node activities
 * did under their retry policy (500 ms, doubling, at most 50 s).
 */
export const nodeTime = {
  defaultTimeoutMs: 30_000,
  overrunGraceMs: 5_000,
  retryWaitMs: (attempt: number) => Math.min(500 * 2 ** (attempt - 1), 50_000),
} as const;

/** Node failure types that fail the node at once, whatever its `retries`. */
export const nodeFailures = {
  /** An input is not what the node takes (NodeInputError). */
  invalidInput: 'invalid_input',
  unknownType: 'unknown_type',
  /** The run's page or browser is gone. */
  noPage: 'no_page',
} as const;

/**
 * Error codes of a run's end that are not a node's own failure (`NodeErrorCode`) nor the
 * interpreter's (`planErrorCodes`): what became of the node's attempt, of its host, or of the run.
 */
export const runFailures = {
  /**
   * The node's attempt failed in a way the node did not name (an error of no known kind), or it
   * was lost (silent past its heartbeat timeout) while its host's own process still heartbeated
   * into the host registry: the host lived, so the node is what failed.
   */
  nodeFailed: 'node_failed',
  /**
   * The browser host that held the run's browser was lost under the run, and the browser with it:
   * it stopped answering while a stretch ran on it (no heartbeat, or nobody picked the stretch up)
   * and its process stopped heartbeating into the host registry too, or it was restarted (the
   * restarted process does not hold the browser an earlier one launched). The run is not retried
   * elsewhere (docs/pipelines.md, "A host lost mid-stretch"); a client may start it again.
   */
  hostLost: 'host_lost',
  /**
   * The browser host that held the run's browser was shut down (SIGTERM or Ctrl-C, at the end of
   * its drain) while the run still used it: the host closed the browser under the run, saying so.
   * A client may start the run again; its browser goes to a host that is up.
   */
  hostShutdown: 'host_shutdown',
  /** The run was stopped (its workflow cancelled). */
  stopped: 'stopped',
  /** The workflow failed outside any node (a fault of the service). */
  runFailed: 'run_failed',
  /** The run's workflow was gone while its row still said it ran: the sweeper settled it (activities/pipelineRuns.ts). */
  runLost: 'run_lost',
} as const;

/**
 * Every code a run's `error.code` takes, and those a client should answer by starting the run
 * again (the service's fault, not the pipeline's): the table in docs/pipelines.md, "Error codes",
 * is tested against these (test/pipelines/run-error-codes.unit.test.ts), and a function execution answers
 * the retryable ones as 503 (server/functions/execute.ts).
 */
export const runErrorCodes: readonly string[] = [...new Set([...nodeErrorCodes, ...planErrorCodes, ...Object.values(runFailures)])];
export const retryableRunErrors: readonly string[] = [runFailures.hostLost, runFailures.hostShutdown];

/**
 * Answers once the run's end is recorded (its row holds the final status, outputs and error), or
 * the workflow gave up recording it: before the browser is released, which the caller need not
 * wait for. A function execution sends it with the start (update-with-start), so starting and
 * awaiting the result is one call. Never fails, and a cancelled run answers too.
 */
export const runEndedUpdate = defineUpdate<void>('runEnded');
/**
 * The failure type of a stretch's attempt given up (Temporal no longer counted on it, or a newer
 * attempt took over on the host): retried; the workflow sees it only when it was the last attempt.
 */
export const LOST_ATTEMPT_TYPE = 'attempt_lost';

/** A stretch (server/pipelines/engine/interpreter.ts) as the workflow hands it to the activity that runs it. */
export type StretchActivityCall = StretchCall & {
  runId: string;
  /** The run's first stretch marks it running (when still queued), saving the workflow a step before it. */
  markRunning?: boolean;
};

/** A stretch with a browser node: it runs on the host that holds the run's browser. */
export type BrowserStretchCall = StretchActivityCall & { resourceId: string; call?: CallOfActivity };

/**
 * How far a stretch has come, as its activity heartbeats it (activities/runStretch.ts): `done`
 * nodes have their outputs and log lines stored, `outputs` are their kept outputs as the workflow
 * gets them (secrets sealed), and `running` counts the attempts made of the node under way. A
 * retry of the activity resumes from it, and the workflow reads it from a timeout's last
 * heartbeat to name the node whose attempt was lost.
 */
export type StretchProgress = {
  done: number;
  outputs: Record<string, unknown>[];
  running?: { index: number; attempts: number };
};

/** What a stretch's failure carries besides its type (the node's error code) and message. */
export type StretchFailureDetails = {
  /** The path of the node that failed (`name`, `loop.2.name`). */
  node: string;
};

/** One node run by its own activity: how runs started before stretches existed run their nodes. */
export type NodeActivityCall = { runId: string; path: string; type: string; inputs: Record<string, unknown> };

/** A browser node run by its own activity, on the host that holds the run's browser. */
export type BrowserNodeCall = NodeActivityCall & { resourceId: string; timeoutMs?: number; call?: CallOfActivity };

export type RunStatus = {
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  evaluation: 'pending' | 'running' | 'completed' | 'failed' | 'stopped';
};

/** A run's end as the workflow reports it. */
export type RunEnd = RunStatus & {
  result?: Record<string, unknown>;
  error?: { node: string | null; code: string; message: string };
  /** Outputs of the nodes the workflow ran itself (flow nodes), by path. */
  flowOutputs?: Record<string, Record<string, unknown>>;
  /**
   * The error is a stretch's lost attempt: the paths of the nodes it may have been running, in
   * order. The error names the first whose outputs are not stored (the heartbeat the workflow
   * named it by may lag behind them).
   */
  lostIn?: string[];
};

/** What the host registry says of a run's browser host when a stretch timed out on it (`hostState`). */
export type HostState = 'answering' | 'shut_down' | 'silent';

/** The workflow's activities on the control queue (activities/pipelineRuns.ts); the bookkeeping also runs as local activities. */
export type PipelineRunActivities = {
  markRun(runId: string, patch: RunStatus): Promise<void>;
  finishRun(runId: string, patch: RunEnd): Promise<void>;
  /** A stretch of data nodes; answers the kept outputs of each node. */
  runPureStretch(call: StretchActivityCall): Promise<Record<string, unknown>[]>;
  runPureNode(call: NodeActivityCall): Promise<Record<string, unknown>>;
  /**
   * Whether the browser host's own process still heartbeats into the host registry
   * (`browser_hosts`, every 5 s): the evidence a timed-out stretch is checked against before the
   * run ends `host_lost`.
   */
  hostAnswering(hostId: string): Promise<boolean>;
  /**
   * The same evidence, telling a host that was shut down from one that was lost: its process still
   * heartbeats (`answering`), it was shut down (it drained and stopped heartbeating: `shut_down`,
   * the run ends `host_shutdown`), or it stopped heartbeating without a shutdown (`silent`:
   * `host_lost`). Runs started before it call `hostAnswering`.
   */
  hostState(hostId: string): Promise<HostState>;
};

/** The workflow's activities on the host that holds the run's browser (activities/browserHost/pipelineRun.ts). */
export type PipelineRunHostActivities = {
  runBrowserStretch(call: BrowserStretchCall): Promise<Record<string, unknown>[]>;
  runBrowserNode(call: BrowserNodeCall): Promise<Record<string, unknown>>;
  releaseRunPages(runId: string): Promise<void>;
};
