/**
 * `npm run bench:mcp-call`: an MCP client (the official SDK, Streamable HTTP) calls a function
 * tool — a 3-node extraction (a page, goto, extract the list items) — on a warm browser
 * pool (BROWSER_WARM_POOL 2). Timed from `tools/call` to its result. Writes docs/benchmarks/mcp-call.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BENCH_PAGE_HOST, machineLine, percentile, startBenchStack } from './support/stack.ts';

const CALLS = Math.max(50, Number(process.env.BENCH_RUNS ?? 50));
const WARMUP = 3;

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

console.log('bench: starting the stack (scratch database, Temporal dev server, api, worker, browser host, warm pool 2)');
const stack = await startBenchStack({ BROWSER_WARM_POOL: '2' });
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

  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.base}/${stack.slug}/api/mcp-servers/${serverId}/mcp`), {
      requestInit: { headers: { 'x-api-key': key.secret } },
    }),
  );
  await client.listTools();

  const times: number[] = [];
  for (let i = 0; i < CALLS + WARMUP; i++) {
    const t0 = performance.now();
    const result = await client.callTool({ name: 'catalog', arguments: { url: `${siteUrl}/catalog` } });
    const elapsed = performance.now() - t0;
    if (result.isError) throw new Error(`call ${i} failed: ${JSON.stringify(result.content)}`);
    if ((result.structuredContent as { items: string[] }).items.length !== 3) throw new Error('unexpected outputs');
    if (i >= WARMUP) times.push(elapsed);
  }
  await client.close();

  const report = `# Benchmark: an MCP tools/call of a function

Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}.

Reproduce: \`npm run bench:mcp-call\` (BENCH_RUNS to change the count; at least 50).

An MCP SDK client (Streamable HTTP transport, API key linked by a client config) calls the tool of
a function whose source is a 3-node extraction (browser.page → page.goto → extract.text of the
list items; outputs \`first\`, \`items\`, \`count\`) against a local page. Each call runs the
function's version on a fresh browser, as executing a function does, taken from a warm pool
(\`BROWSER_WARM_POOL=2\`). Timed from \`tools/call\` to the result with structured outputs;
${WARMUP} warm-up calls are not counted.

| measure | calls | median ms | p95 ms | min ms | max ms |
|---|---|---|---|---|---|
| MCP tools/call → result | ${times.length} | ${percentile(times, 50).toFixed(0)} | ${percentile(times, 95).toFixed(0)} | ${Math.min(...times).toFixed(0)} | ${Math.max(...times).toFixed(0)} |

What the time buys: the key's link and permissions are checked, the arguments validated, a run
row written, the \`pipelineRun\` workflow started on Temporal, a warm browser claimed, each node run
as an activity on the browser host with its outputs stored, and the browser released.
`;
  const dir = path.join(import.meta.dirname, '..', 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'mcp-call.md'), report);
  console.log(report);
} finally {
  await stack.stop();
  site.close();
}
