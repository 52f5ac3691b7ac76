import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { SessionResource } from '../db/entities/index.ts';
import { AgentTabs } from '../server/browsers/host/agentTools.ts';
import { LaunchError } from '../server/browsers/host/chromium/launchErrors.ts';
import { failOnPageCrash } from '../server/browsers/host/chromium/pageCrashes.ts';
import { executeNode } from '../server/browsers/host/nodes/executeNode.ts';
import { RunPages } from '../server/browsers/host/nodes/runPages.ts';
import { keepScreenshot, type ScreenshotKind, wantsScreenshot } from '../server/browsers/host/nodes/runScreenshots.ts';
import type { BrowserPool, LaunchSpec } from '../server/browsers/host/pool/browserPool.ts';
import { launchSettingsOf } from '../server/browsers/launchSettings.ts';
import { openProxyPassword } from '../server/browsers/proxyPasswords.ts';
import { recordAdopted, recordLaunched } from '../server/browsers/resourceStatus.ts';
import { BadRequest } from '../server/errors.ts';
import { executeDataNode } from '../server/pipelines/engine/dataNodes.ts';
import { NodeError } from '../server/pipelines/engine/nodeErrors.ts';
import type { AgentJobHostActivities, ToolCallRequest } from '../workflows/contracts/agentJobs.ts';
import { type BrowserSessionHostActivities, launchFailures } from '../workflows/contracts/browserSession.ts';
import { type BrowserStretchCall, nodeFailures, nodeTime, type PipelineRunHostActivities } from '../workflows/contracts/pipelineRun.ts';
import type { ActivityDeps } from './deps.ts';
import { createRunNodeContext, type NodeCall } from './runNode.ts';
import { StretchRunner } from './runStretch.ts';

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

/**
 * Activities of one browser host's queue (`browsers.<hostId>`). The launch settings, with the
 * proxy password and cookies, are read here from the database, so they never enter workflow
 * history; the proxy password is opened here, and only here.
 */
export function createBrowserHostActivities({ pool, orm, config, log, serviceSecret }: ActivityDeps & { pool: BrowserPool }) {
  const withRunNode = createRunNodeContext({ orm, serviceSecret });
  const stretches = new StretchRunner({ orm, serviceSecret });
  const runs = new RunPages({ pool, orm, log, idleTimeoutSeconds: config.browsers.idleTimeoutSeconds });
  const agentTabs = new AgentTabs({ orm, serviceSecret });

  /** The resource and its launch settings (cookies, proxy with its password) from the database. */
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

  return {
    /**
     * Takes over the warm browser the api claimed for this resource (the api already answered
     * with its endpoint and applied the cookies): log capture, usage, and its place in the pool.
     */
    async adoptWarmBrowser(resourceId: string, warmId: string) {
      const { resource, spec } = await loadLaunch(resourceId);
      try {
        await pool.adoptWarm(warmId, spec);
      } catch (error) {
        throw launchFailure(error);
      }
      await recordAdopted(orm.em.fork(), resource);
    },

    /**
     * A stretch of a run with browser nodes (activities/runStretch.ts), against the run's browser
     * on this host; its data nodes run here too. It heartbeats, so a host that dies mid-stretch is
     * noticed in seconds, and a stopped run stops waiting at once.
     */
    async runBrowserStretch(call: BrowserStretchCall) {
      runs.touch(call.resourceId);
      // A warm browser claimed for the run may reach this host before its workflow adopted it. That
      // takes seconds under a burst of starts: the attempt heartbeats meanwhile (passing on the
      // progress a lost attempt left), or Temporal would take the host for gone.
      const activity = Context.current();
      const waiting = setInterval(() => activity.heartbeat(activity.info.heartbeatDetails), 1000);
      try {
        await contextOf(call.resourceId);
      } finally {
        clearInterval(waiting);
      }
      const browser = () => {
        const context = pool.contextOf(call.resourceId);
        if (!context) throw new NodeError('no_page', 'the run’s browser is no longer running on this host', { retryable: false });
        return context;
      };
      return stretches.run(
        call,
        async (node, path, inputs, { log, hidden, run }) => {
          // A data node of the stretch needs no browser: it runs here as it would anywhere.
          if (!node.browser) return executeDataNode(node.type, inputs);
          const context = browser();
          runs.hideSecrets(call.runId, call.resourceId, hidden);
          const pages = runs.nodePages(call.runId, path, context);
          const node$ = executeNode(node.type, inputs, { timeoutMs: node.timeoutMs, log, ...pages });
          // The node's own call is what keeps the run's tabs and hidden secrets: after a crash it
          // may still be driving the browser until its timeout.
          runs.track(call.runId, node$);
          /** The picture the run's `screenshots` asks for at this node's end, of the page it worked on. */
          const shoot = async (kind: ScreenshotKind, handle: unknown, failureCode?: string) => {
            if (!wantsScreenshot(run.screenshots, kind, failureCode)) return;
            const pageId = (handle as { pageId?: unknown } | undefined)?.pageId;
            const page = await pages.getPage({ pageId: typeof pageId === 'string' ? pageId : path }).catch(() => undefined);
            if (!page) return;
            const target = { projectId: run.projectId, runId: call.runId, node: path, kind, page, hidden };
            log(await keepScreenshot(orm, target, config.screenshots.maxBytesPerRun));
          };
          try {
            const outputs = await failOnPageCrash(context, node$, (page) => runs.holds(call.runId, page));
            await shoot('step', outputs.page);
            return outputs;
          } catch (error) {
            // Playwright says only that the target closed: the host knows the Chromium is gone.
            const check = pool.check(call.resourceId);
            if (check.known && !check.alive) {
              const how =
                check.ended === 'out_of_memory' ? 'out of memory (it went past its memory limit)' : 'Chromium exited while the node ran';
              throw new NodeError('browser_crashed', `the run’s browser crashed: ${how}`, {
                retryable: false,
                cause: error,
              });
            }
            if (!(error instanceof CancelledFailure)) await shoot('failure', inputs.page, (error as { code?: string }).code);
            throw error;
          }
        },
        // The run's browser is still in this process's pool: this process ran every attempt of the
        // stretch there was, so one it does not know of never started a node.
        { beat: () => runs.touch(call.resourceId), check: browser, sameProcess: () => pool.contextOf(call.resourceId) !== undefined },
      );
    },

    /**
     * One browser node of a run, against the run's browser on this host: how runs started before
     * stretches existed run their nodes (workflows/pipelineRun.ts). It heartbeats, so a host that
     * dies mid-node is noticed in seconds, and a cancelled run stops waiting at once.
     */
    async runBrowserNode(call: NodeCall & { resourceId: string; timeoutMs?: number }) {
      const context = await contextOf(call.resourceId);
      if (!context) throw ApplicationFailure.nonRetryable('the run’s browser is no longer running on this host', nodeFailures.noPage);
      const pages = runs.nodePages(call.runId, call.path, context);
      const activity = Context.current();
      runs.touch(call.resourceId);
      let stopped: (() => void) | undefined;
      let overrun: NodeJS.Timeout | undefined;
      const beat = setInterval(() => {
        activity.heartbeat();
        runs.touch(call.resourceId);
      }, 1000);
      try {
        return await withRunNode(call, (inputs, log, hidden) => {
          runs.hideSecrets(call.runId, call.resourceId, hidden);
          const work = executeNode(call.type, inputs, { timeoutMs: call.timeoutMs, log, ...pages });
          runs.track(call.runId, work);
          // The node's time, held here: the activity's own timeout also allows for database waits.
          const budget = (call.timeoutMs ?? nodeTime.defaultTimeoutMs) + nodeTime.overrunGraceMs;
          return Promise.race([
            work,
            new Promise<never>((_, reject) => {
              stopped = () => reject(new CancelledFailure('the run was stopped'));
              activity.cancellationSignal.addEventListener('abort', stopped, { once: true });
              overrun = setTimeout(() => reject(new Error(`the node ran past its ${budget} ms`)), budget);
            }),
          ]);
        });
      } finally {
        clearInterval(beat);
        clearTimeout(overrun);
        if (stopped) activity.cancellationSignal.removeEventListener('abort', stopped);
      }
    },

    /**
     * Forgets a run's page handles, freeing its tabs for other runs (the pages stay: they belong
     * to the browser), and stops hiding the run's secrets in the browser's log.
     */
    async releaseRunPages(runId: string) {
      stretches.release(runId);
      return runs.release(runId);
    },

    /** An analysis turn's tool calls, in the job's own tab of the browser (server/browsers/host/agentTools.ts). */
    async runAgentTools(call: { jobId: string; resourceId: string; calls: ToolCallRequest[]; step: number }) {
      const context = await contextOf(call.resourceId);
      if (!context) throw ApplicationFailure.nonRetryable('the job’s browser is no longer running on this host', nodeFailures.noPage);
      runs.touch(call.resourceId);
      const activity = Context.current();
      const beat = setInterval(() => activity.heartbeat(), 1000);
      try {
        await agentTabs.run(call.jobId, context, call.calls, call.step);
      } finally {
        clearInterval(beat);
      }
    },

    /** Pictures of the pages a finished analysis's proposal acts on (server/browsers/host/agentTools.ts). */
    async pictureProposal(call: { jobId: string; resourceId: string }) {
      const context = await contextOf(call.resourceId);
      if (!context) return 0;
      const activity = Context.current();
      const beat = setInterval(() => activity.heartbeat(), 1000);
      try {
        return await agentTabs.pictureProposal(call.jobId, context, {
          maxBytes: config.screenshots.maxBytesPerRun,
          beat: () => runs.touch(call.resourceId),
        });
      } catch (error) {
        log.warn({ err: error, jobId: call.jobId }, 'the proposal could not be pictured');
        throw error;
      } finally {
        clearInterval(beat);
      }
    },

    /** Closes an analysis job's tab. */
    async releaseAgentTab(jobId: string) {
      await agentTabs.release(jobId);
    },

    async launchBrowser(resourceId: string) {
      const { em, resource, spec } = await loadLaunch(resourceId);
      let launched: Awaited<ReturnType<BrowserPool['launch']>>;
      try {
        launched = await pool.launch(spec);
      } catch (error) {
        throw launchFailure(error);
      }
      // Recorded here rather than by a further activity: one round trip less before the api answers.
      await recordLaunched(em, resource, launched);
      return launched;
    },

    async stopBrowser(resourceId: string) {
      return pool.stop(resourceId);
    },

    async checkBrowser(resourceId: string) {
      return pool.check(resourceId);
    },
  } satisfies BrowserSessionHostActivities & PipelineRunHostActivities & AgentJobHostActivities;
}

/** A launch error as Temporal sees it: its name is the failure type the workflow's retry policy names. */
function launchFailure(error: unknown) {
  if (!(error instanceof LaunchError)) return error;
  const cause = error.cause instanceof Error ? error.cause : undefined;
  return ApplicationFailure.create({ message: error.message, type: error.name, nonRetryable: !error.retryable, cause });
}
