import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { BrowserContext } from 'playwright-core';
import type { SessionCookie, StoredFingerprint } from '../../../../db/entities/BrowserSession.ts';
import { NodeError } from '../../../pipelines/engine/nodeErrors.ts';
import type { LaunchSettings } from '../../launch/launchSettings.ts';
import { setContextCookies } from '../../sessions/sessionCookies.ts';
import { type ChromiumOptions, destroyBrowser, type LaunchedBrowser, launchChromium } from '../chromium/chromiumProcess.ts';
import { isAlive, ProcessTable } from '../chromium/processes.ts';
import { applyFingerprint } from '../fingerprint/browserFingerprint.ts';
import { BrowserLog, type BrowserLogSink, capturePageLogs } from './browserLogs.ts';

/**
 * Browsers for calls (docs/browsers.md, Contexts for calls): a function execute, an MCP tool call,
 * or a run that does not use a session's running browser runs in a fresh BrowserContext of a warm
 * browser that belongs to its project. One browser per project, launch settings and fingerprint
 * (`keyOf`); never shared between projects. Each is launched as every browser of the host is
 * (`launchChromium`: the sandbox, the egress proxy, the cgroups, the fingerprint flags and
 * injector), and replaced after `maxContexts` contexts, at `maxAgeMs`, when it crashed, or when it
 * takes more than its memory share: a replaced browser takes no new context and is closed once its
 * calls have closed theirs. Its failure fails only the calls inside it, as `browser_crashed`.
 *
 * Each browser is metered as a resource's is (its process tree's CPU seconds, the bytes of its
 * contexts' requests): `usage` reads the cumulative figures, and `onClosed` hands over the last
 * ones as it is destroyed (server/browsers/host/callMetering.ts reports them).
 */

/** A project browser's cumulative usage since its launch, under the id it is metered as (a UUID of its own). */
export type CallBrowserUsage = { meterId: string; projectId: string; cpuSeconds: number; networkBytes: number };

/** What a call's context is opened with: its project, and its session's launch settings, fingerprint and cookies. */
export type CallSpec = {
  projectId: string;
  settings: LaunchSettings;
  fingerprintData: StoredFingerprint | null;
  cookies: readonly SessionCookie[];
};

export type ProjectBrowsersOptions = {
  chromium: ChromiumOptions;
  maxContexts: number;
  maxAgeMs: number;
  /** Above this (the browser's processes' memory) a browser is replaced. */
  memoryShareBytes: number;
  log: Logger;
  /** Its last usage, as a browser is destroyed (replaced, crashed, closed with the host). */
  onClosed?: (usage: CallBrowserUsage) => void;
  /**
   * Writes a call's browser log lines (console, navigations, page errors, failed requests of its
   * context) to the call's own run log: `resourceId` is then the call's run id.
   */
  onCallLog: BrowserLogSink;
};

type ProjectBrowser = {
  key: string;
  projectId: string;
  /** The resource id its usage is metered under. */
  meterId: string;
  /** Cumulative, never going back (a process that left the tree takes its seconds with it). */
  cpuSeconds: number;
  networkBytes: number;
  launching: Promise<LaunchedBrowser>;
  browser?: LaunchedBrowser;
  startedAt: number;
  /** Contexts handed out so far. */
  opened: number;
  calls: Set<string>;
  /** Takes no new context; closed once its calls are done. */
  retired?: string;
  /** Why it ended under its calls (crashed, killed for memory, closed as its account's funds ran out). */
  crashed?: string;
  /** Set when the host closed it on purpose (`closeProject`): its calls fail saying why. */
  closedOnPurpose?: boolean;
  destroyed?: Promise<void>;
};

/** A call's context here, and its browser log (written to the call's run log, hiding the run's secrets and the cookie values it was given). */
type Call = { owner: ProjectBrowser; context?: BrowserContext; opening: Promise<BrowserContext>; log: BrowserLog };

/** How long a context's close may take before the call is let go regardless. */
const CONTEXT_CLOSE_MS = 5_000;
/** How long a later activity of a call waits for the context its first activity is opening here. */
const OPENING_WAIT_MS = 5_000;

/** A browser's identity for calls: its project, its launch settings' signature and its fingerprint. */
export function keyOf(spec: Pick<CallSpec, 'projectId' | 'settings' | 'fingerprintData'>) {
  const fingerprint = spec.fingerprintData ? createHash('sha256').update(JSON.stringify(spec.fingerprintData)).digest('hex') : '-';
  const settings = createHash('sha256').update(JSON.stringify(spec.settings)).digest('hex');
  return `${spec.projectId}/${settings}/${fingerprint}`;
}

export class ProjectBrowsers {
  readonly #options: ProjectBrowsersOptions;
  /** The browser that takes new contexts, by key. */
  readonly #current = new Map<string, ProjectBrowser>();
  /** Every browser still held (current, and replaced ones with calls left). */
  readonly #all = new Set<ProjectBrowser>();
  readonly #calls = new Map<string, Call>();
  readonly #processes = new ProcessTable(1000);
  #closing: string | undefined;

  constructor(options: ProjectBrowsersOptions) {
    this.#options = options;
  }

  /** Calls with a context on this host now. */
  get callCount() {
    return this.#calls.size;
  }

  /** The project browsers and their contexts, as the host overview shows them. */
  status() {
    const now = Date.now();
    return [...this.#all].map((owner) => ({
      projectId: owner.projectId,
      contexts: owner.calls.size,
      contextsOpened: owner.opened,
      ageSeconds: Math.round((now - owner.startedAt) / 1000),
      state: owner.crashed ? ('crashed' as const) : owner.retired ? ('retiring' as const) : ('serving' as const),
    }));
  }

  /** The pid of the browser a call's context is in (tests kill it to see only that call fail). */
  pidOf(callId: string) {
    return this.#calls.get(callId)?.owner.browser?.pid ?? null;
  }

  /** The calls with a context here (held or being opened). */
  get callIds() {
    return [...this.#calls.keys()];
  }

  /** Whether this process holds (or is opening) a context for the call. */
  has(callId: string) {
    return this.#calls.has(callId);
  }

  /**
   * The call's context: opened now in its project's browser (launched, or replaced, as needed) when
   * `open`, else the one this process holds (waiting briefly for one being opened). Undefined when
   * this process holds none for it and is not to open one (an earlier process held it).
   */
  async contextFor(
    callId: string,
    spec: CallSpec | (() => Promise<CallSpec>),
    open: boolean,
    /** Values its browser log hides besides the cookie values it is given: the run's secrets. */
    hidden: readonly string[] = [],
  ): Promise<BrowserContext | undefined> {
    const held = this.#calls.get(callId);
    if (held) return held.context ?? held.opening;
    if (!open) {
      const until = Date.now() + OPENING_WAIT_MS;
      while (Date.now() < until && !this.#calls.has(callId)) await sleep(100);
      const late = this.#calls.get(callId);
      return late ? (late.context ?? late.opening) : undefined;
    }
    if (this.#closing) return undefined;
    const resolved = typeof spec === 'function' ? await spec() : spec;
    // Read again: a retry of the same activity may have opened it meanwhile.
    const again = this.#calls.get(callId);
    if (again) return again.context ?? again.opening;
    const owner = this.#browserFor(resolved);
    owner.opened++;
    owner.calls.add(callId);
    const log = new BrowserLog(() => ({ resourceId: callId, projectId: resolved.projectId }), this.#options.onCallLog, this.#options.log);
    // As a resource's browser log hides its session's cookie values (BrowserPool), and a run's secrets while it drives it.
    log.secrets = [
      ...hidden.filter((value) => value.length > 0),
      ...resolved.cookies.map((cookie) => cookie.value).filter((value) => value.length >= 4),
    ];
    const call: Call = { owner, log, opening: this.#open(owner, resolved, log) };
    this.#calls.set(callId, call);
    try {
      call.context = await call.opening;
      return call.context;
    } catch (error) {
      this.#calls.delete(callId);
      owner.calls.delete(callId);
      this.#settle(owner);
      await log.flushNow();
      throw error;
    }
  }

  /**
   * Why a call's context failed under it, when its browser is the cause: it crashed, or was ended
   * for memory. Undefined while its browser lives (or when the call has no context here).
   */
  failureOf(callId: string) {
    const owner = this.#calls.get(callId)?.owner;
    if (!owner) return undefined;
    this.#check(owner);
    if (!owner.crashed) return undefined;
    const what = owner.closedOnPurpose ? 'was closed' : 'crashed';
    return new NodeError('browser_crashed', `the call’s browser ${what}: ${owner.crashed}`, { retryable: false });
  }

  /**
   * `failureOf`, after giving a browser that is going down `ms` to be seen gone: a node may fail on
   * its closed connection a moment before the process's exit is reaped.
   */
  async failureAfter(callId: string, ms: number) {
    const ended = this.#calls.get(callId)?.owner.browser?.ended;
    if (ended && !this.failureOf(callId)) await Promise.race([ended, sleep(ms)]);
    return this.failureOf(callId);
  }

  /** Writes what the call's browser log holds now (a stretch's lines, before the stretch answers). */
  async flushLog(callId: string) {
    await this.#calls.get(callId)?.log.flushNow();
  }

  /** Adds values the call's browser log hides (the run's secrets, as its node activities know them). */
  hideInLog(callId: string, values: readonly string[]) {
    const log = this.#calls.get(callId)?.log;
    if (!log) return;
    for (const value of values) if (value.length > 0 && !log.secrets.includes(value)) log.secrets.push(value);
  }

  /** Closes the call's context and everything in it (its pages, cookies, storage, cache); idempotent. */
  async closeContext(callId: string) {
    const call = this.#calls.get(callId);
    if (!call) return;
    this.#calls.delete(callId);
    const context = call.context ?? (await call.opening.catch(() => undefined));
    if (context) await Promise.race([context.close().catch(() => {}), sleep(CONTEXT_CLOSE_MS)]);
    call.owner.calls.delete(callId);
    this.#settle(call.owner);
    // Its last lines, written before the call's end is answered (a database away: they are retried).
    await call.log.flushNow();
  }

  /**
   * Checks every browser (crash, memory kill, memory share, age) and closes replaced ones whose
   * calls are done. Called from the host's heartbeat.
   */
  reconcile() {
    for (const owner of this.#all) {
      this.#check(owner);
      this.#settle(owner);
    }
  }

  /**
   * Every browser's cumulative usage now (launched and not destroyed), as a resource's browser is
   * measured (`BrowserPool.check`): its process tree's CPU seconds, its contexts' request bytes.
   */
  usage(): CallBrowserUsage[] {
    const usages: CallBrowserUsage[] = [];
    for (const owner of this.#all) {
      if (!owner.browser || owner.destroyed) continue;
      usages.push(this.#measure(owner, false));
    }
    return usages;
  }

  /**
   * Closes the project's browsers now, their calls failing with `why` (its account's funds ran
   * out); the project's next call launches a new one (a start the funds refuse never gets here).
   */
  async closeProject(projectId: string, why: string) {
    const owners = [...this.#all].filter((owner) => owner.projectId === projectId);
    for (const owner of owners) {
      if (!owner.crashed) {
        owner.crashed = why;
        owner.closedOnPurpose = true;
      }
      if (this.#current.get(owner.key) === owner) this.#current.delete(owner.key);
    }
    if (owners.length) this.#options.log.warn({ projectId, browsers: owners.length }, `closing a project’s browsers for calls: ${why}`);
    await Promise.all(owners.map((owner) => this.#destroy(owner)));
  }

  /** Waits (at most `ms`) until no call has a context here; answers whether none has. */
  async drained(ms: number) {
    const until = Date.now() + ms;
    while (this.#calls.size > 0 && Date.now() < until) await sleep(Math.min(250, Math.max(1, until - Date.now())));
    return this.#calls.size === 0;
  }

  /**
   * The host closes: no context opens from now on, and every browser is destroyed, the calls in
   * them failing as their host's (`reason`). Bounded by `ms`: a browser that does not close in time
   * is left to the host's own kill of what its folder holds; the caller's shutdown goes on.
   */
  async close(reason: string, ms: number) {
    this.#closing ??= reason;
    const owners = [...this.#all];
    this.#current.clear();
    // Their calls find no context from now on: they fail as the host's (its shutdown). Their browser
    // logs are written as their browsers close (bounded alike).
    const logs = [...this.#calls.values()].map((call) => call.log);
    this.#calls.clear();
    const closing = Promise.all([...owners.map((owner) => this.#destroy(owner)), ...logs.map((log) => log.flushNow())]);
    const timer = new AbortController();
    await Promise.race([closing, sleep(ms, undefined, { signal: timer.signal }).catch(() => {})]);
    timer.abort();
  }

  /** The browser that takes the next context of `spec`'s key: the current one, unless it must be replaced. */
  #browserFor(spec: CallSpec) {
    const key = keyOf(spec);
    const current = this.#current.get(key);
    if (current) {
      this.#check(current);
      if (!current.retired && !current.crashed && current.opened >= this.#options.maxContexts) {
        this.#retire(current, `it served its ${this.#options.maxContexts} contexts (CALL_BROWSER_MAX_CONTEXTS)`);
      }
      if (!current.retired && !current.crashed) return current;
      this.#settle(current);
    }
    const owner: ProjectBrowser = {
      key,
      projectId: spec.projectId,
      meterId: randomUUID(),
      cpuSeconds: 0,
      networkBytes: 0,
      startedAt: Date.now(),
      opened: 0,
      calls: new Set(),
      launching: this.#launch(spec),
    };
    owner.launching.then(
      (browser) => {
        owner.browser = browser;
        void browser.ended?.then(() => {
          if (!owner.destroyed) this.#crashed(owner, 'Chromium exited');
        });
        // Closed meanwhile (the host closes): nothing else will.
        if (this.#closing || !this.#all.has(owner)) void this.#destroy(owner);
      },
      () => {
        owner.crashed = 'it could not be launched';
        this.#settle(owner);
      },
    );
    this.#current.set(key, owner);
    this.#all.add(owner);
    this.#options.log.info({ projectId: spec.projectId }, 'launching a project browser for calls');
    return owner;
  }

  async #launch(spec: CallSpec) {
    const browser = await launchChromium(this.#options.chromium, spec.settings, null);
    try {
      await applyFingerprint(browser, spec.fingerprintData);
    } catch (error) {
      await destroyBrowser(browser);
      throw error;
    }
    return browser;
  }

  async #open(owner: ProjectBrowser, spec: CallSpec, log: BrowserLog) {
    const browser = await owner.launching;
    if (!browser.remote) throw new Error('the project browser has no connection');
    // Downloads need the browser's own folder: a call that downloads gets a browser of its own.
    const context = await browser.remote.newContext({ acceptDownloads: false, viewport: spec.settings.screen });
    // Its browser log, as a resource's browser has one (docs/browsers.md, Contexts for calls): in the call's run log.
    capturePageLogs(context, (entry) => log.push(entry));
    // Its network bytes, as a resource's browser counts them (BrowserPool's `requestfinished`).
    context.on('requestfinished', (request) => {
      request.sizes().then(
        (sizes) => {
          owner.networkBytes += sizes.requestBodySize + sizes.requestHeadersSize + sizes.responseBodySize + sizes.responseHeadersSize;
        },
        () => {},
      );
    });
    try {
      if (spec.cookies.length) await setContextCookies(context, spec.cookies);
    } catch (error) {
      await context.close().catch(() => {});
      throw error;
    }
    return context;
  }

  /** The browser's cumulative usage: its process tree measured (`fresh`: read now), kept from going back. */
  #measure(owner: ProjectBrowser, fresh: boolean): CallBrowserUsage {
    const pid = owner.browser?.pid;
    const tree = pid ? this.#processes.measureTree(pid, { fresh }) : null;
    if (tree) owner.cpuSeconds = Math.max(owner.cpuSeconds, tree.cpuSeconds);
    return { meterId: owner.meterId, projectId: owner.projectId, cpuSeconds: owner.cpuSeconds, networkBytes: owner.networkBytes };
  }

  /** Crashed or killed for memory, over its memory share, or too old: so marked. */
  #check(owner: ProjectBrowser) {
    const browser = owner.browser;
    if (!browser || owner.crashed || owner.destroyed) return;
    if (browser.cgroup?.outOfMemory()) {
      // In cgroup v1 the kernel kills one process: the rest of the browser goes with it.
      browser.cgroup.kill();
      this.#crashed(owner, 'out of memory (it went past its memory limit)');
      return;
    }
    if (browser.pid && !isAlive(browser.pid)) {
      this.#crashed(owner, 'Chromium exited');
      return;
    }
    if (owner.retired) return;
    if (Date.now() - owner.startedAt > this.#options.maxAgeMs) {
      this.#retire(owner, `it reached its age of ${Math.round(this.#options.maxAgeMs / 1000)} s (CALL_BROWSER_MAX_AGE_SECONDS)`);
      return;
    }
    const memory = browser.pid ? (this.#processes.measureTree(browser.pid)?.memoryBytes ?? 0) : 0;
    if (memory > this.#options.memoryShareBytes) {
      this.#retire(
        owner,
        `it took ${Math.round(memory / 2 ** 20)} MB, over its share of ${Math.round(this.#options.memoryShareBytes / 2 ** 20)} MB`,
      );
    }
  }

  #retire(owner: ProjectBrowser, why: string) {
    if (owner.retired) return;
    owner.retired = why;
    if (this.#current.get(owner.key) === owner) this.#current.delete(owner.key);
    this.#options.log.info({ projectId: owner.projectId, contexts: owner.opened }, `replacing a project browser: ${why}`);
  }

  #crashed(owner: ProjectBrowser, why: string) {
    if (owner.crashed) return;
    owner.crashed = why;
    if (this.#current.get(owner.key) === owner) this.#current.delete(owner.key);
    this.#options.log.warn({ projectId: owner.projectId, calls: owner.calls.size }, `a project browser ended under its calls: ${why}`);
  }

  /** A replaced or crashed browser with no call left is destroyed. */
  #settle(owner: ProjectBrowser) {
    if ((owner.retired || owner.crashed) && owner.calls.size === 0) void this.#destroy(owner);
  }

  #destroy(owner: ProjectBrowser) {
    if (this.#current.get(owner.key) === owner) this.#current.delete(owner.key);
    owner.destroyed ??= (async () => {
      this.#all.delete(owner);
      const browser = owner.browser ?? (await owner.launching.catch(() => undefined));
      if (!browser) return;
      // Its last figures, read before its processes go (a crashed one's are those last measured).
      owner.browser = browser;
      const usage = this.#measure(owner, true);
      await destroyBrowser(browser).catch((error) => this.#options.log.warn({ err: error }, 'could not destroy a project browser'));
      this.#options.onClosed?.(usage);
    })();
    return owner.destroyed;
  }
}
