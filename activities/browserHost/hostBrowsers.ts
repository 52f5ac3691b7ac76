import { ApplicationFailure } from '@temporalio/activity';
import { BrowserSession, PipelineRun, SessionResource } from '../../db/entities/index.ts';
import { LaunchError } from '../../server/browsers/host/chromium/launchErrors.ts';
import { sessionFingerprint } from '../../server/browsers/host/fingerprint/browserFingerprint.ts';
import { RunPages } from '../../server/browsers/host/nodes/runPages.ts';
import type { BrowserPool, LaunchSpec } from '../../server/browsers/host/pool/browserPool.ts';
import type { CallSpec, ProjectBrowsers } from '../../server/browsers/host/pool/projectBrowsers.ts';
import { launchSettingsOf } from '../../server/browsers/launch/launchSettings.ts';
import { openProxyPassword } from '../../server/browsers/proxies/proxyPasswords.ts';
import { sessionProfiles } from '../../server/browsers/sessions/sessionProfiles.ts';
import { BadRequest } from '../../server/errors.ts';
import { launchFailures } from '../../workflows/contracts/browserSession.ts';
import { runFailures } from '../../workflows/contracts/pipelineRun.ts';
import type { ActivityDeps } from '../deps.ts';

/** What the activities of a browser host's queue are built over: those of every activity, and the host's pool. */
export type HostActivityDeps = ActivityDeps & { pool: BrowserPool; projectBrowsers: ProjectBrowsers };

/** What a host's activities share, built once per host (`createHostBrowsers`). */
export type HostBrowsers = ReturnType<typeof createHostBrowsers>;

/**
 * The host's browsers as its activities reach them, for all three contracts: a resource's launch
 * settings from the database, its browser's Playwright context, and the runs' tabs (`RunPages`),
 * which also mark a browser as used, whether a run or an analysis uses it.
 */
export function createHostBrowsers({ pool, projectBrowsers, orm, config, log, serviceSecret }: HostActivityDeps) {
  const runs = new RunPages({ pool, orm, log, idleTimeoutSeconds: config.browsers.idleTimeoutSeconds });
  const profiles = sessionProfiles(orm, serviceSecret);

  /**
   * The resource and its launch settings (cookies, proxy with its password) from the database.
   * They are read here, so they never enter workflow history; the proxy password is opened here,
   * and only here.
   */
  async function loadLaunch(resourceId: string) {
    const em = orm.em.fork();
    const resource = await em.findOne(
      SessionResource,
      { id: resourceId },
      { populate: ['session', 'session.cookies', 'session.proxy', 'session.storedProxy', 'session.storedProxy.password'] },
    );
    if (!resource) throw ApplicationFailure.nonRetryable(`resource ${resourceId} does not exist`, launchFailures.resourceMissing);
    const { session } = resource;
    const stored = session.storedProxy;
    const proxy = stored
      ? { protocol: stored.protocol, hostname: stored.hostname, port: stored.port, username: stored.username, password: stored.password }
      : session.proxy;
    const password = openProxyPassword(serviceSecret, proxy?.password);
    if (password === undefined) {
      // Sealed under another service secret: launching with the ciphertext would send it to the proxy.
      throw ApplicationFailure.nonRetryable(
        'the proxy password cannot be read (JWT_SECRET changed since it was saved): set it again',
        launchFailures.proxyPasswordUnreadable,
      );
    }
    const spec: LaunchSpec = {
      resourceId,
      external: resource.externalCdpUrl ?? null,
      projectId: resource.project.id,
      ...launchSettingsOfStored(session),
      cookies: session.cookies,
      // A persisted session's profile of its last stop (sealed in the blob store): read here, on the host that launches it.
      persist: session.persist && !resource.externalCdpUrl ? { archive: (await profiles.load(session.id)) ?? null } : null,
      fingerprintData: session.fingerprint === 'desktop' ? await sessionFingerprint(em, session) : null,
      // A run started with `record` that starts its own browser records it from the start.
      record: session.record || (await em.count(PipelineRun, { resource: resourceId, record: true })) > 0,
      proxy: proxy
        ? {
            server: `${proxy.protocol}://${proxy.hostname}:${proxy.port}`,
            ...(proxy.username ? { username: proxy.username } : {}),
            ...(password ? { password } : {}),
          }
        : null,
    };
    return { em, resource, spec };
  }

  /**
   * The Playwright context of a resource's browser on this host. A warm browser the api claimed is
   * adopted by its `browserSession` workflow, which a run or job started right after the claim can
   * overtake: then the browser is adopted here, from what the resource row says (the workflow's
   * adoption finds it done). Undefined when the browser is not (or no longer) on this host.
   */
  async function contextOf(resourceId: string) {
    const running = pool.contextOf(resourceId);
    if (running) return running;
    const resource = await orm.em.fork().findOne(SessionResource, { id: resourceId }, { fields: ['warm', 'status', 'cdpEndpoint'] });
    // The workflow may have adopted it while the row was read.
    const adopted = pool.contextOf(resourceId);
    if (adopted) return adopted;
    const warmId =
      resource?.warm && resource.status === 'running' && resource.cdpEndpoint ? pool.warmIdAt(resource.cdpEndpoint) : undefined;
    if (!warmId) return undefined;
    // Gone meanwhile (the host lost it): then it is not here, which the caller reports.
    await pool.adoptWarm(warmId, (await loadLaunch(resourceId)).spec).catch(() => undefined);
    return pool.contextOf(resourceId);
  }

  /**
   * Why a resource's browser fails (or is missing) on this host when its host is the cause, as the
   * run's error: the host is shutting down (`host_shutdown`), or was restarted since it held the
   * browser (`host_lost`). Never retried: the browser is gone. Undefined when the host is not the cause.
   */
  function hostFailure(resourceId: string) {
    const gone = pool.whyGone(resourceId);
    if (!gone) return undefined;
    if ('shutDown' in gone)
      return ApplicationFailure.nonRetryable(`${gone.shutDown}: it closed the browser under the node`, runFailures.hostShutdown);
    return ApplicationFailure.nonRetryable(
      `browser host ${config.browsers.hostId} lost: it was restarted, and the browser died with it`,
      runFailures.hostLost,
    );
  }

  /**
   * The same for a browser this process never held, read from its resource: one an earlier process
   * of this host stopped as it was shut down (`stopCause`), while the run was between nodes on
   * this host. Undefined otherwise, or when the database does not answer (the caller says `no_page`).
   */
  async function shutDownFailure(resourceId: string) {
    const resource = await orm.em
      .fork()
      .findOne(SessionResource, { id: resourceId }, { fields: ['stopCause', 'stopReason', 'hostId'] })
      .catch(() => null);
    if (resource?.stopCause !== 'host_shutdown') return undefined;
    const reason = resource.stopReason ?? `browser host ${resource.hostId ?? config.browsers.hostId} was shut down`;
    return ApplicationFailure.nonRetryable(`${reason}: it stopped the run’s browser before the node`, runFailures.hostShutdown);
  }

  /**
   * What a call's context opens with (docs/browsers.md, Contexts for calls): its session's launch
   * settings, generated fingerprint and cookies, read here as a launch reads them. A session
   * gone meanwhile fails the call for good.
   */
  async function loadCall(call: { projectId: string; sessionId: string }): Promise<CallSpec> {
    const em = orm.em.fork();
    const session = await em.findOne(BrowserSession, { id: call.sessionId, project: call.projectId });
    if (!session) throw ApplicationFailure.nonRetryable(`session ${call.sessionId} does not exist`, launchFailures.resourceMissing);
    return {
      projectId: call.projectId,
      settings: launchSettingsOfStored(session),
      fingerprintData: session.fingerprint === 'desktop' ? await sessionFingerprint(em, session) : null,
      cookies: session.cookies,
    };
  }

  /**
   * Why a call has no context on this host, when the host is the cause: it is shutting down
   * (`host_shutdown`), or it was restarted since it opened the context (`host_lost`).
   */
  function callHostFailure() {
    const gone = pool.whyGone('');
    if (gone && 'shutDown' in gone)
      return ApplicationFailure.nonRetryable(`${gone.shutDown}: it closed the call’s context under the node`, runFailures.hostShutdown);
    return ApplicationFailure.nonRetryable(
      `browser host ${config.browsers.hostId} lost: it was restarted, and the call’s context died with it`,
      runFailures.hostLost,
    );
  }

  return { pool, projectBrowsers, runs, loadLaunch, loadCall, contextOf, hostFailure, callHostFailure, shutDownFailure };
}

/**
 * The api refuses a start whose stored flags the allow-list no longer takes; flags that changed
 * after it checked (a deploy between the two) fail the launch here, for good: no retry mends them.
 */
function launchSettingsOfStored(session: Parameters<typeof launchSettingsOf>[0]) {
  try {
    return launchSettingsOf(session);
  } catch (error) {
    if (!(error instanceof BadRequest)) throw error;
    throw ApplicationFailure.nonRetryable(error.message, launchFailures.launchArgsRefused);
  }
}

/** A launch error as Temporal sees it: its name is the failure type the workflow's retry policy names. */
export function launchFailure(error: unknown) {
  if (!(error instanceof LaunchError)) return error;
  const cause = error.cause instanceof Error ? error.cause : undefined;
  return ApplicationFailure.create({ message: error.message, type: error.name, nonRetryable: !error.retryable, cause });
}
