import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import type { SessionCookie } from '../../../db/entities/BrowserSession.ts';
import type { LaunchSettings } from '../launchSettings.ts';
import { launchSignature } from '../launchSignature.ts';
import { setSessionCookies } from '../sessionCookies.ts';
import { BrowserLog, type BrowserLogSink, capturePageLogs } from './browserLogs.ts';
import { CHROMIUM_FLAGS, LEAN_FEATURES, PLAYWRIGHT_FEATURES, withFeatures } from './chromiumFlags.ts';
import type { EgressPolicy } from './egressPolicy.ts';
import { EgressProxy } from './egressProxy.ts';
import { CapacityReached, HostDraining, WarmBrowserGone } from './launchErrors.ts';
import { findProcessesMentioning, isAlive, ProcessTable } from './processes.ts';
import { WarmPolicy, type WarmPolicyOptions } from './warmPolicy.ts';

/** Under the egress policy: WebRTC may not send UDP around the proxy. */
const EGRESS_FLAGS = ['--force-webrtc-ip-handling-policy=disable_non_proxied_udp'];
/** Flags every browser gets on these hosts (no sandbox as root, no calls home, CDP on a free port). */
const REQUIRED_FLAGS = [...CHROMIUM_FLAGS, '--disable-dev-shm-usage', '--remote-debugging-port=0', '--remote-debugging-address=127.0.0.1'];

/**
 * Chromium's command line on this host (Playwright adds its own switches before it): the host's
 * flags, the screen, the session's flags, and one feature switch of each kind carrying
 * Playwright's features, the host's memory savings and the session's own (`withFeatures`).
 */
export function chromiumArgs(settings: LaunchSettings, options: { egress: boolean }) {
  const { screen, args } = settings;
  return withFeatures(
    [...REQUIRED_FLAGS, ...(options.egress ? EGRESS_FLAGS : []), `--window-size=${screen.width},${screen.height}`, ...args],
    [PLAYWRIGHT_FEATURES, LEAN_FEATURES],
  );
}

/** Variables of the host's environment Chromium (and Debian's launcher script) may see. */
const INHERITED_ENV = ['PATH', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'FONTCONFIG_PATH', 'FONTCONFIG_FILE'];

/**
 * Chromium's environment: what it needs to run and nothing else. A CDP client controls the browser
 * and pages can read their process's environment in ways no flag rules out, so the service's
 * secrets (DATABASE_URL, JWT_SECRET, …) must never be in it. HOME is the browser's own folder, so
 * what Chromium keeps there (NSS database, caches) goes when the browser does.
 */
export function browserEnvironment(userDataDir: string, env: NodeJS.ProcessEnv = process.env) {
  const minimal: Record<string, string> = { HOME: path.join(userDataDir, 'home') };
  for (const name of INHERITED_ENV) {
    const value = env[name];
    if (value !== undefined) minimal[name] = value;
  }
  minimal.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return minimal;
}

/** `image` changes nothing on this host (it has one browser build), but is part of the launch signature. */
export type LaunchSpec = LaunchSettings & {
  resourceId: string;
  /** A browser running elsewhere: connect to this CDP URL (ws:// or http://) instead of launching. */
  external?: string | null;
  projectId: string;
  cookies: SessionCookie[];
  proxy: { server: string; username?: string; password?: string } | null;
};

export type BrowserUsage = { cpuSeconds: number; memoryBytes: number; networkBytes: number };

type Instance = {
  /** Set on warm browsers: the id they are offered under. */
  warmId?: string;
  /** Measured since it became a resource's (its first measurement is its billing baseline). */
  measured?: boolean;
  resourceId: string;
  projectId: string;
  context: BrowserContext;
  userDataDir: string;
  cdpEndpoint: string;
  pid: number | null;
  /** What it was launched with, and their `launchSignature`. */
  settings: LaunchSettings;
  signature: string;
  /** Set on warm browsers once their offer is written to `warm_browsers`. */
  offered?: boolean;
  networkBytes: number;
  log: BrowserLog;
  warm: boolean;
  /** First found unwanted by `reconcile` at this time (ms). */
  unwantedSince?: number;
  /** A browser running elsewhere, connected over CDP: a stop disconnects, it never kills. */
  remote?: Browser;
  /** The proxy every connection of this browser goes through (null: the egress policy is open). */
  egress?: EgressProxy | null;
};

type WarmBrowser = Omit<Instance, 'resourceId' | 'projectId' | 'log' | 'warm' | 'offered'> & { warmId?: string };

export type PoolOptions = WarmPolicyOptions & {
  chromiumPath: string;
  /** Where browsers may connect; null: anywhere (`BROWSER_EGRESS_POLICY=open`). */
  egress: EgressPolicy | null;
  /** Every browser's user-data-dir lives below this, which is how orphans are found after a crash. */
  browsersDir: string;
  capacity: number;
  log: Logger;
  /** Receives a resource's browser log lines (console, navigations, errors) in batches. */
  onLog: BrowserLogSink;
  /** A warm browser is ready to be claimed (the host advertises it in `warm_browsers`). */
  onWarmReady?: (warm: { warmId: string; signature: string; cdpEndpoint: string; pid: number | null }) => Promise<void>;
  /** Withdraws a warm browser's offer; false when it was no longer there (the api claimed it). */
  withdrawWarm?: (warmId: string) => Promise<boolean>;
  /**
   * Which of these browsers can still be used, answered from one snapshot: warm ones still offered
   * in `warm_browsers` or whose endpoint an active resource holds (claimed, adoption pending), and
   * running ones whose resource is still active.
   */
  stillWanted?: (browsers: { warm: { warmId: string; cdpEndpoint: string }[]; resourceIds: string[] }) => Promise<{
    warmIds: Set<string>;
    resourceIds: Set<string>;
  }>;
  /** How long a browser may stay unwanted before `reconcile` destroys it (and replaces a warm one). */
  orphanGraceMs?: number;
};

/**
 * The Chromium processes of one browser host. The workflow decides when a browser lives and
 * dies; this only carries out launch and stop, keeps the warm browsers `WarmPolicy` asks for,
 * captures each browser's log (`BrowserLog`), and reports usage.
 */
export class BrowserPool {
  readonly #options: PoolOptions;
  readonly #running = new Map<string, Instance>();
  readonly #launching = new Map<string, Promise<Instance>>();
  /** Warm browsers are watched from launch; their logs wait for the resource that adopts them. */
  readonly #warm: Instance[] = [];
  /** Warm launches in flight, by launch signature. */
  readonly #warming = new Map<string, number>();
  readonly #warmPolicy: WarmPolicy;
  /** Every check of every browser reads the machine's processes from here (ProcessTable). */
  readonly #processes = new ProcessTable(1000);
  #closed = false;
  /** Set by `drain`: no launch, no warm browser launched or offered; adoptions of claimed ones still go. */
  #draining = false;
  #reconciling = false;
  #trimming = false;

  constructor(options: PoolOptions) {
    this.#options = options;
    this.#warmPolicy = new WarmPolicy(options);
  }

  /** Pre-launched browsers ready to hand out. */
  get warmCount() {
    return this.#warm.length;
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
    if (this.#draining) return [];
    return this.#warmPolicy
      .wanted()
      .map(([signature]) => signature)
      .filter((signature) => this.#warmPolicy.target(signature) > 0);
  }

  /**
   * Stops taking browsers: launches are refused (`HostDraining`), nothing is kept warm any more, and
   * each waiting warm browser is withdrawn and destroyed, except one the api claimed meanwhile (its
   * workflow's adoption still comes, as the api already answered with it). Running browsers go on.
   */
  async drain() {
    this.#draining = true;
    for (const instance of [...this.#warm]) {
      // Not offered yet: its offer is never written (`#topUp` checks the flag), nothing can claim it.
      if (instance.offered && instance.warmId && this.#options.withdrawWarm && !(await this.#options.withdrawWarm(instance.warmId)))
        continue;
      const index = this.#warm.indexOf(instance);
      if (index < 0) continue; // adopted meanwhile
      this.#warm.splice(index, 1);
      await this.#destroy(instance);
    }
  }

  /** Kills browsers a previous run of this host left behind, then fills the warm pool. */
  async start() {
    mkdirSync(this.#options.browsersDir, { recursive: true });
    const orphans = findProcessesMentioning(`--user-data-dir=${this.#options.browsersDir}${path.sep}`);
    for (const pid of orphans) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (orphans.length) this.#options.log.warn({ count: orphans.length }, 'killed browsers left by a previous run of this host');
    rmSync(this.#options.browsersDir, { recursive: true, force: true });
    mkdirSync(this.#options.browsersDir, { recursive: true });
    this.#refillWarm();
  }

  /** Idempotent per resource: Temporal may deliver a launch twice. */
  async launch(spec: LaunchSpec): Promise<{ cdpEndpoint: string; pid: number | null; warm: boolean }> {
    const existing = this.#running.get(spec.resourceId) ?? (await this.#launching.get(spec.resourceId));
    if (existing) return { cdpEndpoint: existing.cdpEndpoint, pid: existing.pid, warm: existing.warm };
    if (this.#draining) throw new HostDraining('this browser host is draining (shutting down) and takes no new browsers');
    if (this.runningCount >= this.#options.capacity)
      throw new CapacityReached(`this host runs its maximum of ${this.#options.capacity} browsers`);
    const launching = this.#launchInstance(spec);
    this.#launching.set(spec.resourceId, launching);
    try {
      const instance = await launching;
      this.#running.set(spec.resourceId, instance);
      // A proxy-less start found no warm browser of its settings: keep one for the next start.
      // (A session with a proxy, or a browser running elsewhere, never takes a warm browser.)
      if (!spec.proxy && !spec.external) {
        this.#warmPolicy.startedWith(instance.settings, instance.signature);
        this.#refillWarm();
        this.#trimLogged();
      }
      return { cdpEndpoint: instance.cdpEndpoint, pid: instance.pid, warm: instance.warm };
    } finally {
      this.#launching.delete(spec.resourceId);
    }
  }

  /**
   * Destroys browsers nothing can use any more, and refills the warm pool. A start that claimed a
   * warm browser (deleting its offer) and then failed before its workflow adopted it would
   * otherwise leave it here for good; so would a running browser whose workflow ended without
   * stopping it (terminated, then its row settled by the sweeper) or a launch that finished after
   * its workflow gave up on it — each holding a place of this host's capacity. Called from the
   * host's heartbeat; a browser must be found unwanted twice, `orphanGraceMs` apart, which also
   * covers an offer not yet written. A normal stop is not raced: the pool drops the browser before
   * its workflow settles the row.
   */
  async reconcile() {
    const stillWanted = this.#options.stillWanted;
    if (!stillWanted || this.#reconciling || this.#closed || (!this.#warm.length && !this.#running.size)) return;
    this.#reconciling = true;
    try {
      const warm = [...this.#warm];
      const running = [...this.#running.values()];
      const wanted = await stillWanted({
        warm: warm.map((instance) => ({ warmId: instance.warmId as string, cdpEndpoint: instance.cdpEndpoint })),
        resourceIds: running.map((instance) => instance.resourceId),
      });
      const now = Date.now();
      const grace = this.#options.orphanGraceMs ?? 60_000;
      /** Marks the time an instance was first found unwanted; true once that is `grace` ago. */
      const orphaned = (instance: Instance, isWanted: boolean) => {
        if (isWanted) {
          instance.unwantedSince = undefined;
          return false;
        }
        instance.unwantedSince ??= now;
        return now - instance.unwantedSince >= grace;
      };

      // Out of the list and the map before any await, so an adoption, a check or a stop arriving
      // now finds them gone.
      const warmOrphans: Instance[] = [];
      for (const instance of warm) {
        const index = this.#warm.indexOf(instance);
        if (index < 0) continue; // adopted while the database answered
        if (!orphaned(instance, wanted.warmIds.has(instance.warmId as string))) continue;
        this.#warm.splice(index, 1);
        warmOrphans.push(instance);
      }
      const runningOrphans: Instance[] = [];
      for (const instance of running) {
        if (this.#running.get(instance.resourceId) !== instance) continue; // stopped while the database answered
        if (!orphaned(instance, wanted.resourceIds.has(instance.resourceId))) continue;
        this.#running.delete(instance.resourceId);
        runningOrphans.push(instance);
      }

      if (warmOrphans.length) {
        this.#options.log.warn(
          { warmIds: warmOrphans.map((instance) => instance.warmId) },
          'destroying warm browsers that are neither offered nor held by a resource',
        );
      }
      if (runningOrphans.length) {
        this.#options.log.warn(
          { resourceIds: runningOrphans.map((instance) => instance.resourceId) },
          'destroying browsers whose resource is no longer active (their workflow is gone)',
        );
        for (const instance of runningOrphans) {
          instance.log.push({
            context: 'browser',
            severity: 'warn',
            message: 'the browser host destroyed the browser: its resource is no longer active',
            area: 'lifecycle',
          });
        }
      }
      await Promise.all([...warmOrphans, ...runningOrphans].map((instance) => this.#destroy(instance)));
      if (warmOrphans.length) this.#refillWarm();
    } finally {
      this.#reconciling = false;
    }
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
    return instance.log.hide(values);
  }

  check(resourceId: string): { alive: boolean; usage: BrowserUsage | null } {
    const instance = this.#running.get(resourceId);
    if (!instance) return { alive: false, usage: null };
    const alive = instance.remote ? instance.remote.isConnected() : instance.pid ? isAlive(instance.pid) : true;
    // The first measurement (a warm browser's billing baseline) is read now; later ones may be a moment old.
    const tree = instance.pid ? this.#processes.measureTree(instance.pid, { fresh: !instance.measured }) : null;
    instance.measured = true;
    return {
      alive,
      usage: { cpuSeconds: tree?.cpuSeconds ?? 0, memoryBytes: tree?.memoryBytes ?? 0, networkBytes: instance.networkBytes },
    };
  }

  /** Idempotent. The instance leaves the map before any await, so a second stop finds nothing. */
  async stop(resourceId: string) {
    const instance = this.#running.get(resourceId);
    if (!instance) return false;
    this.#running.delete(resourceId);
    await this.#destroy(instance);
    return true;
  }

  async close() {
    this.#closed = true;
    const all = [...this.#running.values(), ...this.#warm.splice(0)];
    this.#running.clear();
    await Promise.all(all.map((instance) => this.#destroy(instance)));
  }

  /** The offer id of the warm browser listening at `cdpEndpoint`, if this host has one waiting. */
  warmIdAt(cdpEndpoint: string) {
    return this.#warm.find((browser) => browser.cdpEndpoint === cdpEndpoint)?.warmId;
  }

  /**
   * Whether a Chromium this host launched listens at `cdpEndpoint`: a running one, or a warm one
   * (claimed by the api and not adopted yet, a warm start sets its cookies through the relay). A
   * browser running elsewhere (external) is not behind this host's relay.
   */
  launchedBrowserAt(cdpEndpoint: string) {
    const owns = (instance: Instance) => instance.cdpEndpoint === cdpEndpoint && !instance.remote;
    return this.#warm.some(owns) || [...this.#running.values()].some(owns);
  }

  /**
   * Takes over a warm browser the api claimed for `spec.resourceId`; idempotent. Fails when this
   * host no longer has it (it restarted since): the workflow then settles the resource.
   */
  async adoptWarm(warmId: string, spec: LaunchSpec) {
    const existing = this.#running.get(spec.resourceId);
    if (existing) return { cdpEndpoint: existing.cdpEndpoint, pid: existing.pid, warm: true };
    const index = this.#warm.findIndex((browser) => browser.warmId === warmId);
    const instance = index >= 0 ? this.#warm.splice(index, 1)[0] : undefined;
    if (!instance) throw new WarmBrowserGone(`warm browser ${warmId} is not on this host`);
    instance.resourceId = spec.resourceId;
    instance.projectId = spec.projectId;
    instance.log.secrets = spec.cookies.map((cookie) => cookie.value).filter((value) => value.length >= 4);
    this.#running.set(spec.resourceId, instance);
    // What the client did before this adoption (it may already have navigated) is logged now.
    await instance.log.flush();
    this.#warmPolicy.startedWith(instance.settings, instance.signature);
    this.#refillWarm();
    this.#trimLogged();
    return { cdpEndpoint: instance.cdpEndpoint, pid: instance.pid, warm: true };
  }

  async #launchInstance(spec: LaunchSpec): Promise<Instance> {
    const settings = { image: spec.image, screen: spec.screen, args: spec.args };
    if (spec.external) return this.#instanceFrom(await this.#connectExternal(spec.external, settings), spec, false);
    return this.#instanceFrom(await this.#launchChromium(settings, spec.proxy), spec, false);
  }

  /**
   * A browser someone else runs, taken over its CDP URL: its own default context is the one runs
   * use. An http:// URL is resolved to the browser's WebSocket endpoint, which the api's CDP proxy
   * and cookie capture speak. No process of it is ours to measure or kill.
   */
  async #connectExternal(url: string, settings: LaunchSettings): Promise<WarmBrowser & { remote: Browser }> {
    let cdpEndpoint = url;
    if (/^https?:/i.test(url)) {
      const version = await fetch(new URL('/json/version', url), { signal: AbortSignal.timeout(10_000) });
      if (!version.ok) throw new Error(`${url} answered ${version.status} to /json/version`);
      cdpEndpoint = ((await version.json()) as { webSocketDebuggerUrl?: string }).webSocketDebuggerUrl ?? '';
      if (!cdpEndpoint) throw new Error(`${url} named no WebSocket endpoint in /json/version`);
    }
    const remote = await chromium.connectOverCDP(cdpEndpoint, { timeout: 15_000 });
    const context = remote.contexts()[0] ?? (await remote.newContext());
    return { context, userDataDir: '', cdpEndpoint, pid: null, settings, signature: launchSignature(settings), networkBytes: 0, remote };
  }

  async #instanceFrom(base: WarmBrowser, spec: LaunchSpec, warm: boolean): Promise<Instance> {
    const instance: Instance = {
      ...base,
      resourceId: spec.resourceId,
      projectId: spec.projectId,
      log: this.#browserLog(() => instance),
      warm,
    };
    instance.log.secrets = [spec.proxy?.password ?? '', ...spec.cookies.map((cookie) => cookie.value)].filter((s) => s.length >= 4);
    try {
      // The same call a warm start makes in the api, so a session's cookies apply alike.
      if (spec.cookies.length) await setSessionCookies(instance.cdpEndpoint, spec.cookies);
      this.#watch(instance);
    } catch (error) {
      await this.#destroy(instance);
      throw error;
    }
    return instance;
  }

  #refillWarm() {
    if (this.#closed || this.#draining) return;
    for (const [signature, settings] of this.#warmPolicy.wanted()) this.#topUp(settings, signature);
  }

  #topUp(settings: LaunchSettings, signature: string) {
    const have = this.#warm.filter((instance) => instance.signature === signature).length + (this.#warming.get(signature) ?? 0);
    for (let i = have; i < this.#warmPolicy.target(signature); i++) {
      this.#warming.set(signature, (this.#warming.get(signature) ?? 0) + 1);
      this.#launchChromium(settings, null)
        .then(async (browser) => {
          if (this.#closed || this.#draining) return this.#destroy(browser);
          const warmId = randomUUID();
          const instance: Instance = {
            ...browser,
            warmId,
            resourceId: '',
            projectId: '',
            log: this.#browserLog(() => instance),
            warm: true,
          };
          this.#watch(instance);
          this.#warm.push(instance);
          await this.#options.onWarmReady?.({ warmId, signature, cdpEndpoint: browser.cdpEndpoint, pid: browser.pid });
          instance.offered = true;
        })
        .catch((error) => this.#options.log.error({ err: error }, 'could not launch a warm browser'))
        .finally(() => {
          const left = (this.#warming.get(signature) ?? 1) - 1;
          if (left > 0) this.#warming.set(signature, left);
          else this.#warming.delete(signature);
        });
    }
  }

  /**
   * Retires waiting browsers their settings no longer need: those of settings not started here for
   * `recentMs` or pushed out by others, and any beyond the target. Called from the heartbeat. The
   * offer is withdrawn first and the browser destroyed only if that removed it: one the api claimed
   * meanwhile stays for its adoption (and `reconcile` handles it if that never comes). A browser
   * whose offer is not written yet waits for a later round, so no offer outlives its browser.
   */
  async trimWarm() {
    if (this.#trimming || this.#closed) return;
    this.#trimming = true;
    try {
      this.#warmPolicy.expire();
      for (const instance of this.#warmPolicy.surplus(this.#warm)) {
        if (!instance.offered || !instance.warmId) continue;
        if (this.#options.withdrawWarm && !(await this.#options.withdrawWarm(instance.warmId))) continue;
        const index = this.#warm.indexOf(instance);
        if (index < 0) continue; // the pool closed meanwhile (nothing can claim a withdrawn offer)
        this.#warm.splice(index, 1);
        await this.#destroy(instance);
      }
    } finally {
      this.#trimming = false;
    }
  }

  #trimLogged() {
    this.trimWarm().catch((error) => this.#options.log.warn({ err: error }, 'could not retire warm browsers'));
  }

  async #launchChromium(settings: LaunchSettings, proxy: LaunchSpec['proxy']): Promise<WarmBrowser> {
    const { screen } = settings;
    const userDataDir = path.join(this.#options.browsersDir, randomUUID());
    const env = browserEnvironment(userDataDir);
    mkdirSync(env.HOME as string, { recursive: true });
    // Under the egress policy the browser's only proxy is its egress proxy, loopback included;
    // the session's own proxy is that one's upstream.
    const egress = this.#options.egress ? await EgressProxy.start({ policy: this.#options.egress, upstream: proxy }) : null;
    let context: BrowserContext;
    try {
      context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: this.#options.chromiumPath,
        env,
        headless: true,
        args: chromiumArgs(settings, { egress: egress !== null }),
        viewport: screen,
        screen,
        proxy: egress ? { server: egress.server, bypass: '<-loopback>' } : (proxy ?? undefined),
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        timeout: 30_000,
      });
    } catch (error) {
      await egress?.close();
      throw error;
    }
    const cdpEndpoint = await readDevToolsEndpoint(userDataDir);
    const pid = findProcessesMentioning(`--user-data-dir=${userDataDir}`).find((candidate) => parentOf(candidate) === process.pid) ?? null;
    return { context, userDataDir, cdpEndpoint, pid, settings, signature: launchSignature(settings), networkBytes: 0, egress };
  }

  #browserLog(owner: () => Instance) {
    return new BrowserLog(owner, this.#options.onLog, this.#options.log);
  }

  /** Browser logs and network bytes of a resource, from every page it opens. */
  #watch(instance: Instance) {
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
  }

  async #destroy(instance: WarmBrowser | Instance) {
    if ('log' in instance) await instance.log.flushNow();
    if (instance.remote) {
      // Not ours: disconnect, and leave the browser (and its default context) to its owner.
      await Promise.race([instance.remote.close().catch(() => {}), sleep(5000)]);
      return;
    }
    await Promise.race([instance.context.close().catch(() => {}), sleep(5000)]);
    if (instance.pid && isAlive(instance.pid)) {
      try {
        process.kill(instance.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (const pid of findProcessesMentioning(`--user-data-dir=${instance.userDataDir}`)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(instance.userDataDir, { recursive: true, force: true });
    await instance.egress?.close();
  }
}

function parentOf(pid: number) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return -1;
  }
}

/** Chromium writes its CDP port and browser path to DevToolsActivePort once it listens. */
async function readDevToolsEndpoint(userDataDir: string) {
  const file = path.join(userDataDir, 'DevToolsActivePort');
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      const [port, browserPath] = readFileSync(file, 'utf8').trim().split('\n');
      if (port && browserPath) return `ws://127.0.0.1:${port}${browserPath}`;
    } catch {
      // not written yet
    }
    await sleep(50);
  }
  throw new Error('Chromium did not open its DevTools port');
}
