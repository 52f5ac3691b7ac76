import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../server/config.ts';
import { MAX_SESSIONS_PER_KEY, mcpRequestAllowed } from '../../server/http/mcpRoutes.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let serverId: string;
let linkedKey: { id: string; secret: string };
let unlinkedKey: { id: string; secret: string };
let catalogId: string;
let otherFunctionId: string;

const html = (body: string) => `<!doctype html><html><head><title>catalog</title></head><body>${body}</body></html>`;

/** A three-node extraction: open the page, read the heading, read the items. */
const extractSource = {
  parameters: { url: { refType: 'string', description: 'The catalog page' } },
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
    heading: { type: 'extract.text', timeoutMs: 3000, inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
    items: { type: 'extract.text', timeoutMs: 3000, inputs: { page: { $ref: 'heading.page' }, selector: 'li' } },
  },
  outputs: { title: { $ref: 'heading.text' } },
};

async function createFunction(slug: string, description: string, source: Record<string, unknown> = extractSource) {
  const created = await stack.http.put(
    `/${project.slug}/api/functions`,
    {
      name: `Function ${slug}`,
      description,
      slug,
      definition: {
        source,
        parameters: [{ name: 'url', refType: 'string', description: 'The catalog page' }],
        outputs: [
          { name: 'title', refType: 'string' },
          { name: 'items', refType: 'list', source: { nodeName: 'items', outputName: 'texts' } },
        ],
      },
    },
    owner,
  );
  expect(created.status, created.text).toBe(200);
  expect(created.body.errors).toEqual([]);
  return created.body.id as string;
}

const endpoint = (server = serverId) => new URL(`${stack.url}/${project.slug}/api/mcp-servers/${server}/mcp`);

type Kind = 'sse' | 'streamable';
function transportFor(kind: Kind, key: string, server = serverId) {
  const requestInit = { headers: { 'x-api-key': key } };
  if (kind === 'streamable') return new StreamableHTTPClientTransport(endpoint(server), { requestInit });
  // requestInit's headers go on the stream's GET as well as on the message POSTs.
  return new SSEClientTransport(endpoint(server), { requestInit });
}

async function connect(kind: Kind, key = linkedKey.secret, server = serverId) {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(transportFor(kind, key, server));
  return client;
}

async function linkKey(name: string, key: { id: string }, server = serverId) {
  const config = await stack.http.put(
    `/${project.slug}/api/mcp-client-configs`,
    { name, description: '', mcpServerId: server, apiKeyId: key.id },
    owner,
  );
  expect(config.status, config.text).toBe(200);
  return config.body.id as string;
}

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite({
    '/catalog': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html('<h1>Fruit</h1><ul><li>apple</li><li>pear</li><li>plum</li></ul>'));
    },
  });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
  catalogId = await createFunction('catalog', 'Reads the items of a catalog page');
  otherFunctionId = await createFunction('catalog_two', 'The same, again');
  const server = await stack.http.put(
    `/${project.slug}/api/mcp-servers`,
    { name: 'Shop tools', slug: 'shop', description: 'Catalog tools', functionIds: [catalogId] },
    owner,
  );
  serverId = server.body.id;
  linkedKey = await createApiKey(stack, owner.token, { name: 'agent', accessType: 'full' });
  unlinkedKey = await createApiKey(stack, owner.token, { name: 'not linked', accessType: 'full' });
  await linkKey('agent config', linkedKey);
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

describe.each(['streamable', 'sse'] as const)('the MCP endpoint over %s', (kind) => {
  it('lists each assigned function as a typed tool and calls it against a real browser', async () => {
    const client = await connect(kind);
    try {
      expect(client.getServerVersion()?.name).toBe('shop');
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['catalog']);
      expect(tools[0]).toMatchObject({
        description: 'Reads the items of a catalog page',
        inputSchema: { type: 'object', properties: { url: { type: 'string', description: 'The catalog page' } }, required: ['url'] },
        // Outputs may be null: a value the run did not produce.
        outputSchema: {
          type: 'object',
          properties: { title: { type: ['string', 'null'] }, items: { type: ['array', 'null'] } },
          required: ['title', 'items'],
        },
      });

      const result = await client.callTool({ name: 'catalog', arguments: { url: `${site.url}/catalog` } });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toEqual({ title: 'Fruit', items: ['apple', 'pear', 'plum'] });
      expect(JSON.parse((result.content as { text: string }[])[0]?.text ?? '')).toEqual(result.structuredContent);

      const bad = await client.callTool({ name: 'catalog', arguments: { url: 42 } });
      expect(bad.isError).toBe(true);
      expect((bad.content as { text: string }[])[0]?.text).toContain('invalid_args');
      const unknown = await client.callTool({ name: 'nope', arguments: {} });
      expect(unknown.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('refuses a key that no client config links to the server', async () => {
    await expect(connect(kind, unlinkedKey.secret)).rejects.toThrow();
  });

  it('tells connected clients when the tool list changes', async () => {
    const client = await connect(kind);
    try {
      let changed!: () => void;
      const notified = new Promise<void>((resolve) => {
        changed = resolve;
      });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
      const patched = await stack.http.patch(
        `/${project.slug}/api/mcp-servers/${serverId}`,
        { functionIds: [catalogId, otherFunctionId] },
        owner,
      );
      expect(patched.status, patched.text).toBe(200);
      await notified;
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['catalog', 'catalog_two']);
    } finally {
      await stack.http.patch(`/${project.slug}/api/mcp-servers/${serverId}`, { functionIds: [catalogId] }, owner);
      await client.close();
    }
  });

  it('refuses the next request once the client config is deleted', async () => {
    const key = await createApiKey(stack, owner.token, { name: `doomed ${kind}`, accessType: 'full' });
    const configId = await linkKey(`doomed ${kind}`, key);
    const client = await connect(kind, key.secret);
    try {
      expect((await client.listTools()).tools).toHaveLength(1);
      expect((await stack.http.delete(`/${project.slug}/api/mcp-client-configs/${configId}`, owner)).status).toBe(200);
      await expect(client.listTools()).rejects.toThrow();
      const direct = await fetch(endpoint(), { headers: { 'x-api-key': key.secret, accept: 'text/event-stream' } });
      expect(direct.status).toBe(403);
      await direct.body?.cancel();
    } finally {
      await client.close().catch(() => {});
    }
  });
});

describe('a tool output the run did not produce', () => {
  it('reaches the SDK client as null, valid against the tool’s output schema', async () => {
    // An optional attribute read: the page has no `a.next`, so `next` is null.
    const created = await stack.http.put(
      `/${project.slug}/api/functions`,
      {
        name: 'Next page',
        description: 'The link to the next page, if any',
        slug: 'next_page',
        definition: {
          source: {
            parameters: { url: { refType: 'string' } },
            nodes: {
              page: { type: 'browser.page' },
              open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
              link: {
                type: 'extract.attribute',
                inputs: { page: { $ref: 'open.page' }, selector: 'a.next', attribute: 'href', optional: true },
              },
            },
          },
          parameters: [{ name: 'url', refType: 'string' }],
          outputs: [
            { name: 'next', refType: 'string', source: { nodeName: 'link', outputName: 'value' } },
            { name: 'count', refType: 'number', source: { nodeName: 'link', outputName: 'count' } },
          ],
        },
      },
      owner,
    );
    expect(created.status, created.text).toBe(200);
    expect(created.body.errors).toEqual([]);
    const server = await stack.http.put(
      `/${project.slug}/api/mcp-servers`,
      { name: 'Paging', slug: 'paging', description: '', functionIds: [created.body.id] },
      owner,
    );
    expect(server.status, server.text).toBe(200);
    await linkKey('paging config', linkedKey, server.body.id);

    const client = await connect('streamable', linkedKey.secret, server.body.id);
    try {
      // The client validates structuredContent against the outputSchema it listed.
      const { tools } = await client.listTools();
      expect(tools[0]?.outputSchema?.properties).toEqual({ next: { type: ['string', 'null'] }, count: { type: ['number', 'null'] } });
      const result = await client.callTool({ name: 'next_page', arguments: { url: `${site.url}/catalog` } });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toEqual({ next: null, count: 0 });
    } finally {
      await client.close();
    }
  });
});

describe('tool list changes made elsewhere', () => {
  it('reach connected clients when an assigned function is deleted', async () => {
    const ephemeral = await createFunction('ephemeral', 'Deleted soon');
    await stack.http.patch(`/${project.slug}/api/mcp-servers/${serverId}`, { functionIds: [catalogId, ephemeral] }, owner);
    const client = await connect('streamable');
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['catalog', 'ephemeral']);
      const notified = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      expect((await stack.http.delete(`/${project.slug}/api/functions/${ephemeral}`, owner)).status).toBe(200);
      // Not announced by the functions router: the endpoint's periodic sync notices.
      await notified;
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['catalog']);
    } finally {
      await client.close();
    }
  });
});

describe('MCP endpoint access', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>) =>
    fetch(endpoint(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(initialize),
    });

  /** The initialize POST with another Host header (fetch cannot set Host). */
  const postAs = (host: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const body = JSON.stringify(initialize);
      const req = request(
        endpoint(),
        {
          method: 'POST',
          headers: {
            host,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'content-length': Buffer.byteLength(body),
            'x-api-key': linkedKey.secret,
            ...headers,
          },
        },
        (res) => {
          // The status is all this needs; the stream is closed rather than read.
          resolve({ status: res.statusCode ?? 0, body: res.statusMessage ?? '' });
          res.destroy();
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('needs an API key: none is 401, a session token is 401, an unlinked key is 403', async () => {
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: `Bearer ${owner.token}` })).status).toBe(401);
    const unlinked = await post({ 'x-api-key': unlinkedKey.secret });
    expect(unlinked.status).toBe(403);
    expect(await unlinked.json()).toMatchObject({ status: 'error', code: 'api_key_not_linked' });
  });

  it('accepts the key in Authorization too, as Bearer or ApiKey', async () => {
    for (const scheme of ['Bearer', 'ApiKey']) {
      const response = await post({ authorization: `${scheme} ${linkedKey.secret}` });
      expect(response.status, scheme).toBe(200);
      expect(response.headers.get('mcp-session-id')).toBeTruthy();
      await response.body?.cancel();
    }
  });

  it('refuses the SSE stream to an unlinked key with 403 api_key_not_linked', async () => {
    const response = await fetch(endpoint(), { headers: { 'x-api-key': unlinkedKey.secret, accept: 'text/event-stream' } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ status: 'error', code: 'api_key_not_linked' });
  });

  it(`keeps at most ${MAX_SESSIONS_PER_KEY} sessions per key: a new one closes the least recently used`, async () => {
    const key = await createApiKey(stack, owner.token, { name: 'many sessions', accessType: 'full' });
    await linkKey('many sessions', key);
    const ids: string[] = [];
    for (let i = 0; i <= MAX_SESSIONS_PER_KEY; i++) {
      const response = await post({ 'x-api-key': key.secret });
      expect(response.status).toBe(200);
      ids.push(response.headers.get('mcp-session-id') as string);
      await response.body?.cancel();
    }
    const list = (sessionId: string) =>
      fetch(endpoint(), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-api-key': key.secret,
          'mcp-session-id': sessionId,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
    const oldest = await list(ids[0] as string);
    expect(oldest.status).toBe(404);
    for (const id of ids.slice(1)) {
      const response = await list(id);
      expect(response.status).toBe(200);
      await response.body?.cancel();
    }
  });

  it('refuses a page on another site, even one whose name was rebound to this server', async () => {
    const foreign = await post({ 'x-api-key': linkedKey.secret, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ status: 'error', code: 'host_not_allowed' });
    // DNS rebinding: Host and Origin agree, both the attacker's name.
    const rebound = await postAs(`evil.example:${new URL(stack.url).port}`, { origin: `http://evil.example:${new URL(stack.url).port}` });
    expect(rebound.status).toBe(403);
    expect((await post({ 'x-api-key': linkedKey.secret, origin: 'null' })).status).toBe(403);
  });

  it('accepts an agent that reaches the server by another name, such as a LAN address', async () => {
    const response = await postAs(`192.168.1.23:${new URL(stack.url).port}`);
    expect(response.status, response.body).toBe(200);
    // A browser page served by this server itself is fine too.
    const sameSite = await post({ 'x-api-key': linkedKey.secret, origin: stack.url });
    expect(sameSite.status).toBe(200);
    await sameSite.body?.cancel();
  });

  it('pins the Host, and widens the accepted origins, to MCP_ALLOWED_HOSTS when it is set', () => {
    const open = parseConfig({ PUBLIC_URL: 'https://flows.example.com' });
    expect(mcpRequestAllowed(open, { hostname: '10.0.0.7' })).toBe(true);
    expect(mcpRequestAllowed(open, { hostname: '10.0.0.7', origin: 'https://flows.example.com' })).toBe(true);
    expect(mcpRequestAllowed(open, { hostname: '10.0.0.7', origin: 'http://10.0.0.7:3000' })).toBe(false);

    const pinned = parseConfig({ PUBLIC_URL: 'https://flows.example.com', MCP_ALLOWED_HOSTS: 'mcp.internal, 10.0.0.7' });
    expect(mcpRequestAllowed(pinned, { hostname: '10.0.0.7' })).toBe(true);
    expect(mcpRequestAllowed(pinned, { hostname: 'MCP.internal' })).toBe(true);
    expect(mcpRequestAllowed(pinned, { hostname: 'flows.example.com' })).toBe(true);
    expect(mcpRequestAllowed(pinned, { hostname: 'localhost' })).toBe(true);
    expect(mcpRequestAllowed(pinned, { hostname: '10.0.0.8' })).toBe(false);
    expect(mcpRequestAllowed(pinned, { hostname: '10.0.0.7', origin: 'http://10.0.0.7:6274' })).toBe(true);
    expect(mcpRequestAllowed(pinned, { hostname: '10.0.0.7', origin: 'https://evil.example' })).toBe(false);

    expect(() => parseConfig({ MCP_ALLOWED_HOSTS: 'https://mcp.internal' })).toThrow(/MCP_ALLOWED_HOSTS/);
  });

  it('answers 404 for an unknown server or session', async () => {
    const other = await fetch(`${stack.url}/${project.slug}/api/mcp-servers/00000000-0000-4000-8000-000000000000/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': linkedKey.secret },
      body: JSON.stringify(initialize),
    });
    expect(other.status).toBe(404);
    const session = await fetch(endpoint(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': linkedKey.secret, 'mcp-session-id': 'nope' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(session.status).toBe(404);
  });
});

/** The latest run of a function, as stored. */
async function latestRun(functionId: string) {
  const rows: { id: string; status: string; resource_id: string | null }[] = await stack.orm.em
    .fork()
    .getConnection()
    .execute(
      `select r.id, r.status, r.resource_id from pipeline_runs r join function_versions v on v.id = r.function_version_id
        where v.function_id = ? order by r.created desc limit 1`,
      [functionId],
    );
  return rows[0];
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A function that waits `ms` on a blank page. */
const waitSource = (ms: number) => ({
  parameters: { url: { refType: 'string', default: 'about:blank' } },
  nodes: {
    page: { type: 'browser.page' },
    wait: { type: 'page.wait', timeoutMs: 60_000, inputs: { page: { $ref: 'page.page' }, ms } },
  },
});

describe('tool calls', () => {
  let toolsServerId: string;
  let slowId: string;
  let briefId: string;

  beforeAll(async () => {
    slowId = await createWaitFunction('slow', 30_000);
    briefId = await createWaitFunction('brief', 6_000);
    const server = await stack.http.put(
      `/${project.slug}/api/mcp-servers`,
      { name: 'Tools', slug: 'tools', description: '', functionIds: [catalogId, slowId, briefId] },
      owner,
    );
    expect(server.status, server.text).toBe(200);
    toolsServerId = server.body.id;
    await linkKey('tools config', linkedKey, toolsServerId);
  });

  async function createWaitFunction(slug: string, ms: number) {
    const created = await stack.http.put(
      `/${project.slug}/api/functions`,
      {
        name: slug,
        description: `waits ${ms} ms`,
        slug,
        definition: {
          source: {
            nodes: {
              page: { type: 'browser.page' },
              wait: { type: 'page.wait', timeoutMs: 60_000, inputs: { page: { $ref: 'page.page' }, ms } },
            },
          },
          parameters: [],
          outputs: [],
        },
      },
      owner,
    );
    expect(created.status, created.text).toBe(200);
    expect(created.body.errors).toEqual([]);
    return created.body.id as string;
  }

  it('answers isError when the key may read the function but not execute it', async () => {
    const reader = await createApiKey(stack, owner.token, {
      name: 'reader',
      accessType: 'custom',
      permissions: [`${project.slug}.functions.read`],
    });
    await linkKey('reader config', reader, toolsServerId);
    const client = await connect('streamable', reader.secret, toolsServerId);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('catalog');
      const refused = await client.callTool({ name: 'catalog', arguments: { url: `${site.url}/catalog` } });
      expect(refused.isError).toBe(true);
      expect((refused.content as { text: string }[])[0]?.text).toContain(`functions.execute.${catalogId}`);
    } finally {
      await client.close();
    }
  });

  it('answers isError naming the node when the run fails', async () => {
    const client = await connect('sse', linkedKey.secret, toolsServerId);
    try {
      // The page has a heading but no list items: the `items` node fails.
      const failed = await client.callTool({ name: 'catalog', arguments: { url: `${site.url}/no-list` } });
      expect(failed.isError).toBe(true);
      const body = JSON.parse((failed.content as { text: string }[])[0]?.text ?? '{}');
      expect(body).toMatchObject({ status: 'error', code: 'function_failed' });
      expect(body.message).toContain('items');
    } finally {
      await client.close();
    }
  });

  it('stops the run and frees its context when the client cancels the call', async () => {
    const client = await connect('streamable', linkedKey.secret, toolsServerId);
    try {
      const controller = new AbortController();
      const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal, timeout: 120_000 });
      const running = await until(
        'the run to start',
        () => latestRun(slowId),
        (run) => run?.status === 'running',
      );
      await until(
        'its context to open',
        async () => stack.browserHost?.projectBrowsers.has(running?.id as string),
        (held) => held === true,
      );
      controller.abort('changed my mind');
      await expect(call).rejects.toThrow();
      const ended = await until(
        'the run to stop',
        () => latestRun(slowId),
        (run) => !!run && run.id === running?.id && run.status !== 'running',
      );
      expect(ended?.status).toBe('cancelled');
      // A call holds no browser of its own: its context in the project's browser is what is freed.
      expect(ended?.resource_id).toBeNull();
      await until(
        'its context to close',
        async () => stack.browserHost?.projectBrowsers.has(ended?.id as string),
        (held) => held === false,
      );
    } finally {
      await client.close();
    }
  });

  it('reports progress while a long call runs, to a client that asks for it', async () => {
    const client = await connect('streamable', linkedKey.secret, toolsServerId);
    try {
      const progress: number[] = [];
      const result = await client.callTool({ name: 'brief', arguments: {} }, undefined, {
        onprogress: (notice) => progress.push(notice.progress),
        resetTimeoutOnProgress: true,
      });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]).toBeGreaterThanOrEqual(4);
    } finally {
      await client.close();
    }
  });

  it('tells connected clients when an assigned function is renamed or imported anew', async () => {
    const client = await connect('streamable', linkedKey.secret, toolsServerId);
    try {
      const nextNotice = () =>
        new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      let notified = nextNotice();
      expect((await stack.http.patch(`/${project.slug}/api/functions/${briefId}`, { name: 'Brief wait' }, owner)).status).toBe(200);
      await notified;
      expect((await client.listTools()).tools.find((tool) => tool.name === 'brief')?.title).toBe('Brief wait');

      const pipeline = await stack.http.put(
        `/${project.slug}/api/pipelines`,
        { name: 'wait pipeline', description: '', source: waitSource(100) },
        owner,
      );
      const pipelineVersionId = (await stack.http.get(`/${project.slug}/api/pipelines/${pipeline.body.id}`, owner)).body.version;
      notified = nextNotice();
      const imported = await stack.http.post(
        `/${project.slug}/api/functions/${briefId}/import`,
        { pipelineId: pipeline.body.id, pipelineVersionId, parameters: [{ name: 'url', refType: 'string' }] },
        owner,
      );
      expect(imported.status, imported.text).toBe(200);
      expect(imported.body.errors).toEqual([]);
      await notified;
      const brief = (await client.listTools()).tools.find((tool) => tool.name === 'brief');
      expect(brief?.inputSchema.properties).toHaveProperty('url');
    } finally {
      await client.close();
    }
  });
});
