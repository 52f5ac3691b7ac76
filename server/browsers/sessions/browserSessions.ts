/**
 * A session's browser, the api side: started, stopped, waited for (its `browserSession` workflow
 * owns its life, workflows/browserSession.ts).
 *
 * The words: the api *starts* a browser. `startBrowser` is the whole start; a caller that writes
 * its own row with the browser (a pipeline run, server/pipelines/runs.ts) takes its two steps
 * itself: `reserveBrowserStart` inside its transaction, then `completeBrowserStart` after the
 * commit. `startOrShareBrowser` (runs.ts) takes the session's running browser that no run started,
 * else starts one. Only a browser host *launches*: it launches Chromium for a cold start (the
 * `launchBrowser` activity, `BrowserPool.launch`) or *adopts* a warm browser the api claimed.
 * `BrowserStartDeps` is what every caller of a start passes.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Client as TemporalClient, WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import { BrowserHost, type BrowserSession, type Project, SessionResource } from '../../../db/entities/index.ts';
import { textArray } from '../../../db/textArray.ts';
import {
  awaitReadyUpdate,
  type BrowserSessionState,
  type BrowserSessionWorkflow,
  browserSessionWorkflowType,
  stopBrowserSignal,
  stopBrowserUpdate,
} from '../../../workflows/contracts/browserSession.ts';
import { searchAttributesOf } from '../../../workflows/contracts/searchAttributes.ts';
import { workflowIds } from '../../../workflows/contracts/workflowIds.ts';
import type { AppDeps } from '../../appDeps.ts';
import { requireFunds } from '../../billing/ledger.ts';
import { Conflict, DomainError, LimitReached, ServiceUnavailable } from '../../errors.ts';
import { repeatWhileEngineSlow, startOnce } from '../../infra/workflowErrors.ts';
import { within } from '../../infra/workflowHandles.ts';
import { browserDialUrl } from '../cdp/browserDial.ts';
import { type LaunchSettings, launchSettingsOf } from '../launch/launchSettings.ts';
import { launchSignature } from '../launch/launchSignature.ts';
import {
  activeResourceStatuses,
  inUseResourceStatuses,
  recordStopRequested,
  settleUnmanaged,
  summarizeLaunchFailure,
} from './resourceStatus.ts';
import { setSessionCookies } from './sessionCookies.ts';

/**
 * 503: the browser did not start. The message is short and safe to show (see
 * `summarizeLaunchFailure`); `cause` keeps the host's full account for the server's logs.
 */
export class BrowserStartFailed extends DomainError {
  override name = 'BrowserStartFailed';
  readonly status = 503;
  constructor(reason: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super('browser_start_failed', `The browser could not be started: ${reason}`, { retryable: true, ...options });
  }
}

/** What `reserveBrowserStart` took: the resource row, and the warm browser it claimed (null: a cold launch). */
export type BrowserStartReservation = {
  resource: SessionResource;
  session: BrowserSession;
  warm: { id: string; hostId: string; cdpEndpoint: string; pid: number | null } | null;
};

/** What starting a browser needs, whoever starts it (a session's start, a run, an agent job, a function). */
export type BrowserStartDeps = Pick<AppDeps, 'config' | 'temporal' | 'eagerStart' | 'relayTokens' | 'log'>;

/**
 * Starts a browser for `session` and resolves once it is usable (or failed): `reserveBrowserStart`
 * in a transaction of its own, then `completeBrowserStart`.
 */
export async function startBrowser(
  deps: BrowserStartDeps,
  em: EntityManager,
  project: Project,
  session: BrowserSession,
  /** A browser running elsewhere to take over its CDP URL (PUT /api/external-session), not to launch. */
  external?: { cdpUrl: string },
) {
  await requireFunds(em, deps.config.billing, project);
  const reservation = await em.transactional((tx) => reserveBrowserStart(deps, tx, project, session, external));
  return completeBrowserStart(deps, em, reservation);
}

/**
 * The first half of a start, inside the caller's transaction `tx`: the limits checked and a host
 * picked under one advisory lock for every start, then a warm browser claimed (row `running`) or
 * the row written `starting`. A caller that writes the row owning the browser in the same
 * transaction (a pipeline run) makes the claim and the ownership one commit, so no other start
 * sees the browser running without its owner. Funds are the caller's to check.
 */
export async function reserveBrowserStart(
  deps: BrowserStartDeps,
  tx: EntityManager,
  project: Project,
  session: BrowserSession,
  external?: { cdpUrl: string },
): Promise<BrowserStartReservation> {
  const limit = deps.config.browsers.perProject;
  // Parsed again here, not only when saved: flags saved before the allow-list narrowed are refused
  // (400 naming the flag) before anything is reserved, rather than failing the launch on the host.
  const signature = external ? null : warmSignatureOf(session, launchSettingsOf(session));
  // Host room is decided under one lock for every project, so two starts cannot both take the
  // last place of a host (the host refuses a cold launch past its capacity, but a warm browser
  // is already running: nothing on the host would stop its adoption). The same lock keeps two
  // starts of one project from both passing its limit.
  await tx.getConnection().execute("select pg_advisory_xact_lock(hashtext('browser_hosts'))", [], 'run', tx.getTransactionContext());
  await requireProfileFree(tx, session, external);
  const active = await tx.count(SessionResource, { project: project.id, status: { $in: [...inUseResourceStatuses] } });
  if (active >= limit) {
    throw new LimitReached('browser_limit_reached', `This project already runs its maximum of ${limit} browsers; stop one first`);
  }
  await requireAccountBrowserRoom(deps, tx, project);
  const roomy = await hostsWithRoom(tx);
  const claimed = signature ? await claimWarmBrowser(tx, roomy, signature) : null;
  if (claimed) {
    const now = new Date();
    const resource = tx.create(SessionResource, {
      session,
      project,
      status: 'running',
      hostId: claimed.hostId,
      cdpEndpoint: claimed.cdpEndpoint,
      pid: claimed.pid,
      warm: true,
      startedAt: now,
      lastActivity: now,
    });
    return { resource, session, warm: claimed };
  }
  const hostId = roomy[0];
  if (!hostId) {
    throw new LimitReached('browser_hosts_full', 'Every browser host runs its maximum of browsers (or is draining); try again later');
  }
  const resource = tx.create(SessionResource, { session, project, status: 'starting', hostId, externalCdpUrl: external?.cdpUrl ?? null });
  return { resource, session, warm: null };
}

/**
 * 409 `profile_in_use` when `session` persists its profile and a browser of it is starting, running
 * or stopping (saving its profile): one browser at a time holds a persisted profile. Under the
 * caller's advisory lock, so two starts cannot both pass. A browser running elsewhere has no profile of ours.
 */
async function requireProfileFree(tx: EntityManager, session: BrowserSession, external?: { cdpUrl: string }) {
  if (!session.persist || external) return;
  const held = await tx.count(SessionResource, { session: session.id, status: { $in: [...activeResourceStatuses] } });
  if (held > 0) {
    throw new Conflict(
      'profile_in_use',
      'This session persists its profile, and a browser of it is running (or still saving its profile as it stops); one browser at a time holds a persisted profile: stop it, or wait until it has stopped',
    );
  }
}

/**
 * 429 `account_browser_limit_reached` when the projects of `project`'s owner together run
 * BROWSERS_PER_ACCOUNT browsers. Counted as the project's limit counts (`starting`, `running`),
 * under the caller's advisory lock, which every start of every project takes: two starts in two
 * projects of one account cannot both take its last place.
 */
async function requireAccountBrowserRoom(deps: BrowserStartDeps, tx: EntityManager, project: Project) {
  const limit = deps.config.quotas.browsersPerAccount;
  const [row] = await tx.getConnection().execute<{ n: string }[]>(
    `select count(*) as n from session_resources r join projects p on p.id = r.project_id
     where p.owner_id = ? and r.status = any(?)`,
    [project.owner.id, textArray(inUseResourceStatuses)],
    'all',
    tx.getTransactionContext(),
  );
  if (Number(row?.n ?? 0) >= limit) {
    throw new LimitReached(
      'account_browser_limit_reached',
      `The account that owns this project already runs its maximum of ${limit} browsers across its projects; stop one first`,
    );
  }
}

/**
 * The second half of a start, once the reservation is committed: its `browserSession` workflow
 * started, and for a cold launch awaited until the browser is usable. A failure settles the row
 * and throws (503 `browser_start_failed`, or `service_unavailable`). `owner`: the run the browser
 * is started for, named in the workflow's search attributes.
 */
export async function completeBrowserStart(
  deps: BrowserStartDeps,
  em: EntityManager,
  { resource, session, warm }: BrowserStartReservation,
  owner?: { runId: string; pipelineId?: string | null },
) {
  const input = {
    hostId: resource.hostId as string,
    idleTimeoutSeconds: deps.config.browsers.idleTimeoutSeconds,
    maxLifetimeSeconds: deps.config.browsers.maxLifetimeSeconds,
  };
  const typedSearchAttributes = searchAttributesOf({
    projectId: resource.project.id,
    sessionId: session.id,
    hostId: input.hostId,
    runId: owner?.runId,
    pipelineId: owner?.pipelineId,
  });
  if (warm) {
    // The browser already runs: apply the session's cookies over CDP, hand the rest of its life to
    // the workflow (which has the host adopt it) and answer without waiting for that. A failure
    // leaves the claimed browser to its host, which destroys what no resource holds.
    const fail = async (stopReason: string, error: BrowserStartFailed | ServiceUnavailable) => {
      await settleUnmanaged(em, resource, { status: 'failed', reason: stopReason, severity: null });
      return error;
    };
    if (session.cookies.length) {
      try {
        // Through the host's relay, which lets the claimed browser through before its adoption.
        await setSessionCookies(await browserDialUrl(deps, em, resource), session.cookies);
      } catch (error) {
        const reason = `its cookies could not be set (${summarizeLaunchFailure(error instanceof Error ? error.message : String(error))})`;
        throw await fail(`could not start: ${reason}`, new BrowserStartFailed(reason, { cause: error }));
      }
    }
    try {
      // Repeated while the engine is slow to answer: a repeat finds the workflow the first try started.
      await repeatWhileEngineSlow(
        () =>
          deps.temporal.workflow.start<BrowserSessionWorkflow>(browserSessionWorkflowType, {
            taskQueue: deps.config.temporal.taskQueue,
            workflowId: workflowIds.browser(resource.id),
            ...startOnce,
            args: [resource.id, { ...input, adoptWarmId: warm.id }],
            typedSearchAttributes,
            // Its first task schedules the host's adoption (a run's first node adopts it if it gets there first).
            requestEagerStart: deps.eagerStart,
          }),
        {
          joined: async () => deps.temporal.workflow.getHandle(workflowIds.browser(resource.id)),
          log: deps.log,
          what: `the start of browser ${resource.id}`,
        },
      );
    } catch (error) {
      throw await fail(
        'the workflow could not start',
        new ServiceUnavailable('The browser could not be started: the workflow engine is unavailable', error),
      );
    }
    return resource;
  }

  let state: BrowserSessionState;
  try {
    // Start and wait in one call: the update returns once the browser is usable. Repeated while
    // the engine is slow to answer: a repeat joins the workflow and the update the first try made.
    state = await repeatWhileEngineSlow(
      () => {
        const startWorkflowOperation = new WithStartWorkflowOperation<BrowserSessionWorkflow>(browserSessionWorkflowType, {
          taskQueue: deps.config.temporal.taskQueue,
          workflowId: workflowIds.browser(resource.id),
          ...startOnce,
          args: [resource.id, input],
          typedSearchAttributes,
        });
        return deps.temporal.workflow.executeUpdateWithStart(awaitReadyUpdate, { startWorkflowOperation, updateId: 'ready' });
      },
      {
        joined: () =>
          deps.temporal.workflow.getHandle(workflowIds.browser(resource.id)).getUpdateHandle<BrowserSessionState>('ready').result(),
        log: deps.log,
        what: `the start of browser ${resource.id}`,
      },
    );
  } catch (error) {
    await settleUnmanaged(em, resource, { status: 'failed', reason: 'the workflow could not start', from: ['starting'], severity: null });
    throw new ServiceUnavailable('The browser could not be started: the workflow engine is unavailable', error);
  }
  await em.refresh(resource);
  if (state.phase === 'failed') {
    // The workflow's reason is the host's full text; the stored stopReason is already summarised.
    const full = state.reason ?? 'unknown reason';
    throw new BrowserStartFailed(summarizeLaunchFailure(full), { cause: new Error(full) });
  }
  return resource;
}

/**
 * The launch signature of the warm browser that would serve `session`, or null when none can: a
 * proxy is set at launch and warm browsers have none, so a session with one always starts cold.
 * The settings are read as the host reads them, so both compute the same signature.
 */
function warmSignatureOf(session: BrowserSession, settings: LaunchSettings) {
  // A persisted session's profile is unpacked before Chromium starts: it never takes a warm browser.
  if (session.proxy || session.storedProxy || session.persist) return null;
  return launchSignature(settings);
}

/**
 * Takes one warm browser of `signature` on one of `hostIds` (live hosts with room, emptiest
 * first); the delete makes the claim exclusive.
 */
async function claimWarmBrowser(em: EntityManager, hostIds: string[], signature: string) {
  if (!hostIds.length) return null;
  const rows = await em.getConnection().execute<{ id: string; host_id: string; cdp_endpoint: string; pid: number | null }[]>(
    `delete from warm_browsers where id = (
       select w.id from warm_browsers w where w.host_id::text = any(?) and w.launch_signature = ?
       order by array_position(?, w.host_id::text), w.created limit 1 for update skip locked
     ) returning id, host_id, cdp_endpoint, pid`,
    [textArray(hostIds), signature, textArray(hostIds)],
    'all',
    em.getTransactionContext(),
  );
  const row = rows[0];
  return row ? { id: row.id, hostId: row.host_id, cdpEndpoint: row.cdp_endpoint, pid: row.pid } : null;
}

/**
 * A host that has not heartbeaten (every 5 s) for this long is taken as gone: nothing is placed on
 * it. Its browsers' workflows find it gone on their own (workflows/browserSession.ts).
 */
export const HOST_HEARTBEAT_STALE_MS = 15_000;

/**
 * The hosts a start may go to, best first: live (fresh heartbeat), not draining, and with active
 * resources below their capacity; the least loaded (by share of capacity used, then the most free
 * places) first. 503 when no host runs at all; an empty list means every live host is full or
 * draining (429 `browser_hosts_full`). A warm browser that fits is claimed from these before any
 * cold start (`claimWarmBrowser`), so the order is: warm, then free capacity, least loaded first.
 */
async function hostsWithRoom(em: EntityManager) {
  const hosts = await em.find(BrowserHost, { heartbeatAt: { $gt: new Date(Date.now() - HOST_HEARTBEAT_STALE_MS) } });
  if (!hosts.length) throw new ServiceUnavailable('No browser host is running');
  const busy = await em
    .getConnection()
    .execute<{ host_id: string; n: string }[]>(
      `select host_id, count(*) as n from session_resources where status = any(?) and host_id is not null group by host_id`,
      [textArray(activeResourceStatuses)],
      'all',
      em.getTransactionContext(),
    );
  const load = new Map(busy.map((row) => [row.host_id, Number(row.n)]));
  return hosts
    .filter((host) => !host.drainingSince)
    .map((host) => ({ host, used: load.get(host.id) ?? 0 }))
    .filter(({ host, used }) => used < host.capacity)
    .sort(
      (a, b) =>
        a.used / a.host.capacity - b.used / b.host.capacity ||
        b.host.capacity - b.used - (a.host.capacity - a.used) ||
        a.host.id.localeCompare(b.host.id),
    )
    .map(({ host }) => host.id);
}

/** A row this young whose workflow does not exist yet may be mid-start (its api still starting it). */
const START_GRACE_MS = 30_000;

/**
 * Asks the resource's workflow to stop the browser and answers at once: the signal is durable once
 * Temporal has taken it, and the row says `stopping` before the caller hears back
 * (`recordStopRequested`). The workflow tears the browser down and records `stopped`; a start made
 * meanwhile never gets this browser (nothing hands out a `stopping` one). When the workflow is
 * already closed (terminated, or it ended without settling the row), the row is settled here, so
 * the answer never says running for a browser nothing manages; the host destroys a browser that no
 * resource holds any more.
 */
export async function stopBrowser(deps: { temporal: TemporalClient }, em: EntityManager, resource: SessionResource, reason: string) {
  if (resource.status === 'stopped' || resource.status === 'failed') return resource;
  const handle = deps.temporal.workflow.getHandle<BrowserSessionWorkflow>(workflowIds.browser(resource.id));
  try {
    await handle.signal(stopBrowserSignal, reason);
  } catch (error) {
    // Not found: closed (or never started, or long purged). Anything else is an outage.
    if (!(error instanceof WorkflowNotFoundError)) {
      throw new ServiceUnavailable('The browser could not be stopped: the workflow engine is unavailable', error);
    }
    await settleWithoutWorkflow(handle, em, resource, reason);
    await em.refresh(resource);
    return resource;
  }
  await recordStopRequested(em, resource, reason);
  await em.refresh(resource);
  return resource;
}

/** Settles the row of a resource whose workflow is closed or was never started. */
async function settleWithoutWorkflow(handle: BrowserWorkflowHandle, em: EntityManager, resource: SessionResource, reason: string) {
  const ended = await workflowEnd(handle);
  // Running after all: it was started between the signal and now (its api still starting it).
  if (ended === 'running' || (ended === 'not found' && Date.now() - resource.created.getTime() < START_GRACE_MS)) {
    throw new Conflict('browser_starting', 'The browser is still being started; stop it again in a moment');
  }
  // Whatever settled the row meanwhile (the sweeper, a late workflow step) keeps its outcome.
  await settleUnmanaged(em, resource, {
    status: 'stopped',
    reason: `${reason} (${ended === 'not found' ? 'no workflow managed it' : `its workflow had already ended: ${ended}`})`,
    severity: 'warn',
  });
}

type BrowserWorkflowHandle = ReturnType<TemporalClient['workflow']['getHandle']>;

/**
 * Waits until these resources' workflows have stopped their browsers (each was asked to already),
 * at most `timeoutMs`; a workflow that is gone counts as done. The `stop` update answers once the
 * row is settled.
 */
export async function waitUntilStopped(deps: { temporal: TemporalClient }, resources: SessionResource[], timeoutMs: number) {
  const waits = resources.map((resource) =>
    deps.temporal.workflow
      .getHandle<BrowserSessionWorkflow>(workflowIds.browser(resource.id))
      .executeUpdate(stopBrowserUpdate, { args: [resource.stopReason ?? 'stopped on request'] })
      .catch(() => undefined),
  );
  await within(Promise.all(waits), timeoutMs);
}

/** `running`, the lower-case status of a closed workflow, or `not found` (never started, or purged). */
async function workflowEnd(handle: BrowserWorkflowHandle) {
  try {
    const { status } = await handle.describe();
    return status.name === 'RUNNING' ? 'running' : status.name.toLowerCase();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'not found';
    throw new ServiceUnavailable('The browser could not be stopped: the workflow engine is unavailable', error);
  }
}
