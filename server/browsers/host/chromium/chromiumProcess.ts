import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { EgressPolicy } from '../../../net/egressPolicy.ts';
import { CHROMIUM_FLAGS, LEAN_FEATURES, PLAYWRIGHT_FEATURES, PLAYWRIGHT_SWITCHES, withFeatures } from '../../launch/chromiumFlags.ts';
import { defaultLaunchFingerprint, fingerprintFlags } from '../../launch/fingerprint.ts';
import type { LaunchSettings } from '../../launch/launchSettings.ts';
import { launchSignature } from '../../launch/launchSignature.ts';
import { EgressProxy } from '../egress/egressProxy.ts';
import { attachFingerprint } from '../fingerprint/browserFingerprint.ts';
import type { FingerprintInjector } from '../fingerprint/fingerprintInjector.ts';
import { type PersistedProfile, prepareProfile } from '../profiles/persistedProfile.ts';
import { CdpMux } from '../relay/cdpMux.ts';
import { type BrowserCgroup, type BrowserCgroups, joinCommand } from './browserCgroups.ts';
import { BROWSER_POLICY, chromiumBinary, downloadPolicy, PROXY_PORT, type SandboxOptions, sandboxCommand } from './browserSandbox.ts';
import { browserMajorVersion } from './browserVersion.ts';
import { findProcessesMentioning, isAlive } from './processes.ts';

/**
 * One browser of this host, from launch to destruction: a Chromium process launched with the
 * host's flags and a minimal environment (`launchChromium`), or a browser running elsewhere taken
 * over its CDP URL (`connectExternal`); `destroyBrowser` ends either. Which browsers live, and for
 * whom, is the pool's to say (../pool/browserPool.ts).
 */

/** Under the egress policy: WebRTC may not send UDP around the proxy. */
const EGRESS_FLAGS = ['--force-webrtc-ip-handling-policy=disable_non_proxied_udp'];
/** Flags every browser gets on these hosts: Playwright's, no calls home, CDP over the pipe only. */
const REQUIRED_FLAGS = [...new Set([...PLAYWRIGHT_SWITCHES, ...CHROMIUM_FLAGS.filter((flag) => flag !== '--no-sandbox')])];

/**
 * Chromium's command line on this host: the host's flags (Chromium's own sandbox off only when
 * the host's is), the screen, the session's flags, and one feature switch of each kind carrying
 * Playwright's features, the host's memory savings and the session's own (`withFeatures`).
 */
export function chromiumArgs(settings: LaunchSettings, options: { egress: boolean; sandbox: boolean; major?: string }) {
  const { screen, args } = settings;
  return withFeatures(
    [
      ...REQUIRED_FLAGS,
      ...(options.sandbox ? [] : ['--no-sandbox']),
      ...(options.egress ? EGRESS_FLAGS : []),
      `--window-size=${screen.width},${screen.height}`,
      `--screen-info={0,0 ${screen.width}x${screen.height}}`,
      ...(options.major ? fingerprintFlags(settings.fingerprint ?? defaultLaunchFingerprint, options.major) : []),
      ...args,
    ],
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

/** The unprivileged user browsers run as (server/browsers/host/chromium/browserSandbox.ts). */
export type SandboxUser = SandboxOptions & { uid: number; gid: number };

/** How this host launches Chromium. */
export type ChromiumOptions = {
  chromiumPath: string;
  /** Where browsers may connect; null: anywhere (`BROWSER_EGRESS_POLICY=open`). */
  egress: EgressPolicy | null;
  /** Every browser's folder lives below this, which is how orphans are found after a crash. */
  browsersDir: string;
  /** The kernel's fence around each browser; null only with BROWSER_SANDBOX=off. */
  sandbox: SandboxUser | null;
  /** Each browser's memory, pids and CPU bounds; null only with BROWSER_SANDBOX=off on a host that cannot make them. */
  cgroups: BrowserCgroups | null;
  /** The size of a sandboxed browser's profile (its tmpfs), BROWSER_DISK_LIMIT_MB; null only in `bench:sandbox`'s baseline. */
  diskBytes: number | null;
};

/** The proxy a session's browser goes through. */
export type BrowserProxy = { server: string; username?: string; password?: string };

/** A browser up and speaking CDP, before anything of a resource is attached to it. */
export type LaunchedBrowser = {
  context: BrowserContext;
  /** Its profile (Chromium's --user-data-dir); empty for a browser running elsewhere. */
  userDataDir: string;
  /**
   * Where its downloads land, as the browser sees it: a folder of its profile, so inside the
   * sandbox on the profile's bounded tmpfs, which the host reads through the browser's own mount
   * namespace (server/browsers/host/downloads/). Unset for a browser running elsewhere.
   */
  downloadsDir?: string;
  /** Where its DevTools connection is served: the host's Unix socket, or the external URL. */
  cdpEndpoint: string;
  pid: number | null;
  /** What it was launched with, and their `launchSignature`. */
  settings: LaunchSettings;
  signature: string;
  /** Playwright's connection to the browser; for a browser running elsewhere, a stop only disconnects it. */
  remote?: Browser;
  /** Set for a browser running elsewhere: never killed, only disconnected. */
  external?: boolean;
  /** The proxy every connection of this browser goes through (null: no sandbox and the egress policy is open). */
  egress?: EgressProxy | null;
  /** The browser's CDP pipe, served to the host's Playwright and the relay. */
  mux?: CdpMux;
  /** Everything of the browser on disk: its profile, sockets and policy. */
  folder?: string;
  /** Where its sockets are: `folder`, or a short folder of their own when its path is too long. */
  sockets?: string;
  /** Its cgroups (memory, pids, CPU), which every process of it is in from the start. */
  cgroup?: BrowserCgroup;
  /** Puts the session's fingerprint into every target (a `desktop` browser launched here). */
  fingerprint?: FingerprintInjector;
  /** Resolves when it ends, however: its process exited (reaped, so `isAlive` says no), or a browser running elsewhere disconnected. */
  ended?: Promise<void>;
  /** A persisted session's: the host's folder its profile is restored from and saved to (../profiles/persistedProfile.ts). */
  persisted?: { dir: string; sandboxed: boolean };
};

/** How much of Chromium's own output a failed launch reports. */
const OUTPUT_KEPT = 4096;
/** How long a launch whose pipe closed waits for Chromium's exit, to report that instead. */
const EXIT_AFTER_PIPE_MS = 2_000;
/**
 * How long a launch may take, from Chromium's start until the host's Playwright is attached, its
 * failed launch's cleanup (`CLEANUP_BOUND_MS`) not included. Both together stay well inside the
 * launch activity's 60 s (`LAUNCH_TIMEOUT_MS`, workflows/browserSession.ts), so that what the
 * workflow sees is the launch's own failure with its reason, not Temporal's timeout (which a
 * retry would answer by joining the same launch).
 */
export const LAUNCH_BOUND_MS = 40_000;
/** The most of that the first CDP answer (Browser.getVersion) may take. */
const FIRST_ANSWER_MS = 20_000;
/** Kept for asking which tabs hold the attach up, when it fails. */
const TARGETS_MS = 3_000;
/** What a failed launch's cleanup takes at most: its groups' removal (5 s) and a little more. */
export const CLEANUP_BOUND_MS = 7_000;

/**
 * Launches Chromium for `settings`: in the sandbox (as its user, in its own namespaces, its one
 * way out the egress proxy) unless the host runs without one, always with CDP over a pipe and no
 * DevTools port. The host's Playwright connects through the pipe's multiplexer, as any client.
 */
export async function launchChromium(
  options: ChromiumOptions,
  settings: LaunchSettings,
  proxy: BrowserProxy | null,
  /** A persisted session's profile, restored before Chromium starts and saved at its stop. */
  profile: PersistedProfile | null = null,
): Promise<LaunchedBrowser> {
  const id = randomBytes(8).toString('hex');
  const folder = path.join(options.browsersDir, id);
  const userDataDir = path.join(folder, 'profile');
  const downloadsDir = path.join(userDataDir, 'downloads');
  // A Unix socket's path holds at most 107 bytes: under a deep DATA_DIR the sockets go to a
  // folder of their own in the temporary folder (removed with the browser).
  const sockets = folder.length + '/run/egress.sock'.length > 100 ? mkdtempSync(path.join(os.tmpdir(), 'bf-')) : folder;
  const runDir = path.join(sockets, 'run');
  const policyDir = path.join(folder, 'policy');
  mkdirSync(folder, { recursive: true, mode: 0o711 });
  // The session's timezone is the process's own: every frame and worker reads it, as on a desktop.
  const env: Record<string, string> = {
    ...browserEnvironment(userDataDir),
    TZ: (settings.fingerprint ?? defaultLaunchFingerprint).timezone,
  };
  for (const dir of [userDataDir, env.HOME as string, runDir, policyDir]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(sockets, 0o711);
  const { sandbox } = options;
  if (sandbox) {
    for (const dir of [userDataDir, env.HOME as string]) chownSync(dir, sandbox.uid, sandbox.gid);
    chmodSync(runDir, 0o755);
    chmodSync(policyDir, 0o755);
    const policy = { ...BROWSER_POLICY, ...downloadPolicy(downloadsDir) };
    writeFileSync(path.join(policyDir, 'browserflow.json'), JSON.stringify(policy), { mode: 0o644 });
  }
  const persisted = profile ? { dir: await prepareProfile(folder, userDataDir, profile, sandbox), sandboxed: sandbox !== null } : undefined;
  // Under the egress policy (and always in the sandbox, where it is the only way out) the
  // browser's one proxy is its egress proxy, loopback included; the session's proxy is its upstream.
  const egress =
    sandbox || options.egress
      ? await EgressProxy.start({
          policy: options.egress,
          upstream: proxy,
          socketPath: sandbox ? path.join(runDir, 'egress.sock') : undefined,
        })
      : null;
  if (sandbox && egress) chmodSync(path.join(runDir, 'egress.sock'), 0o666);
  const proxyServer = sandbox ? `http://127.0.0.1:${PROXY_PORT}` : (egress?.server ?? proxy?.server);
  const args = [
    ...chromiumArgs(settings, { egress: egress !== null, sandbox: sandbox !== null, major: browserMajorVersion(options.chromiumPath) }),
    ...(proxyServer ? [`--proxy-server=${proxyServer}`, '--proxy-bypass-list=<-loopback>'] : []),
    `--user-data-dir=${userDataDir}`,
    '--remote-debugging-pipe',
    'about:blank',
  ];
  const binary = chromiumBinary(options.chromiumPath);
  const sandboxed = sandbox
    ? sandboxCommand(
        sandbox,
        binary,
        { profile: userDataDir, run: runDir, policy: policyDir, persisted: persisted?.dir },
        args,
        options.diskBytes,
      )
    : { command: binary, args };
  let cgroup: BrowserCgroup | undefined;
  try {
    cgroup = options.cgroups?.create(id);
  } catch (error) {
    await egress?.close();
    rmSync(folder, { recursive: true, force: true });
    rmSync(sockets, { recursive: true, force: true });
    throw error;
  }
  const command = cgroup ? joinCommand(cgroup, sandboxed) : sandboxed;
  // Chromium reads commands on fd 3 and writes answers and events on fd 4.
  const child = spawn(command.command, command.args, { env, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'], detached: true });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) =>
      // The first line is what the caller is told (launchErrors.ts); the rest goes to the host's log only.
      reject(
        new Error(
          `Chromium exited at launch (${signal ?? `code ${code}`})\n<launching> ${binary} ${args.join(' ')}${sandbox ? ` (in the sandbox, as ${sandbox.user})` : ''}\nCall log:\n${output.trim()}`,
        ),
      ),
    );
    child.once('error', reject);
  });
  exited.catch(() => {});
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const mux = await CdpMux.serve(child.stdio[4] as Readable, child.stdio[3] as Writable, path.join(sockets, 'cdp.sock'));
  const launched: LaunchedBrowser = {
    context: null as never,
    userDataDir,
    downloadsDir,
    cdpEndpoint: mux.endpoint,
    pid: child.pid ?? null,
    settings,
    signature: launchSignature(settings),
    egress,
    mux,
    folder,
    sockets,
    cgroup,
    ended,
    persisted,
  };
  const deadline = Date.now() + LAUNCH_BOUND_MS;
  try {
    // A Chromium that exits at once closes its pipe too, and the pipe may tell first: its exit,
    // a moment later, says more (the command line and what it printed), so it is the failure.
    const ready = mux.command('Browser.getVersion', {}, FIRST_ANSWER_MS - EXIT_AFTER_PIPE_MS).catch(async (error: unknown) => {
      await Promise.race([exited, sleep(EXIT_AFTER_PIPE_MS)]);
      throw error;
    });
    await Promise.race([ready, exited]);
    const remote = await Promise.race([connectHost(mux, deadline), exited]);
    launched.remote = remote;
    const context = remote.contexts()[0] ?? (await remote.newContext());
    // Every tab gets the session's screen as its viewport, whoever opened it (this connection
    // sees every target of the browser, a remoteUrl client's included).
    const size = (page: Page) => page.setViewportSize(settings.screen).catch(() => {});
    context.on('page', size);
    await Promise.all(context.pages().map(size));
    launched.context = context;
    launched.fingerprint = await attachFingerprint(mux.endpoint, settings);
  } catch (error) {
    // No profile worth Chromium's own close: a launch that failed is ended at once.
    await destroyBrowser(launched, { closeFirst: false });
    throw error;
  }
  return launched;
}

/**
 * The host's Playwright on a browser that answers CDP. Playwright's connect waits until every tab
 * has committed its first navigation: a tab whose first load hangs holds it up for good, and on a
 * loaded machine one that commits while Playwright attaches may be missed (an `--app` window, say).
 * A second connection sees each tab as it is by then; when that one cannot attach either, the
 * launch fails, naming the tabs, rather than with Playwright's bare timeout.
 */
async function connectHost(mux: CdpMux, deadline: number) {
  // What is left of the launch's bound, less the question about the tabs, split between the tries.
  const attachUntil = deadline - TARGETS_MS;
  const started = Date.now();
  try {
    return await chromium.connectOverCDP(mux.endpoint, { timeout: Math.max(1000, (attachUntil - started) / 2) });
  } catch {
    // Playwright closed its connection; a fresh one below.
  }
  try {
    return await chromium.connectOverCDP(mux.endpoint, { timeout: Math.max(1000, attachUntil - Date.now()) });
  } catch (error) {
    const answer = await mux.command('Target.getTargets', {}, TARGETS_MS).catch(() => null);
    const targets = (answer?.result as { targetInfos?: { type: string; url: string }[] } | undefined)?.targetInfos ?? [];
    const tabs = targets.filter((target) => target.type === 'page').map((target) => target.url || '(no URL yet)');
    throw new Error(
      `the host could not attach to the browser within ${Math.round((Date.now() - started) / 1000)} s: a tab has not finished loading its first page (tabs: ${tabs.join(', ') || 'none'})`,
      { cause: error },
    );
  }
}

/**
 * A browser someone else runs, taken over its CDP URL: its own default context is the one runs
 * use. An http:// URL is resolved to the browser's WebSocket endpoint, which the api's CDP proxy
 * and cookie capture speak. No process of it is ours to measure or kill.
 */
export async function connectExternal(url: string, settings: LaunchSettings): Promise<LaunchedBrowser & { remote: Browser }> {
  let cdpEndpoint = url;
  if (/^https?:/i.test(url)) {
    const version = await fetch(new URL('/json/version', url), { signal: AbortSignal.timeout(10_000) });
    if (!version.ok) throw new Error(`${url} answered ${version.status} to /json/version`);
    cdpEndpoint = ((await version.json()) as { webSocketDebuggerUrl?: string }).webSocketDebuggerUrl ?? '';
    if (!cdpEndpoint) throw new Error(`${url} named no WebSocket endpoint in /json/version`);
  }
  const remote = await chromium.connectOverCDP(cdpEndpoint, { timeout: 15_000 });
  const context = remote.contexts()[0] ?? (await remote.newContext());
  const ended = new Promise<void>((resolve) => remote.once('disconnected', () => resolve()));
  return {
    context,
    userDataDir: '',
    cdpEndpoint,
    pid: null,
    settings,
    signature: launchSignature(settings),
    remote,
    external: true,
    ended,
  };
}

/** Ends a browser: closes it, kills what is left of its processes, removes its folder and its egress proxy. */
export async function destroyBrowser(browser: LaunchedBrowser, { closeFirst = true } = {}) {
  if (browser.external) {
    // Not ours: disconnect, and leave the browser (and its default context) to its owner.
    await Promise.race([browser.remote?.close().catch(() => {}), sleep(5000)]);
    return;
  }
  browser.fingerprint?.close();
  if (closeFirst) {
    // Chromium's own close first (it flushes its profile), at most 5 s; then whatever is left is killed.
    await browser.mux?.command('Browser.close', {}, 5000).catch(() => {});
    await Promise.race([browser.remote?.close().catch(() => {}), sleep(1000)]);
  }
  if (browser.pid && isAlive(browser.pid)) {
    try {
      // The sandbox's outer process: its namespace, and every process in it, ends with it.
      process.kill(browser.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const pid of findProcessesMentioning(`--user-data-dir=${browser.userDataDir}`)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await browser.cgroup?.remove();
  await browser.mux?.close();
  rmSync(browser.folder ?? browser.userDataDir, { recursive: true, force: true });
  if (browser.sockets) rmSync(browser.sockets, { recursive: true, force: true });
  await browser.egress?.close();
}
