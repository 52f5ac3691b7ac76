import type { MikroORM } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { BrowserSession, FunctionVersion, PipelineFunction, PipelineRun, type Project } from '../../db/entities/index.ts';
import { runFailures } from '../../workflows/contracts/pipelineRun.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import type { Subject } from '../auth/subject.ts';
import type { BrowserStartDeps } from '../browsers/sessions/browserSessions.ts';
import { BadRequest, DomainError, NotFound, projectNotFound } from '../errors.ts';
import { waitForRunEnd } from '../infra/waiting.ts';
import {
  authorize,
  authorizeRunOnSession,
  can,
  canSeeRunOutputs,
  functionActions,
  pipelineActions,
  projectActions,
  projectRef,
  RUN_WITHHELD_MESSAGE,
  sessionActions,
} from '../permissions/permissions.ts';
import type { Plan } from '../pipelines/engine/plan.ts';
import { planReadsCookies } from '../pipelines/engine/registry.ts';
import { runToEnd, startRun } from '../pipelines/runs.ts';
import { defaultSessionName } from '../projects/defaultSession.ts';
import { findChild } from '../projects/projectRows.ts';
import { optionalParameters } from './functionVersions.ts';
import { checkFunctionArgs } from './schemas.ts';

/**
 * Executing a function by slug (spec 4.6): the REST route and the MCP endpoint both call
 * `executeFunction`, so permissions, argument checks, the run and its answer are decided here.
 *
 * Errors (all DomainErrors, so every edge renders them the same way):
 * - 404 `not_found`: no such function in the project, or the caller may not read it (or the project).
 * - 401/403: the caller may read the function but not execute what it runs.
 * - 400 `invalid_args`: `args` do not fit the declared parameters; one issue per problem.
 * - 400 `version_has_errors`: the current version has compiler or interface errors.
 * - 400 `no_session`: the project has no "Default session" (and the metadata names none).
 * - 400 `function_failed` (FunctionFailed): the run failed; message and issue name the node.
 * - 503 `function_timeout` (FunctionTimedOut): the run did not end in time; it is stopped.
 * - 503 `host_lost`, `host_shutdown` (FunctionHostGone): the browser host running it died, or was
 *   shut down, mid-run; retrying places a new browser on a host that is up.
 * - 409 `function_cancelled` (FunctionCancelled): the caller cancelled (only MCP clients can, so
 *   the status is never seen over REST); the run is stopped, so its browser is freed.
 * - 503 `service_unavailable`, 429: the workflow engine is down, a browser limit is reached.
 * - 429 `call_queue_full`, `call_queue_timeout`: the execution is a call in a context
 *   (docs/browsers.md, Contexts for calls) and the project runs CALLS_PER_PROJECT calls; it waited
 *   its turn, but the queue was full or its wait passed CALL_QUEUE_TIMEOUT_SECONDS.
 */

export type ExecuteDeps = BrowserStartDeps & { serviceSecret: string; orm?: MikroORM };

/**
 * The raw execution payload: the run as stored. A run whose plan reads cookies holds cookie
 * values in `nodeOutputs` and `result` (and possibly the error message): for a caller who may not
 * read that session's cookies they are left out, as in the pipeline run view, and
 * `outputsWithheld` says so. Declared `outputs` are always answered: publishing them is the
 * author's choice (and creating such a function needs cookies.read, see authorizeCookieReads).
 */
export type FunctionRunPayload = {
  status: { pipeline: PipelineRun['status']; 'pipeline-evaluation': PipelineRun['evaluation'] };
  result: Record<string, unknown> | null;
  nodeOutputs: Record<string, unknown>;
  outputsWithheld: boolean;
  error: { node: string | null; code: string; message: string } | null;
};

/** `result` is a `Record<string, unknown>` too: the run as stored, `{status, result, nodeOutputs, error}`. */
export type FunctionExecution = { identifier: string; outputs: Record<string, unknown>; result: FunctionRunPayload };

/**
 * A function's run that ended badly: the error carries the run id and its payload (`result` as the
 * caller may see it: its error message is already withheld when it must be), and its one issue
 * names the node that failed.
 */
abstract class FunctionRunEnded extends DomainError {
  readonly identifier: string;
  readonly result: FunctionRunPayload;
  constructor(
    code: 'function_failed' | 'host_lost' | 'host_shutdown',
    message: (reason: string, node: string | null | undefined) => string,
    identifier: string,
    result: FunctionRunPayload,
    fallback: { reason: string; code: string; retryable?: boolean },
  ) {
    const node = result.error?.node;
    const reason = result.error?.message ?? fallback.reason;
    super(code, message(reason, node), {
      retryable: fallback.retryable,
      issues: [{ path: node ? ['nodes', node] : [], message: reason, code: fallback.code }],
    });
    this.identifier = identifier;
    this.result = result;
  }
}

/** 400: the function's run failed (a node failed). */
export class FunctionFailed extends FunctionRunEnded {
  override name = 'FunctionFailed';
  readonly status = 400;
  constructor(identifier: string, result: FunctionRunPayload) {
    super(
      'function_failed',
      (reason, node) => (node ? `The function failed at node \`${node}\`: ${reason}` : `The function failed: ${reason}`),
      identifier,
      result,
      { reason: `the run ended ${result.status.pipeline}`, code: result.error?.code ?? result.status.pipeline },
    );
  }
}

/**
 * 503: the browser host that ran the function's browser was lost or shut down mid-run (the run
 * ended `host_lost` or `host_shutdown`): the service's fault, not the function's, so retrying
 * helps (the next execution's browser goes to a host that is up).
 */
export class FunctionHostGone extends FunctionRunEnded {
  override name = 'FunctionHostGone';
  readonly status = 503;
  constructor(identifier: string, result: FunctionRunPayload, code: typeof runFailures.hostLost | typeof runFailures.hostShutdown) {
    const what = code === runFailures.hostLost ? 'lost' : 'shut down';
    super(code, (reason) => `The function's browser host was ${what} mid-run (run ${identifier}): ${reason}`, identifier, result, {
      reason: `its browser host was ${what}`,
      code,
      retryable: true,
    });
  }
}

/**
 * The error of a function's run that ended without success: the service's fault (its host lost or
 * shut down) is a retryable 503 under the run's own code, anything else the function's failure.
 */
export function runEndedError(identifier: string, result: FunctionRunPayload): FunctionRunEnded {
  const code = result.error?.code;
  if (code === runFailures.hostLost || code === runFailures.hostShutdown) return new FunctionHostGone(identifier, result, code);
  return new FunctionFailed(identifier, result);
}

/** The caller cancelled (an MCP `notifications/cancelled`, a closed connection); the run has been stopped. */
export class FunctionCancelled extends DomainError {
  override name = 'FunctionCancelled';
  readonly status = 409;
  readonly identifier: string;
  constructor(identifier: string) {
    super('function_cancelled', `The execution was cancelled by the caller and stopped (run ${identifier})`);
    this.identifier = identifier;
  }
}

/** 503: the run did not finish within the time limit; it has been stopped. Retrying may help. */
export class FunctionTimedOut extends DomainError {
  override name = 'FunctionTimedOut';
  readonly status = 503;
  readonly identifier: string;
  constructor(identifier: string, timeoutMs: number) {
    super('function_timeout', `The function did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped (run ${identifier})`, {
      retryable: true,
    });
    this.identifier = identifier;
  }
}

/**
 * The function with `slug` in `project`, when `subject` may read it; else 404 (a private
 * project the subject cannot read, too). Its current version is loaded, with its plan.
 */
export async function findReadableFunction(em: EntityManager, subject: Subject, project: Project, slug: string) {
  const ref = projectRef(project);
  if (!can(subject, ref, projectActions.read)) throw projectNotFound(subject);
  const fn = await em.findOne(PipelineFunction, { project: project.id, slug: slug.toLowerCase() });
  if (!fn || !can(subject, ref, functionActions.read, fn.id)) throw new NotFound('Function');
  const version = fn.currentVersion ? await em.findOne(FunctionVersion, { id: fn.currentVersion.id }, { populate: ['plan'] }) : null;
  if (!version) throw new NotFound('Function version');
  return { fn, version };
}

/** The session a version runs on: the one its metadata names as `session`, else "Default session". */
async function sessionFor(em: EntityManager, project: Project, metadata: Record<string, unknown> | null | undefined) {
  const named = metadata?.session;
  if (typeof named === 'string' && named) {
    const session = await findChild(em, BrowserSession, named, { project: project.id });
    if (!session) throw new BadRequest('no_session', `The session ${named} the function's metadata names is not in this project`);
    return session;
  }
  const [session] = await em.find(
    BrowserSession,
    { project: project.id, name: defaultSessionName },
    { orderBy: { created: 'asc' }, limit: 1 },
  );
  if (!session) throw new BadRequest('no_session', `The project has no "${defaultSessionName}" to run the function on`);
  return session;
}

function payload(run: PipelineRun, showOutputs: boolean): FunctionRunPayload {
  const error = run.error ?? null;
  return {
    status: { pipeline: run.status, 'pipeline-evaluation': run.evaluation },
    result: showOutputs ? (run.result ?? null) : null,
    nodeOutputs: showOutputs ? (run.nodeOutputs ?? {}) : {},
    outputsWithheld: !showOutputs,
    // A node's error message may quote what it read (a script's exception, a cookie value).
    error: error && !showOutputs ? { ...error, message: RUN_WITHHELD_MESSAGE } : error,
  };
}

/**
 * The check a function's author passes when a version's source reads cookies (page.cookies,
 * page.evaluate): what starting a pipeline run on the session the function would run on needs
 * (authorizeRunOnSession: sessions.write and cookies.read on it). Without this, a key that may
 * only write functions could publish a cookie reader on any session and execute it. A session
 * that does not exist (yet) cannot be checked: then cookies.read on every session of the project.
 * Callers of the function need no session permission (spec 4.6), so the check is the author's.
 */
export async function authorizeCookieReads(
  em: EntityManager,
  subject: Subject,
  project: Project,
  version: { plan: Plan | null; metadata: Record<string, unknown> },
) {
  if (!planReadsCookies(version.plan)) return;
  const session = await sessionFor(em, project, version.metadata).catch((error) => {
    if (error instanceof BadRequest) return null;
    throw error;
  });
  if (session) authorizeRunOnSession(subject, projectRef(project), session.id, { readsCookies: true });
  else authorize(subject, projectRef(project), sessionActions.readCookies);
}

/** Each declared output from the run: `nodeOutputs[node][output]`, or `result[name]` without a source. */
function collectOutputs(version: FunctionVersion, run: PipelineRun) {
  const outputs: Record<string, unknown> = {};
  for (const output of version.outputs) {
    const value = output.source
      ? (run.nodeOutputs?.[output.source.nodeName] as Record<string, unknown> | undefined)?.[output.source.outputName]
      : run.result?.[output.name];
    outputs[output.name] = value ?? null;
  }
  return outputs;
}

export async function executeFunction(
  deps: ExecuteDeps,
  em: EntityManager,
  subject: Subject,
  project: Project,
  slug: string,
  args: unknown,
  options: {
    timeoutMs?: number;
    /** Aborting stops the run (its workflow is cancelled, its browser freed): FunctionCancelled. */
    signal?: AbortSignal;
    /** Called every `progressEveryMs` while the run goes, with the time since it started. */
    onProgress?: (elapsedMs: number) => void;
    progressEveryMs?: number;
    /**
     * Seconds to wait instead of running to the end (a waiting start, server/infra/waiting.ts):
     * a run still going then is answered as it is (`result.status` queued or running) and goes on;
     * `signal` then only ends the wait. The function's time limit does not apply.
     */
    waitSeconds?: number;
  } = {},
): Promise<FunctionExecution> {
  const { fn, version } = await findReadableFunction(em, subject, project, slug);
  const ref = projectRef(project);
  // Execute on what it runs: the pipeline version it was imported from, else the function itself.
  const pipelineVersionId = version.sourcePipelineVersion?.id;
  if (pipelineVersionId) authorize(subject, ref, pipelineActions.execute, pipelineVersionId);
  else authorize(subject, ref, functionActions.execute, fn.id);

  if (version.errors.length > 0) {
    throw new BadRequest(
      'version_has_errors',
      `The function's current version has ${version.errors.length} error(s) and cannot be executed`,
      {
        issues: version.errors.map((error) => ({
          path: error.node ? [error.node] : error.input ? [error.input] : [],
          message: error.message,
          code: error.code,
        })),
      },
    );
  }
  const { values, issues } = checkFunctionArgs(version.parameters, args, {
    optional: optionalParameters(version.plan as unknown as Plan | null),
  });
  if (issues.length) {
    throw new BadRequest(
      'invalid_args',
      `Invalid arguments: ${issues.map((issue) => `${issue.path.slice(1).join('.') || 'args'}: ${issue.message}`).join('; ')}`,
      {
        issues,
      },
    );
  }
  const session = await sessionFor(em, project, version.metadata);
  if (options.signal?.aborted) throw new FunctionCancelled('not started');
  if (options.waitSeconds) {
    const startedAt = Date.now();
    const run = await startRun(deps, em, { project, session, functionVersion: version, checkedArgs: values, freshBrowser: true });
    if (!(await waitForRunEnd(deps.temporal, run.id, options.waitSeconds, options.signal))) {
      // Answered before its end, the run still ends at the function's time limit, as without
      // `wait`: its workflow is cancelled then (a cancel of a closed one does nothing). The timer
      // lives in this process: an api restart in between leaves the nodes' own limits.
      const left = deps.config.functions.timeoutSeconds * 1000 - (Date.now() - startedAt);
      setTimeout(
        () => {
          deps.temporal.workflow
            .getHandle(workflowIds.run(run.id))
            .cancel()
            .catch(() => {});
        },
        Math.max(0, left),
      ).unref();
    }
    await em.refresh(run);
    return answerOf(subject, project, version, session.id, run);
  }
  const timeoutMs = options.timeoutMs ?? deps.config.functions.timeoutSeconds * 1000;
  const started = Date.now();
  const progress = options.onProgress
    ? setInterval(() => options.onProgress?.(Date.now() - started), options.progressEveryMs ?? 5_000)
    : undefined;
  let ended: PipelineRun;
  let timedOut: boolean;
  try {
    // A call may wait its turn in the project's call queue before its run exists: a cancel then
    // leaves the queue, and nothing was started.
    // Aborting `signal` cancels the workflow, which ends the run through its own cleanup (run
    // `cancelled`, browser stopped): runToEnd answers that end like any other.
    ({ run: ended, timedOut } = await runToEnd(
      deps,
      em,
      { project, session, functionVersion: version, checkedArgs: values, freshBrowser: true },
      { timeoutMs, signal: options.signal },
    ).catch((error: unknown) => {
      if (options.signal?.aborted && !(error instanceof DomainError)) throw new FunctionCancelled('not started');
      throw error;
    }));
  } finally {
    clearInterval(progress);
  }
  if (timedOut) throw new FunctionTimedOut(ended.id, timeoutMs);
  if (options.signal?.aborted && ended.status === 'cancelled') throw new FunctionCancelled(ended.id);
  return answerOf(subject, project, version, session.id, ended);
}

/**
 * The execution's answer: a succeeded run's outputs; a run still going (a waiting start's) as it
 * is, with no outputs yet; an ended one that did not succeed is thrown (FunctionFailed, FunctionHostGone).
 */
function answerOf(subject: Subject, project: Project, version: FunctionVersion, sessionId: string, run: PipelineRun): FunctionExecution {
  const showOutputs = canSeeRunOutputs(subject, projectRef(project), { sessionId, readsCookies: run.readsCookies });
  const result = payload(run, showOutputs);
  if (run.status === 'queued' || run.status === 'running') return { identifier: run.id, outputs: {}, result };
  if (run.status !== 'succeeded') {
    throw runEndedError(run.id, result);
  }
  return { identifier: run.id, outputs: collectOutputs(version, run), result };
}

/**
 * An execution of the function as it stands (GET …/functions/{functionId}/runs/{runId}): how a
 * waiting execute answered 202 is followed to its end. Who may execute the function may read its
 * executions (read on it, execute on what it runs); an execution of another function is a 404.
 * Answers the execute's shape, ended badly or not: `outputs` only once it has succeeded.
 */
export async function readFunctionRun(em: EntityManager, subject: Subject, project: Project, fn: PipelineFunction, runId: string) {
  const run = await findChild(em, PipelineRun, runId, { project: project.id, functionVersion: { function: fn.id } });
  if (!run) throw new NotFound('Run');
  const version = await em.findOneOrFail(FunctionVersion, { id: (run.functionVersion as FunctionVersion).id });
  const ref = projectRef(project);
  const pipelineVersionId = version.sourcePipelineVersion?.id;
  // Who may not execute what the run ran learns nothing of it, not even that it exists.
  const allowed = pipelineVersionId
    ? can(subject, ref, pipelineActions.execute, pipelineVersionId)
    : can(subject, ref, functionActions.execute, fn.id);
  if (!allowed) throw new NotFound('Run');
  const showOutputs = canSeeRunOutputs(subject, ref, { sessionId: run.session?.id ?? null, readsCookies: run.readsCookies });
  return {
    identifier: run.id,
    outputs: run.status === 'succeeded' ? collectOutputs(version, run) : {},
    result: payload(run, showOutputs),
  } satisfies FunctionExecution;
}
