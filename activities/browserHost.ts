import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import type { Page } from 'playwright-core';
import { SessionResource } from '../db/entities/index.ts';
import { resolveJwtSecret } from '../server/auth/jwt.ts';
import type { BrowserPool, LaunchSpec } from '../server/browsers/host/browserPool.ts';
import { LaunchError } from '../server/browsers/host/launchErrors.ts';
import { launchSettingsOf } from '../server/browsers/launchSettings.ts';
import { openProxyPassword } from '../server/browsers/proxyPasswords.ts';
import { recordAdopted, recordLaunched } from '../server/browsers/resourceStatus.ts';
import type { Config } from '../server/config.ts';
import { executeNode } from '../server/pipelines/executors.ts';
import { launchFailures } from '../workflows/contracts/browserSession.ts';
import { nodeFailures } from '../workflows/contracts/pipelineRun.ts';
import { createRunNodeContext, type NodeCall } from './pipelineRuns.ts';

/**
 * Activities of one browser host's queue (`browsers.<hostId>`). The launch settings, with the
 * proxy password and cookies, are read here from the database, so they never enter workflow
 * history; the proxy password is opened here, and only here.
 */
export function createBrowserHostActivities({ pool, orm, config, log }: { pool: BrowserPool; orm: MikroORM; config: Config; log: Logger }) {
  const serviceSecret = resolveJwtSecret(config);
  const withRunNode = createRunNodeContext({ orm, config });
  /** Pages of each run on this host, by handle id (the path of the node that opened it). */
  const runPages = new Map<string, Map<string, Page>>();
  /** Per run on this host: releases the run's secrets from its browser's log redactor. */
  const runRedactions = new Map<string, () => Promise<void>>();
  /**
   * Per run on this host: browser calls still under way. A stopped node's Playwright call runs on
   * to its own timeout (Playwright cannot abort it); until it settles the run keeps its tabs, so
   * no other run is handed a page something still drives, and keeps its secrets hidden.
   */
  const runCalls = new Map<string, Set<Promise<unknown>>>();
  /**
   * When a run last marked its browser as used (ms, by resource). Nodes count as activity, so a
   * long run does not lose its browser to the idle timeout; written at most this often per browser,
   * and well within the timeout.
   */
  const lastTouched = new Map<string, number>();
  const touchEveryMs = Math.min(30_000, (config.browsers.idleTimeoutSeconds * 1000) / 3);
  const touch = (resourceId: string) => {
    const now = Date.now();
    if (now - (lastTouched.get(resourceId) ?? 0) < touchEveryMs) return;
    lastTouched.set(resourceId, now);
    orm.em
      .fork()
      .nativeUpdate(SessionResource, { id: resourceId }, { lastActivity: new Date(now) })
      .catch(() => lastTouched.delete(resourceId));
  };

  /**
   * The tab a run takes when it does not ask for a new one: the browser's first tab that no other
   * run of this browser holds, so two runs at once never drive the same page.
   */
  const freeTab = (tabs: Page[], runId: string) => {
    const held = new Set([...runPages].flatMap(([otherRun, pages]) => (otherRun === runId ? [] : [...pages.values()])));
    return tabs.find((tab) => !held.has(tab) && !tab.isClosed());
  };

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
      projectId: resource.project.id,
      ...launchSettingsOf(session),
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
     * One browser node of a run, against the run's browser on this host. It heartbeats, so a
     * host that dies mid-node is noticed in seconds, and a cancelled run stops waiting at once.
     */
    async runBrowserNode(call: NodeCall & { resourceId: string; timeoutMs?: number }) {
      const context = pool.contextOf(call.resourceId);
      if (!context) throw ApplicationFailure.nonRetryable('the run’s browser is no longer running on this host', nodeFailures.noPage);
      const pages = runPages.get(call.runId) ?? new Map<string, Page>();
      runPages.set(call.runId, pages);
      const activity = Context.current();
      touch(call.resourceId);
      let stopped: (() => void) | undefined;
      const beat = setInterval(() => {
        activity.heartbeat();
        touch(call.resourceId);
      }, 1000);
      try {
        return await withRunNode(call, (inputs, log, hidden) => {
          // The browser's own log (console, navigations, failed requests) hides the run's secrets
          // while the run lasts: a URL made from one would otherwise show there in clear.
          if (!runRedactions.has(call.runId)) runRedactions.set(call.runId, pool.hideInLogs(call.resourceId, hidden));
          const work = executeNode(call.type, inputs, {
            timeoutMs: call.timeoutMs,
            log,
            openPage: async ({ newTab }) => {
              const page = (!newTab && freeTab(context.pages(), call.runId)) || (await context.newPage());
              pages.set(call.path, page); // held from now on, before the node navigates it
              return page;
            },
            newPageHandle: (page) => {
              pages.set(call.path, page);
              return { pageId: call.path };
            },
            getPage: async (handle) => {
              const page = pages.get(handle.pageId);
              if (!page) throw new Error(`unknown page ${handle.pageId}`);
              return page;
            },
          });
          const calls = runCalls.get(call.runId) ?? new Set<Promise<unknown>>();
          runCalls.set(call.runId, calls);
          calls.add(work);
          work.then(
            () => calls.delete(work),
            () => calls.delete(work),
          );
          return Promise.race([
            work,
            new Promise<never>((_, reject) => {
              stopped = () => reject(new CancelledFailure('the run was stopped'));
              activity.cancellationSignal.addEventListener('abort', stopped, { once: true });
            }),
          ]);
        });
      } finally {
        clearInterval(beat);
        if (stopped) activity.cancellationSignal.removeEventListener('abort', stopped);
      }
    },

    /**
     * Forgets a run's page handles, freeing its tabs for other runs (the pages stay: they belong
     * to the browser), and stops hiding the run's secrets in the browser's log.
     */
    async releaseRunPages(runId: string) {
      const forget = async () => {
        runPages.delete(runId);
        runCalls.delete(runId);
        const release = runRedactions.get(runId);
        runRedactions.delete(runId);
        await release?.();
      };
      const pending = [...(runCalls.get(runId) ?? [])];
      if (pending.length === 0) return forget();
      // Not awaited: the calls end within their node's timeout, past this activity's own.
      void Promise.allSettled(pending)
        .then(forget)
        .catch((error) => log.warn({ err: error, runId }, 'releasing a stopped run’s pages failed'));
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
  };
}

/** A launch error as Temporal sees it: its name is the failure type the workflow's retry policy names. */
function launchFailure(error: unknown) {
  if (!(error instanceof LaunchError)) return error;
  const cause = error.cause instanceof Error ? error.cause : undefined;
  return ApplicationFailure.create({ message: error.message, type: error.name, nonRetryable: !error.retryable, cause });
}

export type BrowserHostActivities = ReturnType<typeof createBrowserHostActivities>;
