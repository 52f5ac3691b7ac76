import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { PipelineRun } from '../db/entities/index.ts';
import type { NewLogEntry } from '../server/logs/logWriter.ts';
import type { Redactor } from '../server/logs/redact.ts';
import { keptOutputs, resolveStretchInputs, type StretchNode } from '../server/pipelines/engine/interpreter.ts';
import { NodeError } from '../server/pipelines/engine/nodeErrors.ts';
import {
  LOST_ATTEMPT_TYPE,
  nodeFailures,
  nodeTime,
  runFailures,
  type StretchActivityCall,
  type StretchFailureDetails,
  type StretchProgress,
} from '../workflows/contracts/pipelineRun.ts';
import { nodeFailure, nodeLines, openRun, withheldMessage } from './runNode.ts';
import { StretchAttempts } from './stretchAttempts.ts';
import { StretchStore } from './stretchStore.ts';

/**
 * A stretch: nodes of a run that follow one another without a flow node between them, run by one
 * activity (server/pipelines/engine/interpreter.ts makes them). Durability is paid once per
 * stretch instead of once per node:
 *
 * - Outputs and log lines are stored in one transaction per batch (`StretchStore`,
 *   ./stretchStore.ts): a batch is written when the stretch ends or `STORE_EVERY_MS` after its
 *   first line, whichever is first, so they still show live on the run's SSE stream.
 * - The activity heartbeats its progress (`StretchProgress`, workflows/contracts/pipelineRun.ts):
 *   how many nodes are stored, their kept outputs, the attempts of the node under way. A retry
 *   resumes after the last stored node; a node's lost attempt counts as one of its attempts.
 * - A node's `retries` and `timeoutMs` apply per node inside the stretch, as they did to a node's
 *   own activity: its retry re-runs the node, not the stretch, after the same waits.
 *
 * The progress carries outputs only as the workflow would get them (secrets sealed,
 * server/pipelines/runSecrets.ts), since heartbeat details reach workflow history in a timeout.
 */

/** The progress heartbeat; the workflow gives up on a host silent for 10 s. */
const HEARTBEAT_EVERY_MS = 1_000;
/**
 * Past this many characters of kept outputs (JSON), a stretch hands back after the node that passed
 * it and the workflow starts the next one: the progress travels with every heartbeat, and what a
 * stretch answers must stay well inside Temporal's 2 MB payload limit (a node may answer 1.6 MB).
 */
const MAX_CARRIED_CHARS = 256_000;
const LOST_MESSAGE = 'the attempt was lost: the browser host stopped answering in time';
const OUTPUTS_LOST_MESSAGE = 'what it reads was lost with the browser host that ran the nodes before it';

/** Runs one attempt of one node of a stretch, with the run's secrets revealed in `inputs`. */
export type NodeRunner = (
  node: StretchNode,
  path: string,
  inputs: Record<string, unknown>,
  tools: { log: (entry: NewLogEntry) => void; hidden: readonly string[]; run: RunOfNode },
) => Promise<Record<string, unknown>>;

/** What a node's runner knows of its run: where it belongs, and which pictures it takes. */
export type RunOfNode = { projectId: string; screenshots: PipelineRun['screenshots']; record: boolean };

/** The attempt was given up: Temporal no longer counts on it, or a newer attempt took over here. */
class AttemptLost extends Error {
  override name = 'AttemptLost';
}

/** An attempt's stops: the run's (its workflow cancelled the activity) and a lost attempt's. */
type Abort = 'stop' | 'lost';

const stopped = (why: Abort) => (why === 'stop' ? new CancelledFailure('the run was stopped') : new AttemptLost(LOST_MESSAGE));

type RunSecrets = Awaited<ReturnType<typeof openRun>>['secrets'];

/**
 * Runs the stretches given to this process's activities, and keeps which attempts of them are
 * under way here (`StretchAttempts`).
 */
export class StretchRunner {
  readonly #orm: MikroORM;
  readonly #serviceSecret: string;
  readonly #attempts = new StretchAttempts();

  constructor({ orm, serviceSecret }: { orm: MikroORM; serviceSecret: string }) {
    this.#orm = orm;
    this.#serviceSecret = serviceSecret;
  }

  /**
   * One attempt of a stretch's activity. `hooks.beat` runs with every heartbeat; `hooks.check`
   * before every attempt of a browser node, throwing when it cannot run here (the run's browser is
   * gone); `hooks.hostFailure` answers the failure the stretch ends with when its host is the cause
   * (restarted since it held the run's browser, or shutting down), checked before the stretch
   * resumes and when an attempt is let go. Answers the kept outputs of the nodes run, which may stop
   * short of the last (`MAX_CARRIED_CHARS`).
   */
  async run(
    call: StretchActivityCall,
    runNode: NodeRunner,
    hooks: { beat?: () => void; check?: () => void; sameProcess?: () => boolean; hostFailure?: () => ApplicationFailure | undefined } = {},
  ) {
    const attempt = new StretchAttempt(call, hooks.beat);
    let store: StretchStore | undefined;
    try {
      const handedOver = await attempt.join(this.#attempts);
      const { run, secrets } = await openRun(this.#orm, this.#serviceSecret, call.runId, attempt.beat);
      const { resumeAt, lostAttempts } = attempt.resume(run, handedOver, hooks.sameProcess?.() ?? false);
      const hide = secrets.redactor;
      store = new StretchStore(this.#orm, run, hide, attempt.beat, (done) => attempt.stored(done));
      const writer = store;
      // At once, not with the first batch: the run shows running as its first node starts.
      if (call.markRunning) writer.markRunning().catch(() => {});
      // Before the node under way is charged the attempt its host lost: a restarted host has lost
      // the browser, a closing one is closing it, whatever attempts the node has left.
      const hostFailure = hooks.hostFailure?.();
      if (hostFailure) {
        const node = call.nodes[Math.min(resumeAt, call.nodes.length - 1)] as StretchNode;
        const path = attempt.pathOf(node);
        writer.log(nodeLines.failed(path, node.type, withheldMessage(run, hostFailure.message)));
        return await failNode(writer, path, hostFailure.message, hostFailure.type ?? nodeFailures.noPage);
      }
      if (resumeAt === call.nodes.length && attempt.carried.length < resumeAt) {
        // Every node is stored, but their outputs went with the host before the workflow had them.
        return await failNode(writer, attempt.pathOf(call.nodes.at(-1) as StretchNode), OUTPUTS_LOST_MESSAGE, nodeFailures.noPage);
      }

      const scope = { attempt, store: writer, run, secrets, runNode, check: hooks.check };
      let ran = resumeAt;
      for (let index = resumeAt; index < call.nodes.length; index++) {
        const node = call.nodes[index] as StretchNode;
        const { outputs, started } = await runNodeAttempts(scope, index, index === resumeAt ? lostAttempts : 0);
        const path = attempt.pathOf(node);
        attempt.carry(index, node, keptOutputs(node, secrets.seal(outputs)));
        writer.completed(index, path, hide.object(outputs), nodeLines.done(path, node.type, Date.now() - started));
        ran = index + 1;
        if (attempt.carriedChars > MAX_CARRIED_CHARS) break;
      }
      await writer.flush();
      attempt.finished = true;
      return attempt.carried.slice(0, ran);
    } catch (error) {
      // What the attempt did is stored before it ends, whatever ended it (a retry resumes after it).
      await store?.flush().catch(() => {});
      throw attempt.failure(error, store?.hide, hooks.hostFailure);
    } finally {
      store?.close();
      attempt.end(this.#attempts);
    }
  }

  /** Forgets what this process keeps of a run's stretches (the run ended). */
  release(runId: string) {
    this.#attempts.release(runId);
  }
}

/** What the attempts of one node of a stretch work with. */
type NodeScope = {
  attempt: StretchAttempt;
  store: StretchStore;
  run: PipelineRun;
  secrets: RunSecrets;
  runNode: NodeRunner;
  check?: () => void;
};

/**
 * Runs node `index` of the stretch until an attempt answers, `tries` attempts already made (lost
 * ones): its `retries` and `timeoutMs` apply here, with the same waits as a node's own activity.
 * A failure no further attempt mends ends the stretch, naming the node.
 */
async function runNodeAttempts({ attempt, store, run, secrets, runNode, check }: NodeScope, index: number, tries: number) {
  const node = attempt.call.nodes[index] as StretchNode;
  const path = attempt.pathOf(node);
  const allowed = 1 + (node.retries ?? 0);
  if (tries > 0) store.log(nodeLines.failed(path, node.type, LOST_MESSAGE));
  let outputs: Record<string, unknown> | undefined;
  let started = Date.now();
  while (!outputs) {
    if (tries >= allowed) return await failNode(store, path, LOST_MESSAGE, runFailures.nodeFailed);
    attempt.throwIfStopped();
    store.check();
    tries++;
    attempt.running(index, tries);
    store.log(nodeLines.started(path, node.type));
    started = Date.now();
    try {
      outputs = await attempt.whenAborted(
        attemptWithin(node, () => {
          if (node.browser) check?.();
          const inputs = secrets.reveal(inputsOf(node, attempt.outputsOf));
          const tools = { log: (entry: NewLogEntry) => store.log(entry), hidden: secrets.hidden, run: runOfNode(run) };
          return attempt.track(runNode(node, path, inputs, tools));
        }),
      );
    } catch (error) {
      if (error instanceof AttemptLost) throw error;
      const failure = nodeFailure(error, secrets.redactor);
      store.log(nodeLines.failed(path, node.type, withheldMessage(run, failure.message)));
      if (error instanceof CancelledFailure) throw error;
      const retryable = failure.retryable && !(Object.values(nodeFailures) as string[]).includes(failure.code);
      if (!retryable || tries >= allowed) return await failNode(store, path, failure.message, failure.code);
      await attempt.whenAborted(new Promise((resolve) => setTimeout(resolve, nodeTime.retryWaitMs(tries))));
    }
  }
  return { outputs, started };
}

const runOfNode = (run: PipelineRun): RunOfNode => ({ projectId: run.project.id, screenshots: run.screenshots, record: run.record });

/** Ends the stretch with the failure of the node at `path`, once what is pending is stored. */
async function failNode(store: StretchStore, path: string, message: string, code: string): Promise<never> {
  await store.flush();
  throw ApplicationFailure.create({
    message,
    type: code,
    nonRetryable: true,
    details: [{ node: path } satisfies StretchFailureDetails],
  });
}

/**
 * One attempt of a stretch in this process: its progress and the outputs it carries, its
 * heartbeat, its stops, and the browser call under way.
 */
class StretchAttempt {
  readonly call: StretchActivityCall;
  progress: StretchProgress = { done: 0, outputs: [] };
  /** The kept outputs of the stretch's nodes, by index (secrets sealed, as the workflow gets them). */
  carried: Record<string, unknown>[] = [];
  /** The same by node, for the inputs of the nodes after them. */
  outputsOf = new Map<string, Record<string, unknown>>();
  /** The size of `carried` as JSON. */
  carriedChars = 0;
  /** Ended for good, not lost: the registry forgets it. */
  finished = false;
  readonly #activity: Context;
  /** The same for every attempt of one stretch: its workflow execution and activity id. */
  readonly #key: string;
  readonly #onBeat: (() => void) | undefined;
  readonly #beating: NodeJS.Timeout;
  #aborted: Abort | undefined;
  readonly #listeners = new Set<(why: Abort) => void>();
  readonly #onCancel: () => void;
  /** The browser call under way: a newer attempt waits for it to settle, so two attempts never drive one page. */
  #inflight: Promise<unknown> | undefined;
  #settle: () => void = () => {};
  readonly #settled: Promise<void>;

  constructor(call: StretchActivityCall, onBeat: (() => void) | undefined) {
    this.call = call;
    this.#activity = Context.current();
    const { info } = this.#activity;
    this.#onBeat = onBeat;
    this.#beating = setInterval(this.beat, HEARTBEAT_EVERY_MS);
    this.#onCancel = () => this.#abort(this.#activity.cancellationDetails?.cancelRequested ? 'stop' : 'lost');
    this.#activity.cancellationSignal.addEventListener('abort', this.#onCancel, { once: true });
    // Given up before it began (a slow start): a listener added now would never hear it.
    if (this.#activity.cancellationSignal.aborted) this.#onCancel();
    this.#settled = new Promise<void>((resolve) => {
      this.#settle = resolve;
    });
    this.#key = `${info.workflowExecution?.workflowId}/${info.workflowExecution?.runId}/${info.activityId}`;
  }

  readonly beat = () => {
    // Local activities (a stretch of data nodes) have no heartbeat; they run in the workflow's worker.
    if (!this.#activity.info.isLocal) this.#activity.heartbeat(this.progress);
    this.#onBeat?.();
  };

  pathOf(node: StretchNode) {
    return [...this.call.path, node.node].join('.');
  }

  /**
   * Registers this attempt in `attempts`. An earlier attempt of the stretch here is stopped and
   * waited for; the progress to resume from is the further of its own and the last heartbeat
   * Temporal kept. Answers whether an earlier attempt here handed its progress over.
   */
  async join(attempts: StretchAttempts) {
    const { info } = this.#activity;
    const earlier = await this.whenAborted(
      attempts.take(this.call.runId, this.#key, {
        attempt: info.attempt,
        progress: () => this.progress,
        supersede: () => this.#abort('lost'),
        settled: this.#settled,
      }),
    );
    this.progress = furthest(earlier, info.heartbeatDetails, this.call.nodes.length) ?? this.progress;
    this.beat();
    return earlier !== undefined;
  }

  /**
   * Where this attempt starts, and how many attempts the node there already had; the outputs it
   * carries from there. A retry in another process (the host was restarted) knows only the last
   * heartbeat Temporal kept, which may lag; the stored outputs do not (they and the log lines are
   * one transaction).
   */
  resume(run: PipelineRun, handedOver: boolean, sameProcess: boolean) {
    const { info } = this.#activity;
    const { nodes } = this.call;
    const progress = this.progress;
    const unstored = nodes.findIndex((node) => !Object.hasOwn(run.nodeOutputs, this.pathOf(node)));
    const stored = unstored === -1 ? nodes.length : unstored;
    const resumeAt = info.attempt > 1 && !handedOver ? Math.max(progress.done, stored) : progress.done;
    // The node under way when the attempt was lost had that attempt; unseen by the heartbeat, one,
    // unless the attempts before were all made in this process (`sameProcess`) and none reached
    // it: lost before they began (a heartbeat that did not reach Temporal in time).
    const unseen = info.attempt > 1 && !handedOver && !sameProcess && resumeAt < nodes.length ? 1 : 0;
    const lostAttempts = progress.running?.index === resumeAt ? progress.running.attempts : unseen;
    this.carried = progress.outputs.slice(0, progress.done);
    this.outputsOf = new Map(nodes.slice(0, progress.done).map((node, index) => [node.node, this.carried[index] ?? {}]));
    this.carriedChars = JSON.stringify(this.carried).length;
    return { resumeAt, lostAttempts };
  }

  /** Attempt `attempts` of node `index` starts. */
  running(index: number, attempts: number) {
    this.progress = { ...this.progress, running: { index, attempts } };
    this.beat();
  }

  /** Node `index` answered `kept`. */
  carry(index: number, node: StretchNode, kept: Record<string, unknown>) {
    this.carried[index] = kept;
    this.outputsOf.set(node.node, kept);
    this.carriedChars += JSON.stringify(kept).length;
  }

  /** The first `done` nodes are stored: a retry resumes after them. */
  stored(done: number) {
    this.progress = { ...this.progress, done, outputs: this.carried.slice(0, done) };
    this.beat();
  }

  /** The browser call under way, until the next. */
  track<T>(work: Promise<T>) {
    this.#inflight = work;
    return work;
  }

  throwIfStopped() {
    if (this.#aborted) throw stopped(this.#aborted);
  }

  /** `work`, or the stop that came first. */
  whenAborted<T>(work: Promise<T>) {
    return new Promise<T>((resolve, reject) => {
      const listener = (why: Abort) => reject(stopped(why));
      work.then(resolve, reject).finally(() => this.#listeners.delete(listener));
      if (this.#aborted) listener(this.#aborted);
      else this.#listeners.add(listener);
    });
  }

  /** The error the attempt ends with, as Temporal is to see it; one it ends with for good finishes it. */
  failure(error: unknown, hide: Redactor | undefined, hostFailure?: () => ApplicationFailure | undefined): Error {
    if (error instanceof CancelledFailure) {
      this.finished = true;
      return error;
    }
    // A lost attempt is retried, unless a host that is shut down (its worker stops) let it go: then
    // the run ends saying so, rather than waiting on a retry for a host that is not coming back.
    const cause = error instanceof AttemptLost ? hostFailure?.() : error;
    if (!cause) return ApplicationFailure.retryable((error as AttemptLost).message, LOST_ATTEMPT_TYPE);
    if (cause instanceof ApplicationFailure && cause.details?.length) {
      this.finished = true;
      return cause;
    }
    // The stretch's own trouble (the database stayed away, the run is gone) or its host's: the node
    // under way is named.
    const node = this.call.nodes[this.progress.running?.index ?? this.progress.done] ?? (this.call.nodes[0] as StretchNode);
    const failure = nodeFailure(cause, hide);
    return ApplicationFailure.create({
      message: failure.message,
      type: failure.code,
      nonRetryable: !failure.retryable,
      details: [{ node: this.pathOf(node) } satisfies StretchFailureDetails],
    });
  }

  /**
   * Stops the heartbeat and the listening; a finished attempt leaves `attempts` (a lost one stays
   * known, so a retry in this process resumes from its progress). Settles once its browser call has.
   */
  end(attempts: StretchAttempts) {
    clearInterval(this.#beating);
    this.#activity.cancellationSignal.removeEventListener('abort', this.#onCancel);
    if (this.finished) attempts.leave(this.call.runId, this.#key, this.#activity.info.attempt);
    void Promise.resolve(this.#inflight)
      .catch(() => {})
      .then(this.#settle);
  }

  #abort(why: Abort) {
    if (this.#aborted) return;
    this.#aborted = why;
    for (const listener of this.#listeners) listener(why);
  }
}

/** A node's inputs; the outputs it reads may have been lost with a host that crashed (a retry elsewhere knows only what was stored). */
function inputsOf(node: StretchNode, outputsOf: ReadonlyMap<string, Record<string, unknown>>) {
  const lost = Object.values(node.inputs).some((input) => input.kind === 'ref' && !outputsOf.has(input.node));
  if (lost) throw new NodeError('no_page', OUTPUTS_LOST_MESSAGE, { retryable: false });
  return resolveStretchInputs(node, outputsOf);
}

/** One attempt of a node, failed once it runs past its time (its own waits end within `timeoutMs`). */
function attemptWithin(node: StretchNode, work: () => Promise<Record<string, unknown>>) {
  const budget = (node.timeoutMs ?? nodeTime.defaultTimeoutMs) + nodeTime.overrunGraceMs;
  let overrun: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.resolve().then(work),
    new Promise<never>((_, reject) => {
      overrun = setTimeout(() => reject(new Error(`the node ran past its ${budget} ms`)), budget);
    }),
  ]).finally(() => clearTimeout(overrun));
}

/** The progress to resume from: the further of what an earlier attempt here reached and the last heartbeat Temporal kept. */
function furthest(here: StretchProgress | undefined, heartbeat: unknown, nodes: number): StretchProgress | undefined {
  const candidates = [here, heartbeat].filter(
    (progress): progress is StretchProgress =>
      typeof progress === 'object' &&
      progress !== null &&
      Number.isInteger((progress as StretchProgress).done) &&
      (progress as StretchProgress).done >= 0 &&
      (progress as StretchProgress).done <= nodes &&
      Array.isArray((progress as StretchProgress).outputs) &&
      (progress as StretchProgress).outputs.length >= (progress as StretchProgress).done,
  );
  const rank = (progress: StretchProgress) =>
    progress.done * 1000 + (progress.running?.index === progress.done ? progress.running.attempts : 0);
  return candidates.sort((a, b) => rank(b) - rank(a))[0];
}
