import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * MCP session lifetimes (server/http/mcpRoutes.ts), with MCP_SESSION_IDLE_SECONDS=2: a session
 * with no request in flight and no stream open is closed; SDK clients that stay connected keep
 * their stream open, and so their session.
 */

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let serverId: string;
let key: { id: string; secret: string };

const endpoint = () => new URL(`${stack.url}/${project.slug}/api/mcp-servers/${serverId}/mcp`);
const jsonHeaders = () => ({ 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key.secret });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function openRawSession() {
  const response = await fetch(endpoint(), {
    method: 'POST',
    headers: jsonHeaders(),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  expect(response.status).toBe(200);
  await response.body?.cancel();
  return response.headers.get('mcp-session-id') as string;
}

/** The status a `tools/list` in session `id` gets. */
async function listStatus(id: string) {
  const response = await fetch(endpoint(), {
    method: 'POST',
    headers: { ...jsonHeaders(), 'mcp-session-id': id },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  await response.body?.cancel();
  return response.status;
}

beforeAll(async () => {
  stack = await startTestStack({ MCP_SESSION_IDLE_SECONDS: '2' });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
  const server = await stack.http.put(`/${project.slug}/api/mcp-servers`, { name: 'Idle', slug: 'idle', description: '' }, owner);
  expect(server.status, server.text).toBe(200);
  serverId = server.body.id;
  key = await createApiKey(stack, owner.token, { accessType: 'full' });
  const config = await stack.http.put(
    `/${project.slug}/api/mcp-client-configs`,
    { name: 'idle config', description: '', mcpServerId: serverId, apiKeyId: key.id },
    owner,
  );
  expect(config.status, config.text).toBe(200);
});
afterAll(async () => {
  await stack?.close();
});

describe('MCP sessions', () => {
  it('close after MCP_SESSION_IDLE_SECONDS without a request or an open stream', async () => {
    const id = await openRawSession();
    expect(await listStatus(id)).toBe(200);
    // Requests keep it alive.
    for (let i = 0; i < 3; i++) {
      await sleep(1000);
      expect(await listStatus(id)).toBe(200);
    }
    await sleep(5000);
    expect(await listStatus(id)).toBe(404);
  });

  it('of an SDK client that closed without DELETE are gone once idle', async () => {
    const transport = new StreamableHTTPClientTransport(endpoint(), { requestInit: { headers: { 'x-api-key': key.secret } } });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    const id = transport.sessionId as string;
    expect(id).toBeTruthy();
    await client.close();
    expect(await listStatus(id)).toBe(200);
    await sleep(5000);
    expect(await listStatus(id)).toBe(404);
  });

  it('over SSE end as soon as the stream closes', async () => {
    const transport = new SSEClientTransport(endpoint(), { requestInit: { headers: { 'x-api-key': key.secret } } });
    const client = new Client({ name: 'sse', version: '1.0.0' });
    await client.connect(transport);
    // The `endpoint` event's URL, where the client posts its messages.
    const messages = (transport as unknown as { _endpoint: URL })._endpoint;
    const post = async () => {
      const response = await fetch(messages, {
        method: 'POST',
        headers: jsonHeaders(),
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
      });
      await response.body?.cancel();
      return response.status;
    };
    expect(await post()).toBe(202);
    await client.close();
    // Well before the idle sweep (2 s without activity, checked every 2 s) could have done it.
    let status = await post();
    for (let i = 0; i < 10 && status !== 404; i++) {
      await sleep(50);
      status = await post();
    }
    expect(status).toBe(404);
  });

  it('stay open while the client is connected, on both transports', async () => {
    const requestInit = { headers: { 'x-api-key': key.secret } };
    const clients = [new Client({ name: 'streamable', version: '1.0.0' }), new Client({ name: 'sse', version: '1.0.0' })] as const;
    await clients[0].connect(new StreamableHTTPClientTransport(endpoint(), { requestInit }));
    await clients[1].connect(new SSEClientTransport(endpoint(), { requestInit }));
    try {
      await sleep(5000);
      for (const client of clients) expect((await client.listTools()).tools).toEqual([]);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});
