/**
 * `npm run bench:browser-start`: how long from `POST …/sessions/{id}/start` until the browser is
 * usable over CDP (Playwright `connectOverCDP` through remoteUrl done), cold and from the warm
 * pool, beside a raw playwright-core `chromium.launch()` in the same run; how long a stop takes to
 * answer and the teardown behind it; and the full lifecycle start → connectOverCDP → goto a local
 * page → stop beside a raw `chromium.launch()` → goto → close. Prints the goals beside
 * their baselines; and a persisted session's restored profile beside a fresh start (support/profileRestore.ts;
 * `BENCH_ONLY=profile` runs that alone and rewrites only its section; `BENCH_ONLY=recorder` the same for the recorder's section). The fingerprint's cost: start → a local page loaded in a page of the client's
 * own, cold, for a `desktop` session beside an `automation` one, alternating in the same rounds.
 * Writes docs/benchmarks/browser-start.md (not with BENCH_NO_WRITE=1).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Browser, chromium } from 'playwright-core';
import { SessionResource, WarmBrowser } from '../db/entities/index.ts';
import { CHROMIUM_FLAGS } from '../server/browsers/launch/chromiumFlags.ts';
import { measureProfileRestore } from './support/profileRestore.ts';
import { BENCH_PAGE_HOST, machineLine, percentile, startBenchStack } from './support/stack.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const LIFECYCLE_RUNS = Number(process.env.BENCH_LIFECYCLE_RUNS ?? 20);
const PROFILE_RUNS = Number(process.env.BENCH_PROFILE_RUNS ?? 20);
const ONLY_PROFILE = process.env.BENCH_ONLY === 'profile';
const ONLY_RECORDER = process.env.BENCH_ONLY === 'recorder';
/** Rounds of the recorder's variant (docs/browsers.md, Recordings): a recorded session beside a plain one, cold and warm. */
const RECORD_RUNS = Number(process.env.BENCH_RECORD_RUNS ?? 20);
/** The goal for the recorder (35): at most 10 % more from start to a loaded page. */
const RECORD_GOAL_RATIO = 1.1;

/** The goals (14, Speed). */
const STOP_GOAL_MS = 50;
const LIFECYCLE_GOAL_RATIO = 0.5;

const site = http.createServer((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end('<!doctype html><title>bench</title><h1>bench page</h1>');
});
await new Promise<void>((resolve) => site.listen(0, BENCH_PAGE_HOST, resolve));
const siteUrl = `http://${BENCH_PAGE_HOST}:${(site.address() as { port: number }).port}/`;

/** The page a client drives: the one a started browser has open, as a script would take it. */
async function firstPage(browser: Browser) {
  const context = browser.contexts()[0];
  if (!context) throw new Error('the browser has no default context');
  return context.pages()[0] ?? (await context.newPage());
}

console.log('bench: starting the stack (scratch database, Temporal dev server, api, worker, browser host, default settings)');
// Default settings, as a fresh `npm start` has them (the warm pool follows demand).
const stack = await startBenchStack();
const chromiumPath = stack.config.chromiumPath;
const reportFile = path.join(import.meta.dirname, '..', 'docs', 'benchmarks', 'browser-start.md');
try {
  if (ONLY_PROFILE) {
    // Only the profile section, measured now; the rest of the report stays as it was.
    const section = await measureProfileRestore(stack, PROFILE_RUNS);
    const before = existsSync(reportFile) ? readFileSync(reportFile, 'utf8') : '';
    const at = before.indexOf('## Profile restore');
    const next = at < 0 ? -1 : before.indexOf('\n## ', at + 1);
    const dated = `${section}\nMeasured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}.\n`;
    const report = at < 0 ? `${before.trimEnd()}\n\n${dated}` : `${before.slice(0, at)}${dated}${next < 0 ? '' : before.slice(next)}`;
    if (process.env.BENCH_NO_WRITE !== '1') writeFileSync(reportFile, report);
    console.log(dated);
    await stack.stop();
    site.close();
    process.exit(0);
  }
  // A cold start's settings must be new to the host: it keeps recently started settings warm
  // (BROWSER_WARM_RECENT, on by default), so each round's cold session has a screen of its own.
  const coldSessions = new Set<string>();
  const newColdSession = async (round: number) => {
    const screen = { width: 1281 + round, height: 720 };
    const id = (await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, { name: `cold-${round}`, screen })).id as string;
    coldSessions.add(id);
    return id;
  };
  const warmSession = (await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, { name: 'warm' })).id;
  // Screens of their own, so both start cold (a warm browser would hide the launch's cost).
  const desktopSession = (
    await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, { name: 'desktop', screen: { width: 1282, height: 720 } })
  ).id;
  const automationSession = (
    await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, {
      name: 'automation',
      screen: { width: 1282, height: 720 },
      fingerprint: 'automation',
    })
  ).id;
  // Cold rounds take sessions of screens new to the host (it keeps recently started settings warm).
  const coldRecordSession = async (round: number, record: boolean) =>
    (
      await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, {
        name: `${record ? 'recorded' : 'plain'} cold ${round}`,
        screen: { width: 1400 + 2 * round + (record ? 1 : 0), height: 720 },
        record,
      })
    ).id as string;
  const recordedWarm = (await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, { name: 'recorded warm', record: true })).id;

  const resourcePath = (sessionId: string, resourceId: string) => `/${stack.slug}/api/sessions/${sessionId}/${resourceId}`;

  /** POST stop, timed. The teardown behind it is read afterwards: the row's `stoppedAt` against the request's time. */
  async function stop(sessionId: string, resourceId: string) {
    const requestedAt = Date.now();
    const t0 = performance.now();
    const answer = await stack.call('POST', `${resourcePath(sessionId, resourceId)}/stop`, stack.token);
    stopAnswered.push(performance.now() - t0);
    if (answer.status === 'stopping') stoppingAnswers++;
    stops.push({ resourceId, requestedAt });
  }

  async function startToUsable(sessionId: string) {
    const t0 = performance.now();
    const resource = await stack.call('POST', `/${stack.slug}/api/sessions/${sessionId}/start`, stack.token);
    const answered = performance.now() - t0;
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    const elapsed = performance.now() - t0;
    (coldSessions.has(sessionId) ? coldAnswer : warmAnswer).push(answered);
    await browser.close();
    await stop(sessionId, resource.id);
    return { elapsed, warm: resource.warm as boolean };
  }

  /** start → connectOverCDP → a page of the client's own → a local page loaded: the fingerprint is in every new page. */
  async function startToPage(sessionId: string) {
    const t0 = performance.now();
    const resource = await stack.call('POST', `/${stack.slug}/api/sessions/${sessionId}/start`, stack.token);
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    const context = browser.contexts()[0] ?? (await browser.newContext());
    await (await context.newPage()).goto(siteUrl);
    const elapsed = performance.now() - t0;
    await browser.close();
    await stop(sessionId, resource.id);
    return elapsed;
  }

  // A warm browser is ready once its host has offered it (a row the api can claim).
  const waitForWarm = async () => {
    while ((await stack.orm.em.fork().count(WarmBrowser, {})) < 1) await sleep(20);
  };
  // Before a raw measurement, untimed: no teardown of the service's browsers shares the cores with it.
  const waitForTeardowns = async () => {
    while ((await stack.orm.em.fork().count(SessionResource, { status: 'stopping' })) > 0) await sleep(20);
  };

  const coldAnswer: number[] = [];
  const warmAnswer: number[] = [];
  const cold: number[] = [];
  const warm: number[] = [];
  const raw: number[] = [];
  const stopAnswered: number[] = [];
  const stops: { resourceId: string; requestedAt: number }[] = [];
  let stoppingAnswers = 0;
  let warmMisses = 0;
  const desktop: number[] = [];
  const automation: number[] = [];
  for (let i = 0; i < (ONLY_RECORDER ? 0 : RUNS); i++) {
    cold.push((await startToUsable(await newColdSession(i))).elapsed);
    await waitForWarm();
    const w = await startToUsable(warmSession);
    if (!w.warm) warmMisses++;
    warm.push(w.elapsed);
    await waitForTeardowns();
    const t0 = performance.now();
    const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_FLAGS });
    raw.push(performance.now() - t0);
    await browser.close();
    // Alternating which goes first, so neither always follows the other's teardown.
    for (const [sessionId, into] of i % 2
      ? ([
          [automationSession, automation],
          [desktopSession, desktop],
        ] as const)
      : ([
          [desktopSession, desktop],
          [automationSession, automation],
        ] as const)) {
      await waitForTeardowns();
      into.push(await startToPage(sessionId));
    }
    if ((i + 1) % 10 === 0) console.log(`bench: ${i + 1}/${RUNS} rounds`);
  }

  const lifecycle: number[] = [];
  const rawLifecycle: number[] = [];
  for (let i = 0; i < (ONLY_RECORDER ? 0 : LIFECYCLE_RUNS); i++) {
    await waitForWarm();
    const t0 = performance.now();
    const resource = await stack.call('POST', `/${stack.slug}/api/sessions/${warmSession}/start`, stack.token);
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    await (await firstPage(browser)).goto(siteUrl);
    await browser.close();
    await stop(warmSession, resource.id);
    lifecycle.push(performance.now() - t0);

    // The same steps with Playwright alone: launch, a page, the same local page, close.
    await waitForTeardowns();
    const r0 = performance.now();
    const own = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_FLAGS });
    await (await own.newPage()).goto(siteUrl);
    await own.close();
    rawLifecycle.push(performance.now() - r0);
  }
  const median = (values: number[]) => percentile(values, 50);
  // The recorder's cost: start → usable → the local page loaded, recorded beside plain, alternating.
  async function startToLoaded(sessionId: string) {
    const t0 = performance.now();
    const resource = await stack.call('POST', `/${stack.slug}/api/sessions/${sessionId}/start`, stack.token);
    const browser = await chromium.connectOverCDP(resource.remoteUrl);
    const usable = performance.now() - t0;
    await (await firstPage(browser)).goto(siteUrl);
    const loaded = performance.now() - t0;
    await browser.close();
    await stop(sessionId, resource.id);
    return { usable, loaded };
  }
  const loadBefore = os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(', ');
  const recordRows = { plainCold: [] as number[], recordedCold: [] as number[], plainWarm: [] as number[], recordedWarm: [] as number[] };
  const recordUsable = { plainCold: [] as number[], recordedCold: [] as number[], plainWarm: [] as number[], recordedWarm: [] as number[] };
  for (let i = 0; i < RECORD_RUNS; i++) {
    const cold = [
      ['plainCold', await coldRecordSession(i, false), false],
      ['recordedCold', await coldRecordSession(i, true), false],
    ] as const;
    const warm = [
      ['plainWarm', warmSession, true],
      ['recordedWarm', recordedWarm, true],
    ] as const;
    // Which goes first alternates: a warm start's claim has the pool launch a browser in its place,
    // which the start after it shares the cores with; in a fixed order one kind would always pay it.
    const order = i % 2 === 0 ? [...cold, ...warm] : [...[...cold].reverse(), ...[...warm].reverse()];
    for (const [key, sessionId, warmStart] of order) {
      await waitForTeardowns();
      if (warmStart) await waitForWarm();
      const timed = await startToLoaded(sessionId);
      recordRows[key].push(timed.loaded);
      recordUsable[key].push(timed.usable);
    }
  }
  const recordCost = (plain: number[], recorded: number[]) => median(recorded) / median(plain);

  // Every stop's teardown, from its request until the workflow recorded it stopped.
  const ids = stops.map((entry) => entry.resourceId);
  while ((await stack.orm.em.fork().count(SessionResource, { id: { $in: ids }, status: 'stopping' })) > 0) await sleep(100);
  const stoppedAt = new Map(
    (await stack.orm.em.fork().find(SessionResource, { id: { $in: ids } })).map((row) => [row.id, row.stoppedAt?.getTime() ?? Number.NaN]),
  );
  const stopToStopped = stops.map((entry) => (stoppedAt.get(entry.resourceId) ?? Number.NaN) - entry.requestedAt);

  const recordRow = (name: string, plain: number[], recorded: number[]) =>
    `| ${name} | ${plain.length} | ${median(plain).toFixed(0)} | ${median(recorded).toFixed(0)} | ${recordCost(plain, recorded).toFixed(2)} | ${recordCost(plain, recorded) <= RECORD_GOAL_RATIO ? 'met' : '**not met**'} |`;
  const recorderSection = `## Recorder (issue 35)

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; load average (1, 5, 15 min) ${loadBefore} before
and ${os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(', ')} after the recorder's rounds. Reproduce: \`npm run bench:browser-start\` (this section alone:
\`BENCH_ONLY=recorder npm run bench:browser-start\`; \`BENCH_RECORD_RUNS\` rounds, ${RECORD_RUNS} here).

A session with \`record: true\` beside the same session without it, in the same run, alternating
(and alternating which of the two goes first, round by round):
start → \`connectOverCDP\` usable → \`goto\` of the local page loaded. A cold recorded start waits
for the recorder on the browser's first tab before it answers; a warm one is adopted (and starts
recording) after the api answered. Every document then gets a small script in the recorder's
world at its start; rrweb's recorder (\`@rrweb/record\`, about 79 KB with the host's wrapper) is
sent into that world once the document has loaded and the page is idle (docs/browsers.md, Recordings).

| measure | runs | plain median ms | recorded median ms | recorded / plain | goal ≤ ${RECORD_GOAL_RATIO} |
|---|---|---|---|---|---|
${recordRow('start → usable, cold', recordUsable.plainCold, recordUsable.recordedCold)}
${recordRow('start → usable → page loaded, cold', recordRows.plainCold, recordRows.recordedCold)}
${recordRow('start → usable, warm', recordUsable.plainWarm, recordUsable.recordedWarm)}
${recordRow('start → usable → page loaded, warm', recordRows.plainWarm, recordRows.recordedWarm)}
`;
  if (ONLY_RECORDER) {
    // Only the recorder's section, measured now; the rest of the report stays as it was.
    const before = existsSync(reportFile) ? readFileSync(reportFile, 'utf8') : '';
    const at = before.indexOf('## Recorder');
    const next = at < 0 ? -1 : before.indexOf('\n## ', at + 1);
    const report =
      at < 0
        ? `${before.trimEnd()}\n\n${recorderSection}`
        : `${before.slice(0, at)}${recorderSection}${next < 0 ? '' : before.slice(next + 1)}`;
    if (process.env.BENCH_NO_WRITE !== '1') writeFileSync(reportFile, report);
    console.log(recorderSection);
  }
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  const row = (name: string, values: number[]) =>
    `| ${name} | ${values.length} | ${percentile(values, 50).toFixed(0)} | ${percentile(values, 95).toFixed(0)} |`;
  const met = (ok: boolean) => (ok ? 'met' : '**not met**');
  const lifecycleLimit = LIFECYCLE_GOAL_RATIO * median(rawLifecycle);
  const report = ONLY_RECORDER
    ? ''
    : `# Benchmark: browser start latency

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}, Chromium at ${chromiumPath}.

Reproduce: \`npm run bench:browser-start\` (BENCH_RUNS, BENCH_LIFECYCLE_RUNS to change the counts).

"Usable" means \`POST …/sessions/{id}/start\` answered and Playwright's \`connectOverCDP\` through the
answer's \`remoteUrl\` (the api's authenticated CDP proxy) completed. The service runs on its
default settings (the warm pool's floor of 1, growing with the rate of starts up to
\`BROWSER_WARM_POOL_MAX\`); each warm start waits until a host offers one (refill happens in the
background). A warm start is claimed by the api in the transaction that creates the resource and
answered at once; the resource's workflow has the host adopt it afterwards. Each round's cold
start is of a session with a screen no earlier start had, so it stays cold although the host keeps
recently started settings warm (\`BROWSER_WARM_RECENT\`): a session with its own screen started
again takes a warm browser like the warm rows.

A stop answers once it is requested (the workflow signalled, the row \`stopping\`); "stop → stopped"
is timed from the same request until the workflow recorded the resource \`stopped\` (its
\`stopped\` time): the teardown, which a stop waited for before. The lifecycle takes the page the
started browser has open (\`pages()[0]\`); the raw lifecycle launches Chromium with the same flags,
opens a page, loads the same local page and closes. Raw measurements start once no teardown of the
service's browsers is under way.

## Goals

| goal | target | measured (median) | baseline (median, same run) | |
|---|---|---|---|---|
| stop answers | ≤ ${STOP_GOAL_MS} ms | ${ms(median(stopAnswered))} | ${ms(median(stopToStopped))} until stopped | ${met(median(stopAnswered) <= STOP_GOAL_MS)} |
| full lifecycle: start → connectOverCDP → goto → stop (warm) | ≤ ${LIFECYCLE_GOAL_RATIO} × raw = ${ms(lifecycleLimit)} | ${ms(median(lifecycle))} | raw launch → goto → close ${ms(median(rawLifecycle))} | ${met(median(lifecycle) <= lifecycleLimit)} |

## All measures

| measure | runs | median ms | p95 ms |
|---|---|---|---|
${row('POST start answered (running, URLs issued), cold', coldAnswer)}
${row('POST start answered (running, URLs issued), warm pool', warmAnswer)}
${row('start → CDP usable, cold (no warm browser fits the session)', cold)}
${row('start → CDP usable, warm pool', warm)}
${row('raw playwright-core chromium.launch() (no service)', raw)}
${row('POST stop answered (stopping)', stopAnswered)}
${row('POST stop → resource stopped (teardown, not waited for)', stopToStopped)}
${row('full lifecycle: start → connectOverCDP → goto local page → stop (warm)', lifecycle)}
${row('raw playwright-core chromium.launch() → newPage → goto local page → close', rawLifecycle)}

## Fingerprint

A session's default fingerprint (\`desktop\`, docs/sessions-and-proxies.md) against
\`fingerprint: "automation"\` (Chromium's honest defaults), cold, alternating in the same rounds:
start → connectOverCDP → a new page of the client's own → a local page loaded. The new page is
where the injection costs (the host's injector holds it until its script is in).

| measure | runs | median ms | p95 ms |
|---|---|---|---|
${row('start → own page loaded, cold, fingerprint desktop', desktop)}
${row('start → own page loaded, cold, fingerprint automation', automation)}

Cost of the fingerprint (medians): ${(((median(desktop) - median(automation)) / median(automation)) * 100).toFixed(1)} % (goal: at most 10 %).
The warm rows above are \`desktop\` sessions (the default) on warm browsers launched for it.

Warm starts that missed the pool: ${warmMisses} of ${RUNS}. Stops answered \`stopping\` (the rest had
already stopped): ${stoppingAnswers} of ${stopAnswered.length}.

${await measureProfileRestore(stack, PROFILE_RUNS)}

${recorderSection}`;
  if (!ONLY_RECORDER && process.env.BENCH_NO_WRITE !== '1') {
    const dir = path.join(import.meta.dirname, '..', 'docs', 'benchmarks');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'browser-start.md'), report);
  }
  if (!ONLY_RECORDER) console.log(report);
} finally {
  await stack.stop();
  site.close();
}
