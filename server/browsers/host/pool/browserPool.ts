import type { Logger } from 'pino';
import type { SessionCookie, StoredFingerprint } from '../../../../db/entities/BrowserSession.ts';
import type { BrowserUsage } from '../../../../workflows/contracts/browserSession.ts';
import type { LaunchSettings } from '../../launch/launchSettings.ts';
import { launchSignature } from '../../launch/launchSignature.ts';
import { evaluateMatches } from '../../page/isolatedWorld.ts';
import { setSessionCookies } from '../../sessions/sessionCookies.ts';
import { openPathTo } from '../chromium/browserSandbox.ts';
import {
  type BrowserProxy,
  type ChromiumOptions,
  connectExternal,
  destroyBrowser,
  type LaunchedBrowser,
  launchChromium,
} from '../chromium/chromiumProcess.ts';
import { CapacityReached, HostDraining, WarmBrowserGone } from '../chromium/launchErrors.ts';
import { isAlive, ProcessTable } from '../chromium/processes.ts';
import { BrowserDownloads, type DownloadOptions } from '../downloads/browserDownloads.ts';
import { applyFingerprint } from '../fingerprint/browserFingerprint.ts';
import { closeAndSave, type PersistedProfile, restoredNote, type SavedProfile } from '../profiles/persistedProfile.ts';
import { BrowserRecorder, type RecorderOptions } from '../recording/browserRecorder.ts';
import { BrowserLog, type BrowserLogSink, capturePageLogs } from './browserLogs.ts';
import type { HostBrowser } from './hostBrowser.ts';
import { killLeftoverBrowsers, OrphanCleanup, type StillWanted } from './orphanCleanup.ts';
import type { WarmPolicyOptions } from './warmPolicy.ts';
import { WarmPool, type WarmPoolOptions } from './warmPool.ts';

/** `image` changes nothing on this host (it has one browser build), but is part of the launch signature. */
export type LaunchSpec = LaunchSettings & {
  resourceId: string;
  /** A browser running elsewhere: connect to this CDP URL (ws:// or http://) instead of launching. */
  external?: string | null;
  projectId: string;
  cookies: SessionCookie[];
  proxy: BrowserProxy | null;
  /** A persisted session's profile (never a warm browser): restored at launch, saved at the stop. */
  persist?: PersistedProfile | null;
  /** The session's generated fingerprint (a `desktop` one), applied to its browser's targets. */
  fingerprintData?: StoredFingerprint | null;
  /** Record its pages with rrweb from the start (the session's `record`, or a run's). */
  record?: boolean;
};

/** Why a browser of this host ended without a stop, when the host knows better than "it exited". */
export type BrowserEnd = 'out_of_memory';

export type PoolOptions = WarmPolicyOptions &
  ChromiumOptions &
  Pick<WarmPoolOptions, 'onWarmReady' | 'withdrawWarm' | 'launchConcurrency'> & {
    capacity: number;
    log: Logger;
    /** Receives a resource's browser log lines (console, navigations, errors) in batches. */
    onLog: BrowserLogSink;
    /**
     * A resource's browser ended without a stop (Chromium crashed or was killed, an external one
     * disconnected): told at once, so its workflow need not wait for its next check to find out.
     */
    onEnded?: (resourceId: string) => void;
    /** Which browsers the database still wants (`OrphanCleanup`); unset, none is ever taken for an orphan. */
    stillWanted?: StillWanted;
    /** How long a browser may stay unwanted before `reconcile` destroys it (and replaces a warm one). */
    orphanGraceMs?: number;
    /** A persisted session's saved profile at most, compressed (PROFILE_MAX_MB). */
    profileMaxBytes?: number;
    /** Where finished downloads go, and their bound (server/browsers/host/downloads/); unset, the host does not take them over. */
    downloads?: DownloadOptions;
    /** Where recordings go (../recording/browserRecorder.ts); unset, no browser records. */
    recordings?: Pick<RecorderOptions, 'blobs' | 'maxBytes'>;
  };

/**
 * The browsers of one browser host. The workflow decides when a browser lives and dies; the pool
 * carries out launch (or adoption of a warm browser) and stop for each resource, holds their
 * Chromium processes (../chromium/chromiumProcess.ts), captures each one's log (`BrowserLog`) and reports
 * usage. It keeps the warm browsers (./warmPool.ts) and destroys orphans (./orphanCleanup.ts).
 */
export class BrowserPool {
  readonly #options: PoolOptions;
  readonly #running = new Map<string, HostBrowser>();
  readonly #launching = new Map<string, Promise<HostBrowser>>();
  readonly #warm: WarmPool;
  readonly #orphans: OrphanCleanup | undefined;
  /** Every check of every browser reads the machine's processes from here (ProcessTable). */
  readonly #processes = new ProcessTable(1000);
  #closed = false;
  /** Set by `drain`: no launch (and the warm pool keeps nothing warm); adoptions of claimed ones still go. */
  #draining = false;
  /** Set by `closing`: the host is closing its browsers, and why (its stop reason). */
  #closingReason: string | undefined;
  /**
   * The resources whose browsers an earlier process of this host held when this one started
   * (`start`): they died with it. Small (at most the host's capacity and its claimed warm browsers).
   */
  readonly #heldBefore = new Set<string>();

  constructor(options: PoolOptions) {
    this.#options = options;
    this.#warm = new WarmPool(options, {
      launch: async (settings) => primed(await launchChromium(options, settings, null)),
      hold: (browser, warmId) => {
        const instance: HostBrowser = {
          ...browser,
          warmId,
          resourceId: '',
          projectId: '',
          networkBytes: 0,
          log: this.#browserLog(() => instance),
          warm: true,
        };
        this.#watch(instance);
        return instance;
      },
      destroy: (browser) => this.#destroy(browser),
    });
    this.#orphans = options.stillWanted
      ? new OrphanCleanup({ stillWanted: options.stillWanted, graceMs: options.orphanGraceMs ?? 60_000, log: options.log })
      : undefined;
  }

  /** Pre-launched browsers ready to hand out. */
  get warmCount() {
    return this.#warm.count;
  }

  /** Warm browsers being launched for the pool. */
  get warmLaunching() {
    return this.#warm.launching;
  }

  /** The warm pool's target, size and hit rate (`WarmPool.status`), as the host overview shows them. */
  warmStatus() {
    return this.#warm.status();
  }

  get runningCount() {
    return this.#running.size + this.#launching.size;
  }

  /** The resources whose browsers run here or are being launched. */
  get resourceIds() {
    return [...new Set([...this.#running.keys(), ...this.#launching.keys()])];
  }

  /**
   * The launch signatures this host keeps warm browsers of (the registry's `warm_signatures`):
   * none while draining.
   */
  get warmSignatures() {
    return this.#warm.signatures;
  }

  /**
   * Stops taking browsers: launches are refused (`HostDraining`), nothing is kept warm any more, and
   * each waiting warm browser is withdrawn and destroyed, except one the api claimed meanwhile (its
   * workflow's adoption still comes, as the api already answered with it). Running browsers go on.
   */
  async drain() {
    this.#draining = true;
    await this.#warm.drain();
  }

  /**
   * Kills browsers a previous run of this host left behind, then fills the warm pool.
   * `heldBefore`: the resources the database places on this host as it starts, whose browsers
   * those were (`whyGone`).
   */
  async start(heldBefore: readonly string[] = []) {
    for (const resourceId of heldBefore) this.#heldBefore.add(resourceId);
    killLeftoverBrowsers(this.#options.browsersDir, this.#options.log);
    const leftoverGroups = await this.#options.cgroups?.removeLeftovers();
    if (leftoverGroups) this.#options.log.warn({ count: leftoverGroups }, 'removed browser cgroups left by a previous run of this host');
    if (this.#options.sandbox) openPathTo(this.#options.browsersDir, this.#options.sandbox);
    this.#warm.refill();
  }

  /** Idempotent per resource: Temporal may deliver a launch twice. */
  async launch(spec: LaunchSpec): Promise<{ cdpEndpoint: string; pid: number | null; warm: boolean }> {
    const existing = this.#running.get(spec.resourceId) ?? (await this.#launching.get(spec.resourceId));
    if (existing) return { cdpEndpoint: existing.cdpEndpoint, pid: existing.pid, warm: existing.warm };
    if (this.#draining) throw new HostDraining('this browser host is draining (shutting down) and takes no new browsers');
    if (this.runningCount >= this.#options.capacity)
      throw new CapacityReached(`this host runs its maximum of ${this.#options.capacity} browsers`);
    const launching = this.#launchFor(spec);
    this.#launching.set(spec.resourceId, launching);
    try {
      const instance = await launching;
      // Closed while it launched (its own launch, or a warm one it took over): close() did not see it.
      if (this.#closed) {
        await this.#destroy(instance);
        throw new HostDraining('this browser host closed while the browser started');
      }
      this.#running.set(spec.resourceId, instance);
      this.#heldBefore.delete(spec.resourceId);
      // A proxy-less start found no warm browser of its settings: keep one for the next start.
      // (A session with a proxy, a persisted one, or a browser running elsewhere, never takes a warm browser.)
      if (!spec.proxy && !spec.external && !spec.persist) this.#warm.started(instance.settings, instance.signature, false);
      if (spec.record) await this.record(spec.resourceId);
      return { cdpEndpoint: instance.cdpEndpoint, pid: instance.pid, warm: instance.warm };
    } finally {
      this.#launching.delete(spec.resourceId);
    }
  }

  /**
   * Destroys browsers nothing can use any more (`OrphanCleanup`), and refills the warm pool if
   * warm ones went. Called from the host's heartbeat.
   */
  async reconcile() {
    if (!this.#orphans || this.#closed) return;
    const warmWent = await this.#orphans.reconcile(this.#warm, this.#running, (instance) => this.#destroy(instance));
    if (warmWent) this.#warm.refill();
  }

  /** Retires waiting browsers their settings no longer need (`WarmPool.trim`). Called from the heartbeat. */
  async trimWarm() {
    await this.#warm.trim();
  }

  /**
   * The host is about to close its browsers (it is shut down): from now on, what fails on them
   * fails for this `reason` (`whyGone`). Before the browsers are stopped, so no node sees only
   * Playwright's "Target closed".
   */
  closing(reason: string) {
    this.#closingReason ??= reason;
  }

  /**
   * Why this host's process cannot (or soon will not) give a resource's browser to a node, when
   * the browser is not what failed: the host is closing its browsers (`shutDown`, with the reason
   * the host gave), or the browser was held by an earlier process of this host, which it died with
   * (`restarted`). Undefined otherwise: the browser is here, or went away as browsers do (stopped,
   * crashed), which the caller tells apart.
   */
  whyGone(resourceId: string): { shutDown: string } | { restarted: true } | undefined {
    if (this.#closingReason) return { shutDown: this.#closingReason };
    if (!this.#running.has(resourceId) && !this.#launching.has(resourceId) && this.#heldBefore.has(resourceId)) return { restarted: true };
    return undefined;
  }

  /** The downloads of a running browser (`page.download`). */
  downloadsOf(resourceId: string) {
    return this.#running.get(resourceId)?.downloads;
  }

  /** The Playwright context of a running browser (pipeline nodes act on its pages). */
  contextOf(resourceId: string) {
    return this.#running.get(resourceId)?.context;
  }

  /**
   * Hides `values` in this browser's own log (console, navigations, failed requests) until the
   * answered release is called: a pipeline run's secrets while it drives the browser. The release
   * writes what is buffered first, so no line logged meanwhile goes out without them hidden.
   */
  hideInLogs(resourceId: string, values: readonly string[]): () => Promise<void> {
    const instance = this.#running.get(resourceId);
    if (!instance) return async () => {};
    const unmask = instance.recorder?.hide(values);
    const release = instance.log.hide(values);
    return async () => {
      unmask?.();
      await release();
    };
  }

  /**
   * Records every page of a resource's browser from now on, until it stops (a session's `record`
   * from its start; a run's from its first browser node); idempotent. Resolves once its open pages
   * record. No-op without a recordings store or a running browser.
   */
  async record(resourceId: string) {
    const instance = this.#running.get(resourceId);
    if (!instance || !this.#options.recordings) return;
    instance.recorder ??= new BrowserRecorder({
      ...this.#options.recordings,
      resourceId,
      note: (entry) => instance.log.push(entry),
      log: this.#options.log,
    });
    await instance.recorder.start(instance.context);
  }

  /**
   * Whether a resource's browser lives, and its usage. A browser the kernel killed a process of for
   * memory (it went past BROWSER_MEMORY_LIMIT_MB) is ended here, all of it: in cgroup v1 the kernel
   * kills one process, often a renderer, and the rest would go on without it.
   */
  check(resourceId: string): { alive: boolean; usage: BrowserUsage | null; known: boolean; ended?: BrowserEnd } {
    const instance = this.#running.get(resourceId);
    if (!instance) return { alive: false, usage: null, known: false };
    if (!instance.outOfMemory && instance.cgroup?.outOfMemory()) this.#endOutOfMemory(instance);
    const alive =
      !instance.outOfMemory && (instance.external ? Boolean(instance.remote?.isConnected()) : instance.pid ? isAlive(instance.pid) : true);
    // The first measurement (a warm browser's billing baseline) is read now; later ones may be a moment old.
    const tree = instance.pid ? this.#processes.measureTree(instance.pid, { fresh: !instance.measured }) : null;
    instance.measured = true;
    return {
      alive,
      known: true,
      usage: { cpuSeconds: tree?.cpuSeconds ?? 0, memoryBytes: tree?.memoryBytes ?? 0, networkBytes: instance.networkBytes },
      ...(instance.outOfMemory ? { ended: 'out_of_memory' as const } : {}),
    };
  }

  #endOutOfMemory(instance: HostBrowser) {
    instance.outOfMemory = true;
    const limitMb = (this.#options.cgroups?.limits.memoryBytes ?? 0) / 2 ** 20;
    instance.log.push({
      context: 'browser',
      severity: 'error',
      message: `the browser went past its memory limit (${limitMb} MB, BROWSER_MEMORY_LIMIT_MB): the host ended it`,
      area: 'lifecycle',
    });
    this.#options.log.warn({ resourceId: instance.resourceId, limitMb }, 'a browser went past its memory limit: ending it');
    instance.cgroup?.kill();
  }

  /**
   * Idempotent. The instance leaves the map before any await, so a second stop finds nothing. A
   * persisted session's browser is closed and its profile packed first, and handed to `keep`.
   */
  async stop(resourceId: string, keep?: (saved: SavedProfile) => Promise<void>) {
    const instance = this.#running.get(resourceId);
    if (!instance) return false;
    this.#running.delete(resourceId);
    try {
      // The recording's last batches leave while the browser still runs (the save closes it).
      if (instance.persisted && keep) await instance.recorder?.stop().catch(() => undefined);
      if (instance.persisted && keep) await this.#saveProfile(instance, keep);
    } finally {
      await this.#destroy(instance);
    }
    return true;
  }

  async #saveProfile(instance: HostBrowser, keep: (saved: SavedProfile) => Promise<void>) {
    const saved = await closeAndSave(instance, this.#options.profileMaxBytes ?? 50 * 2 ** 20);
    try {
      await keep(saved);
      instance.log.push(saved.note);
    } catch (error) {
      this.#options.log.warn({ err: error, resourceId: instance.resourceId }, 'could not store a persisted profile');
      instance.log.push({
        context: 'browser',
        severity: 'error',
        message: 'profile not saved: it could not be stored. The profile saved before (if any) is kept and restored at the next start',
        area: 'profile',
      });
    }
  }

  async close() {
    this.#closed = true;
    const all = [...this.#running.values(), ...this.#warm.close()];
    this.#running.clear();
    await Promise.all(all.map((instance) => this.#destroy(instance)));
    this.#options.cgroups?.close();
  }

  /** The offer id of the warm browser listening at `cdpEndpoint`, if this host has one waiting. */
  warmIdAt(cdpEndpoint: string) {
    return this.#warm.warmIdAt(cdpEndpoint);
  }

  /**
   * Whether a Chromium this host launched listens at `cdpEndpoint`: a running one, or a warm one
   * (claimed by the api and not adopted yet, a warm start sets its cookies through the relay). A
   * browser running elsewhere (external) is not behind this host's relay.
   */
  launchedBrowserAt(cdpEndpoint: string) {
    const owns = (instance: HostBrowser) => instance.cdpEndpoint === cdpEndpoint && !instance.external;
    return this.#warm.some(owns) || [...this.#running.values()].some(owns);
  }

  /**
   * Takes over a warm browser the api claimed for `spec.resourceId`; idempotent. Fails when this
   * host no longer has it (it restarted since): the workflow then settles the resource.
   */
  async adoptWarm(warmId: string, spec: LaunchSpec) {
    const existing = this.#running.get(spec.resourceId);
    if (existing) return { cdpEndpoint: existing.cdpEndpoint, pid: existing.pid, warm: true };
    const instance = this.#warm.take(warmId);
    if (!instance) throw new WarmBrowserGone(`warm browser ${warmId} is not on this host`);
    instance.resourceId = spec.resourceId;
    instance.projectId = spec.projectId;
    instance.log.secrets = spec.cookies.map((cookie) => cookie.value).filter((value) => value.length >= 4);
    this.#running.set(spec.resourceId, instance);
    this.#heldBefore.delete(spec.resourceId);
    applyFingerprint(instance, spec.fingerprintData);
    // What the client did before this adoption (it may already have navigated) is logged now.
    await instance.log.flush();
    this.#warm.started(instance.settings, instance.signature, true);
    if (spec.record) await this.record(spec.resourceId);
    return { cdpEndpoint: instance.cdpEndpoint, pid: instance.pid, warm: true };
  }

  /** A cold start's browser: launched here, or a browser running elsewhere taken over. */
  async #launchFor(spec: LaunchSpec): Promise<HostBrowser> {
    const settings = { image: spec.image, screen: spec.screen, args: spec.args, fingerprint: spec.fingerprint };
    // Without a proxy, a warm launch of the same settings under way is taken over: it comes sooner.
    const underWay = spec.external || spec.proxy || spec.persist ? undefined : this.#warm.takeLaunch(launchSignature(settings));
    const browser = spec.external
      ? await connectExternal(spec.external, settings)
      : ((await underWay?.catch(() => undefined)) ?? (await launchChromium(this.#options, settings, spec.proxy, spec.persist)));
    const instance: HostBrowser = {
      ...browser,
      resourceId: spec.resourceId,
      projectId: spec.projectId,
      networkBytes: 0,
      log: this.#browserLog(() => instance),
      warm: false,
    };
    instance.log.secrets = [spec.proxy?.password ?? '', ...spec.cookies.map((cookie) => cookie.value)].filter((s) => s.length >= 4);
    if (spec.persist && browser.persisted) instance.log.push(restoredNote(spec.persist));
    try {
      applyFingerprint(instance, spec.fingerprintData);
      // The same call a warm start makes in the api, so a session's cookies apply alike.
      if (spec.cookies.length) await setSessionCookies(instance.cdpEndpoint, spec.cookies);
      this.#watch(instance);
    } catch (error) {
      await this.#destroy(instance);
      throw error;
    }
    return instance;
  }

  #browserLog(owner: () => HostBrowser) {
    return new BrowserLog(owner, this.#options.onLog, this.#options.log);
  }

  /** Browser logs and network bytes of a resource, from every page it opens. */
  #watch(instance: HostBrowser) {
    const { downloads } = this.#options;
    if (downloads)
      instance.downloads = BrowserDownloads.watch(
        instance,
        downloads,
        () => instance,
        (entry) => instance.log.push(entry),
        this.#options.log,
      );
    if (instance.egress) {
      instance.egress.onBlocked = ({ host, port, reason }) =>
        instance.log.push({
          context: 'browser',
          severity: 'warn',
          message: `blocked a connection to ${host}:${port}: ${reason} (egress policy)`,
          area: 'network',
        });
    }
    capturePageLogs(instance.context, (entry) => instance.log.push(entry));
    instance.context.on('requestfinished', (request) => {
      request.sizes().then(
        (sizes) => {
          instance.networkBytes += sizes.requestBodySize + sizes.requestHeadersSize + sizes.responseBodySize + sizes.responseHeadersSize;
        },
        () => {},
      );
    });
    instance.context.on('close', () => {
      if (this.#running.get(instance.resourceId) === instance) {
        instance.log.push({ context: 'browser', severity: 'warn', message: 'the browser closed', area: 'lifecycle' });
      }
    });
    // Still in the map: nobody stopped it (a stop takes it out first). A warm browser has no resource to tell.
    void instance.ended?.then(() => {
      if (this.#running.get(instance.resourceId) === instance) this.#options.onEnded?.(instance.resourceId);
    });
  }

  async #destroy(instance: LaunchedBrowser | HostBrowser) {
    if ('recorder' in instance) await instance.recorder?.stop();
    if ('log' in instance) await instance.log.flushNow();
    await destroyBrowser(instance);
  }
}

/** How long priming may take before the browser is offered unprimed. */
const PRIMING_TIMEOUT_MS = 5_000;

/**
 * A warm browser's first tab with Playwright's injected script and the host's isolated world
 * (server/browsers/page/isolatedWorld.ts) run once on about:blank: a run's first navigation and first selector read
 * then come faster (docs/benchmarks/mcp-call.md, `bench:mcp-call-causes`). Nothing of it but the
 * host's CDP session outlives the navigation; a failure only skips it.
 */
async function primed(browser: LaunchedBrowser) {
  const first = browser.context.pages()[0];
  const priming = first ? evaluateMatches(first.locator('html'), (elements) => elements.length).catch(() => {}) : undefined;
  // A page that does not answer must not hold the browser back from the pool.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([priming, new Promise<void>((resolve) => (timer = setTimeout(resolve, PRIMING_TIMEOUT_MS)))]);
  clearTimeout(timer);
  return browser;
}
