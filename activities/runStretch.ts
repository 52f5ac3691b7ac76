import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { PipelineRun } from '../db/entities/index.ts';
import { resolveJwtSecret } from '../server/auth/jwt.ts';
import type { Config } from '../server/config.ts';
import { appendLogsIn, logStreams, type NewLogEntry } from '../server/logs/logWriter.ts';
import type { Redactor } from '../server/logs/redact.ts';
import { keptOutputs, resolveStretchInputs, type StretchNode } from '../server/pipelines/engine/interpreter.ts';
import { NodeError } from '../server/pipelines/engine/nodeErrors.ts';
import {
  nodeFailures,
  nodeTime,
  type StretchActivityCall,
  type StretchFailureDetails,
  type StretchProgress,
} from '../workflows/contracts/pipelineRun.ts';
import { nodeFailure, nodeLines, openRun, runStatusLine, whileDatabaseDown, withheldMessage } from './runNode.ts';

/**
 * A stretch: nodes of a run that follow one another without a flow node between them, run by one
 * activity (server/pipelines/engine/interpreter.ts makes them). Durability is paid once per
 * stretch instead of once per node:
 *
 * - Outputs and log lines are stored in one transaction per batch: a batch is written when the
 *   stretch ends or `STORE_EVERY_MS` after its first line, whichever is first, so they still show
 *   live on the run's SSE stream.
 * - The activity heartbeats its progress (`StretchProgress`, workflows/contracts/pipelineRun.ts):
 *   how many nodes are stored, their kept outputs, the attempts of the node under way. A retry
 *   resumes after the last stored node; a node's lost attempt counts as one of its attempts.
 * - A node's `retries` and `timeoutMs` apply per node inside the stretch, as they did to a node's
 *   own activity: its retry re-runs the node, not the stretch, after the same waits.
 *
 * The progress carries outputs only as the workflow would get them (secrets sealed,
 * server/pipelines/runSecrets.ts), since heartbeat details reach workflow history in a timeout.
 */

/** A batch of outputs and log lines is stored at most this long after its first entry. */
const STORE_EVERY_MS = 100;
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
  tools: { log: (entry: NewLogEntry) => void; hidden: readonly string[] },
) => Promise<Record<string, unknown>>;

type Abort = 'stop' | 'lost';

/** The attempt was given up: Temporal no longer counts on it, or a newer attempt took over here. */
class AttemptLost extends Error {
  override name = 'AttemptLost';
}

export function createStretchRunner({ orm, config }: { orm: MikroORM; config: Config }) {
  const serviceSecret = resolveJwtSecret(config);
  const attempts = new StretchAttempts();

  /**
   * `hooks.beat` runs with every heartbeat; `hooks.check` before every attempt of a browser node,
   * throwing when it cannot run here (the run's browser is gone).
   */
  async function runStretch(call: StretchActivityCall, runNode: NodeRunner, hooks: { beat?: () => void; check?: () => void } = {}) {
    const activity = Context.current();
    const { info } = activity;
    const pathOf = (node: StretchNode) => [...call.path, node.node].join('.');
    let progress: StretchProgress = { done: 0, outputs: [] };
    const beat = () => {
      // Local activities (a stretch of pure nodes) have no heartbeat; they run in the workflow's worker.
      if (!info.isLocal) activity.heartbeat(progress);
      hooks.beat?.();
    };
    const beating = setInterval(beat, HEARTBEAT_EVERY_MS);

    // Stops: the run's (its workflow cancelled the activity) and a lost attempt's.
    let aborted: Abort | undefined;
    const listeners = new Set<(why: Abort) => void>();
    const abort = (why: Abort) => {
      if (aborted) return;
      aborted = why;
      for (const listener of listeners) listener(why);
    };
    const onCancel = () => abort(activity.cancellationDetails?.cancelRequested ? 'stop' : 'lost');
    activity.cancellationSignal.addEventListener('abort', onCancel, { once: true });
    const whenAborted = <T>(work: Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        const listener = (why: Abort) =>
          reject(why === 'stop' ? new CancelledFailure('the run was stopped') : new AttemptLost(LOST_MESSAGE));
        work.then(resolve, reject).finally(() => listeners.delete(listener));
        if (aborted) listener(aborted);
        else listeners.add(listener);
      });

    /** The browser call under way: a newer attempt waits for it to settle, so two attempts never drive one page. */
    let inflight: Promise<unknown> | undefined;
    let settle: () => void = () => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    // The same for every attempt of one stretch: its workflow execution and activity id.
    const key = `${info.workflowExecution?.workflowId}/${info.workflowExecution?.runId}/${info.activityId}`;
    let finished = false;
    let store: StretchStore | undefined;
    try {
      const earlier = await whenAborted(
        attempts.take(call.runId, key, { attempt: info.attempt, progress: () => progress, supersede: () => abort('lost'), settled }),
      );
      progress = furthest(earlier, info.heartbeatDetails, call.nodes.length) ?? progress;
      beat();
      const { run, secrets } = await openRun(orm, serviceSecret, call.runId, beat);
      // A retry in another process (the host was restarted) knows only the last heartbeat Temporal
      // kept, which may lag; the stored outputs do not (they and the log lines are one transaction).
      const unstored = call.nodes.findIndex((node) => !Object.hasOwn(run.nodeOutputs, pathOf(node)));
      const stored = unstored === -1 ? call.nodes.length : unstored;
      const resumeAt = info.attempt > 1 && !earlier ? Math.max(progress.done, stored) : progress.done;
      // The node under way when the attempt was lost had that attempt; unseen by the heartbeat, one.
      const lostAttempts =
        progress.running?.index === resumeAt
          ? progress.running.attempts
          : info.attempt > 1 && !earlier && resumeAt < call.nodes.length
            ? 1
            : 0;
      const carried = progress.outputs.slice(0, progress.done);
      const outputsOf = new Map(call.nodes.slice(0, progress.done).map((node, index) => [node.node, carried[index] ?? {}]));
      let carriedChars = JSON.stringify(carried).length;
      const hide = secrets.redactor;
      store = new StretchStore(orm, run, hide, beat, (done) => {
        progress = { ...progress, done, outputs: carried.slice(0, done) };
        beat();
      });
      const writer = store;
      // At once, not with the first batch: the run shows running as its first node starts.
      if (call.markRunning) writer.markRunning().catch(() => {});
      const nodeFailed = async (node: StretchNode, message: string, code: string): Promise<never> => {
        await writer.flush();
        throw ApplicationFailure.create({
          message,
          type: code,
          nonRetryable: true,
          details: [{ node: pathOf(node) } satisfies StretchFailureDetails],
        });
      };
      if (resumeAt === call.nodes.length && carried.length < resumeAt) {
        // Every node is stored, but their outputs went with the host before the workflow had them.
        return await nodeFailed(call.nodes.at(-1) as StretchNode, OUTPUTS_LOST_MESSAGE, nodeFailures.noPage);
      }

      let ran = resumeAt;
      for (let index = resumeAt; index < call.nodes.length; index++) {
        const node = call.nodes[index] as StretchNode;
        const path = pathOf(node);
        const allowed = 1 + (node.retries ?? 0);
        let tries = index === resumeAt ? lostAttempts : 0;
        if (tries > 0) writer.log(nodeLines.failed(path, node.type, LOST_MESSAGE));
        let outputs: Record<string, unknown> | undefined;
        let started = Date.now();
        while (!outputs) {
          if (tries >= allowed) return await nodeFailed(node, LOST_MESSAGE, 'node_failed');
          if (aborted) throw aborted === 'stop' ? new CancelledFailure('the run was stopped') : new AttemptLost(LOST_MESSAGE);
          writer.check();
          tries++;
          progress = { ...progress, running: { index, attempts: tries } };
          beat();
          writer.log(nodeLines.started(path, node.type));
          started = Date.now();
          try {
            outputs = await whenAborted(
              attemptWithin(node, () => {
                if (node.browser) hooks.check?.();
                const inputs = secrets.reveal(inputsOf(node, outputsOf));
                const work = runNode(node, path, inputs, { log: (entry) => writer.log(entry), hidden: secrets.hidden });
                inflight = work;
                return work;
              }),
            );
          } catch (error) {
            if (error instanceof AttemptLost) throw error;
            const failure = nodeFailure(error, hide);
            writer.log(nodeLines.failed(path, node.type, withheldMessage(run, failure.message)));
            if (error instanceof CancelledFailure) throw error;
            const retryable = failure.retryable && !(Object.values(nodeFailures) as string[]).includes(failure.code);
            if (!retryable || tries >= allowed) return await nodeFailed(node, failure.message, failure.code);
            await whenAborted(new Promise((resolve) => setTimeout(resolve, nodeTime.retryWaitMs(tries))));
          }
        }
        const kept = keptOutputs(node, secrets.seal(outputs));
        carried[index] = kept;
        outputsOf.set(node.node, kept);
        writer.completed(index, path, hide.object(outputs), nodeLines.done(path, node.type, Date.now() - started));
        ran = index + 1;
        carriedChars += JSON.stringify(kept).length;
        if (carriedChars > MAX_CARRIED_CHARS) break;
      }
      await writer.flush();
      finished = true;
      return carried.slice(0, ran);
    } catch (error) {
      // What the attempt did is stored before it ends, whatever ended it (a retry resumes after it).
      await store?.flush().catch(() => {});
      if (error instanceof CancelledFailure) {
        finished = true;
        throw error;
      }
      if (error instanceof AttemptLost) throw ApplicationFailure.retryable(error.message, 'attempt_lost');
      if (error instanceof ApplicationFailure && error.details?.length) {
        finished = true;
        throw error;
      }
      // The stretch's own trouble (the database stayed away, the run is gone): the node under way is named.
      const node = call.nodes[progress.running?.index ?? progress.done] ?? (call.nodes[0] as StretchNode);
      const failure = nodeFailure(error, store?.hide);
      throw ApplicationFailure.create({
        message: failure.message,
        type: failure.code,
        nonRetryable: !failure.retryable,
        details: [{ node: pathOf(node) } satisfies StretchFailureDetails],
      });
    } finally {
      clearInterval(beating);
      activity.cancellationSignal.removeEventListener('abort', onCancel);
      store?.close();
      // A lost attempt stays known here, so a retry in this process resumes from its progress.
      if (finished) attempts.leave(call.runId, key, info.attempt);
      void Promise.resolve(inflight)
        .catch(() => {})
        .then(settle);
    }
  }

  return {
    run: runStretch,
    /** Forgets what this process keeps of a run's stretches (the run ended). */
    release: (runId: string) => attempts.release(runId),
  };
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

/**
 * Stores a stretch's node outputs and log lines, in order, one transaction per batch (outputs
 * first, so a reader woken by a node's `done` line finds its outputs); `onStored(done)` tells how
 * many nodes are stored after each batch. A batch the database refuses for good (`whileDatabaseDown`
 * gave up) breaks the store: nothing later is written out of order, and `check` throws.
 */
class StretchStore {
  readonly hide: Redactor;
  readonly #orm: MikroORM;
  readonly #run: PipelineRun;
  readonly #whileWaiting: () => void;
  readonly #onStored: (done: number) => void;
  #outputs: Record<string, unknown> = {};
  #entries: NewLogEntry[] = [];
  #done = 0;
  #timer: NodeJS.Timeout | undefined;
  #markRunning = false;
  #writing: Promise<void> = Promise.resolve();
  #broken: unknown;
  #closed = false;

  constructor(orm: MikroORM, run: PipelineRun, hide: Redactor, whileWaiting: () => void, onStored: (done: number) => void) {
    this.#orm = orm;
    this.#run = run;
    this.hide = hide;
    this.#whileWaiting = whileWaiting;
    this.#onStored = onStored;
  }

  log(entry: NewLogEntry) {
    if (this.#closed) return;
    this.#entries.push(entry);
    this.#schedule();
  }

  /** Node `index` of the stretch ended with `outputs` (redacted). */
  completed(index: number, path: string, outputs: unknown, line: NewLogEntry) {
    if (this.#closed) return;
    this.#outputs[path] = outputs;
    this.#done = index + 1;
    this.log(line);
  }

  check() {
    if (this.#broken) throw this.#broken;
  }

  /** Marks the run running (if it is still queued: an ended run keeps its end) with the next batch, written now. */
  markRunning() {
    this.#markRunning = true;
    return this.flush();
  }

  /** Writes what is pending; resolves once it and every earlier batch are stored. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#entries.length === 0 && Object.keys(this.#outputs).length === 0 && !this.#markRunning) return this.#writing;
    const batch = { outputs: this.#outputs, entries: this.#entries, done: this.#done, markRunning: this.#markRunning };
    this.#outputs = {};
    this.#entries = [];
    this.#markRunning = false;
    this.#writing = this.#writing.then(async () => {
      if (this.#broken) throw this.#broken;
      try {
        await whileDatabaseDown(() => this.#write(batch), this.#whileWaiting);
      } catch (error) {
        this.#broken = error;
        throw error;
      }
      if (batch.done) this.#onStored(batch.done);
    });
    return this.#writing;
  }

  /** Nothing more is taken (a node call of a stopped attempt may still log). */
  close() {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #schedule() {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      // A failed batch is seen by `check` and by the stretch's final flush.
      this.flush().catch(() => {});
    }, STORE_EVERY_MS);
  }

  async #write(batch: { outputs: Record<string, unknown>; entries: NewLogEntry[]; markRunning: boolean }) {
    const run = this.#run;
    await this.#orm.em.fork().transactional(async (tx) => {
      let entries = batch.entries;
      if (batch.markRunning) {
        // The row's lock orders this with the run's end: after it, nothing is marked or logged.
        const marked = await tx.getConnection().execute<{ id: string }[]>(
          `update pipeline_runs set status = 'running', evaluation = 'running', started_at = coalesce(started_at, now()), updated = now()
             where id = ? and status = 'queued' and finished_at is null returning id`,
          [run.id],
          'all',
          tx.getTransactionContext(),
        );
        if (marked.length) entries = [runStatusLine('run running', { status: 'running', evaluation: 'running' }), ...entries];
      }
      if (Object.keys(batch.outputs).length) {
        await tx
          .getConnection()
          .execute(
            `update pipeline_runs set node_outputs = node_outputs || ?::jsonb, updated = now() where id = ?`,
            [JSON.stringify(batch.outputs), run.id],
            'run',
            tx.getTransactionContext(),
          );
      }
      await appendLogsIn(tx, run.project.id, logStreams.run(run.id), entries, this.hide);
    });
  }
}

type Attempt = {
  attempt: number;
  progress: () => StretchProgress;
  /** Tells the attempt to stop (at once: its node call is abandoned, as a stop does). */
  supersede: () => void;
  /** Resolves once the attempt has ended and its browser call has settled. */
  settled: Promise<void>;
};

/**
 * The attempts of the stretches under way in this process, by run and activity. Temporal gives
 * an attempt up when its heartbeats stop reaching it (a host that stalled, or lost its connection)
 * and sends a retry to the same host queue, where the earlier attempt may still be running: the
 * retry stops it, waits until its browser call has settled (never two attempts on one page), and
 * resumes from its progress, which is fresher than the last heartbeat Temporal kept.
 */
export class StretchAttempts {
  readonly #runs = new Map<string, Map<string, Attempt>>();

  /** Registers an attempt; answers the progress of an earlier attempt of the same stretch here, once it has ended. */
  async take(runId: string, key: string, attempt: Attempt): Promise<StretchProgress | undefined> {
    const stretches = this.#runs.get(runId) ?? new Map<string, Attempt>();
    this.#runs.set(runId, stretches);
    const before = stretches.get(key);
    stretches.set(key, attempt);
    if (!before || before.attempt >= attempt.attempt) return undefined;
    before.supersede();
    await before.settled;
    return before.progress();
  }

  /** Forgets an attempt that ended for good (unless a newer one took its place). */
  leave(runId: string, key: string, attempt: number) {
    const stretches = this.#runs.get(runId);
    if (stretches?.get(key)?.attempt !== attempt) return;
    stretches.delete(key);
    if (stretches.size === 0) this.#runs.delete(runId);
  }

  release(runId: string) {
    this.#runs.delete(runId);
  }
}
