import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import {
  type BodyRoute,
  describeBodyRoutes,
  describeQueryRoutes,
  expectErrorBody,
  expectFieldsNamed,
  type QueryRoute,
} from '../support/badInput.ts';
import type { Credentials, HttpResponse } from '../support/http.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Bad input on every route of spec 4.6 (functions) and 4.8 (MCP servers, client configs, the MCP
 * endpoint), modelled on test/http/bad-input.test.ts: missing, wrongly typed and unknown fields, bad
 * ids and odd query strings are a 4xx with the one error body `{status: "error", code, message,
 * issues?}`; nothing a client sends may produce a 500.
 *
 * No browser host: the execute target's current version has errors, so a valid call ends in 400
 * `version_has_errors` before any browser is asked for.
 */

let stack: TestStack;
let owner: { token: string; id: string };
let project: { id: string; slug: string };
let fn: { id: string; slug: string };
let broken: { id: string; slug: string };
let pipeline: { id: string; version: string };
let server: { id: string };
let config: { id: string };
let key: { id: string; secret: string };
/** DELETE routes get a fresh target before each call. */
let doomedFunction: string;
let doomedServer: string;
let doomedConfig: string;

const as = (): Credentials => ({ token: owner.token });
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

const source = {
  nodes: { page: { type: 'browser.page' }, title: { type: 'extract.text', inputs: { page: { $ref: 'page.page' }, selector: 'h1' } } },
  outputs: { title: { $ref: 'title.text' } },
};
const definition = () => ({
  source,
  parameters: [],
  outputs: [{ name: 'title', refType: 'string' }],
  metadata: {},
  outputType: 'function',
});

async function putFunction(slug: string, body = definition()) {
  const created = await stack.http.put(`/${project.slug}/api/functions`, { name: slug, description: '', slug, definition: body }, as());
  expect(created.status, created.text).toBe(200);
  return { id: created.body.id as string, slug };
}

async function putServer() {
  const created = await stack.http.put(`/${project.slug}/api/mcp-servers`, { name: 'S', slug: unique('s'), description: '' }, as());
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

async function putConfig() {
  const created = await stack.http.put(
    `/${project.slug}/api/mcp-client-configs`,
    { name: unique('c'), description: '', mcpServerId: server.id, apiKeyId: key.id },
    as(),
  );
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

beforeAll(async () => {
  stack = await startTestStack();
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
  fn = await putFunction('target-fn');
  broken = await putFunction('broken-fn', { ...definition(), outputs: [{ name: 'nowhere', refType: 'string' }] });
  const created = await stack.http.put(`/${project.slug}/api/pipelines`, { name: 'p', description: '', source }, as());
  expect(created.status, created.text).toBe(200);
  const detail = await stack.http.get(`/${project.slug}/api/pipelines/${created.body.id}`, as());
  pipeline = { id: created.body.id, version: detail.body.version };
  server = { id: await putServer() };
  key = await createApiKey(stack, owner.token, { accessType: 'full' });
  config = { id: await putConfig() };
});
afterAll(async () => {
  await stack?.close();
});

const base = () => `/${project.slug}/api`;

/** The execute target's current version has errors: a valid body passes, the function cannot run. */
const versionHasErrors = (response: HttpResponse) => {
  expectErrorBody(response, 400);
  expect(response.body.code).toBe('version_has_errors');
};
const answered200 = (response: HttpResponse) => expect(response.status, response.text).toBe(200);

const bodyRoutes: Record<string, BodyRoute> = {
  'PUT /{project}/api/functions': {
    method: 'PUT',
    path: () => `${base()}/functions`,
    valid: () => ({ name: 'F', description: '', slug: unique('f'), definition: definition() }),
    required: ['name', 'slug', 'definition'],
    wrongTypes: { name: 1, description: 2, slug: false, definition: 'source' },
    acceptsValid: answered200,
  },
  'PATCH /{project}/api/functions/{functionId}': {
    method: 'PATCH',
    path: () => `${base()}/functions/${fn.id}`,
    valid: () => ({ name: 'Renamed' }),
    required: [],
    wrongTypes: { name: 5, description: ['text'], slug: 7 },
    acceptsValid: answered200,
  },
  'POST /{project}/api/functions/{functionId}/import': {
    method: 'POST',
    path: () => `${base()}/functions/${fn.id}/import`,
    valid: () => ({ pipelineId: pipeline.id, pipelineVersionId: pipeline.version }),
    required: [],
    wrongTypes: { pipelineId: 1, pipelineVersionId: 2, metadata: 'x', parameters: {}, outputs: 'x', outputType: 5 },
    acceptsValid: answered200,
  },
  'POST /{project}/api/functions/slug/{slug}/execute': {
    method: 'POST',
    path: () => `${base()}/functions/slug/${broken.slug}/execute`,
    valid: () => ({ args: {} }),
    required: [],
    wrongTypes: { args: 'x' },
    acceptsValid: versionHasErrors,
  },
  'POST /{project}/api/functions/{functionId}/execute': {
    method: 'POST',
    path: () => `${base()}/functions/${broken.id}/execute`,
    valid: () => ({ args: {} }),
    required: [],
    wrongTypes: { args: [1] },
    acceptsValid: versionHasErrors,
  },
  'PUT /{project}/api/mcp-servers': {
    method: 'PUT',
    path: () => `${base()}/mcp-servers`,
    valid: () => ({ name: 'S', slug: unique('s'), description: '', functionIds: [fn.id] }),
    required: ['name', 'slug'],
    wrongTypes: { name: 1, slug: 2, description: 3, functionIds: 'all' },
    acceptsValid: answered200,
  },
  'PATCH /{project}/api/mcp-servers/{serverId}': {
    method: 'PATCH',
    path: () => `${base()}/mcp-servers/${server.id}`,
    valid: () => ({ name: 'Renamed' }),
    required: [],
    wrongTypes: { name: 1, slug: 2, description: 3, functionIds: [1] },
    acceptsValid: answered200,
  },
  'PUT /{project}/api/mcp-client-configs': {
    method: 'PUT',
    path: () => `${base()}/mcp-client-configs`,
    valid: () => ({ name: unique('c'), description: '', mcpServerId: server.id, apiKeyId: key.id }),
    required: ['name', 'mcpServerId', 'apiKeyId'],
    wrongTypes: { name: 1, description: 2, mcpServerId: 3, apiKeyId: {} },
    acceptsValid: answered200,
  },
  'PATCH /{project}/api/mcp-client-configs/{configId}': {
    method: 'PATCH',
    path: () => `${base()}/mcp-client-configs/${config.id}`,
    valid: () => ({ name: 'renamed config' }),
    required: [],
    wrongTypes: { name: 1, description: 2, mcpServerId: [], apiKeyId: true },
    acceptsValid: answered200,
  },
};

const queryRoutes: Record<string, QueryRoute> = {
  'GET /{project}/api/functions': { method: 'GET', path: () => `${base()}/functions`, paginated: true },
  'GET /{project}/api/functions/{functionId}': { method: 'GET', path: () => `${base()}/functions/${fn.id}` },
  'DELETE /{project}/api/functions/{functionId}': {
    method: 'DELETE',
    path: () => `${base()}/functions/${doomedFunction}`,
    renew: async () => {
      doomedFunction = (await putFunction(unique('doomed'))).id;
    },
  },
  'GET /{project}/api/mcp-servers': { method: 'GET', path: () => `${base()}/mcp-servers`, paginated: true },
  'GET /{project}/api/mcp-servers/{serverId}': { method: 'GET', path: () => `${base()}/mcp-servers/${server.id}` },
  'DELETE /{project}/api/mcp-servers/{serverId}': {
    method: 'DELETE',
    path: () => `${base()}/mcp-servers/${doomedServer}`,
    renew: async () => {
      doomedServer = await putServer();
    },
  },
  'GET /{project}/api/mcp-client-configs': { method: 'GET', path: () => `${base()}/mcp-client-configs`, paginated: true },
  'GET /{project}/api/mcp-client-configs/{configId}': { method: 'GET', path: () => `${base()}/mcp-client-configs/${config.id}` },
  'DELETE /{project}/api/mcp-client-configs/{configId}': {
    method: 'DELETE',
    path: () => `${base()}/mcp-client-configs/${doomedConfig}`,
    renew: async () => {
      doomedConfig = await putConfig();
    },
  },
};

describeBodyRoutes(bodyRoutes, {
  stack: () => stack,
  as,
  hostile: [{ source: { nodes: { a: { type: 'page.goto', inputs: { page: { $ref: 'a.page' } } } } } }],
});

describe('nested definition and interface fields', () => {
  const put = (changes: Record<string, unknown>) =>
    stack.http.put(
      `${base()}/functions`,
      { name: 'F', description: '', slug: unique('f'), definition: { ...definition(), ...changes } },
      as(),
    );

  it('are refused with 400 naming the path', async () => {
    for (const [changes, path] of [
      [{ parameters: [{ name: 'url' }] }, 'definition'],
      [{ parameters: [{ name: '1bad', refType: 'string' }] }, 'definition'],
      [{ parameters: [{ name: 'a', refType: 'page' }] }, 'definition'],
      [{ parameters: [{ name: 'a', refType: 'string', extra: true }] }, 'definition'],
      [{ outputs: [{ name: 'a', refType: 'string', source: { nodeName: 'x' } }] }, 'definition'],
      [{ outputs: [{ name: 'a', refType: 'nope' }] }, 'definition'],
      [{ source: 'text' }, 'definition'],
      [{ metadata: [] }, 'definition'],
      [{ unknownPart: 1 }, 'definition'],
    ] as const) {
      const response = await put(changes);
      expectFieldsNamed(response, [path]);
    }
  });
});

describeQueryRoutes(queryRoutes, { stack: () => stack, as });

describe('bad ids in paths', () => {
  const badIds = [
    'nope',
    '00000000-0000-4000-8000-000000000000',
    '00000000-0000-4000-8000-00000000000Z',
    'x'.repeat(300),
    '%00',
    '%ZZ',
    "'%20or%201=1",
    '..%2F..%2Fapi',
  ];

  it.each([
    ['GET', 'functions/{id}'],
    ['PATCH', 'functions/{id}'],
    ['DELETE', 'functions/{id}'],
    ['POST', 'functions/{id}/import'],
    ['POST', 'functions/{id}/execute'],
    ['POST', 'functions/slug/{id}/execute'],
    ['GET', 'mcp-servers/{id}'],
    ['PATCH', 'mcp-servers/{id}'],
    ['DELETE', 'mcp-servers/{id}'],
    ['GET', 'mcp-client-configs/{id}'],
    ['PATCH', 'mcp-client-configs/{id}'],
    ['DELETE', 'mcp-client-configs/{id}'],
  ])('%s …/%s answers 4xx with the error body', async (method, template) => {
    for (const id of badIds) {
      const body = method === 'PATCH' ? { name: 'x' } : method === 'POST' ? {} : undefined;
      const response = await stack.http.request(method, `${base()}/${template.replace('{id}', id)}`, { body, as: as() });
      expectErrorBody(response);
      expect([400, 404], `${method} ${id}: ${response.text}`).toContain(response.status);
    }
  });

  it('refers to ids of another project as not found', async () => {
    const elsewhere = await createProject(stack, owner.token);
    for (const path of [`functions/${fn.id}`, `mcp-servers/${server.id}`, `mcp-client-configs/${config.id}`]) {
      expectErrorBody(await stack.http.get(`/${elsewhere.slug}/api/${path}`, as()), 404);
    }
    const execute = await stack.http.post(`/${elsewhere.slug}/api/functions/slug/${fn.slug}/execute`, { args: {} }, as());
    expectErrorBody(execute, 404);
  });

  it('refers to unknown functions, servers and keys in bodies with 4xx naming the field', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const assigned = await stack.http.put(
      `${base()}/mcp-servers`,
      { name: 'S', slug: unique('s'), description: '', functionIds: [missing] },
      as(),
    );
    expectErrorBody(assigned, 400);
    expect(assigned.body.issues[0].path).toEqual(['functionIds', 0]);
    for (const body of [
      { name: unique('c'), mcpServerId: missing, apiKeyId: key.id },
      { name: unique('c'), mcpServerId: server.id, apiKeyId: missing },
      { name: unique('c'), mcpServerId: 'nope', apiKeyId: 'nope' },
    ]) {
      const response = await stack.http.put(`${base()}/mcp-client-configs`, body, as());
      expectErrorBody(response);
    }
    for (const body of [
      { pipelineId: missing, pipelineVersionId: pipeline.version },
      { pipelineId: pipeline.id, pipelineVersionId: missing },
      { pipelineId: 'nope', pipelineVersionId: 'nope' },
    ]) {
      expectErrorBody(await stack.http.post(`${base()}/functions/${fn.id}/import`, body, as()));
    }
  });
});

describe('the MCP endpoint', () => {
  const mcp = (serverId = server.id) => `${base()}/mcp-servers/${serverId}/mcp`;
  const withKey = () => ({ 'x-api-key': key.secret });

  it('answers bad server ids with 404 and the error body', async () => {
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000', 'x'.repeat(300), '%00']) {
      for (const method of ['GET', 'POST', 'DELETE']) {
        const response = await stack.http.request(method, mcp(id), {
          headers: { ...withKey(), accept: 'text/event-stream' },
          body: method === 'POST' ? {} : undefined,
        });
        expectErrorBody(response, 404);
      }
    }
  });

  it('refuses what is not an MCP exchange with 4xx and the error body', async () => {
    // Not an initialize request, no session.
    expectErrorBody(await stack.http.request('POST', mcp(), { headers: withKey(), body: { hello: 'world' } }), 400);
    expectErrorBody(
      await stack.http.request('POST', mcp(), { headers: { ...withKey(), 'content-type': 'application/json' }, rawBody: '{"jsonrpc":' }),
    );
    // GET without an event-stream Accept; DELETE and GET naming no or unknown sessions; unknown SSE session.
    expectErrorBody(await stack.http.request('GET', mcp(), { headers: { ...withKey(), accept: 'application/json' } }), 400);
    expectErrorBody(await stack.http.request('DELETE', mcp(), { headers: withKey() }), 404);
    expectErrorBody(await stack.http.request('GET', mcp(), { headers: { ...withKey(), 'mcp-session-id': 'nope' } }), 404);
    expectErrorBody(
      await stack.http.request('POST', `${mcp()}?sessionId=nope`, {
        headers: withKey(),
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      }),
      404,
    );
    // A key that is not one.
    expectErrorBody(
      await stack.http.request('POST', mcp(), { headers: { 'x-api-key': 'not-a-key' }, body: { jsonrpc: '2.0', id: 1, method: 'ping' } }),
      401,
    );
  });
});
