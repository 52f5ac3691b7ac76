import type { EntityManager } from '@mikro-orm/postgresql';
import { type Client as TemporalClient, WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import type { SessionCookie } from '../../db/entities/BrowserSession.ts';
import { BrowserHost, type BrowserSession, type Project, SessionResource } from '../../db/entities/index.ts';
import { textArray } from '../../db/textArray.ts';
import { awaitReadyUpdate, type BrowserSessionState, stopBrowserUpdate } from '../../workflows/messages.ts';
import { workflowIds } from '../../workflows/names.ts';
import type { Config } from '../config.ts';
import { LimitReached, ServiceUnavailable } from '../errors.ts';
import { CdpClient } from './cdpClient.ts';
import { defaultBrowserImage } from './images.ts';
import { defaultScreen } from './sessionRules.ts';

/** Resources in these states hold (or are about to hold) a browser. */
export const activeResourceStatuses = ['starting', 'running', 'stopping'] as const;

/**
 * Starts a browser for `session` and resolves once it is usable (or failed). The resource row is
 * written first, under one advisory lock for every start, so concurrent starts respect both the
 * project's limit and the hosts' capacity; the `browserSession` workflow then owns it.
 */
export async function startBrowser(
  deps: { config: Config; temporal: TemporalClient },
  em: EntityManager,
  project: Project,
  session: BrowserSession,
) {
  const limit = deps.config.browsers.perProject;
  const { resource, warm } = await em.transactional(async (tx) => {
    // Host room is decided under one lock for every project, so two starts cannot both take the
    // last place of a host (the host refuses a cold launch past its capacity, but a warm browser
    // is already running: nothing on the host would stop its adoption). The same lock keeps two
    // starts of one project from both passing its limit.
    await tx.getConnection().execute("select pg_advisory_xact_lock(hashtext('browser_hosts'))", [], 'run', tx.getTransactionContext());
    const active = await tx.count(SessionResource, { project: project.id, status: { $in: [...activeResourceStatuses] } });
    if (active >= limit) {
      throw new LimitReached('browser_limit_reached', `This project already runs its maximum of ${limit} browsers; stop one first`);
    }
    const roomy = await hostsWithRoom(tx);
    const claimed = fitsWarmPool(session) ? await claimWarmBrowser(tx, roomy) : null;
    if (claimed) {
      const now = new Date();
      const row = tx.create(SessionResource, {
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
      return { resource: row, warm: claimed };
    }
    const hostId = roomy[0];
    if (!hostId) throw new LimitReached('browser_hosts_full', 'Every browser host runs its maximum of browsers; try again later');
    return { resource: tx.create(SessionResource, { session, project, status: 'starting', hostId }), warm: null };
  });

  const input = {
    hostId: resource.hostId as string,
    idleTimeoutSeconds: deps.config.browsers.idleTimeoutSeconds,
    maxLifetimeSeconds: deps.config.browsers.maxLifetimeSeconds,
  };
  if (warm) {
    // The browser already runs: apply the session's cookies over CDP, hand the rest of its life to
    // the workflow (which has the host adopt it) and answer without waiting for that.
    try {
      if (session.cookies.length) await setCookies(warm.cdpEndpoint, session.cookies);
      await deps.temporal.workflow.start('browserSessionWorkflow', {
        taskQueue: deps.config.temporal.taskQueue,
        workflowId: workflowIds.browser(resource.id),
        args: [resource.id, { ...input, adoptWarmId: warm.id }],
      });
    } catch (error) {
      await em.nativeUpdate(
        SessionResource,
        { id: resource.id },
        { status: 'failed', stopReason: 'the workflow could not start', stoppedAt: new Date(), cdpEndpoint: null },
      );
      throw new ServiceUnavailable('The browser could not be started: the workflow engine is unavailable', error);
    }
    return resource;
  }

  let state: BrowserSessionState;
  try {
    // Start and wait in one call: the update returns once the browser is usable.
    const startWorkflowOperation = new WithStartWorkflowOperation('browserSessionWorkflow', {
      taskQueue: deps.config.temporal.taskQueue,
      workflowId: workflowIds.browser(resource.id),
      workflowIdConflictPolicy: 'FAIL',
      args: [resource.id, input],
    });
    state = await deps.temporal.workflow.executeUpdateWithStart(awaitReadyUpdate, { startWorkflowOperation });
  } catch (error) {
    await em.nativeUpdate(
      SessionResource,
      { id: resource.id, status: 'starting' },
      { status: 'failed', stopReason: 'the workflow could not start', stoppedAt: new Date() },
    );
    throw new ServiceUnavailable('The browser could not be started: the workflow engine is unavailable', error);
  }
  await em.refresh(resource);
  if (state.phase === 'failed') throw new ServiceUnavailable(`The browser could not be started: ${state.reason ?? 'unknown reason'}`);
  return resource;
}

/** Warm browsers are launched with the defaults: a session fits if it asks for nothing else. */
function fitsWarmPool(session: BrowserSession) {
  return (
    !session.proxy &&
    !session.storedProxy &&
    session.args.trim() === '' &&
    session.image === defaultBrowserImage &&
    session.screen.width === defaultScreen.width &&
    session.screen.height === defaultScreen.height
  );
}

/** Takes one warm browser of one of `hostIds` (live hosts with room); the delete makes the claim exclusive. */
async function claimWarmBrowser(em: EntityManager, hostIds: string[]) {
  if (!hostIds.length) return null;
  const rows = await em.getConnection().execute<{ id: string; host_id: string; cdp_endpoint: string; pid: number | null }[]>(
    `delete from warm_browsers where id = (
       select w.id from warm_browsers w where w.host_id::text = any(?)
       order by array_position(?, w.host_id::text), w.created limit 1 for update skip locked
     ) returning id, host_id, cdp_endpoint, pid`,
    [textArray(hostIds), textArray(hostIds)],
    'all',
    em.getTransactionContext(),
  );
  const row = rows[0];
  return row ? { id: row.id, hostId: row.host_id, cdpEndpoint: row.cdp_endpoint, pid: row.pid } : null;
}

async function setCookies(cdpEndpoint: string, cookies: SessionCookie[]) {
  const cdp = await CdpClient.connect(cdpEndpoint);
  try {
    // CDP reads a missing `expires` as a session cookie; -1 (the stored form of one) would expire it.
    const asCdp = cookies.map(({ expires, ...cookie }) => ({
      path: '/',
      ...cookie,
      ...(expires !== undefined && expires >= 0 ? { expires } : {}),
    }));
    await cdp.send('Storage.setCookies', { cookies: asCdp });
  } finally {
    cdp.close();
  }
}

/** A host that has not heartbeaten for this long is taken as gone. */
export const HOST_HEARTBEAT_STALE_MS = 15_000;

/**
 * Live hosts whose active resources are below their capacity, the emptiest first; 503 when no
 * host runs. An empty list means every host is full.
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
    .map((host) => ({ host, used: load.get(host.id) ?? 0 }))
    .filter(({ host, used }) => used < host.capacity)
    .sort((a, b) => a.used / a.host.capacity - b.used / b.host.capacity)
    .map(({ host }) => host.id);
}

/** Asks the resource's workflow to stop the browser and waits until it has. */
export async function stopBrowser(deps: { temporal: TemporalClient }, em: EntityManager, resource: SessionResource, reason: string) {
  if (resource.status === 'stopped' || resource.status === 'failed') return resource;
  try {
    await deps.temporal.workflow.getHandle(workflowIds.browser(resource.id)).executeUpdate(stopBrowserUpdate, { args: [reason] });
  } catch (error) {
    // A workflow that is already closed has settled the resource; anything else is an outage.
    if (!(error instanceof WorkflowNotFoundError) && !isClosedWorkflowError(error)) {
      throw new ServiceUnavailable('The browser could not be stopped: the workflow engine is unavailable', error);
    }
  }
  await em.refresh(resource);
  return resource;
}

function isClosedWorkflowError(error: unknown) {
  return error instanceof Error && /already completed|workflow execution already|not found/i.test(error.message);
}
