import type { EntityManager } from '@mikro-orm/postgresql';
import { type Client as TemporalClient, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import {
  type BrowserSession,
  type FunctionVersion,
  type Pipeline,
  PipelineRun,
  type PipelineVersion,
  type Project,
  SessionResource,
} from '../../db/entities/index.ts';
import type { PipelineRunInput } from '../../workflows/contracts/pipelineRun.ts';
import { workflowIds } from '../../workflows/names.ts';
import { pipelineRunWorkflow } from '../../workflows/pipelineRun.ts';
import { requireFunds } from '../billing/ledger.ts';
import { startBrowser, stopBrowser } from '../browsers/browserSessions.ts';
import type { Config } from '../config.ts';
import { BadRequest, ServiceUnavailable } from '../errors.ts';
import { workflowIsGone } from '../infra/workflowErrors.ts';
import { prepareArgs } from './engine/interpreter.ts';
import type { Plan } from './engine/plan.ts';
import { planReadsCookies } from './engine/registry.ts';
import { encryptSecrets, secretPlaceholder } from './runSecrets.ts';

const holdsNul = (value: unknown): boolean =>
  typeof value === 'string'
    ? value.includes('\u0000')
    : value !== null && typeof value === 'object' && Object.entries(value).some(([key, item]) => key.includes('\u0000') || holdsNul(item));

type Deps = { config: Config; temporal: TemporalClient; serviceSecret: string };

/**
 * Starts a run of `version` on `session`: the session's running browser is used, or one is
 * started for the run (and the run's workflow stops it at the end). Arguments are checked
 * against the parameters here (400 with every problem); secret ones are sealed in the run row
 * and travel through the workflow only as placeholders. Answers the run once its workflow runs.
 */
export async function startRun(
  deps: Deps,
  em: EntityManager,
  target: {
    project: Project;
    session: BrowserSession;
    /** What runs: a pipeline version, or a function version (both carry a compiled plan). */
    pipeline?: Pipeline;
    version?: PipelineVersion;
    functionVersion?: FunctionVersion;
    args: Record<string, unknown>;
    /** Always start a new browser for this run (functions do), instead of using a running one. */
    freshBrowser?: boolean;
    /**
     * The caller's permission check, given what the run needs: it runs before the version and the
     * arguments are checked and before anything is started, and refuses by throwing.
     */
    authorize?: (run: { readsCookies: boolean }) => void;
  },
) {
  const { project, pipeline, session, functionVersion } = target;
  const version = target.version ?? functionVersion;
  if (!version) throw new Error('startRun needs a pipeline version or a function version');
  await em.populate(version as PipelineVersion, ['plan']);
  const plan = version.plan as unknown as Plan | null;
  // Fixed here, once, and stored on the run: the run view decides from it whom to show outputs.
  const readsCookies = planReadsCookies(plan);
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
  if (!plan) throw new BadRequest('version_has_errors', `Version ${version.id} has no execution plan`);
  const { values, problems } = prepareArgs(plan, target.args);
  // PostgreSQL refuses NUL in jsonb, and NUL opens the run's placeholders (./sealedValues.ts).
  for (const [name, value] of Object.entries(target.args)) {
    if (holdsNul(value)) problems.push({ parameter: name, message: `\`${name}\` holds a NUL character` });
  }
  if (problems.length) {
    throw new BadRequest('invalid_args', `Invalid arguments: ${problems.map((p) => `${p.parameter}: ${p.message}`).join('; ')}`, {
      issues: problems.map((p) => ({ path: ['args', p.parameter], message: p.message })),
    });
  }
  await requireFunds(em, deps.config.billing, project);

  const secretNames = new Set(plan.secrets);
  const secrets = Object.fromEntries(Object.entries(values).filter(([name]) => secretNames.has(name)));
  const workflowArgs = Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name, secretNames.has(name) ? secretPlaceholder(name) : value]),
  );
  const shownArgs = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, secretNames.has(name) ? '[secret]' : value]));

  const { resource, ownsResource } = await sessionBrowser(deps, em, project, session, { fresh: target.freshBrowser });

  const run = em.create(PipelineRun, {
    project,
    pipeline: pipeline ?? null,
    version: target.version ?? null,
    functionVersion: functionVersion ?? null,
    session,
    resource,
    ownsResource,
    readsCookies,
    args: shownArgs,
    sealedSecrets: Object.keys(secrets).length ? encryptSecrets(deps.serviceSecret, secrets) : null,
  });
  await em.flush();
  const input: PipelineRunInput = { plan, args: workflowArgs, hostId: resource.hostId as string, resourceId: resource.id, ownsResource };
  try {
    await deps.temporal.workflow.start(pipelineRunWorkflow, {
      taskQueue: deps.config.temporal.taskQueue,
      workflowId: workflowIds.run(run.id),
      args: [run.id, input],
    });
  } catch (error) {
    run.status = 'failed';
    run.evaluation = 'failed';
    run.error = { node: null, code: 'not_started', message: 'the run could not be started' };
    run.finishedAt = new Date();
    await em.flush();
    if (ownsResource) await stopBrowser(deps, em, resource, 'its pipeline run could not start').catch(() => {});
    throw new ServiceUnavailable('The run could not be started: the workflow engine is unavailable', error);
  }
  return run;
}

/**
 * The browser a run or an agent job uses: the session's running browser, or one started for it
 * (`ownsResource`: a run stops it when done; a job leaves it with the session). A browser another
 * run started is that run's: it stops it when it ends, so it is not shared.
 */
export async function sessionBrowser(
  deps: Deps,
  em: EntityManager,
  project: Project,
  session: BrowserSession,
  options: { fresh?: boolean } = {},
) {
  const running = options.fresh
    ? []
    : await em.find(SessionResource, { session: session.id, status: 'running' }, { orderBy: { created: 'desc' } });
  const owned = new Set(
    (await em.find(PipelineRun, { resource: { $in: running.map((r) => r.id) }, ownsResource: true }, { fields: ['resource'] })).map(
      (r) => r.resource?.id,
    ),
  );
  const existing = running.find((candidate) => !owned.has(candidate.id)) ?? null;
  if (existing) return { resource: existing, ownsResource: false };
  return { resource: await startBrowser(deps, em, project, session), ownsResource: true };
}

/** How long a stop waits for the run's workflow to record its end. */
const STOP_WAIT_MS = 10_000;

/** Cancels the run's workflow and waits (briefly) until it has closed, having recorded the end. */
export async function stopRun(deps: Pick<Deps, 'temporal'>, em: EntityManager, run: PipelineRun) {
  if (run.status !== 'queued' && run.status !== 'running') return run;
  const handle = runHandle(deps, run);
  try {
    await handle.cancel();
  } catch (error) {
    if (!workflowIsGone(error)) {
      throw new ServiceUnavailable('The run could not be stopped: the workflow engine is unavailable', error);
    }
  }
  await closed(handle, STOP_WAIT_MS);
  await em.refresh(run);
  return run;
}

/**
 * Waits until the run has ended (its workflow closed), at most `timeoutMs`; answers the run as
 * stored. A run still going at the deadline is stopped, and answered as it then is.
 */
export async function waitForRun(deps: Pick<Deps, 'temporal'>, em: EntityManager, run: PipelineRun, timeoutMs: number) {
  if (!(await closed(runHandle(deps, run), timeoutMs))) return { run: await stopRun(deps, em, run), timedOut: true };
  await em.refresh(run);
  return { run, timedOut: false };
}

function runHandle(deps: Pick<Deps, 'temporal'>, run: PipelineRun) {
  return deps.temporal.workflow.getHandle<typeof pipelineRunWorkflow>(workflowIds.run(run.id));
}

/**
 * Whether the workflow closed within `timeoutMs`. However it closed counts (a cancelled run's
 * workflow records the end, then closes), and so does one that is gone: there is nothing to wait for.
 * An engine that does not answer is a 503, not a closed run.
 */
async function closed(handle: ReturnType<typeof runHandle>, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      handle.result().then(
        () => true,
        (error: unknown) => {
          // A run that failed, was cancelled or terminated, or is gone has closed; anything else is
          // the engine not answering, and says nothing about the run.
          if (error instanceof WorkflowFailedError || error instanceof WorkflowNotFoundError) return true;
          throw new ServiceUnavailable('The workflow engine is unavailable: the run’s end could not be awaited', error);
        },
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
