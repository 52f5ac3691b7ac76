/**
 * `npm run bench:mcp-call`: a function — a 3-node extraction (a page, goto, extract the list
 * items) — called as an MCP tool (the official SDK client, Streamable HTTP) and through REST
 * execute, on the default settings (the warm pool follows demand). Timed from the request to its result,
 * against an api in the worker's process (as `npm start` runs it: eager workflow starts) and an
 * api on its own (a split deployment: update-with-start), the four interleaved so they share the
 * machine's noise. Each figure is printed beside the goal (issue 14) and the baseline before it.
 *
 * The goal is a call's latency: each call is made once the host is at rest again (the warm pool
 * refilled, the last call's browser gone, then a pause), as an agent's calls come with its
 * thinking between them. Then the same calls back to back, without a goal: on 2 cores that
 * measures how fast the host launches and tears down a fresh browser per call, not a call.
 * Writes its figures into docs/benchmarks/mcp-call.md (between the markers; the rest of the page is kept).
 *
 * The baseline of REST execute was not recorded before; to take both baselines on the same
 * machine, run this file in a checkout of the commit before the change (it needs nothing else of
 * it; the api on its own is then skipped).
 */
import http from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tsToMs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import { LogEntry, PipelineRun } from '../db/entities/index.ts';
import { logStreams } from '../server/logs/logWriter.ts';
import { workflowIds } from '../workflows/contracts/workflowIds.ts';
import { writeFiguresBlock } from './support/figuresBlock.ts';
import { BENCH_PAGE_HOST, machineLine, percentile, startBenchStack } from './support/stack.ts';

const { EventType } = proto.temporal.api.enums.v1;
/** The function's nodes, in order, as their log lines name them. */
const NODE_TYPES = ['browser.page', 'page.goto', 'extract.text'];
const CALLS = Number(process.env.BENCH_RUNS ?? 50);
const WARMUP = 3;
/** Calls per measure made back to back, after the paced ones. */
const BACK_TO_BACK = Math.min(CALLS, 20);
/** After the host is at rest, before a paced call: the last browser's teardown ends meanwhile. */
const PAUSE_MS = 1_000;

/** Issue 14: the median of a call, MCP and REST alike. */
const GOAL_MEDIAN_MS = 300;
/** Before issue 14 (docs/benchmarks/mcp-call.md, 2026-11-22, the same machine type): median and p95. */
const BASELINE: Record<'mcp' | 'rest', { median: number; p95: number } | null> = {
  mcp: { median: 1157, p95: 1664 },
  rest: null,
};

const site = http.createServer((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end(
    '<!doctype html><html><head><title>shop</title></head><body><h1>Fruit</h1><ul><li>apple</li><li>pear</li><li>plum</li></ul></body></html>',
  );
});
await new Promise<void>((resolve) => site.listen(0, BENCH_PAGE_HOST, resolve));
const siteUrl = `http://${BENCH_PAGE_HOST}:${(site.address() as { port: number }).port}`;

const source = {
  parameters: { url: { refType: 'string' } },
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
    items: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'li' } },
  },
  outputs: { first: { $ref: 'items.text' } },
};

console.log('bench: starting the stack (scratch database, Temporal dev server, api, worker, browser host, default settings)');
const stack = await startBenchStack({}, { splitApi: true });
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
          { name: 'count', refType: 'number', source: { nodeName: 'items', outputName: 'count' } },
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
  const args = { url: `${siteUrl}/catalog` };
  const check = (outputs: unknown, what: string) => {
    if ((outputs as { items?: string[] } | undefined)?.items?.length !== 3)
      throw new Error(`${what}: unexpected outputs ${JSON.stringify(outputs)}`);
  };

  async function mcpClient(base: string) {
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/${stack.slug}/api/mcp-servers/${serverId}/mcp`), {
        requestInit: { headers: { 'x-api-key': key.secret } },
      }),
    );
    await client.listTools();
    return client;
  }

  type Measure = {
    label: string;
    kind: 'mcp' | 'rest';
    call: () => Promise<void>;
    /** Paced calls, then calls back to back. */
    times: number[];
    burst: number[];
    close?: () => Promise<void>;
  };
  /** Every call in order, warm-up included, with its wall-clock bounds: paired with its run below. */
  const calls: { measure: Measure; sent: number; answered: number; counted: boolean }[] = [];
  const measures: Measure[] = [];
  const apis = [
    { base: stack.base, where: 'api with the worker (npm start)' },
    ...(stack.splitBase ? [{ base: stack.splitBase, where: 'api on its own' }] : []),
  ];
  for (const { base, where } of apis) {
    const client = await mcpClient(base);
    measures.push({
      label: `MCP tools/call → result, ${where}`,
      kind: 'mcp',
      times: [],
      burst: [],
      close: () => client.close(),
      async call() {
        const result = await client.callTool({ name: 'catalog', arguments: args });
        if (result.isError) throw new Error(`tools/call failed: ${JSON.stringify(result.content)}`);
        check(result.structuredContent, 'tools/call');
      },
    });
    measures.push({
      label: `REST execute → result, ${where}`,
      kind: 'rest',
      times: [],
      burst: [],
      async call() {
        const answer = await stack.call('POST', `/${stack.slug}/api/functions/slug/catalog/execute`, key.secret, { args }, base);
        check(answer.outputs, 'REST execute');
      },
    });
  }

  /** The host at rest: its warm pool at its target, no browser of a call left, then `PAUSE_MS`. */
  async function atRest() {
    const pool = stack.host?.pool;
    const until = Date.now() + 30_000;
    while (pool && (pool.runningCount > 0 || pool.warmCount < pool.warmStatus().target) && Date.now() < until) await sleep(20);
    await sleep(PAUSE_MS);
  }

  // Round-robin, starting each round at another measure, so none always follows the same one.
  for (let round = 0; round < CALLS + WARMUP; round++) {
    for (let k = 0; k < measures.length; k++) {
      const measure = measures[(round + k) % measures.length] as Measure;
      await atRest();
      const t0 = performance.now();
      const sent = Date.now();
      await measure.call();
      if (round >= WARMUP) measure.times.push(performance.now() - t0);
      calls.push({ measure, sent, answered: Date.now(), counted: round >= WARMUP });
    }
  }
  await atRest();
  for (let round = 0; round < BACK_TO_BACK; round++) {
    for (let k = 0; k < measures.length; k++) {
      const measure = measures[(round + k) % measures.length] as Measure;
      const t0 = performance.now();
      const sent = Date.now();
      await measure.call();
      measure.burst.push(performance.now() - t0);
      calls.push({ measure, sent, answered: Date.now(), counted: false });
    }
  }
  for (const measure of measures) await measure.close?.();

  const ms = (value: number) => value.toFixed(0);
  const rows = measures.map(({ label, kind, times }) => {
    const baseline = BASELINE[kind];
    const median = percentile(times, 50);
    return `| ${label} | ${times.length} | ${ms(median)} | ${ms(percentile(times, 95))} | ${ms(Math.min(...times))} | ${ms(Math.max(...times))} | ≤ ${GOAL_MEDIAN_MS} (${median <= GOAL_MEDIAN_MS ? 'met' : 'not met'}) | ${baseline ? `${baseline.median} / ${baseline.p95}` : 'not recorded'} |`;
  });

  const burstRows = measures.map(
    ({ label, burst }) =>
      `| ${label} | ${burst.length} | ${ms(percentile(burst, 50))} | ${ms(percentile(burst, 95))} | ${ms(Math.min(...burst))} | ${ms(Math.max(...burst))} |`,
  );

  const phases = await whereTheTimeGoes(calls);

  const figures = `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}.

Reproduce: \`npm run bench:mcp-call\` (BENCH_RUNS to change the count, 50 by default).

A function whose source is a 3-node extraction (browser.page → page.goto → extract.text of the
list items; outputs \`first\`, \`items\`, \`count\`) against a local page, called as an MCP tool (an
MCP SDK client, Streamable HTTP transport, API key linked by a client config) and through
\`POST …/functions/slug/{slug}/execute\` with the same key. Each call runs the function's version on
a fresh browser, as executing a function does, taken from the warm pool (default settings: it follows demand).
Timed from the request to the result with structured outputs; ${WARMUP} warm-up rounds are not
counted. Two apis share one worker and browser host: one on the worker's connection in its
process, as \`npm start\` runs it (the run's workflow is started eagerly, then awaited with the
\`runEnded\` update), one on its own connection, as an api process apart from the workers runs
(update-with-start). The measures take turns, call by call. Each call is made with the host at
rest: its warm pool refilled, the last call's browser gone, then ${PAUSE_MS} ms, as an agent's
calls come with its thinking between them.

| measure | calls | median ms | p95 ms | min ms | max ms | goal: median ms | baseline median / p95 ms |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Baseline: before the changes of issue 14 (2026-11-22, MCP with the worker in process; REST
execute was not measured then; the baseline's calls came back to back).

The same calls back to back (no goal), each made as the last is answered. Every call launches a
fresh browser's replacement and tears its own down; on 2 cores these calls come faster than the
host launches, so about one in two finds no warm browser and waits for a launch (a launch the
pool has under way is taken over: server/browsers/host/pool/warmPool.ts, \`takeLaunch\`).

| measure | calls | median ms | p95 ms | min ms | max ms |
|---|---|---|---|---|---|
${burstRows.join('\n')}

What the time buys: the key's link and permissions are checked, the arguments validated, a warm
browser claimed and the run row written in one transaction, the \`pipelineRun\` workflow started
and its \`runEnded\` update awaited (one call to the engine without eager start), each node run as
an activity on the browser host with its outputs stored, the end recorded. The browser is
released after the answer.

## Where the time goes

Each counted (paced) call split by its run's workflow history (event times written by Temporal's dev
server; the calls' own times by this process, on the same clock), medians over the calls of each
measure. "Request → workflow started": the api's work before the engine has the run (the key,
the function, the arguments, the warm browser claimed and the run row written, the start).
"→ stretch started": the workflow's first task and the host worker picking up the stretch activity
(in brackets: until the workflow's first task completed / from there until the host started the stretch).
"Stretch": the three nodes on the host, their outputs and log lines stored, the run marked running;
"of which the nodes": the nodes' own time, as their \`done in … ms\` log lines say (the browser's
work), and in brackets each node's: ${NODE_TYPES.join(' / ')} (a tab of the warm browser, its first
navigation, the extraction).
"→ end recorded": the workflow's task after the stretch, the end recorded (a local activity) and
the \`runEnded\` update completed (in brackets: the stretch's completion until that workflow task
started, i.e. its dispatch to the worker). "→ answer": the update's result reaching the api, the run read
back and the answer sent.

| measure | request → workflow started | → stretch started | stretch | of which the nodes | → end recorded | → answer | total |
|---|---|---|---|---|---|---|---|
${phases.join('\n')}
`;
  writeFiguresBlock(
    path.join(import.meta.dirname, '..', 'docs', 'benchmarks', 'mcp-call.md'),
    'mcp-call.ts',
    'Benchmark: a function called over MCP and REST',
    figures,
  );
  console.log(figures);

  /**
   * The medians of each measure's phases, one table row per measure: the calls ran one after
   * another, so the runs in creation order pair with them one to one.
   */
  async function whereTheTimeGoes(made: typeof calls) {
    const runs = await stack.orm.em.fork().find(PipelineRun, {}, { orderBy: { created: 'asc' }, fields: ['id', 'created'] });
    if (runs.length !== made.length) return [`| (runs ${runs.length} do not pair with calls ${made.length}) | | | | | | |`];
    const split = new Map<Measure, number[][]>();
    for (const [i, call] of made.entries()) {
      if (!call.counted) continue;
      const history = await stack.temporal.workflow.getHandle(workflowIds.run((runs[i] as { id: string }).id)).fetchHistory();
      const events = history.events ?? [];
      const at = (type: proto.temporal.api.enums.v1.EventType) => {
        const event = events.find((e) => e.eventType === type);
        return event ? tsToMs(event.eventTime) : Number.NaN;
      };
      const started = at(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
      const stretchStarted = at(EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED);
      const stretchDone = at(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
      // The caller's answer waits for the run's end (the runEnded update), not for the workflow's.
      const ended = at(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
      // The Temporal round trips inside the phases: the first workflow task (it schedules the
      // stretch) and the host's pickup; after the stretch, the workflow task's dispatch.
      const firstTaskDone = at(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      const after = (type: proto.temporal.api.enums.v1.EventType, time: number) => {
        const event = events.find((e) => e.eventType === type && tsToMs(e.eventTime) >= time);
        return event ? tsToMs(event.eventTime) : Number.NaN;
      };
      const endTaskStarted = after(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, stretchDone);
      // The nodes' own time, as their `done in N ms` log lines say: what the browser work took.
      const lines = await stack.orm.em
        .fork()
        .find(
          LogEntry,
          { stream: logStreams.run((runs[i] as { id: string }).id), area: 'node', message: { $like: '% done in % ms' } },
          { fields: ['message'] },
        );
      const took = (type: string) =>
        lines.reduce(
          (sum, line) => sum + (line.message.startsWith(`${type} `) ? Number(/done in (\d+) ms$/.exec(line.message)?.[1] ?? 0) : 0),
          0,
        );
      const each = NODE_TYPES.map(took);
      const nodes = each.reduce((sum, n) => sum + n, 0);
      const parts = [
        started - call.sent,
        stretchStarted - started,
        stretchDone - stretchStarted,
        nodes,
        ended - stretchDone,
        call.answered - ended,
        call.answered - call.sent,
        ...each,
        firstTaskDone - started,
        stretchStarted - firstTaskDone,
        endTaskStarted - stretchDone,
      ];
      split.set(call.measure, [...(split.get(call.measure) ?? []), parts]);
    }
    return measures.map((measure) => {
      const rows = split.get(measure) ?? [];
      const cell = (k: number) => ms(percentile(rows.map((row) => row[k] as number).filter(Number.isFinite), 50));
      const nodes = `${cell(3)} (${NODE_TYPES.map((_, k) => cell(7 + k)).join(' / ')})`;
      const extra = 7 + NODE_TYPES.length;
      const pickedUp = `${cell(1)} (${cell(extra)} / ${cell(extra + 1)})`;
      const endRecorded = `${cell(4)} (${cell(extra + 2)})`;
      return `| ${measure.label} | ${cell(0)} | ${pickedUp} | ${cell(2)} | ${nodes} | ${endRecorded} | ${cell(5)} | ${cell(6)} |`;
    });
  }
} finally {
  await stack.stop();
  site.close();
}
