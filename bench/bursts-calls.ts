/**
 * `npm run bench:bursts-calls`: the sustained rate of calls and session starts (issue 36), on a
 * fresh stack with default settings, beside plain Playwright in the same run.
 *
 * - A function of 3 nodes (a page, goto a local page, read its list items) called through REST
 *   execute and as an MCP tool (`tools/call`): (a) paced 2 s apart, (b) back to back, (c) 10
 *   concurrent callers × N calls each. Beside them, plain Playwright (playwright-core, one browser
 *   launched once): a fresh context per call, goto + read; 10 concurrent contexts for (c).
 * - A session's lifecycle (start → connectOverCDP → goto → stop), paced and back to back, beside a
 *   raw launch → goto → close.
 *
 * Reports medians, p95 and calls per second, the ratios against the issue's goals, and the false
 * failures (any non-2xx answer or failed call). Writes docs/benchmarks/bursts-calls.md (between
 * the markers; not with BENCH_NO_WRITE=1).
 *
 * BENCH_CALLS_PACED (10), BENCH_CALLS_BACK_TO_BACK (20), BENCH_CALLS_CONCURRENT (3 calls for each
 * of 10 callers), BENCH_CALLERS (10), BENCH_LIFECYCLES (10 of each kind), BENCH_PACE_MS (2000).
 */
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_FLAGS } from '../server/browsers/launch/chromiumFlags.ts';
import { writeFiguresBlock } from './support/figuresBlock.ts';
import { BENCH_PAGE_HOST, machineLine, percentile, startBenchStack } from './support/stack.ts';

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const PACED = setting('BENCH_CALLS_PACED', 10);
const BACK_TO_BACK = setting('BENCH_CALLS_BACK_TO_BACK', 20);
const CONCURRENT = setting('BENCH_CALLS_CONCURRENT', 3);
const CALLERS = setting('BENCH_CALLERS', 10);
const LIFECYCLES = setting('BENCH_LIFECYCLES', 10);
const PACE_MS = setting('BENCH_PACE_MS', 2_000);
const WARMUP = 2;

/** The flags this machine needs for a Chromium of its own: the service's own list. */
const PLAYWRIGHT_FLAGS = CHROMIUM_FLAGS;

/** Issue 36, Done when. */
const GOALS = { backToBack: 1.2, paced: 1.0, concurrentRate: 0.8, lifecycleBackToBack: 0.4, lifecyclePaced: 0.25 };

const site = http.createServer((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end(
    '<!doctype html><html><head><title>shop</title></head><body><h1>Fruit</h1><ul><li>apple</li><li>pear</li><li>plum</li></ul></body></html>',
  );
});
await new Promise<void>((resolve) => site.listen(0, BENCH_PAGE_HOST, resolve));
const pageUrl = `http://${BENCH_PAGE_HOST}:${(site.address() as { port: number }).port}/catalog`;

const source = {
  parameters: { url: { refType: 'string' } },
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
    items: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'li' } },
  },
  outputs: { first: { $ref: 'items.text' } },
};

/** One call's outcome: its time, or why it failed (a non-2xx answer, a tool error, an exception). */
type Outcome = { ms: number; failure?: string };
type Measure = { outcomes: Outcome[]; wallMs: number };

const started = Date.now();
console.log('bench: starting the stack (scratch database, Temporal dev server, api, worker, browser host) on default settings');
const stack = await startBenchStack();
const chromiumPath = stack.config.chromiumPath;
const own = await chromium.launch({ executablePath: chromiumPath, args: PLAYWRIGHT_FLAGS });
const mcpClients: Client[] = [];
try {
  const functionId = (
    await stack.call('PUT', `/${stack.slug}/api/functions`, stack.token, {
      name: 'Catalog',
      description: 'Reads a catalog page',
      slug: 'catalog',
      definition: {
        source,
        parameters: [{ name: 'url', refType: 'string' }],
        outputs: [
          { name: 'first', refType: 'string' },
          { name: 'items', refType: 'list', source: { nodeName: 'items', outputName: 'texts' } },
        ],
      },
    })
  ).id;
  const serverId = (
    await stack.call('PUT', `/${stack.slug}/api/mcp-servers`, stack.token, {
      name: 'Bench',
      slug: 'bench',
      description: '',
      functionIds: [functionId],
    })
  ).id;
  const key = await stack.call('PUT', '/api/api-keys', stack.token, { name: 'bench', accessType: 'full' });
  await stack.call('PUT', `/${stack.slug}/api/mcp-client-configs`, stack.token, {
    name: 'bench',
    description: '',
    mcpServerId: serverId,
    apiKeyId: key.id,
  });
  const args = { url: pageUrl };
  const threeItems = (outputs: unknown) => (outputs as { items?: unknown[] } | undefined)?.items?.length === 3;

  async function timed(call: () => Promise<string | undefined>): Promise<Outcome> {
    const t0 = performance.now();
    try {
      const failure = await call();
      return { ms: performance.now() - t0, ...(failure ? { failure } : {}) };
    } catch (error) {
      return { ms: performance.now() - t0, failure: error instanceof Error ? error.message.slice(0, 120) : String(error) };
    }
  }

  /** REST execute: a failure is its status and error code. */
  const rest = () =>
    timed(async () => {
      const response = await fetch(`${stack.base}/${stack.slug}/api/functions/slug/catalog/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key.secret },
        body: JSON.stringify({ args }),
      });
      const body = (await response.json().catch(() => ({}))) as { code?: string; outputs?: unknown };
      if (!response.ok) return `${response.status} ${body.code ?? ''}`.trim();
      return threeItems(body.outputs) ? undefined : 'unexpected outputs';
    });

  async function mcpClient() {
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.base}/${stack.slug}/api/mcp-servers/${serverId}/mcp`), {
        requestInit: { headers: { 'x-api-key': key.secret } },
      }),
    );
    await client.listTools();
    mcpClients.push(client);
    return client;
  }
  const mcp = (client: Client) => () =>
    timed(async () => {
      const result = await client.callTool({ name: 'catalog', arguments: args });
      if (result.isError) {
        // The error body the tool answers with, as text: its code says which limit or fault.
        const text = (result.content as { type: string; text?: string }[] | undefined)?.find((part) => part.type === 'text')?.text ?? '';
        return `tool error ${/"code":"([a-z_]+)"/.exec(text)?.[1] ?? text.slice(0, 80)}`;
      }
      return threeItems(result.structuredContent) ? undefined : 'unexpected outputs';
    });

  /** Plain Playwright: a fresh context of the one browser, goto, read the items, close the context. */
  const playwright = (browser: Browser) => () =>
    timed(async () => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(pageUrl);
        const items = await page.locator('li').allTextContents();
        return items.length === 3 ? undefined : 'unexpected items';
      } finally {
        await context.close();
      }
    });

  async function paced(call: () => Promise<Outcome>, count: number): Promise<Measure> {
    const outcomes: Outcome[] = [];
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      await sleep(PACE_MS);
      outcomes.push(await call());
    }
    return { outcomes, wallMs: performance.now() - t0 };
  }
  async function backToBack(call: () => Promise<Outcome>, count: number): Promise<Measure> {
    const outcomes: Outcome[] = [];
    const t0 = performance.now();
    for (let i = 0; i < count; i++) outcomes.push(await call());
    return { outcomes, wallMs: performance.now() - t0 };
  }
  /** `callers` callers at once, each making `count` calls back to back with its own call (its own MCP session). */
  async function concurrent(makeCall: () => Promise<() => Promise<Outcome>>, callers: number, count: number): Promise<Measure> {
    const calls = await Promise.all(Array.from({ length: callers }, makeCall));
    const t0 = performance.now();
    const each = await Promise.all(calls.map((call) => backToBack(call, count)));
    return { outcomes: each.flatMap((measure) => measure.outcomes), wallMs: performance.now() - t0 };
  }

  const pool = () => {
    const status = stack.host?.pool.warmStatus();
    if (!status) return 'no host';
    const rate = (claims: { claims: number; warm: number }) =>
      claims.claims ? `${Math.round((claims.warm / claims.claims) * 100)} %` : '—';
    return `target ${status.target}, ${status.size} waiting, hit rate ${rate(status.claims.recent)} (last ${status.claims.recent.windowSeconds} s), ${rate(status.claims.sinceStart)} since start`;
  };
  const poolAfter: Record<string, string> = {};

  // Warm-up, not counted: connections, JIT, the function's first compile.
  const mcpOne = await mcpClient();
  for (let i = 0; i < WARMUP; i++) {
    await rest();
    await mcp(mcpOne)();
    await playwright(own)();
  }
  await sleep(PACE_MS);

  console.log(`bench: (a) paced ${PACE_MS} ms apart, ${PACED} calls each`);
  const pacedRest = await paced(rest, PACED);
  const pacedMcp = await paced(mcp(mcpOne), PACED);
  poolAfter['calls paced'] = pool();
  const pacedPlaywright = await paced(playwright(own), PACED);

  console.log(`bench: (b) back to back, ${BACK_TO_BACK} calls each`);
  const b2bRest = await backToBack(rest, BACK_TO_BACK);
  const b2bPlaywright = await backToBack(playwright(own), BACK_TO_BACK);
  const b2bMcp = await backToBack(mcp(mcpOne), BACK_TO_BACK);
  poolAfter['calls back to back'] = pool();
  await sleep(PACE_MS);

  console.log(`bench: (c) ${CALLERS} concurrent callers × ${CONCURRENT} calls`);
  const concRest = await concurrent(async () => rest, CALLERS, CONCURRENT);
  const concPlaywright = await concurrent(async () => playwright(own), CALLERS, CONCURRENT);
  const concMcp = await concurrent(async () => mcp(await mcpClient()), CALLERS, CONCURRENT);
  poolAfter[`${CALLERS} concurrent callers`] = pool();
  // Let the calls' browsers go before the lifecycles.
  for (const until = Date.now() + 60_000; (stack.host?.pool.runningCount ?? 0) > 0 && Date.now() < until; ) await sleep(100);

  // Session lifecycle: start → connectOverCDP → goto → stop, against raw launch → goto → close.
  const sessionId = (await stack.call('PUT', `/${stack.slug}/api/sessions`, stack.token, { name: 'lifecycle' })).id;
  const lifecycle = () =>
    timed(async () => {
      const answer = await fetch(`${stack.base}/${stack.slug}/api/sessions/${sessionId}/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.token}` },
      });
      const resource = (await answer.json().catch(() => ({}))) as { id?: string; remoteUrl?: string; code?: string };
      if (!answer.ok || !resource.remoteUrl) return `start: ${answer.status} ${resource.code ?? ''}`.trim();
      const browser = await chromium.connectOverCDP(resource.remoteUrl);
      try {
        const context = browser.contexts()[0];
        const page = context?.pages()[0] ?? (await context?.newPage());
        if (!page) return 'no page';
        await page.goto(pageUrl);
      } finally {
        await browser.close();
      }
      const stopped = await fetch(`${stack.base}/${stack.slug}/api/sessions/${sessionId}/${resource.id}/stop`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.token}` },
      });
      return stopped.ok ? undefined : `stop: ${stopped.status}`;
    });
  const rawLifecycle = () =>
    timed(async () => {
      const browser = await chromium.launch({ executablePath: chromiumPath, args: PLAYWRIGHT_FLAGS });
      try {
        await (await browser.newPage()).goto(pageUrl);
      } finally {
        await browser.close();
      }
      return undefined;
    });
  console.log(`bench: session lifecycles, ${LIFECYCLES} of each kind, paced then back to back`);
  const pacedLifecycle = await paced(lifecycle, LIFECYCLES);
  poolAfter['lifecycles paced'] = pool();
  const pacedRaw = await paced(rawLifecycle, LIFECYCLES);
  const b2bLifecycle = await backToBack(lifecycle, LIFECYCLES);
  poolAfter['lifecycles back to back'] = pool();
  const b2bRaw = await backToBack(rawLifecycle, LIFECYCLES);

  // The figures.
  const times = (measure: Measure) => measure.outcomes.filter((outcome) => !outcome.failure).map((outcome) => outcome.ms);
  const median = (measure: Measure) => percentile(times(measure), 50);
  const failures = (measure: Measure) => measure.outcomes.filter((outcome) => outcome.failure);
  const perSecond = (measure: Measure) => times(measure).length / (measure.wallMs / 1000);
  const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : '—');
  const why = (measure: Measure) => {
    const counts = new Map<string, number>();
    for (const outcome of failures(measure)) counts.set(outcome.failure as string, (counts.get(outcome.failure as string) ?? 0) + 1);
    return [...counts].map(([reason, n]) => `${n}× ${reason}`).join('; ');
  };
  const row = (label: string, measure: Measure, withRate: boolean) =>
    `| ${label} | ${measure.outcomes.length} | ${failures(measure).length}${failures(measure).length ? ` (${why(measure)})` : ''} | ${ms(median(measure))} | ${ms(percentile(times(measure), 95))} | ${withRate ? perSecond(measure).toFixed(2) : '—'} |`;
  const met = (ok: boolean) => (ok ? 'met' : '**not met**');
  const ratio = (a: number, b: number) => a / b;
  const goalRow = (label: string, value: number, limit: number, atMost = true, extra = true) =>
    `| ${label} | ${Number.isFinite(value) ? `${value.toFixed(2)}×` : '—'} | ${atMost ? '≤' : '≥'} ${limit}× | ${met(extra && Number.isFinite(value) && (atMost ? value <= limit : value >= limit))} |`;
  const totalFailures = [pacedRest, pacedMcp, b2bRest, b2bMcp, concRest, concMcp, pacedLifecycle, b2bLifecycle].reduce(
    (sum, measure) => sum + failures(measure).length,
    0,
  );

  const figures = `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}, Chromium at ${chromiumPath}; the whole run took ${Math.round((Date.now() - started) / 1000)} s.

Reproduce: \`npm run bench:bursts-calls\` (counts: BENCH_CALLS_PACED ${PACED}, BENCH_CALLS_BACK_TO_BACK ${BACK_TO_BACK}, BENCH_CALLERS ${CALLERS} × BENCH_CALLS_CONCURRENT ${CONCURRENT}, BENCH_LIFECYCLES ${LIFECYCLES}, BENCH_PACE_MS ${PACE_MS}).

The service as a fresh \`npm start\` runs it, on its default settings (api, control worker and
browser host in one process, eager workflow starts; a scratch database and Temporal dev server).
The function: 3 nodes (browser.page → page.goto of a local page → extract.text of its list items),
called through \`POST …/functions/slug/catalog/execute\` and as an MCP tool (\`tools/call\`, an MCP SDK
client over Streamable HTTP), with a full-access API key. Plain Playwright in the same process and
run: playwright-core, one Chromium (${PLAYWRIGHT_FLAGS.join(' ')}) launched once; each call a fresh
context, goto the same page, read the list items, close the context. ${WARMUP} warm-up rounds are not
counted. Paced: ${PACE_MS} ms between an answer and the next call. Back to back: each call as the
last is answered. Concurrent: ${CALLERS} callers at once (MCP: each its own session), each making
${CONCURRENT} calls back to back; calls per second = answered calls / the phase's wall time. A
failure is any non-2xx answer, tool error or exception; the times are of the calls that answered.

| measure | calls | failures | median ms | p95 ms | calls/s |
|---|---|---|---|---|---|
${row('REST execute, paced', pacedRest, false)}
${row('MCP tools/call, paced', pacedMcp, false)}
${row('Playwright context + goto + read, paced', pacedPlaywright, false)}
${row('REST execute, back to back', b2bRest, true)}
${row('MCP tools/call, back to back', b2bMcp, true)}
${row('Playwright context + goto + read, back to back', b2bPlaywright, true)}
${row(`REST execute, ${CALLERS} concurrent callers`, concRest, true)}
${row(`MCP tools/call, ${CALLERS} concurrent callers`, concMcp, true)}
${row(`Playwright, ${CALLERS} concurrent contexts`, concPlaywright, true)}
${row('session lifecycle (start → connectOverCDP → goto → stop), paced', pacedLifecycle, false)}
${row('raw launch → goto → close, paced', pacedRaw, false)}
${row('session lifecycle, back to back', b2bLifecycle, true)}
${row('raw launch → goto → close, back to back', b2bRaw, true)}

Against the goals (issue 36, Done when), each ratio against Playwright's figure of the same kind:

| goal | measured | limit | |
|---|---|---|---|
${goalRow('REST execute back to back, median / Playwright', ratio(median(b2bRest), median(b2bPlaywright)), GOALS.backToBack)}
${goalRow('MCP tools/call back to back, median / Playwright', ratio(median(b2bMcp), median(b2bPlaywright)), GOALS.backToBack)}
${goalRow('REST execute paced, median / Playwright', ratio(median(pacedRest), median(pacedPlaywright)), GOALS.paced)}
${goalRow('MCP tools/call paced, median / Playwright', ratio(median(pacedMcp), median(pacedPlaywright)), GOALS.paced)}
${goalRow(`REST execute, ${CALLERS} concurrent: calls/s / Playwright's (and every call answers)`, ratio(perSecond(concRest), perSecond(concPlaywright)), GOALS.concurrentRate, false, failures(concRest).length === 0)}
${goalRow(`MCP tools/call, ${CALLERS} concurrent: calls/s / Playwright's (and every call answers)`, ratio(perSecond(concMcp), perSecond(concPlaywright)), GOALS.concurrentRate, false, failures(concMcp).length === 0)}
${goalRow('session lifecycle back to back, median / raw', ratio(median(b2bLifecycle), median(b2bRaw)), GOALS.lifecycleBackToBack)}
${goalRow('session lifecycle paced, median / raw', ratio(median(pacedLifecycle), median(pacedRaw)), GOALS.lifecyclePaced)}

False failures (the service's calls and lifecycles that did not answer 2xx or failed): **${totalFailures}**.

The warm pool right after each of the service's phases (the host's own figures, as the host
overview shows them; the hit rate: starts that took a warm browser over all starts that could):
${Object.entries(poolAfter)
  .map(([phase, text]) => `- ${phase}: ${text}`)
  .join('\n')}
`;
  console.log(figures);
  if (process.env.BENCH_NO_WRITE !== '1')
    writeFiguresBlock(
      path.join(import.meta.dirname, '..', 'docs', 'benchmarks', 'bursts-calls.md'),
      'bursts-calls.ts',
      'Benchmark: calls and starts one after another, and ten at once',
      figures,
    );
} finally {
  for (const client of mcpClients) await client.close().catch(() => {});
  await own.close();
  await stack.stop();
  site.close();
}
