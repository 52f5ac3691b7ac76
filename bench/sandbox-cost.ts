/**
 * `npm run bench:sandbox`: what the kernel sandbox (server/browsers/host/chromium/browserSandbox.ts) and the
 * browsers' bounds (server/browsers/host/chromium/browserCgroups.ts) cost a browser, measured in one run on
 * browsers launched by the host's own `launchChromium`, of three kinds: "off", `sandbox: null`
 * (BROWSER_SANDBOX=off); "on", the sandbox's user with no bounds (no cgroup, the profile on the
 * host's disk: the baseline of the bounds); "bounded", as hosts run them (the sandbox, a cgroup
 * per browser with the default limits, the profile on a tmpfs of BROWSER_DISK_LIMIT_MB's default).
 * All go through an egress proxy allowing only the local page, as hosts run them:
 *
 * 1. cold start → usable: from the `launchChromium` call until a new page has loaded the local page
 *    and answered a `page.evaluate`; the launch alone beside it. The kinds take turns (each round
 *    starts with the next), one launch of each first untimed (the binary and its libraries into the page cache);
 * 2. warm start → usable: what a start from the warm pool still pays, on a browser launched and
 *    left idle for BENCH_SANDBOX_WARM_IDLE_MS: newPage, goto the local page, evaluate;
 * 3. density: BENCH_SANDBOX_DENSITY browsers of each kind at once, each with the local page open,
 *    measured after BENCH_SANDBOX_SETTLE_MS: PSS, private memory (USS) and RSS summed over each
 *    browser's processes (the sandbox's bubblewrap and socat included, and Chromium's crash
 *    handlers in both), and how many would fit in BENCH_SANDBOX_FIT_GIB at that PSS.
 *
 * Settings (environment): BENCH_SANDBOX_LAUNCHES cold launches of each kind (10),
 * BENCH_SANDBOX_WARM warm starts of each kind (10), BENCH_SANDBOX_WARM_IDLE_MS (1000),
 * BENCH_SANDBOX_DENSITY (8), BENCH_SANDBOX_SETTLE_MS (3000), BENCH_SANDBOX_FIT_GIB (16),
 * BENCH_SANDBOX_USER (browserflow-browser), CHROMIUM_PATH (/usr/bin/chromium). Prints a table and
 * one JSON line; writes nothing. Needs root (the sandbox's user owns each browser's profile).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrowserCgroups } from '../server/browsers/host/chromium/browserCgroups.ts';
import { openPathTo, prepareSandbox } from '../server/browsers/host/chromium/browserSandbox.ts';
import {
  type ChromiumOptions,
  destroyBrowser,
  type LaunchedBrowser,
  launchChromium,
} from '../server/browsers/host/chromium/chromiumProcess.ts';
import { findProcessesMentioning, processTree, readProcessTable } from '../server/browsers/host/chromium/processes.ts';
import { defaultScreen, type LaunchSettings } from '../server/browsers/launch/launchSettings.ts';
import { parseConfig } from '../server/config.ts';
import { createLogger } from '../server/logger.ts';
import { EgressPolicy, parseAllowedDestinations } from '../server/net/egressPolicy.ts';
import { measureTrees, type TreeUsage } from './support/processMemory.ts';
import { BENCH_PAGE_HOST, machineLine, percentile } from './support/stack.ts';

const runStart = performance.now();
const loadAtStart = os.loadavg()[0] ?? 0;
const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const LAUNCHES = setting('BENCH_SANDBOX_LAUNCHES', 10);
const WARM = setting('BENCH_SANDBOX_WARM', 10);
const WARM_IDLE_MS = setting('BENCH_SANDBOX_WARM_IDLE_MS', 1000);
const DENSITY = setting('BENCH_SANDBOX_DENSITY', 8);
const SETTLE_MS = setting('BENCH_SANDBOX_SETTLE_MS', 3000);
const FIT_GIB = setting('BENCH_SANDBOX_FIT_GIB', 16);
const SANDBOX_USER = process.env.BENCH_SANDBOX_USER ?? 'browserflow-browser';
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const MB = 2 ** 20;
const mb = (bytes: number) => (bytes / MB).toFixed(0);
const ms = (value: number) => value.toFixed(0);
const stats = (values: number[]) => ({ median: percentile(values, 50), p95: percentile(values, 95) });

const site = http.createServer((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end(`<!doctype html><title>sandbox</title><h1>a small page</h1><p>${'Some text. '.repeat(200)}</p>`);
});
await new Promise<void>((resolve) => site.listen(0, BENCH_PAGE_HOST, resolve));
const siteUrl = `http://${BENCH_PAGE_HOST}:${(site.address() as { port: number }).port}/`;

const allowed = parseAllowedDestinations(BENCH_PAGE_HOST);
if ('invalid' in allowed) throw new Error(`${BENCH_PAGE_HOST} is not a destination the egress policy reads`);
// Throws, saying what is missing, when the machine cannot build the sandbox.
const sandbox = prepareSandbox(SANDBOX_USER, createLogger({ logLevel: 'warn' }));
if (!sandbox) throw new Error('prepareSandbox answered no sandbox for a user');
const browsersDir = mkdtempSync(path.join(os.tmpdir(), 'bf-sandbox-bench-'));
openPathTo(browsersDir, sandbox);

// The limits a host gets by default (server/config.ts), in cgroups beneath this process's own.
const { limits } = parseConfig({}).browsers;
const cgroups = BrowserCgroups.prepare(limits, browsersDir);

const KINDS = ['off', 'on', 'bounded'] as const;
type Kind = (typeof KINDS)[number];
const base = { chromiumPath: CHROMIUM_PATH, egress: new EgressPolicy(allowed), browsersDir };
const kinds: Record<Kind, ChromiumOptions> = {
  off: { ...base, sandbox: null, cgroups: null, diskBytes: null },
  on: { ...base, sandbox, cgroups: null, diskBytes: null },
  bounded: { ...base, sandbox, cgroups, diskBytes: limits.diskBytes },
};
const settings: LaunchSettings = { image: 'chromium', screen: defaultScreen, args: [] };

/** Every browser still open, so that a failure anywhere still ends them all. */
const open = new Set<LaunchedBrowser>();
async function launch(kind: Kind) {
  const browser = await launchChromium(kinds[kind], settings, null);
  open.add(browser);
  return browser;
}
async function destroy(browser: LaunchedBrowser) {
  open.delete(browser);
  await destroyBrowser(browser);
}

/** A page of the local site, loaded and answering: what a client's first step needs. */
async function firstUsablePage(browser: LaunchedBrowser) {
  const page = await browser.context.newPage();
  await page.goto(siteUrl);
  const title = await page.evaluate(() => document.title);
  if (title !== 'sandbox') throw new Error(`the local page answered ${JSON.stringify(title)}`);
  return page;
}

/**
 * A browser's memory and processes: its process tree, plus Chromium's crash handlers, which
 * daemonize out of the tree to init when no sandbox holds them (inside one, bubblewrap's init
 * keeps them). They name the browser's folder, as does everything else of it.
 */
function usageOf(browser: LaunchedBrowser): TreeUsage {
  const table = readProcessTable();
  const tree = new Set(processTree(table, browser.pid ?? -1).map((proc) => proc.pid));
  const outside = new Set(findProcessesMentioning(browser.folder ?? browser.userDataDir).filter((pid) => !tree.has(pid)));
  const roots = [browser.pid ?? -1, ...[...outside].filter((pid) => !outside.has(table.byPid.get(pid)?.ppid ?? -1))];
  const total: TreeUsage = { processes: 0, rss: 0, pss: 0, uss: 0, cpuSeconds: 0 };
  for (const usage of measureTrees(roots)) {
    for (const key of Object.keys(total) as (keyof TreeUsage)[]) total[key] += usage[key];
  }
  return total;
}

/** Each round starts with the next kind: none always gets the machine fresher. */
const orderOf = (round: number): Kind[] => KINDS.map((_, i) => KINDS[(round + i) % KINDS.length] as Kind);

const cold = Object.fromEntries(KINDS.map((kind) => [kind, { launch: [] as number[], usable: [] as number[] }])) as Record<
  Kind,
  { launch: number[]; usable: number[] }
>;
const warm = Object.fromEntries(KINDS.map((kind) => [kind, [] as number[]])) as Record<Kind, number[]>;
const density = {} as Record<Kind, { perBrowser: TreeUsage }>;

try {
  console.log(`bench: untimed launch of each kind, then ${LAUNCHES} cold launches of each, alternating`);
  for (const kind of KINDS) {
    const browser = await launch(kind);
    await firstUsablePage(browser);
    await destroy(browser);
  }
  for (let round = 0; round < LAUNCHES; round++) {
    for (const kind of orderOf(round)) {
      const t0 = performance.now();
      const browser = await launch(kind);
      const launched = performance.now() - t0;
      await firstUsablePage(browser);
      cold[kind].usable.push(performance.now() - t0);
      cold[kind].launch.push(launched);
      await destroy(browser);
    }
  }

  console.log(`bench: ${WARM} warm starts of each kind (a browser idle ${WARM_IDLE_MS} ms after its launch), alternating`);
  for (let round = 0; round < WARM; round++) {
    for (const kind of orderOf(round)) {
      const browser = await launch(kind);
      await sleep(WARM_IDLE_MS);
      const t0 = performance.now();
      await firstUsablePage(browser);
      warm[kind].push(performance.now() - t0);
      await destroy(browser);
    }
  }

  for (const kind of KINDS) {
    console.log(`bench: density, ${DENSITY} browsers of kind ${kind}, each with the local page open`);
    const browsers: LaunchedBrowser[] = [];
    try {
      for (let i = 0; i < DENSITY; i++) {
        const browser = await launch(kind);
        browsers.push(browser);
        // Its one page: the about:blank it was launched with, taken to the local page.
        const page = browser.context.pages()[0] ?? (await browser.context.newPage());
        await page.goto(siteUrl);
      }
      await sleep(SETTLE_MS);
      const trees = browsers.map(usageOf);
      const mean = (key: keyof TreeUsage) => trees.reduce((total, tree) => total + tree[key], 0) / trees.length;
      density[kind] = {
        perBrowser: { processes: mean('processes'), rss: mean('rss'), pss: mean('pss'), uss: mean('uss'), cpuSeconds: mean('cpuSeconds') },
      };
    } finally {
      await Promise.all(browsers.map(destroy));
    }
  }
} finally {
  await Promise.all([...open].map(destroy));
  cgroups.close();
  rmSync(browsersDir, { recursive: true, force: true });
  site.close();
}

// The report.
const browsersIn = (bytes: number) => Math.floor((FIT_GIB * 2 ** 30) / bytes);
const change = (from: number, to: number) => `${to - from >= 0 ? '+' : ''}${ms(to - from)} (${(((to - from) / from) * 100).toFixed(1)} %)`;
const timingRow = (name: string, of: (kind: Kind) => number[]) => {
  const [off, on, bounded] = KINDS.map((kind) => stats(of(kind)));
  const cells = [off, on, bounded].flatMap((s) => [ms(s?.median ?? 0), ms(s?.p95 ?? 0)]);
  return `| ${name} | ${cells.join(' | ')} | ${change(off?.median ?? 0, on?.median ?? 0)} | ${change(on?.median ?? 0, bounded?.median ?? 0)} |`;
};
const memoryRow = (name: string, key: 'pss' | 'uss' | 'rss') =>
  `| ${name} | ${KINDS.map((kind) => mb(density[kind].perBrowser[key])).join(' | ')} |`;
const seconds = (performance.now() - runStart) / 1000;
const loadAtEnd = os.loadavg()[0] ?? 0;

console.log(`
Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; load average ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end; ${seconds.toFixed(0)} s.

| ms (${LAUNCHES} cold, ${WARM} warm of each) | off median | off p95 | on median | on p95 | bounded median | bounded p95 | sandbox: on − off (median) | bounds: bounded − on (median) |
|---|---|---|---|---|---|---|---|---|
${timingRow('cold start → usable (launch, newPage, goto, evaluate)', (kind) => cold[kind].usable)}
${timingRow('of which the launch (launchChromium)', (kind) => cold[kind].launch)}
${timingRow(`warm start → usable (newPage, goto, evaluate; idle ${WARM_IDLE_MS} ms)`, (kind) => warm[kind])}

| per browser (${DENSITY} at once, local page open) | off | on | bounded |
|---|---|---|---|
${memoryRow('PSS MB', 'pss')}
${memoryRow('private (USS) MB', 'uss')}
${memoryRow('RSS MB', 'rss')}
| processes | ${KINDS.map((kind) => density[kind].perBrowser.processes.toFixed(1)).join(' | ')} |
| browsers in ${FIT_GIB} GiB at this PSS | ${KINDS.map((kind) => browsersIn(density[kind].perBrowser.pss)).join(' | ')} |
`);
console.log(
  JSON.stringify({
    bench: 'sandbox-cost',
    date: new Date().toISOString(),
    machine: machineLine(),
    seconds: Math.round(seconds),
    loadAverage: { start: loadAtStart, end: loadAtEnd },
    settings: { launches: LAUNCHES, warm: WARM, warmIdleMs: WARM_IDLE_MS, density: DENSITY, settleMs: SETTLE_MS, fitGiB: FIT_GIB },
    limits,
    ...Object.fromEntries(
      KINDS.map((kind) => [
        kind,
        {
          coldUsableMs: stats(cold[kind].usable),
          launchMs: stats(cold[kind].launch),
          warmUsableMs: stats(warm[kind]),
          perBrowser: {
            processes: density[kind].perBrowser.processes,
            pssMB: Math.round(density[kind].perBrowser.pss / MB),
            ussMB: Math.round(density[kind].perBrowser.uss / MB),
            rssMB: Math.round(density[kind].perBrowser.rss / MB),
          },
          fitIn: { GiB: FIT_GIB, browsers: browsersIn(density[kind].perBrowser.pss) },
        },
      ]),
    ),
  }),
);
