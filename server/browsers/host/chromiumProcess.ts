import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import type { LaunchSettings } from '../launchSettings.ts';
import { launchSignature } from '../launchSignature.ts';
import { CHROMIUM_FLAGS, LEAN_FEATURES, PLAYWRIGHT_FEATURES, withFeatures } from './chromiumFlags.ts';
import type { EgressPolicy } from './egressPolicy.ts';
import { EgressProxy } from './egressProxy.ts';
import { findProcessesMentioning, isAlive } from './processes.ts';

/**
 * One browser of this host, from launch to destruction: a Chromium process launched with the
 * host's flags and a minimal environment (`launchChromium`), or a browser running elsewhere taken
 * over its CDP URL (`connectExternal`); `destroyBrowser` ends either. Which browsers live, and for
 * whom, is the pool's to say (./browserPool.ts).
 */

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

/** How this host launches Chromium. */
export type ChromiumOptions = {
  chromiumPath: string;
  /** Where browsers may connect; null: anywhere (`BROWSER_EGRESS_POLICY=open`). */
  egress: EgressPolicy | null;
  /** Every browser's user-data-dir lives below this, which is how orphans are found after a crash. */
  browsersDir: string;
};

/** The proxy a session's browser goes through. */
export type BrowserProxy = { server: string; username?: string; password?: string };

/** A browser up and listening for CDP, before anything of a resource is attached to it. */
export type LaunchedBrowser = {
  context: BrowserContext;
  /** Empty for a browser running elsewhere. */
  userDataDir: string;
  cdpEndpoint: string;
  pid: number | null;
  /** What it was launched with, and their `launchSignature`. */
  settings: LaunchSettings;
  signature: string;
  /** A browser running elsewhere, connected over CDP: a stop disconnects, it never kills. */
  remote?: Browser;
  /** The proxy every connection of this browser goes through (null: the egress policy is open). */
  egress?: EgressProxy | null;
};

export async function launchChromium(
  options: ChromiumOptions,
  settings: LaunchSettings,
  proxy: BrowserProxy | null,
): Promise<LaunchedBrowser> {
  const { screen } = settings;
  const userDataDir = path.join(options.browsersDir, randomUUID());
  const env = browserEnvironment(userDataDir);
  mkdirSync(env.HOME as string, { recursive: true });
  // Under the egress policy the browser's only proxy is its egress proxy, loopback included;
  // the session's own proxy is that one's upstream.
  const egress = options.egress ? await EgressProxy.start({ policy: options.egress, upstream: proxy }) : null;
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: options.chromiumPath,
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
  return { context, userDataDir, cdpEndpoint, pid, settings, signature: launchSignature(settings), egress };
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
  return { context, userDataDir: '', cdpEndpoint, pid: null, settings, signature: launchSignature(settings), remote };
}

/** Ends a browser: closes it, kills what is left of its processes, removes its folder and its egress proxy. */
export async function destroyBrowser(browser: LaunchedBrowser) {
  if (browser.remote) {
    // Not ours: disconnect, and leave the browser (and its default context) to its owner.
    await Promise.race([browser.remote.close().catch(() => {}), sleep(5000)]);
    return;
  }
  await Promise.race([browser.context.close().catch(() => {}), sleep(5000)]);
  if (browser.pid && isAlive(browser.pid)) {
    try {
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
  rmSync(browser.userDataDir, { recursive: true, force: true });
  await browser.egress?.close();
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
