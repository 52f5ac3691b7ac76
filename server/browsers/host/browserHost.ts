import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client as TemporalClient } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createBrowserHostActivities } from '../../../activities/browserHost/index.ts';
import { BrowserHost, PipelineRun, Project, SessionResource, WarmBrowser } from '../../../db/entities/index.ts';
import { textArray } from '../../../db/textArray.ts';
import {
  browserCheckIntervalMs,
  browserEndedSignal,
  browserHostQueue,
  stopBrowserSignal,
} from '../../../workflows/contracts/browserSession.ts';
import { workflowIds } from '../../../workflows/contracts/workflowIds.ts';
import { resolveJwtSecret } from '../../auth/jwt.ts';
import type { Config } from '../../config.ts';
import { prepareSharedDataDir } from '../../infra/dataDir.ts';
import { installTemporalRuntime, runWorker } from '../../infra/temporalRuntime.ts';
import { appendLogs, logStreams } from '../../logs/logWriter.ts';
import { EgressPolicy } from '../../net/egressPolicy.ts';
import { downloadBlobs, downloadUrl, keepDownload, mimeTypeOf, presentDownload } from '../downloads/downloadFiles.ts';
import { spareBrowsers, warmLaunchConcurrency } from '../hosts/hostCapacity.ts';
import { recordingBlobs } from '../recordings/recordingFiles.ts';
import { activeResourceStatuses } from '../sessions/resourceStatus.ts';
import { RelayTokens } from '../tokens/relayTokens.ts';
import { CallMetering } from './callMetering.ts';
import { prepareCgroups } from './chromium/browserCgroups.ts';
import { prepareSandbox } from './chromium/browserSandbox.ts';
import { findProcessesMentioning, killProcessGroupsOf } from './chromium/processes.ts';
import { BrowserPool } from './pool/browserPool.ts';
import { ProjectBrowsers } from './pool/projectBrowsers.ts';
import { startBrowserRelay } from './relay/browserRelay.ts';

const HEARTBEAT_MS = 5_000;
/** The share of BROWSER_MEMORY_LIMIT_MB past which a project's browser for calls is replaced. */
const CALL_BROWSER_MEMORY_SHARE = 0.75;
/** Stopped without a drain, how long its calls' contexts and browsers get to close. */
const CALLS_CLOSE_MS = 3_000;
/** After the drain time, how long the browsers' workflows get to stop them before the host kills what is left. */
const DRAIN_STOP_WAIT_MS = 30_000;
/**
 * Stopped without a drain (npm start's Ctrl-C), how long the workflows get: a stop takes about a
 * second, and the whole process must be gone within 10 s (docs/browsers.md, Stopping npm start).
 */
const PROMPT_STOP_WAIT_MS = 5_000;

/** The stop reason of a browser its host stopped at the end of a drain. */
export const drainedReason = (hostId: string) => `browser host ${hostId} drained (it was shut down)`;
/** The stop reason of a browser its host stopped without a drain, as the all-in-one process stopped. */
export const shutDownReason = (hostId: string) => `browser host ${hostId} was shut down`;

/**
 * How a host's `stop` ends its browsers:
 * - `drain` (a host process's SIGTERM): they go on up to BROWSER_DRAIN_SECONDS, then their
 *   workflows are asked to stop them;
 * - `stop` (npm start's Ctrl-C, where someone waits at a terminal): their workflows are asked to
 *   stop them at once, so their resources still settle `stopped`, saying why;
 * - `kill` (a test stack's teardown): killed at once; their workflows find them gone.
 */
export type BrowserHostStop = 'drain' | 'stop' | 'kill';

/**
 * A browser host: a Temporal worker on `browsers.<hostId>` whose activities launch, check and
 * stop Chromium, its relay (the only way in to those browsers from outside the host), plus its
 * row in the host registry (`browser_hosts`: address, relay port, capacity, warm signatures,
 * draining), written on every heartbeat, by which placement picks hosts and their relay is found.
 *
 * `stop` drains first (BROWSER_DRAIN_SECONDS): the registry says draining, so placement passes
 * the host by; warm offers are withdrawn and launches refused; running browsers go on until their
 * users or runs stop them, or the drain time ends, when each browser's workflow is asked to stop
 * it (so its resource settles `stopped`, saying the host drained). Only then does the worker stop.
 * `npm start` skips the drain time (`BrowserHostStop`).
 */
export async function startBrowserHost(options: {
  config: Config;
  orm: MikroORM;
  log: Logger;
  temporalAddress: string;
  /** Signals the workflows of the host's browsers at the end of a drain. */
  temporal: TemporalClient;
}) {
  const { config, orm } = options;
  const hostId = config.browsers.hostId;
  const log = options.log.child({ component: 'browser-host', hostId });
  const sandbox = prepareSandbox(config.browsers.sandboxUser, log);
  // Beside DATA_DIR, not in it: the sandbox's user must pass through to them (server/infra/dataDir.ts).
  const browsersDir = path.join(prepareSharedDataDir(config.sharedDataDir), 'browsers', hostId);
  const cgroups = prepareCgroups(config.browsers.limits, browsersDir, { sandbox: sandbox !== null, log });
  // The browser's workflow checks it now, rather than at its next check (workflows/browserSession.ts).
  const tellEnded = (resourceId: string) => {
    options.temporal.workflow
      .getHandle(workflowIds.browser(resourceId))
      .signal(browserEndedSignal)
      .catch((error) =>
        log.warn({ err: error, resourceId }, 'could not tell a browser’s workflow that the browser ended: its next check finds it'),
      );
  };
  // Derived once for the process: the relay's tokens, the activities' sealed values and the downloads' seal use it.
  const serviceSecret = resolveJwtSecret(config);
  const downloads = downloadBlobs(orm, serviceSecret);
  const chromium = {
    chromiumPath: config.chromiumPath,
    sandbox,
    cgroups,
    diskBytes: config.browsers.limits.diskBytes,
    egress: config.browsers.egress ? new EgressPolicy(config.browsers.egress.allowed) : null,
    browsersDir,
  };
  // Calls run in contexts of their project's browser (docs/browsers.md, Contexts for calls): the
  // same launch as every browser here (sandbox, egress policy, cgroups, fingerprint).
  const projectBrowsers = new ProjectBrowsers({
    chromium,
    maxContexts: config.calls.browserMaxContexts,
    maxAgeMs: config.calls.browserMaxAgeSeconds * 1000,
    // Replaced before the kernel's limit would kill it under its calls.
    memoryShareBytes: config.browsers.limits.memoryBytes * CALL_BROWSER_MEMORY_SHARE,
    log,
    onClosed: (usage) => void callMetering.report(usage, { last: true }),
    onCallLog: (runId, projectId, entries, secrets) => appendLogs(orm.em.fork(), projectId, logStreams.run(runId), entries, secrets),
  });
  // They have no workflow of their own: the host reports their usage, as often as a browser's workflow does, billing on or off.
  const callMetering = new CallMetering({
    config,
    log,
    temporal: options.temporal,
    closeProject: (projectId, why) => projectBrowsers.closeProject(projectId, why),
  });
  const meteringTimer = setInterval(() => {
    callMetering.reportAll(projectBrowsers.usage());
  }, browserCheckIntervalMs);
  const pool = new BrowserPool({
    ...chromium,
    warmSize: config.browsers.warmPool,
    warmMax: config.browsers.warmPoolMax,
    demandMs: config.browsers.warmDemandSeconds * 1000,
    idleMs: config.browsers.warmIdleSeconds * 1000,
    spareBrowsers: () => spareBrowsers(),
    launchConcurrency: warmLaunchConcurrency(),
    recentSize: config.browsers.warmRecent,
    recentMs: config.browsers.warmRecentSeconds * 1000,
    capacity: config.browsers.perHost,
    log,
    onLog: (resourceId, projectId, entries, secrets) =>
      appendLogs(orm.em.fork(), projectId, logStreams.resource(resourceId), entries, secrets),
    onEnded: tellEnded,
    recordings: { blobs: recordingBlobs(orm, resolveJwtSecret(config)), maxBytes: config.recordings.maxBytes },
    onWarmReady: async ({ warmId, signature, cdpEndpoint, pid }) => {
      await orm.em.fork().insert(WarmBrowser, {
        id: warmId,
        hostId,
        launchSignature: signature,
        cdpEndpoint,
        pid,
        created: new Date(),
      });
    },
    // The same delete a claim makes, so exactly one of the two gets the browser.
    withdrawWarm: async (warmId) => (await orm.em.fork().nativeDelete(WarmBrowser, { id: warmId })) > 0,
    stillWanted: async ({ warm }) => {
      // One statement, one snapshot: a claim deletes the offer and inserts the resource that
      // holds the endpoint in one transaction, so a browser being claimed is never seen as neither.
      const active = textArray(activeResourceStatuses);
      const rows = await orm.em
        .fork()
        .getConnection()
        .execute<{ offer: string | null; resource_id: string | null; cdp_endpoint: string | null }[]>(
          `select id::text as offer, null as resource_id, null as cdp_endpoint from warm_browsers where host_id = ?
         union all
         select null, id::text, cdp_endpoint from session_resources where host_id = ? and status = any(?)`,
          [hostId, hostId, active],
        );
      const offers = new Set(rows.map((row) => row.offer));
      const endpoints = new Set(rows.map((row) => row.cdp_endpoint));
      return {
        warmIds: new Set(warm.filter((b) => offers.has(b.warmId) || endpoints.has(b.cdpEndpoint)).map((b) => b.warmId)),
        resourceIds: new Set(rows.flatMap((row) => (row.resource_id ? [row.resource_id] : []))),
      };
    },
    orphanGraceMs: config.browsers.orphanGraceSeconds * 1000,
    profileMaxBytes: config.browsers.profileMaxBytes,
    downloads: {
      maxBytes: config.downloads.maxBytesPerBrowser,
      keep: async (file) => {
        const row = await keepDownload(orm, downloads, { ...file, mimeType: mimeTypeOf(file.name) });
        // The project's slug, as the list route (server/trpc/routers/resources.ts) and every other link of the API name it.
        const project = await orm.em.fork().findOneOrFail(Project, { id: row.project.id }, { fields: ['slug'] });
        const view = presentDownload(row, downloadUrl(config.publicUrl, project.slug, row));
        return { id: view.id, name: view.name, size: view.size, mimeType: view.mimeType, url: view.url };
      },
    },
  });
  // Offers of an earlier run of this host are void: its browsers are about to be killed.
  await orm.em.fork().nativeDelete(WarmBrowser, { hostId });
  // No browser is this process's yet: every active resource placed here was an earlier process's,
  // and died with it. A run on one fails `host_lost`, not for want of a page (BrowserPool.whyGone);
  // unless that process stopped it as it was shut down, whose workflow has yet to settle it: then
  // the run fails `host_shutdown` (its `stopCause`, activities/browserHost/hostBrowsers.ts).
  const heldBefore = await orm.em
    .fork()
    .find(SessionResource, { hostId, status: { $in: [...activeResourceStatuses] }, stopCause: null }, { fields: ['id'] });
  await pool.start(heldBefore.map((resource) => resource.id));
  // Their workflows settle them now, not at their next check: a run or start on one meets it settled sooner.
  for (const resource of heldBefore) tellEnded(resource.id);

  const relay = await startBrowserRelay({
    address: config.browsers.hostAddress,
    port: config.browsers.relayPort,
    hostId,
    tokens: new RelayTokens({ relaySecret: config.browsers.relaySecret, serviceSecret }),
    // The row says which browser the resource holds; the pool, whether that is one of ours. A warm
    // browser the api just claimed (row `running`, not adopted yet) passes: its cookies are set now.
    endpointOf: async (resourceId) => {
      const row = await orm.em.fork().findOne(SessionResource, { id: resourceId }, { fields: ['hostId', 'status', 'cdpEndpoint'] });
      if (!row?.cdpEndpoint || row.hostId !== hostId || !(activeResourceStatuses as readonly string[]).includes(row.status)) return null;
      return pool.launchedBrowserAt(row.cdpEndpoint) ? row.cdpEndpoint : null;
    },
    log,
  }).catch(async (error: unknown) => {
    await pool.close();
    throw error;
  });

  let drainingSince: Date | null = null;
  const heartbeat = async () => {
    const em = orm.em.fork();
    await em.upsert(BrowserHost, {
      id: hostId,
      address: config.browsers.hostAddress,
      relayPort: relay.port,
      capacity: config.browsers.perHost,
      running: pool.runningCount,
      warmSignatures: pool.warmSignatures,
      warmPool: pool.warmStatus(),
      drainingSince,
      heartbeatAt: new Date(),
    });
  };
  await heartbeat();
  const timer = setInterval(() => {
    heartbeat().catch((error) => log.warn({ err: error }, 'browser host heartbeat failed'));
    pool.reconcile().catch((error) => log.warn({ err: error }, 'could not reconcile the browsers with the database'));
    pool.trimWarm().catch((error) => log.warn({ err: error }, 'could not retire warm browsers'));
    projectBrowsers.reconcile();
    closeEndedCalls().catch((error) => log.warn({ err: error }, 'could not close the contexts of ended calls'));
  }, HEARTBEAT_MS);

  /**
   * A call's context is closed by its run's workflow as it ends; one whose workflow is gone
   * (terminated, settled by the run sweeper) never asks. Each heartbeat closes the contexts of calls
   * whose run is no longer queued or running: none is left holding its project's browser.
   */
  async function closeEndedCalls() {
    const ids = projectBrowsers.callIds;
    if (!ids.length) return;
    const active = await orm.em.fork().find(PipelineRun, { id: { $in: ids }, status: { $in: ['queued', 'running'] } }, { fields: ['id'] });
    const live = new Set(active.map((run) => run.id));
    for (const id of ids) if (!live.has(id)) await projectBrowsers.closeContext(id);
  }

  installTemporalRuntime(log);
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: browserHostQueue(hostId),
    activities: createBrowserHostActivities({ pool, projectBrowsers, orm, config, log, serviceSecret }),
    maxConcurrentActivityTaskExecutions: Math.max(4, config.browsers.perHost * 2),
    // A stretch heartbeats its progress as it stores it (activities/runStretch.ts): sent within
    // this time instead of 0.8 × the heartbeat timeout, a retry after a crash resumes from it and
    // a lost attempt is put on the node that ran.
    maxHeartbeatThrottleInterval: '500 milliseconds',
  });
  const stopWorker = runWorker(worker, connection);
  log.info(
    `browser host ${hostId} ready (relay ${config.browsers.hostAddress}:${relay.port}, capacity ${config.browsers.perHost}, warm pool ${config.browsers.warmPool}–${Math.max(config.browsers.warmPool, config.browsers.warmPoolMax)}, recent ${config.browsers.warmRecent})`,
  );

  /** Waits until no browser runs here and no call has a context here, at most `ms`; answers whether none does. */
  const emptied = async (ms: number, { calls = true } = {}) => {
    const until = Date.now() + ms;
    const busy = () => pool.runningCount > 0 || (calls && projectBrowsers.callCount > 0);
    while (busy() && Date.now() < until) await sleep(Math.min(250, Math.max(1, until - Date.now())));
    return !busy();
  };

  /**
   * Has the workflows of the browsers still here stop them, as a stop request would, and waits at
   * most `waitMs` for those workflows to end: then their resources are settled, not only their
   * browsers gone (in npm start the control worker that records it stops right after this host).
   */
  const stopBrowsers = async (reason: string, waitMs: number) => {
    // Before any browser closes: the nodes that fail on them say the host was shut down.
    pool.closing(reason);
    // The calls' browsers close beside the sessions' (bounded): their calls end `host_shutdown`.
    const callsClosed = projectBrowsers.close(reason, CALLS_CLOSE_MS);
    const resourceIds = pool.resourceIds;
    if (resourceIds.length === 0) return callsClosed;
    log.info({ resourceIds }, `browser host ${hostId}: stopping its ${resourceIds.length} browser(s)`);
    // The fact, beside the reason's words: a run whose next node comes to a restarted host finds
    // its browser stopped by the shutdown, and ends `host_shutdown` (activities/browserHost/hostBrowsers.ts).
    await orm.em
      .fork()
      .nativeUpdate(SessionResource, { id: { $in: resourceIds } }, { stopCause: 'host_shutdown' })
      .catch((error) => log.warn({ err: error }, 'could not record the browsers as stopped by the shutdown'));
    const until = Date.now() + waitMs;
    const ended = resourceIds.map(async (resourceId) => {
      const handle = options.temporal.workflow.getHandle(workflowIds.browser(resourceId));
      try {
        await handle.signal(stopBrowserSignal, reason);
      } catch (error) {
        log.warn({ err: error, resourceId }, 'could not ask a browser’s workflow to stop it');
        return;
      }
      await handle.result().catch(() => {});
    });
    const waited = new AbortController();
    await Promise.race([Promise.all(ended), sleep(waitMs, undefined, { signal: waited.signal }).catch(() => {})]);
    waited.abort();
    // The workflows stop them through this host's worker, which still runs; what they leave, close() kills.
    if (!(await emptied(Math.max(0, until - Date.now()), { calls: false })))
      log.warn({ resourceIds: pool.resourceIds }, 'browsers left running after their stop: killing them');
    await callsClosed;
  };

  /**
   * Stops taking browsers; to `drain`, lets running ones go on up to the drain time first, then
   * has their workflows stop them.
   */
  const drain = async (how: 'drain' | 'stop' = 'drain') => {
    if (drainingSince) return;
    drainingSince = new Date();
    // The registry first: a start that reads it from now on passes this host by (placement and
    // warm claims share one lock), so what the pool refuses below is only a start already placed.
    await heartbeat().catch((error) => log.warn({ err: error }, 'could not record the host as draining'));
    await pool.drain();
    if (how === 'stop') return stopBrowsers(shutDownReason(hostId), PROMPT_STOP_WAIT_MS);
    const seconds = config.browsers.drainSeconds;
    log.info(`browser host ${hostId} draining: ${pool.runningCount} browser(s) running, at most ${seconds} s`);
    if (await emptied(seconds * 1000)) return;
    await stopBrowsers(drainedReason(hostId), DRAIN_STOP_WAIT_MS);
  };

  let stopping: Promise<void> | undefined;
  return {
    pool,
    /** The projects' browsers for calls (docs/browsers.md, Contexts for calls). */
    projectBrowsers,
    drain,
    /**
     * Kills every browser of this host at once, synchronously (an exit that cannot wait: a second
     * Ctrl-C). Their workflows find them gone.
     */
    killBrowsers() {
      killProcessGroupsOf(findProcessesMentioning(`--user-data-dir=${browsersDir}${path.sep}`));
    },
    /**
     * Ends the browsers as `how` says (`BrowserHostStop`), then stops the worker and kills what is
     * left. Once: a second call (a test stack's teardown after a test stopped the host) waits for the first.
     */
    stop(how: BrowserHostStop = 'drain') {
      stopping ??= (async () => {
        // A drain that fails (the database gone) must not keep the heartbeat going, nor the browsers.
        if (how !== 'kill')
          await drain(how).catch((error) => log.warn({ err: error }, `browser host ${hostId} could not stop its browsers in order`));
        clearInterval(timer);
        // The worker's stop cancels what still runs on the browsers, which close right after.
        const reason = how === 'drain' ? drainedReason(hostId) : shutDownReason(hostId);
        pool.closing(reason);
        // Calls' browsers close first, bounded: one that hangs must not hold up the rest of the shutdown.
        await projectBrowsers.close(reason, CALLS_CLOSE_MS);
        // Their last usage, reported as they closed (bounded: the database may be going away).
        clearInterval(meteringTimer);
        await callMetering.settled(CALLS_CLOSE_MS);
        // Best effort: at shutdown the database may already be going away.
        await orm.em
          .fork()
          .nativeDelete(WarmBrowser, { hostId })
          .catch(() => {});
        await stopWorker();
        await pool.close();
        await relay.close();
        // Mark the host gone at once rather than waiting for its heartbeat to go stale.
        await orm.em
          .fork()
          .nativeUpdate(BrowserHost, { id: hostId }, { heartbeatAt: new Date(0), running: 0 })
          .catch(() => {});
      })();
      return stopping;
    },
  };
}
