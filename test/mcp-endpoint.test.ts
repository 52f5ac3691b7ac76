import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../server/config.ts';
import { mcpRequestAllowed } from '../server/http/mcpRoutes.ts';
import { createApiKey, createProject, registerUser } from './support/accounts.ts';
import { startTestSite } from './support/pages.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

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

async function createFunction(slug: string, description: string) {
  const created = await stack.http.put(
    `/${project.slug}/api/functions`,
    {
      name: `Function ${slug}`,
      description,
      slug,
      definition: {
        source: extractSource,
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

  it('accepts the key in Authorization too', async () => {
    const response = await post({ authorization: `Bearer ${linkedKey.secret}` });
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeTruthy();
    await response.body?.cancel();
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
