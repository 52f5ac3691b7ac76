import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { BrowserContext } from 'playwright-core';
import { failOnPageCrash } from '../../server/browsers/host/chromium/pageCrashes.ts';
import { executeNode } from '../../server/browsers/host/nodes/executeNode.ts';
import { keepScreenshot, type ScreenshotKind, wantsScreenshot } from '../../server/browsers/host/nodes/runScreenshots.ts';
import { executeDataNode } from '../../server/pipelines/engine/dataNodes.ts';
import { NodeError } from '../../server/pipelines/engine/nodeErrors.ts';
import {
  type BrowserNodeCall,
  type BrowserStretchCall,
  type CallOfActivity,
  nodeFailures,
  nodeTime,
  type PipelineRunHostActivities,
} from '../../workflows/contracts/pipelineRun.ts';
import { createRunNodeContext } from '../runNode.ts';
import { StretchRunner } from '../runStretch.ts';
import type { HostActivityDeps, HostBrowsers } from './hostBrowsers.ts';

/** The host's side of a pipeline run (workflows/pipelineRun.ts): its browser nodes, against the run's browser on this host. */
export function createPipelineRunHostActivities(
  { orm, config, serviceSecret }: HostActivityDeps,
  { pool, projectBrowsers, runs, contextOf, hostFailure, shutDownFailure, loadCall, callHostFailure }: HostBrowsers,
) {
  const withRunNode = createRunNodeContext({ orm, serviceSecret });
  const stretches = new StretchRunner({ orm, serviceSecret });

  /**
   * A node that failed because its browser is gone: Playwright says only that the target closed,
   * the host knows the Chromium is gone, and why. Undefined while the browser lives.
   */
  function crashOf(resourceId: string, error: unknown) {
    const check = pool.check(resourceId);
    if (!check.known || check.alive) return undefined;
    const how = check.ended === 'out_of_memory' ? 'out of memory (it went past its memory limit)' : 'Chromium exited while the node ran';
    return new NodeError('browser_crashed', `the run’s browser crashed: ${how}`, { retryable: false, cause: error });
  }

  /**
   * What takes the picture a run's `screenshots` asks for at a node's end (`kind`), of the page the
   * node worked on (its output's page handle, else the node's own tab).
   */
  function screenshotsAt(at: {
    run: { projectId: string; screenshots: Parameters<typeof wantsScreenshot>[0] };
    runId: string;
    node: string;
    pages: Pick<ReturnType<HostBrowsers['runs']['nodePages']>, 'getPage'>;
    hidden: readonly string[];
    log: (message: Awaited<ReturnType<typeof keepScreenshot>>) => void;
  }) {
    return async (kind: ScreenshotKind, handle: unknown, failureCode?: string) => {
      if (!wantsScreenshot(at.run.screenshots, kind, failureCode)) return;
      const pageId = (handle as { pageId?: unknown } | undefined)?.pageId;
      const page = await at.pages.getPage({ pageId: typeof pageId === 'string' ? pageId : at.node }).catch(() => undefined);
      if (!page) return;
      const target = { projectId: at.run.projectId, runId: at.runId, node: at.node, kind, page, hidden: at.hidden };
      at.log(await keepScreenshot(orm, target, config.screenshots.maxBytesPerRun));
    };
  }

  /**
   * A call's context on this host: opened by its first browser activity (`call.open`, and only by
   * its first attempt: a retry that finds none here ran first on a process that is gone), else the
   * one this process holds. A call without one fails as its host's (`callHostFailure`). A context
   * that could not be opened fails the call for good, with its true reason: not retried, as a retry
   * may not open one and would end `host_lost`. `hidden`: the run's secrets, which its browser log hides.
   */
  async function callContext(runId: string, call: CallOfActivity, hidden: readonly string[]) {
    const open = call.open && Context.current().info.attempt === 1;
    const context = await projectBrowsers
      .contextFor(runId, () => loadCall(call), open, hidden)
      .catch((error: unknown) => {
        if (error instanceof ApplicationFailure) throw error;
        throw ApplicationFailure.create({
          message: `the call’s browser could not give it a context: ${error instanceof Error ? error.message : String(error)}`,
          type: 'browser_crashed',
          nonRetryable: true,
          cause: error instanceof Error ? error : undefined,
        });
      });
    if (!context) throw callHostFailure();
    return context;
  }

  /**
   * A stretch of a call (docs/browsers.md, Contexts for calls): as `runBrowserStretch`, in the
   * call's own context of its project's browser. No download folder (acceptDownloads is off), no
   * recording, no browser log of a resource: a run that needs those has a browser of its own.
   */
  async function runCallStretch(call: BrowserStretchCall, target: CallOfActivity) {
    // Taken by the stretch's first browser node (inside the stretch, so a context that cannot be
    // opened fails that node, logged and named, with its true reason).
    let context: Promise<BrowserContext> | undefined;
    // Only the first attempt of the call's first browser activity opens its context (`callContext`).
    const opensHere = target.open && Context.current().info.attempt === 1;
    /** The context's failure, told as its cause: the host closing, the browser crashed. */
    const failure = () => {
      const host = pool.whyGone('');
      if (host && 'shutDown' in host) return callHostFailure();
      return projectBrowsers.failureOf(call.runId);
    };
    const check = () => {
      const failed = failure();
      if (failed) throw failed;
      // Held before, and gone: the host closed it.
      if (context && !projectBrowsers.has(call.runId)) throw callHostFailure();
    };
    // The browser lines of its nodes are written before the stretch answers, so before the run's end is recorded.
    const flushed = () => projectBrowsers.flushLog(call.runId);
    return stretches
      .run(
        call,
        async (node, path, inputs, { log, hidden, run }) => {
          if (!node.browser) return executeDataNode(node.type, inputs);
          check();
          context ??= callContext(call.runId, target, hidden);
          const held = await context;
          // Opened by an earlier stretch: its browser log hides this one's values too (the same run's secrets).
          projectBrowsers.hideInLog(call.runId, hidden);
          const pages = runs.nodePages(call.runId, path, held);
          const node$ = executeNode(node.type, inputs, { timeoutMs: node.timeoutMs, log, ...pages });
          runs.track(call.runId, node$);
          const shoot = screenshotsAt({ run, runId: call.runId, node: path, pages, hidden, log });
          try {
            const outputs = await failOnPageCrash(held, node$, (page) => runs.holds(call.runId, page));
            await shoot('step', outputs.page);
            return outputs;
          } catch (error) {
            const failed =
              error instanceof CancelledFailure ? undefined : (failure() ?? (await projectBrowsers.failureAfter(call.runId, 1000)));
            if (failed) throw failed;
            if (!(error instanceof CancelledFailure)) await shoot('failure', inputs.page, (error as { code?: string }).code);
            throw error;
          }
        },
        {
          check,
          sameProcess: () => projectBrowsers.has(call.runId),
          hostFailure: () => {
            const host = pool.whyGone('');
            if (host && 'shutDown' in host) return callHostFailure();
            // A retry, or a later stretch, in a process that holds no context for the call: the host
            // was restarted since it opened it (host_lost, whatever attempts the node has left).
            if (!opensHere && !projectBrowsers.has(call.runId)) return callHostFailure();
            return undefined;
          },
        },
      )
      .finally(flushed);
  }

  return {
    /**
     * A stretch of a run with browser nodes (activities/runStretch.ts), against the run's browser
     * on this host; its data nodes run here too. It heartbeats, so a host that dies mid-stretch is
     * noticed in seconds, and a stopped run stops waiting at once.
     */
    async runBrowserStretch(call: BrowserStretchCall) {
      if (call.call) return runCallStretch(call, call.call);
      runs.touch(call.resourceId);
      // A warm browser claimed for the run may reach this host before its workflow adopted it. That
      // takes seconds under a burst of starts: the attempt heartbeats meanwhile (passing on the
      // progress a lost attempt left), or Temporal would take the host for gone.
      const activity = Context.current();
      const waiting = setInterval(() => activity.heartbeat(activity.info.heartbeatDetails), 1000);
      let shutDown: ApplicationFailure | undefined;
      try {
        if (!(await contextOf(call.resourceId))) shutDown = await shutDownFailure(call.resourceId);
      } finally {
        clearInterval(waiting);
      }
      const browser = () => {
        const context = pool.contextOf(call.resourceId);
        if (!context)
          throw (
            hostFailure(call.resourceId) ??
            shutDown ??
            new NodeError('no_page', 'the run’s browser is no longer running on this host', { retryable: false })
          );
        return context;
      };
      return stretches.run(
        call,
        async (node, path, inputs, { log, hidden, run }) => {
          // A data node of the stretch needs no browser: it runs here as it would anywhere.
          if (!node.browser) return executeDataNode(node.type, inputs);
          const context = browser();
          // Before its secrets are hidden: the recorder hides them too from then on.
          if (run.record) await pool.record(call.resourceId);
          runs.hideSecrets(call.runId, call.resourceId, hidden);
          const pages = runs.nodePages(call.runId, path, context);
          const downloads = pool.downloadsOf(call.resourceId)?.forRun(call.runId);
          const node$ = executeNode(node.type, inputs, { timeoutMs: node.timeoutMs, log, ...pages, downloads });
          // The node's own call is what keeps the run's tabs and hidden secrets: after a crash it
          // may still be driving the browser until its timeout.
          runs.track(call.runId, node$);
          const shoot = screenshotsAt({ run, runId: call.runId, node: path, pages, hidden, log });
          try {
            const outputs = await failOnPageCrash(context, node$, (page) => runs.holds(call.runId, page));
            await shoot('step', outputs.page);
            return outputs;
          } catch (error) {
            // The host closing the browser (it is shut down) says so, not Playwright's "Target closed".
            const host = error instanceof CancelledFailure ? undefined : hostFailure(call.resourceId);
            if (host) throw host;
            const crash = crashOf(call.resourceId, error);
            if (crash) throw crash;
            if (!(error instanceof CancelledFailure)) await shoot('failure', inputs.page, (error as { code?: string }).code);
            throw error;
          }
        },
        // The run's browser is still in this process's pool: this process ran every attempt of the
        // stretch there was, so one it does not know of never started a node.
        {
          beat: () => runs.touch(call.resourceId),
          check: browser,
          sameProcess: () => pool.contextOf(call.resourceId) !== undefined,
          hostFailure: () => hostFailure(call.resourceId),
        },
      );
    },

    /**
     * One browser node of a run, against the run's browser on this host: how runs started before
     * stretches existed run their nodes (workflows/pipelineRun.ts). It heartbeats, so a host that
     * dies mid-node is noticed in seconds, and a cancelled run stops waiting at once.
     */
    async runBrowserNode(call: BrowserNodeCall) {
      // The run's secrets are known inside withRunNode: a call's browser log is given them there.
      const context = call.call ? await callContext(call.runId, call.call, []) : await contextOf(call.resourceId);
      if (!context)
        throw (
          hostFailure(call.resourceId) ??
          (await shutDownFailure(call.resourceId)) ??
          ApplicationFailure.nonRetryable('the run’s browser is no longer running on this host', nodeFailures.noPage)
        );
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
          if (call.call) projectBrowsers.hideInLog(call.runId, hidden);
          else runs.hideSecrets(call.runId, call.resourceId, hidden);
          const downloads = pool.downloadsOf(call.resourceId)?.forRun(call.runId);
          const work = executeNode(call.type, inputs, { timeoutMs: call.timeoutMs, log, ...pages, downloads });
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
      await runs.release(runId);
      // A call's context goes with its end, and everything in it (docs/browsers.md, Contexts for calls).
      await projectBrowsers.closeContext(runId);
    },
  } satisfies PipelineRunHostActivities;
}
