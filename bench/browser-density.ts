/**
 * `npm run bench:browser-density`: how many browsers one host on this machine holds, each started
 * through the api with one page open on a local page, before the median start → usable (POST
 * start answered and `connectOverCDP` through remoteUrl done) exceeds BENCH_DENSITY_LIMIT_MS; the
 * memory and CPU of an idle browser at each level; and the launch flags' effect on an idle
 * browser's memory (the host's flags against the same without its memory savings). Writes
 * docs/benchmarks/browser-density.md (not with BENCH_NO_WRITE=1).
 *
 * Settings (environment): BENCH_DENSITY_STEP browsers added per level (16), of which
 * BENCH_DENSITY_PROBES are timed (4) and the rest started BENCH_DENSITY_FILL_CONCURRENCY at a time
 * (2), BENCH_DENSITY_MAX the most it starts (400), BENCH_DENSITY_LIMIT_MS (1000),
 * BENCH_DENSITY_BUDGET_S no new level after this long climbing (210), BENCH_DENSITY_SETTLE_MS before
 * a level is measured (3000), BENCH_DENSITY_CPU_WINDOW_MS the CPU measurement (5000),
 * BENCH_DENSITY_WARM_WAIT_MS how long a timed start waits for the warm pool to offer a browser
 * (10000), BENCH_DENSITY_MIN_FREE_MB no new level below this much available memory (2048),
 * BENCH_DENSITY_FLAG_BROWSERS browsers per flag set (4).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { SessionResource, WarmBrowser } from '../db/entities/index.ts';
import { browserEnvironment, chromiumArgs } from '../server/browsers/host/chromium/chromiumProcess.ts';
import { findProcessesMentioning } from '../server/browsers/host/chromium/processes.ts';
import {
  BROWSER_MEMORY_SHARE,
  BROWSERS_PER_CORE,
  defaultBrowsersPerHost,
  MEMORY_PER_BROWSER,
} from '../server/browsers/hosts/hostCapacity.ts';
import { defaultScreen } from '../server/browsers/launch/launchSettings.ts';
import { measureTrees, memoryAvailable, type TreeUsage } from './support/processMemory.ts';
import { BENCH_PAGE_HOST, machineLine, percentile, startBenchStack } from './support/stack.ts';

const runStart = performance.now();
const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const STEP = setting('BENCH_DENSITY_STEP', 16);
const PROBES = Math.min(STEP, setting('BENCH_DENSITY_PROBES', 4));
const FILL_CONCURRENCY = setting('BENCH_DENSITY_FILL_CONCURRENCY', 2);
const MAX = setting('BENCH_DENSITY_MAX', 400);
const LIMIT_MS = setting('BENCH_DENSITY_LIMIT_MS', 1000);
const BUDGET_MS = setting('BENCH_DENSITY_BUDGET_S', 210) * 1000;
const SETTLE_MS = setting('BENCH_DENSITY_SETTLE_MS', 3000);
const CPU_WINDOW_MS = setting('BENCH_DENSITY_CPU_WINDOW_MS', 5000);
const WARM_WAIT_MS = setting('BENCH_DENSITY_WARM_WAIT_MS', 10_000);
const MIN_FREE = setting('BENCH_DENSITY_MIN_FREE_MB', 2048) * 2 ** 20;
const FLAG_BROWSERS = setting('BENCH_DENSITY_FLAG_BROWSERS', 4);

const MB = 2 ** 20;
const mb = (bytes: number) => (bytes / MB).toFixed(0);
const median = (values: number[]) => percentile(values, 50);

const site = http.createServer((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end(`<!doctype html><title>density</title><h1>an idle page</h1><p>${'Some text. '.repeat(200)}</p>`);
});
await new Promise<void>((resolve) => site.listen(0, BENCH_PAGE_HOST, resolve));
const siteUrl = `http://${BENCH_PAGE_HOST}:${(site.address() as { port: number }).port}/`;

/** Per idle browser: the means of its tree's figures, and CPU as a share of one core over `windowMs`. */
function perBrowser(before: TreeUsage[], after: TreeUsage[], windowMs: number) {
  const n = Math.max(1, after.length);
  const sum = (key: keyof TreeUsage) => after.reduce((total, usage) => total + usage[key], 0);
  const cpu = after.reduce((total, usage, i) => total + Math.max(0, usage.cpuSeconds - (before[i]?.cpuSeconds ?? usage.cpuSeconds)), 0);
  return {
    processes: sum('processes') / n,
    rss: sum('rss') / n,
    pss: sum('pss') / n,
    uss: sum('uss') / n,
    cpuPercent: (cpu / (windowMs / 1000) / n) * 100,
  };
}

/**
 * Idle figures of these browser trees, measured after SETTLE_MS, CPU over CPU_WINDOW_MS; with the
 * CPU of this process (the whole service runs in it: api, worker, browser host) and of the machine
 * over the same window, as shares of one core.
 */
async function measureIdle(roots: () => Promise<number[]> | number[]) {
  await sleep(SETTLE_MS);
  const pids = await roots();
  const before = measureTrees(pids);
  const service = process.cpuUsage();
  const machine = machineCpu();
  await sleep(CPU_WINDOW_MS);
  const serviceUsed = process.cpuUsage(service);
  const machineAfter = machineCpu();
  const seconds = CPU_WINDOW_MS / 1000;
  return {
    ...perBrowser(before, measureTrees(pids), CPU_WINDOW_MS),
    servicePercent: ((serviceUsed.user + serviceUsed.system) / 1e6 / seconds) * 100,
    machinePercent: ((machineAfter.busy - machine.busy) / CLOCK_TICKS / seconds) * 100,
  };
}

const CLOCK_TICKS = 100;

/** CPU ticks the machine spent busy (all cores), from /proc/stat. */
function machineCpu() {
  const [, ...ticks] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string).trim().split(/\s+/).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
  return { busy: user + nice + system + irq + softirq + steal };
}

// 1. The flags: browsers launched as the host launches them, with and without its memory savings.
const flagSets: { name: string; args: string[] }[] = (() => {
  const settings = { image: 'chromium', screen: defaultScreen, args: [] };
  const host = chromiumArgs(settings, { egress: false, sandbox: false });
  return [
    {
      name: 'before: the host’s flags without its feature switches (Playwright’s own)',
      args: host.filter((arg) => !/^--(enable|disable)-features=/.test(arg)),
    },
    { name: 'now: the host’s flags (omnibox WebUI off, network service in process)', args: host },
    { name: 'considered: now + `--disable-software-rasterizer` (not adopted: no WebGL)', args: [...host, '--disable-software-rasterizer'] },
  ];
})();

console.log(`bench: launch flags, ${FLAG_BROWSERS} idle browsers per set`);
const flagRows: { name: string; usage: Awaited<ReturnType<typeof measureIdle>> }[] = [];
for (const set of flagSets) {
  const folders: string[] = [];
  const contexts = [];
  try {
    for (let i = 0; i < FLAG_BROWSERS; i++) {
      const folder = mkdtempSync(path.join(os.tmpdir(), 'bf-density-'));
      folders.push(folder);
      const context = await chromium.launchPersistentContext(folder, {
        executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
        env: browserEnvironment(folder),
        headless: true,
        args: set.args,
        viewport: defaultScreen,
        screen: defaultScreen,
      });
      contexts.push(context);
      await (context.pages()[0] ?? (await context.newPage())).goto(siteUrl);
    }
    const roots = folders.map((folder) => findProcessesMentioning(`--user-data-dir=${folder}`).find((pid) => !isChild(pid)) ?? -1);
    flagRows.push({ name: set.name, usage: await measureIdle(() => roots) });
  } finally {
    await Promise.all(contexts.map((context) => context.close()));
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}

/** A Chromium child process (renderer, GPU, utility, zygote) rather than a browser. */
function isChild(pid: number) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=');
  } catch {
    return true;
  }
}

// 2. The climb: browsers through the api, STEP more per level, until starts get slow.
console.log('bench: starting the stack (scratch database, Temporal dev server, api, worker, browser host, default warm pool)');
const room = String(MAX + 2);
const stack = await startBenchStack({
  BROWSERS_PER_HOST: room,
  BROWSERS_PER_PROJECT: room,
  // The browsers stay open, unused, for the whole climb.
  BROWSER_IDLE_TIMEOUT_SECONDS: '3600',
});
type Level = {
  browsers: number;
  usable: number[];
  loaded: number[];
  warm: number;
  idle: Awaited<ReturnType<typeof measureIdle>>;
  available: number;
  /** RSS of this process (the service and the bench's client). */
  serviceRss: number;
};
const levels: Level[] = [];
const started: { sessionId: string; resourceId: string }[] = [];
let stoppedBy = `BENCH_DENSITY_MAX (${MAX}) reached`;
/** Available memory before the first start (the stack up, its warm browser offered). */
let availableAtStart = Number.NaN;
let serviceRssAtStart = Number.NaN;
try {
  const waitForWarm = async () => {
    const deadline = Date.now() + WARM_WAIT_MS;
    while ((await stack.orm.em.fork().count(WarmBrowser, {})) < 1 && Date.now() < deadline) await sleep(20);
  };
  const runningPids = async () =>
    (await stack.orm.em.fork().find(SessionResource, { status: 'running' }, { fields: ['pid'] })).map((row) => row.pid ?? -1);

  await waitForWarm();
  availableAtStart = memoryAvailable();
  serviceRssAtStart = process.memoryUsage().rss;
  const climbStart = Date.now();
  /** Starts a browser for the next session, opens the local page in it and disconnects; answers its timings. */
  const startOne = async () => {
    const entry = { sessionId: '', resourceId: '' };
    started.push(entry);
    entry.sessionId = (await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, { name: `density ${started.length}` })).id;
    const sessionId = entry.sessionId;
    const t0 = performance.now();
    const resource = await stack.call('POST', `/${stack.slug}/api/sessions/${sessionId}/start`, stack.token);
    entry.resourceId = resource.id;
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    const usable = performance.now() - t0;
    const context = browser.contexts()[0];
    if (!context) throw new Error('the started browser has no default context');
    await (context.pages()[0] ?? (await context.newPage())).goto(siteUrl);
    const loaded = performance.now() - t0;
    // Disconnect: the page stays open in the browser, which idles from here on.
    await browser.close();
    return { usable, loaded, warm: resource.warm as boolean };
  };
  while (started.length < MAX) {
    const target = Math.min(MAX, started.length + STEP);
    // Untimed: up to the level less its timed starts, a few at a time.
    const fillTo = Math.max(started.length, target - PROBES);
    while (started.length < fillTo) {
      const batch = Math.min(FILL_CONCURRENCY, fillTo - started.length);
      await Promise.all(Array.from({ length: batch }, () => startOne()));
    }
    // Timed: one at a time, each once the warm pool offers a browser (as starts spaced by a launch find it).
    const usable: number[] = [];
    const loaded: number[] = [];
    let warm = 0;
    while (started.length < target) {
      await waitForWarm();
      const timing = await startOne();
      usable.push(timing.usable);
      loaded.push(timing.loaded);
      if (timing.warm) warm++;
    }
    const idle = await measureIdle(runningPids);
    const level: Level = {
      browsers: started.length,
      usable,
      loaded,
      warm,
      idle,
      available: memoryAvailable(),
      serviceRss: process.memoryUsage().rss,
    };
    levels.push(level);
    console.log(
      `bench: ${level.browsers} browsers: start → usable median ${median(usable).toFixed(0)} ms, idle browser ${mb(idle.uss)} MB private, ${idle.cpuPercent.toFixed(2)} % CPU; service ${idle.servicePercent.toFixed(0)} %, machine ${idle.machinePercent.toFixed(0)} %`,
    );
    if (median(usable) > LIMIT_MS) {
      stoppedBy = `the median start → usable of the level's ${usable.length} timed starts exceeded ${LIMIT_MS} ms`;
      break;
    }
    if (Date.now() - climbStart > BUDGET_MS) {
      stoppedBy = `BENCH_DENSITY_BUDGET_S (${BUDGET_MS / 1000} s) spent`;
      break;
    }
    if (level.available < MIN_FREE) {
      stoppedBy = `available memory below BENCH_DENSITY_MIN_FREE_MB (${mb(MIN_FREE)} MB)`;
      break;
    }
  }
} finally {
  // Stops answer at once; the stack's teardown then closes what is left.
  for (const { sessionId, resourceId } of started.filter((entry) => entry.resourceId)) {
    await stack.call('POST', `/${stack.slug}/api/sessions/${sessionId}/${resourceId}/stop`, stack.token).catch(() => undefined);
  }
  await stack.stop();
  site.close();
}

// 3. The report.
const within = levels.filter((level) => median(level.usable) <= LIMIT_MS);
const held = within.at(-1)?.browsers ?? 0;
const reached = levels.some((level) => median(level.usable) > LIMIT_MS);
const last = levels.at(-1);
// What one more idle browser costs the machine: available memory lost per browser over the climb.
const perBrowserCost = last ? (availableAtStart - last.available) / last.browsers : Number.NaN;
const moreByMemory = last && perBrowserCost > 0 ? Math.floor((last.available - MIN_FREE) / perBrowserCost) : Number.NaN;
const cores = os.cpus().length;
const serviceRssPerBrowser = last ? (last.serviceRss - serviceRssAtStart) / last.browsers : Number.NaN;
const capacity = defaultBrowsersPerHost();
const capacityMet = capacity <= held ? 'within what the host held' : `**above what the host held (${held})**`;
const before = flagRows[0]?.usage;
const now = flagRows[1]?.usage;
const flagRow = ({ name, usage }: (typeof flagRows)[number]) =>
  `| ${name} | ${usage.processes.toFixed(1)} | ${mb(usage.rss)} | ${mb(usage.pss)} | ${mb(usage.uss)} | ${usage.cpuPercent.toFixed(2)} |`;
const levelRow = (level: Level) =>
  `| ${level.browsers} | ${median(level.usable).toFixed(0)} | ${Math.max(...level.usable).toFixed(0)} | ${median(level.loaded).toFixed(0)} | ${level.warm}/${level.usable.length} | ${mb(level.idle.rss)} | ${mb(level.idle.pss)} | ${mb(level.idle.uss)} | ${level.idle.cpuPercent.toFixed(2)} | ${level.idle.servicePercent.toFixed(0)} | ${level.idle.machinePercent.toFixed(0)} | ${mb(level.available)} |`;
const saved = before && now ? `${mb(before.uss - now.uss)} MB (${(((before.uss - now.uss) / before.uss) * 100).toFixed(0)} %)` : 'n/a';

const report = `# Benchmark: browser density

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}, ${mb(os.totalmem())} MB of memory.

Reproduce: \`npm run bench:browser-density\` (settings in the header of bench/browser-density.ts:
BENCH_DENSITY_STEP ${STEP}, BENCH_DENSITY_MAX ${MAX}, BENCH_DENSITY_LIMIT_MS ${LIMIT_MS}, BENCH_DENSITY_BUDGET_S ${BUDGET_MS / 1000}).

One browser host (the whole service in one process, as \`npm start\` runs it, with its default warm pool) starts
browsers, each for a session of its own: \`POST …/start\`, \`connectOverCDP\` through remoteUrl
("usable"), the local page loaded in the browser's page ("loaded"), then the client disconnects and
the browser idles with its page open. Each level adds ${STEP} browsers: ${STEP - PROBES} untimed, ${FILL_CONCURRENCY} at a time, then
${PROBES} timed one after another, each once the warm pool offers a browser (waiting up to ${WARM_WAIT_MS / 1000} s), as starts
spaced by a launch's time find it; the level's figure is their median. Then the idle browsers are
measured (${SETTLE_MS / 1000} s after the last start; CPU over ${CPU_WINDOW_MS / 1000} s): per browser, and the CPU of the service's
process (api, control worker and browser host together; Temporal and PostgreSQL run apart) and of
the whole machine, as shares of one core.

Memory per browser, summed over its processes: RSS counts the pages a process shares (Chromium's
code, shared memory) in every process, so it overstates; PSS splits shared pages between the
processes that map them (it falls as more browsers share them); USS is what the browser alone
holds, which the machine gets back when it closes. "Available" is the kernel's MemAvailable.

## Goals

| goal | measured |
|---|---|
| browsers one host holds before the median start → usable exceeds ${LIMIT_MS} ms | ${reached ? `**${held}**` : `**at least ${held}**: not reached (${stoppedBy})`} |
| RSS per idle browser (at ${last?.browsers ?? 0}) | ${last ? `${mb(last.idle.rss)} MB (PSS ${mb(last.idle.pss)} MB, private ${mb(last.idle.uss)} MB)` : 'n/a'} |
| available memory one more idle browser costs (over the climb) | ${Number.isFinite(perBrowserCost) ? `${mb(perBrowserCost)} MB` : 'n/a'} |
| CPU per idle browser (at ${last?.browsers ?? 0}) | ${last ? `${last.idle.cpuPercent.toFixed(2)} % of one core; the service's process ${(last.idle.servicePercent / last.browsers).toFixed(2)} % more per browser` : 'n/a'} |
| memory the launch flags save per idle browser (private memory, baseline: before) | ${saved} |
| the service's own memory per browser (its process's RSS growth over the climb) | ${Number.isFinite(serviceRssPerBrowser) ? `${mb(serviceRssPerBrowser)} MB` : 'n/a'} |
| more idle browsers the memory left would hold (down to ${mb(MIN_FREE)} MB available) | ${Number.isFinite(moreByMemory) ? moreByMemory : 'n/a'} |
| default \`BROWSERS_PER_HOST\` on this machine (server/browsers/hosts/hostCapacity.ts: ${BROWSER_MEMORY_SHARE} of the memory at ${mb(MEMORY_PER_BROWSER)} MB a browser, at most ${BROWSERS_PER_CORE} per core) | ${capacity}: ${capacityMet} |

The climb stopped because ${stoppedBy}. This machine has ${cores} cores. The run took ${((performance.now() - runStart) / 1000).toFixed(0)} s.

## Launch flags (${FLAG_BROWSERS} idle browsers each, one page on the local page)

| flags | processes | RSS MB | PSS MB | private MB | CPU % of a core |
|---|---|---|---|---|---|
${flagRows.map(flagRow).join('\n')}

## The climb

| browsers | start → usable median ms | max ms | start → page loaded median ms | warm | RSS MB / browser | PSS MB | private MB | CPU % / browser | service CPU % | machine CPU % | available MB |
|---|---|---|---|---|---|---|---|---|---|---|---|
${levels.map(levelRow).join('\n')}
`;
if (process.env.BENCH_NO_WRITE !== '1') {
  const dir = path.join(import.meta.dirname, '..', 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'browser-density.md'), report);
}
console.log(report);
