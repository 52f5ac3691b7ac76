/**
 * `npm run bench:mcp-call-causes`: the browser-side causes named for `bench:mcp-call`'s stretch,
 * each measured alone on a fresh browser launched as the browser host launches it
 * (server/browsers/host/chromium/chromiumProcess.ts): its first `page.goto` and the first `extract.text`
 * read (a locator's `evaluateAll`, which makes Playwright inject its script), under four
 * conditions taken in turns so they share the machine's noise:
 *
 * - plain: no sandbox, no proxy (what plain Playwright does);
 * - sandbox + egress proxy: as the host runs browsers (the proxy in this process);
 * - the same beside a concurrent launch (a warm-pool refill);
 * - the same with the tab primed (a locator run on about:blank before the navigation).
 *
 * Then the teardown: how long destroying a browser blocks this process's event loop (which the
 * host shares with the egress proxy and Playwright of the next run). Writes
 * docs/benchmarks/mcp-call-causes.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { openPathTo, prepareSandbox } from '../server/browsers/host/chromium/browserSandbox.ts';
import { type ChromiumOptions, destroyBrowser, launchChromium } from '../server/browsers/host/chromium/chromiumProcess.ts';
import { defaultBrowserImage } from '../server/browsers/launch/images.ts';
import type { LaunchSettings } from '../server/browsers/launch/launchSettings.ts';
import { EgressPolicy } from '../server/net/egressPolicy.ts';
import { BENCH_PAGE_HOST, machineLine, percentile } from './support/stack.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 12);
const site = http.createServer((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end(
    '<!doctype html><html><head><title>shop</title></head><body><h1>Fruit</h1><ul><li>apple</li><li>pear</li><li>plum</li></ul></body></html>',
  );
});
await new Promise<void>((resolve) => site.listen(0, BENCH_PAGE_HOST, resolve));
const url = `http://${BENCH_PAGE_HOST}:${(site.address() as { port: number }).port}/catalog`;

const browsersDir = mkdtempSync(path.join(os.tmpdir(), 'bf-causes-'));
const sandbox = prepareSandbox(process.env.BROWSER_SANDBOX === 'off' ? null : 'browserflow-browser', pino({ level: 'silent' }));
if (sandbox) openPathTo(browsersDir, sandbox);
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hosted: ChromiumOptions = {
  chromiumPath,
  sandbox,
  egress: new EgressPolicy([{ kind: 'subnet', address: BENCH_PAGE_HOST, prefix: 32, family: 'ipv4' }]),
  browsersDir,
  cgroups: null,
  diskBytes: 1024 * 2 ** 20,
};
const plain: ChromiumOptions = { chromiumPath, sandbox: null, egress: null, browsersDir, cgroups: null, diskBytes: null };
const settings: LaunchSettings = { image: defaultBrowserImage, screen: { width: 1280, height: 720 }, args: [] };

type Condition = { label: string; options: ChromiumOptions; concurrentLaunch?: boolean; primed?: boolean };
const conditions: Condition[] = [
  { label: 'plain (no sandbox, no proxy)', options: plain },
  { label: 'sandbox + egress proxy (as hosted)', options: hosted },
  { label: 'as hosted, beside a concurrent launch', options: hosted, concurrentLaunch: true },
  { label: 'as hosted, tab primed on about:blank', options: hosted, primed: true },
];

async function measure({ options, concurrentLaunch, primed }: Condition) {
  const browser = await launchChromium(options, settings, null);
  let other: ReturnType<typeof launchChromium> | undefined;
  let destroyed = false;
  try {
    // Settled, as a warm browser is when it is claimed.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    if (primed) await page.locator('li').evaluateAll((elements) => elements.length);
    other = concurrentLaunch ? launchChromium(options, settings, null) : undefined;
    let t0 = performance.now();
    await page.goto(url);
    const goto = performance.now() - t0;
    t0 = performance.now();
    // biome-ignore lint/performance/useDomNodeTextContent: what extract.text reads
    await page.locator('li').evaluateAll((elements) => elements.map((element) => (element as HTMLElement).innerText));
    const text = performance.now() - t0;
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    t0 = performance.now();
    destroyed = true;
    await destroyBrowser(browser);
    const teardown = performance.now() - t0;
    delay.disable();
    return { goto, text, teardown, blocked: delay.max / 1e6 };
  } finally {
    // A round that failed leaves no browser behind, the concurrent one included.
    if (!destroyed) await destroyBrowser(browser);
    if (other) await destroyBrowser(await other);
  }
}

const results = conditions.map(() => ({ goto: [] as number[], text: [] as number[], teardown: [] as number[], blocked: [] as number[] }));
for (let round = 0; round < RUNS; round++) {
  for (const [k, condition] of conditions.entries()) {
    const r = await measure(condition);
    const into = results[k] as (typeof results)[number];
    into.goto.push(r.goto);
    into.text.push(r.text);
    into.teardown.push(r.teardown);
    into.blocked.push(r.blocked);
  }
}
site.close();
rmSync(browsersDir, { recursive: true, force: true });

const ms = (values: number[]) => percentile(values, 50).toFixed(0);
const rows = conditions.map(({ label }, k) => {
  const r = results[k] as (typeof results)[number];
  const both = r.goto.map((g, i) => g + (r.text[i] as number));
  return `| ${label} | ${ms(r.goto)} | ${ms(r.text)} | ${ms(both)} | ${ms(r.teardown)} | ${ms(r.blocked)} |`;
});
const report = `# Benchmark: the causes named for a function call's stretch

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${RUNS} rounds, the conditions
taken in turns; medians in ms.

Reproduce: \`npm run bench:mcp-call-causes\` (BENCH_RUNS to change the count, 12 by default;
BROWSER_SANDBOX=off when the machine cannot build the sandbox).

The browser's side of \`bench:mcp-call\` (docs/benchmarks/mcp-call.md) taken apart, without the
api, Temporal or the database: a fresh browser launched as the browser host launches it
(server/browsers/host/chromium/chromiumProcess.ts), its first \`page.goto\` to a local page and the first
\`extract.text\` read of the list items (a locator's \`evaluateAll\`: Playwright injects its script
into the page on this first use). The conditions:

- plain: no sandbox and no proxy, as plain Playwright launches Chromium;
- as hosted: in the sandbox, every connection through the browser's egress proxy (in this process);
- as hosted, beside a concurrent launch: another browser launched as the first navigation starts,
  as a warm-pool refill did right after a claim;
- as hosted, tab primed: a locator run on the tab's about:blank before the navigation, as warm
  browsers now are (server/browsers/host/pool/browserPool.ts, \`primed\`).

Then the teardown: how long destroying the browser took, and the longest stretch for which it
blocked this process's event loop (the host's loop also runs the egress proxy and Playwright of
the next run).

| condition | first page.goto | first extract.text | both | teardown | event loop blocked by the teardown (max) |
|---|---|---|---|---|---|
${rows.join('\n')}
`;
const dir = path.join(import.meta.dirname, '..', 'docs', 'benchmarks');
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, 'mcp-call-causes.md'), report);
console.log(report);
