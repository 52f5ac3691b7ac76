import type { EntityManager } from '@mikro-orm/postgresql';
import { WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import {
  type BrowserSession,
  type FunctionVersion,
  type Pipeline,
  PipelineRun,
  type PipelineVersion,
  type Project,
  SessionResource,
} from '../../db/entities/index.ts';
import {
  type PipelineRunInput,
  type PipelineRunWorkflow,
  pipelineRunWorkflowType,
  runEndedUpdate,
} from '../../workflows/contracts/pipelineRun.ts';
import { searchAttributesOf } from '../../workflows/contracts/searchAttributes.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import { requireFunds } from '../billing/ledger.ts';
import { callHostFor, callQueueOf, runsAsCall } from '../browsers/calls/calls.ts';
import {
  type BrowserStartDeps,
  completeBrowserStart,
  reserveBrowserStart,
  startBrowser,
  stopBrowser,
} from '../browsers/sessions/browserSessions.ts';
import { BadRequest, ServiceUnavailable } from '../errors.ts';
import { requireRefusedUpdate, workflowClosed } from '../infra/waiting.ts';
import { repeatWhileEngineSlow, startOnce } from '../infra/workflowErrors.ts';
import { cancelAndAwait, within } from '../infra/workflowHandles.ts';
import { prepareArgs } from './engine/interpreter.ts';
import type { Plan } from './engine/plan.ts';
import { planReadsCookies } from './engine/registry.ts';
import { sealRunArgs } from './runSecrets.ts';

const holdsNul = (value: unknown): boolean =>
  typeof value === 'string'
    ? value.includes('\u0000')
    : value !== null && typeof value === 'object' && Object.entries(value).some(([key, item]) => key.includes('\u0000') || holdsNul(item));

type Deps = BrowserStartDeps & { serviceSecret: string };

/** What runs, on which session, with which arguments (see startRun). */
type RunTarget = {
  project: Project;
  session: BrowserSession;
  pipeline?: Pipeline;
  /** Always start a new browser for this run (functions do), instead of using a running one. */
  freshBrowser?: boolean;
  /** Pictures of its pages (docs/pipelines.md, Screenshots); `failures` when not given. */
  screenshots?: PipelineRun['screenshots'];
  /** Record its browser's pages with rrweb (docs/browsers.md, Recordings). */
  record?: boolean;
} & (
  | {
      /** A pipeline version: its errors and `args` are checked here against its plan. */
      version: PipelineVersion;
      args: Record<string, unknown>;
      /**
       * The caller's permission check, given what the run needs: it runs before the version and
       * the arguments are checked and before anything is started, and refuses by throwing.
       */
      authorize?: (run: { readsCookies: boolean }) => void;
    }
  | {
      /**
       * A function version `executeFunction` has checked (its errors, the caller's rights), with
       * the arguments it checked against the function's parameters: they meet the plan here too.
       */
      functionVersion: FunctionVersion;
      checkedArgs: Record<string, unknown>;
    }
);

/**
 * Starts a run of `version` on `session`: the session's running browser is used, or one is
 * started for the run (and the run's workflow stops it at the end). Arguments are checked
 * against the parameters here (400 with every problem); secret ones are sealed in the run row
 * and travel through the workflow only as placeholders. Answers the run once its workflow runs.
 */
export async function startRun(deps: Deps, em: EntityManager, target: RunTarget) {
  const { run, input, releaseCall } = await createRun(deps, em, target);
  try {
    await repeatWhileEngineSlow(
      () =>
        deps.temporal.workflow.start<PipelineRunWorkflow>(pipelineRunWorkflowType, {
          taskQueue: deps.config.temporal.taskQueue,
          workflowId: workflowIds.run(run.id),
          ...startOnce,
          args: [run.id, input],
          typedSearchAttributes: runSearchAttributes(run, input),
          requestEagerStart: deps.eagerStart,
        }),
      { joined: async () => deps.temporal.workflow.getHandle(workflowIds.run(run.id)), log: deps.log, what: `the start of run ${run.id}` },
    );
  } catch (error) {
    releaseCall();
    throw await notStarted(deps, em, run, error);
  }
  releaseAtClose(deps, run, releaseCall);
  return run;
}

/** A call's place (server/browsers/calls/callQueue.ts) is given back when its run's workflow has closed, its context with it. */
function releaseAtClose(deps: Pick<Deps, 'temporal'>, run: PipelineRun, release: () => void) {
  if (release === noCall) return;
  workflowClosed(runHandle(deps, run))
    .catch(() => {})
    .finally(release);
}

const noCall = () => {};

/**
 * Runs `target` to its end, as executing a function does, and answers the run as stored then.
 * The `runEnded` update answers when the end is recorded, before the browser is released. At
 * `timeoutMs` the run is stopped and answered as it then is (`timedOut`). Aborting `signal`
 * cancels the workflow: the run ends `cancelled` through its own cleanup and is answered like
 * any other end.
 */
export async function runToEnd(deps: Deps, em: EntityManager, target: RunTarget, options: { timeoutMs: number; signal?: AbortSignal }) {
  const deadline = Date.now() + options.timeoutMs;
  const { run, input, releaseCall } = await createRun(deps, em, target, options.signal);
  let ended: Promise<void> | null;
  try {
    ({ ended } = await startAwaitingEnd(deps, em, run, input));
  } catch (error) {
    releaseCall();
    throw error;
  }
  releaseAtClose(deps, run, releaseCall);
  if (!ended) return awaitClose(deps, em, run, deadline);
  const cancel = () => {
    runHandle(deps, run)
      .cancel()
      .catch(() => {});
  };
  options.signal?.addEventListener('abort', cancel, { once: true });
  if (options.signal?.aborted) cancel();
  try {
    if (!(await within(ended, deadline - Date.now()))) return { run: await stopRun(deps, em, run), timedOut: true };
  } catch (error) {
    // Refused or cut short (the workflow closed first): its close says it all the same.
    requireRefusedUpdate(error);
    return awaitClose(deps, em, run, deadline);
  } finally {
    options.signal?.removeEventListener('abort', cancel);
  }
  await em.refresh(run);
  // The workflow could not record the end (the database stayed away): it fails; wait for that.
  if (run.status === 'queued' || run.status === 'running') return awaitClose(deps, em, run, deadline);
  return { run, timedOut: false };
}

/** The `runEnded` update's id: one per run, so a repeated update-with-start joins the first. */
const runEndedUpdateId = 'run-ended';

/**
 * Starts the run's workflow with the `runEnded` update, in the fewest round trips the process
 * allows, and answers once the workflow exists (a cancel reaches it from then on). `ended`
 * settles when the end is recorded; null when the workflow runs but refused the update (a worker
 * without its handler): then only its close tells. A workflow that did not start fails the run (503).
 *
 * - Eager (the control worker in this process, `npm start`): the start hands the first workflow
 *   task to that worker directly, and the update follows while the run's first activity runs.
 * - Otherwise update-with-start: start and update in one call (the engine refuses eager
 *   execution for it), answered once the worker took the update in its first task.
 */
async function startAwaitingEnd(deps: Deps, em: EntityManager, run: PipelineRun, input: PipelineRunInput) {
  const options = {
    taskQueue: deps.config.temporal.taskQueue,
    workflowId: workflowIds.run(run.id),
    args: [run.id, input] as [string, PipelineRunInput],
    typedSearchAttributes: runSearchAttributes(run, input),
    // Repeated while the engine is slow to answer: a repeat joins what the first try started.
    ...startOnce,
  };
  if (deps.eagerStart) {
    let handle: WorkflowHandle<PipelineRunWorkflow>;
    try {
      handle = await repeatWhileEngineSlow(
        () => deps.temporal.workflow.start<PipelineRunWorkflow>(pipelineRunWorkflowType, { ...options, requestEagerStart: true }),
        {
          joined: async () => deps.temporal.workflow.getHandle<PipelineRunWorkflow>(options.workflowId),
          log: deps.log,
          what: `the start of run ${run.id}`,
        },
      );
    } catch (error) {
      throw await notStarted(deps, em, run, error);
    }
    // The update has a fixed id: a repeat joins the first try's.
    const ended = repeatWhileEngineSlow(() => handle.executeUpdate(runEndedUpdate, { updateId: runEndedUpdateId }), {
      log: deps.log,
      what: `the wait for the end of run ${run.id}`,
    });
    return { ended };
  }
  // A fresh operation for each try (one is used once); the last tells whether the workflow started.
  const tries: WithStartWorkflowOperation<PipelineRunWorkflow>[] = [];
  try {
    const update = await repeatWhileEngineSlow(
      () => {
        const startWorkflowOperation = new WithStartWorkflowOperation<PipelineRunWorkflow>(pipelineRunWorkflowType, options);
        tries.push(startWorkflowOperation);
        return deps.temporal.workflow.startUpdateWithStart(runEndedUpdate, {
          startWorkflowOperation,
          updateId: runEndedUpdateId,
          waitForStage: 'ACCEPTED',
        });
      },
      {
        joined: async () => deps.temporal.workflow.getHandle(options.workflowId).getUpdateHandle<void>(runEndedUpdateId),
        log: deps.log,
        what: `the start of run ${run.id}`,
      },
    );
    return { ended: update.result() };
  } catch (error) {
    // Any try may be the one that started it (a later one gave up on a slow engine).
    const started = await Promise.any(tries.map((operation) => operation.workflowHandle())).then(
      () => true,
      () => false,
    );
    if (!started) throw await notStarted(deps, em, run, error);
    return { ended: null };
  }
}

/**
 * Checks what a run needs and writes its row, with the browser it runs on, in one transaction:
 * the session's running browser that no run started, or one reserved for it (`reserveBrowserStart`).
 * The browser a run starts is owned by the run from the commit on, so a concurrent start cannot
 * take it for its own; its start is then completed (a cold launch is awaited). Answers the run and its
 * workflow's input.
 */
async function createRun(deps: Deps, em: EntityManager, target: RunTarget, signal?: AbortSignal) {
  const { project } = target;
  const functionVersion = 'functionVersion' in target ? target.functionVersion : undefined;
  const version = functionVersion ?? (target as { version: PipelineVersion }).version;
  await em.populate(version as PipelineVersion, ['plan']);
  const stored = version.plan as unknown as Plan | null;
  // Fixed here, once, and stored on the run: the run view decides from it whom to show outputs.
  const readsCookies = planReadsCookies(stored);
  const { plan, values } = checkRunArgs(target, version, stored, readsCookies);
  await requireFunds(em, deps.config.billing, project);
  const { shownArgs, workflowArgs, sealedSecrets } = sealRunArgs(deps.serviceSecret, plan.secrets, values);
  const call = await asCall(deps, em, target, plan, signal);
  try {
    const { run, input } = await writeRun(deps, em, target, { readsCookies, shownArgs, workflowArgs, sealedSecrets, plan, call });
    return { run, input, releaseCall: call?.release ?? noCall };
  } catch (error) {
    call?.release();
    throw error;
  }
}

/**
 * Whether the run is a call (`runsAsCall`: no running session browser it uses, nothing that needs a
 * browser of its own), and then its place among the project's calls (it may wait its turn, or be
 * refused 429) and the host it goes to. Null when it needs a browser.
 */
async function asCall(deps: Deps, em: EntityManager, target: RunTarget, plan: Plan, signal?: AbortSignal) {
  const { project, session } = target;
  if (!runsAsCall(session, plan, target.record ?? false)) return null;
  // A run may use the session's running browser: then it is no call (checked again as the row is written).
  if (!target.freshBrowser && (await shareableBrowser(em, session))) return null;
  const release = await callQueueOf(deps.config).acquire(project.id, signal);
  try {
    return { release, hostId: await callHostFor(em, project.id) };
  } catch (error) {
    release();
    throw error;
  }
}

type RunRow = {
  readsCookies: boolean;
  shownArgs: Record<string, unknown>;
  workflowArgs: Record<string, unknown>;
  sealedSecrets: string | null;
  plan: Plan;
  call: { hostId: string } | null;
};

async function writeRun(deps: Deps, em: EntityManager, target: RunTarget, row: RunRow) {
  const { project, pipeline, session } = target;
  const functionVersion = 'functionVersion' in target ? target.functionVersion : undefined;
  const version = functionVersion ?? (target as { version: PipelineVersion }).version;
  const { readsCookies, shownArgs, workflowArgs, sealedSecrets, plan, call } = row;
  if (call) {
    // A call holds no browser of the project's count: it runs in a context of the project's browser on its host.
    const run = em.create(PipelineRun, {
      project,
      pipeline: pipeline ?? null,
      version: functionVersion ? null : (version as PipelineVersion),
      functionVersion: functionVersion ?? null,
      session,
      resource: null,
      ownsResource: false,
      readsCookies,
      args: shownArgs,
      sealedSecrets,
      screenshots: target.screenshots ?? 'failures',
      record: false,
    });
    await em.flush();
    const input: PipelineRunInput = {
      plan,
      args: workflowArgs,
      hostId: call.hostId,
      resourceId: '',
      ownsResource: false,
      call: { projectId: project.id, sessionId: session.id },
    };
    return { run, input };
  }

  const { run, reservation } = await em.transactional(async (tx) => {
    const shared = target.freshBrowser ? null : await shareableBrowser(tx, session);
    const reservation = shared ? null : await reserveBrowserStart(deps, tx, project, session);
    const run = tx.create(PipelineRun, {
      project,
      pipeline: pipeline ?? null,
      version: functionVersion ? null : (version as PipelineVersion),
      functionVersion: functionVersion ?? null,
      session,
      resource: shared ?? reservation?.resource,
      ownsResource: !shared,
      readsCookies,
      args: shownArgs,
      sealedSecrets,
      screenshots: target.screenshots ?? 'failures',
      record: target.record ?? false,
    });
    return { run, reservation };
  });
  if (reservation) {
    try {
      await completeBrowserStart(deps, em, reservation, { runId: run.id, pipelineId: pipeline?.id });
    } catch (error) {
      // The caller gets the browser's error, not a run: the row goes (no workflow ever had it).
      await em.nativeDelete(PipelineRun, { id: run.id });
      throw error;
    }
    // The run sweeper leaves a run alone while its browser is `starting`, then for its grace
    // from the last update: counted from now, not from before the launch.
    if (!reservation.warm) await em.nativeUpdate(PipelineRun, { id: run.id }, { updated: new Date() });
  }
  const resource = run.resource as SessionResource;
  const input: PipelineRunInput = {
    plan,
    args: workflowArgs,
    hostId: resource.hostId as string,
    resourceId: resource.id,
    ownsResource: run.ownsResource,
  };
  return { run, input };
}

/**
 * The plan a run follows and its arguments against it, every problem named. A pipeline version's
 * caller check (`authorize`) and compiler errors are checked here; a function's were checked by
 * `executeFunction`, whose arguments still meet the plan here: a function's parameter may be wider
 * than the plan's (`json` over `string`). Text holding NUL is refused either way.
 */
function checkRunArgs(target: RunTarget, version: PipelineVersion | FunctionVersion, plan: Plan | null, readsCookies: boolean) {
  if (!('checkedArgs' in target)) {
    target.authorize?.({ readsCookies });
    if (version.errors.length > 0) {
      throw new BadRequest(
        'version_has_errors',
        `Version ${version.id} has ${version.errors.length} compiler error(s) and cannot be started`,
        {
          issues: version.errors.map((error) => ({ path: error.node ? [error.node] : [], message: error.message, code: error.code })),
        },
      );
    }
  }
  if (!plan) throw new BadRequest('version_has_errors', `Version ${version.id} has no execution plan`);
  const given = 'checkedArgs' in target ? target.checkedArgs : target.args;
  const { values, problems } = prepareArgs(plan, given);
  // PostgreSQL refuses NUL in jsonb, and NUL opens the run's placeholders (./engine/sealedValues.ts).
  for (const [name, value] of Object.entries(given)) {
    if (holdsNul(value)) problems.push({ parameter: name, message: `\`${name}\` holds a NUL character` });
  }
  if (problems.length) {
    throw new BadRequest('invalid_args', `Invalid arguments: ${problems.map((p) => `${p.parameter}: ${p.message}`).join('; ')}`, {
      issues: problems.map((p) => ({ path: ['args', p.parameter], message: p.message })),
    });
  }
  return { plan, values };
}

/** A run's workflow's search attributes: a function's run has no pipeline. */
function runSearchAttributes(run: PipelineRun, input: PipelineRunInput) {
  return searchAttributesOf({
    projectId: run.project.id,
    sessionId: run.session?.id,
    pipelineId: run.pipeline?.id,
    runId: run.id,
    hostId: input.hostId,
  });
}

/** The run's workflow could not start: the run fails, its browser is stopped; the 503 to throw. */
async function notStarted(deps: Deps, em: EntityManager, run: PipelineRun, error: unknown) {
  // A try the engine answered too late may have started it after all: a run under way or ended
  // keeps what its workflow wrote.
  await em.refresh(run);
  if (run.status !== 'queued')
    return new ServiceUnavailable('The run was started, but the workflow engine did not confirm it in time', error);
  run.status = 'failed';
  run.evaluation = 'failed';
  run.error = { node: null, code: 'not_started', message: 'the run could not be started' };
  run.finishedAt = new Date();
  await em.flush();
  if (run.ownsResource && run.resource) {
    await stopBrowser(deps, em, run.resource as SessionResource, 'its pipeline run could not start').catch(() => {});
  }
  return new ServiceUnavailable('The run could not be started: the workflow engine is unavailable', error);
}

/**
 * The session's running browser that no run started, newest first, or null. A browser a run
 * started is that run's: it stops it when it ends, so it is not shared. The run owning a browser
 * is written in the transaction that claims it (createRun), so a browser is never seen running
 * here before its owner is.
 */
async function shareableBrowser(em: EntityManager, session: BrowserSession) {
  const running = await em.find(SessionResource, { session: session.id, status: 'running' }, { orderBy: { created: 'desc' } });
  if (!running.length) return null;
  const owned = new Set(
    (await em.find(PipelineRun, { resource: { $in: running.map((r) => r.id) }, ownsResource: true }, { fields: ['resource'] })).map(
      (r) => r.resource?.id,
    ),
  );
  return running.find((candidate) => !owned.has(candidate.id)) ?? null;
}

/**
 * The browser an agent job uses: the session's running browser that no run started, or one
 * started for it (`ownsResource`; the job leaves it with the session when it ends).
 */
export async function startOrShareBrowser(deps: BrowserStartDeps, em: EntityManager, project: Project, session: BrowserSession) {
  const existing = await shareableBrowser(em, session);
  if (existing) return { resource: existing, ownsResource: false };
  return { resource: await startBrowser(deps, em, project, session), ownsResource: true };
}

/** How long a stop waits for the run's workflow to record its end. */
const STOP_WAIT_MS = 10_000;

/** Cancels the run's workflow and waits (briefly) until it has closed, having recorded the end. */
export async function stopRun(deps: Pick<Deps, 'temporal'>, em: EntityManager, run: PipelineRun) {
  if (run.status !== 'queued' && run.status !== 'running') return run;
  await cancelAndAwait(runHandle(deps, run), STOP_WAIT_MS, {
    unavailable: 'The run could not be stopped: the workflow engine is unavailable',
    closing: workflowClosed,
  });
  await em.refresh(run);
  return run;
}

/** Waits (until `deadline`) for the run's workflow to close and answers the run as stored; stops it past the deadline. */
async function awaitClose(deps: Pick<Deps, 'temporal'>, em: EntityManager, run: PipelineRun, deadline: number) {
  if (!(await within(workflowClosed(runHandle(deps, run)), deadline - Date.now())))
    return { run: await stopRun(deps, em, run), timedOut: true };
  await em.refresh(run);
  return { run, timedOut: false };
}

function runHandle(deps: Pick<Deps, 'temporal'>, run: PipelineRun) {
  return deps.temporal.workflow.getHandle<PipelineRunWorkflow>(workflowIds.run(run.id));
}
