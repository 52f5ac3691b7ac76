/**
 * `npm run bench:browser-start`: how long from `POST …/sessions/{id}/start` until the browser is
 * usable over CDP (Playwright `connectOverCDP` through remoteUrl done), cold and from the warm
 * pool, beside a raw playwright-core `chromium.launch()` in the same run; and the full lifecycle
 * start → connectOverCDP → goto a local page → stop. Writes docs/benchmarks/browser-start.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { WarmBrowser } from '../db/entities/index.ts';
import { CHROMIUM_FLAGS } from '../server/browsers/chromiumFlags.ts';
import { BENCH_PAGE_HOST, machineLine, percentile, startBenchStack } from './support/stack.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const LIFECYCLE_RUNS = Number(process.env.BENCH_LIFECYCLE_RUNS ?? 20);

const site = http.createServer((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end('<!doctype html><title>bench</title><h1>bench page</h1>');
});
await new Promise<void>((resolve) => site.listen(0, BENCH_PAGE_HOST, resolve));
const siteUrl = `http://${BENCH_PAGE_HOST}:${(site.address() as { port: number }).port}/`;

console.log('bench: starting the stack (scratch database, Temporal dev server, api, worker, browser host with a warm pool of 2)');
// BROWSER_WARM_RECENT off: it would warm a browser for the cold session's own screen, and the
// cold row is to measure launches.
const stack = await startBenchStack({ BROWSER_WARM_POOL: '2', BROWSER_WARM_RECENT: '0', BROWSERS_PER_PROJECT: '4' });
const chromiumPath = stack.config.chromiumPath;
try {
  const coldSession = (
    await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, { name: 'cold', screen: { width: 1281, height: 720 } })
  ).id;
  const warmSession = (await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, { name: 'warm' })).id;

  async function startToUsable(sessionId: string) {
    const t0 = performance.now();
    const resource = await stack.call('POST', `/${stack.slug}/api/sessions/${sessionId}/start`, stack.token);
    const answered = performance.now() - t0;
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    const elapsed = performance.now() - t0;
    (sessionId === coldSession ? coldAnswer : warmAnswer).push(answered);
    await browser.close();
    await stack.call('POST', `/${stack.slug}/api/sessions/${sessionId}/${resource.id}/stop`, stack.token);
    return { elapsed, warm: resource.warm as boolean };
  }

  // A warm browser is ready once its host has offered it (a row the api can claim).
  const waitForWarm = async () => {
    while ((await stack.orm.em.fork().count(WarmBrowser, {})) < 1) await sleep(20);
  };

  const coldAnswer: number[] = [];
  const warmAnswer: number[] = [];
  const cold: number[] = [];
  const warm: number[] = [];
  const raw: number[] = [];
  let warmMisses = 0;
  for (let i = 0; i < RUNS; i++) {
    cold.push((await startToUsable(coldSession)).elapsed);
    await waitForWarm();
    const w = await startToUsable(warmSession);
    if (!w.warm) warmMisses++;
    warm.push(w.elapsed);
    const t0 = performance.now();
    const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_FLAGS });
    raw.push(performance.now() - t0);
    await browser.close();
    if ((i + 1) % 10 === 0) console.log(`bench: ${i + 1}/${RUNS} rounds`);
  }

  const lifecycle: number[] = [];
  for (let i = 0; i < LIFECYCLE_RUNS; i++) {
    await waitForWarm();
    const t0 = performance.now();
    const resource = await stack.call('POST', `/${stack.slug}/api/sessions/${warmSession}/start`, stack.token);
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(siteUrl);
    await browser.close();
    await stack.call('POST', `/${stack.slug}/api/sessions/${warmSession}/${resource.id}/stop`, stack.token);
    lifecycle.push(performance.now() - t0);
  }

  const row = (name: string, values: number[]) =>
    `| ${name} | ${values.length} | ${percentile(values, 50).toFixed(0)} | ${percentile(values, 95).toFixed(0)} |`;
  const report = `# Benchmark: browser start latency

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}, Chromium at ${chromiumPath}.

Reproduce: \`npm run bench:browser-start\` (BENCH_RUNS, BENCH_LIFECYCLE_RUNS to change the counts).

"Usable" means \`POST …/sessions/{id}/start\` answered and Playwright's \`connectOverCDP\` through the
answer's \`remoteUrl\` (the api's authenticated CDP proxy) completed. The warm pool holds 2 browsers;
each warm start waits until a host offers one (refill happens in the background). A warm start is
claimed by the api in the transaction that creates the resource and answered at once; the
resource's workflow has the host adopt it afterwards. The cold session has a screen of its own;
the pool of recently started settings (\`BROWSER_WARM_RECENT\`) is off for the run, so its starts
stay cold. With it on (the default), a session with its own screen started again takes a warm
browser like the warm rows.

| measure | runs | median ms | p95 ms |
|---|---|---|---|
${row('POST start answered (running, URLs issued), cold', coldAnswer)}
${row('POST start answered (running, URLs issued), warm pool', warmAnswer)}
${row('start → CDP usable, cold (no warm browser fits the session)', cold)}
${row('start → CDP usable, warm pool', warm)}
${row('raw playwright-core chromium.launch() (no service)', raw)}
${row('full lifecycle: start → connectOverCDP → goto local page → stop (warm)', lifecycle)}

Warm starts that missed the pool: ${warmMisses} of ${RUNS}.
`;
  const dir = path.join(import.meta.dirname, '..', 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'browser-start.md'), report);
  console.log(report);
} finally {
  await stack.stop();
  site.close();
}
