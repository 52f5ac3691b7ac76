import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from './support/accounts.ts';
import type { Credentials, HttpResponse } from './support/http.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

/**
 * Bad input on every route of spec 4.6 (functions) and 4.8 (MCP servers, client configs, the MCP
 * endpoint), modelled on test/bad-input.test.ts: missing, wrongly typed and unknown fields, bad
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

type BodyRoute = {
  method: 'POST' | 'PUT' | 'PATCH';
  path: () => string;
  valid: () => Record<string, unknown>;
  required: string[];
  wrongTypes: Record<string, unknown>;
};
type QueryRoute = { method: 'GET' | 'DELETE'; path: () => string; paginated?: boolean; renew?: () => Promise<void> };

const base = () => `/${project.slug}/api`;

const bodyRoutes: Record<string, BodyRoute> = {
  'PUT /{project}/api/functions': {
    method: 'PUT',
    path: () => `${base()}/functions`,
    valid: () => ({ name: 'F', description: '', slug: unique('f'), definition: definition() }),
    required: ['name', 'slug', 'definition'],
    wrongTypes: { name: 1, description: 2, slug: false, definition: 'source' },
  },
  'PATCH /{project}/api/functions/{functionId}': {
    method: 'PATCH',
    path: () => `${base()}/functions/${fn.id}`,
    valid: () => ({ name: 'Renamed' }),
    required: [],
    wrongTypes: { name: 5, description: ['text'], slug: 7 },
  },
  'POST /{project}/api/functions/{functionId}/import': {
    method: 'POST',
    path: () => `${base()}/functions/${fn.id}/import`,
    valid: () => ({ pipelineId: pipeline.id, pipelineVersionId: pipeline.version }),
    required: [],
    wrongTypes: { pipelineId: 1, pipelineVersionId: 2, metadata: 'x', parameters: {}, outputs: 'x', outputType: 5 },
  },
  'POST /{project}/api/functions/slug/{slug}/execute': {
    method: 'POST',
    path: () => `${base()}/functions/slug/${broken.slug}/execute`,
    valid: () => ({ args: {} }),
    required: [],
    wrongTypes: { args: 'x' },
  },
  'POST /{project}/api/functions/{functionId}/execute': {
    method: 'POST',
    path: () => `${base()}/functions/${broken.id}/execute`,
    valid: () => ({ args: {} }),
    required: [],
    wrongTypes: { args: [1] },
  },
  'PUT /{project}/api/mcp-servers': {
    method: 'PUT',
    path: () => `${base()}/mcp-servers`,
    valid: () => ({ name: 'S', slug: unique('s'), description: '', functionIds: [fn.id] }),
    required: ['name', 'slug'],
    wrongTypes: { name: 1, slug: 2, description: 3, functionIds: 'all' },
  },
  'PATCH /{project}/api/mcp-servers/{serverId}': {
    method: 'PATCH',
    path: () => `${base()}/mcp-servers/${server.id}`,
    valid: () => ({ name: 'Renamed' }),
    required: [],
    wrongTypes: { name: 1, slug: 2, description: 3, functionIds: [1] },
  },
  'PUT /{project}/api/mcp-client-configs': {
    method: 'PUT',
    path: () => `${base()}/mcp-client-configs`,
    valid: () => ({ name: unique('c'), description: '', mcpServerId: server.id, apiKeyId: key.id }),
    required: ['name', 'mcpServerId', 'apiKeyId'],
    wrongTypes: { name: 1, description: 2, mcpServerId: 3, apiKeyId: {} },
  },
  'PATCH /{project}/api/mcp-client-configs/{configId}': {
    method: 'PATCH',
    path: () => `${base()}/mcp-client-configs/${config.id}`,
    valid: () => ({ name: 'renamed config' }),
    required: [],
    wrongTypes: { name: 1, description: 2, mcpServerId: [], apiKeyId: true },
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

const allowedErrorKeys = ['status', 'code', 'message', 'issues'];

/** Exactly `{status: "error", code, message, issues?}`, with well-formed issues. */
function expectErrorBody(response: HttpResponse, status?: number) {
  if (status !== undefined) expect(response.status, response.text).toBe(status);
  expect(response.status, response.text).toBeGreaterThanOrEqual(400);
  expect(response.status, response.text).toBeLessThan(500);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.body, response.text).toBeTypeOf('object');
  expect(Object.keys(response.body).filter((k) => !allowedErrorKeys.includes(k))).toEqual([]);
  expect(response.body.status).toBe('error');
  expect(response.body.code).toMatch(/^[a-z][a-z0-9_]*$/);
  expect(response.body.message).toBeTypeOf('string');
  expect(response.body.message.length).toBeGreaterThan(0);
  if ('issues' in response.body) {
    expect(Array.isArray(response.body.issues)).toBe(true);
    expect(response.body.issues.length).toBeGreaterThan(0);
    for (const issue of response.body.issues) {
      expect(Object.keys(issue).filter((k) => !['path', 'message', 'code'].includes(k))).toEqual([]);
      expect(Array.isArray(issue.path)).toBe(true);
      expect(issue.message).toBeTypeOf('string');
    }
  }
}

/** A 400 whose message and issues both name every one of `fields`. */
function expectFieldsNamed(response: HttpResponse, fields: string[]) {
  expectErrorBody(response, 400);
  expect(response.body.code).toBe('invalid_input');
  const named = (response.body.issues ?? []).map((issue: { path: (string | number)[] }) => String(issue.path[0]));
  for (const field of fields) {
    expect(named, response.text).toContain(field);
    expect(response.body.message, response.text).toContain(field);
  }
}

function send(route: BodyRoute, body: unknown) {
  return stack.http.request(route.method, route.path(), { body, as: as() });
}

function sendRaw(route: BodyRoute, rawBody: string, contentType: string) {
  return stack.http.request(route.method, route.path(), { rawBody, headers: { 'content-type': contentType }, as: as() });
}

describe.each(Object.entries(bodyRoutes))('%s', (_name, route) => {
  it('accepts the valid body (so the refusals below are about the changes)', async () => {
    const response = await send(route, route.valid());
    // The execute target's version has errors: the body passed, the function cannot run.
    if (route.path().includes('/execute')) {
      expectErrorBody(response, 400);
      expect(response.body.code).toBe('version_has_errors');
    } else expect(response.status, response.text).toBe(200);
  });

  it('rejects an unknown field with 400 naming it', async () => {
    expectFieldsNamed(await send(route, { ...route.valid(), bogusField: 1 }), ['bogusField']);
    expectFieldsNamed(await send(route, { ...route.valid(), alsoUnknown: null, another: 'x' }), ['alsoUnknown', 'another']);
  });

  it('rejects wrongly typed fields with 400 naming each', async () => {
    expectFieldsNamed(await send(route, { ...route.valid(), ...route.wrongTypes }), Object.keys(route.wrongTypes));
    for (const [field, value] of Object.entries(route.wrongTypes)) {
      expectFieldsNamed(await send(route, { ...route.valid(), [field]: value }), [field]);
    }
  });

  if (route.required.length > 0) {
    it('rejects missing required fields with 400 naming each', async () => {
      expectFieldsNamed(await send(route, {}), route.required);
      for (const field of route.required) {
        const { [field]: _dropped, ...rest } = route.valid();
        expectFieldsNamed(await send(route, rest), [field]);
      }
    });
  }

  it('rejects a body that is not JSON, or JSON that is not an object, with 400', async () => {
    for (const raw of ['{"name": ', 'not json at all', '[]', '"text"', '42', 'null']) {
      expectErrorBody(await sendRaw(route, raw, 'application/json'), 400);
    }
  });

  it('never answers 500, whatever a field holds', async () => {
    const hostile: unknown[] = [
      null,
      {},
      [],
      [[[]]],
      -1,
      1e308,
      '',
      ' ',
      'x'.repeat(20_000),
      'NUL\u0000inside',
      '00000000-0000-4000-8000-000000000000',
      '\ud83d\ude00 emoji and \u202e bidi',
      "'; drop table functions; --",
      { $gt: '' },
      { source: { nodes: { a: { type: 'page.goto', inputs: { page: { $ref: 'a.page' } } } } } },
      ['00000000-0000-4000-8000-000000000000', 'nope', null],
    ];
    const fields = [...new Set([...Object.keys(route.valid()), ...Object.keys(route.wrongTypes)])];
    for (const field of fields) {
      for (const value of hostile) {
        const response = await send(route, { ...route.valid(), [field]: value });
        expect(response.status, `${field}=${JSON.stringify(value).slice(0, 40)}: ${response.text}`).toBeLessThan(500);
        if (response.status >= 400) expectErrorBody(response);
      }
    }
  });
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

describe.each(Object.entries(queryRoutes))('%s', (_name, route) => {
  const call = async (query: string) => {
    await route.renew?.();
    const response = await stack.http.request(route.method, `${route.path()}${query}`, { as: as() });
    if (route.renew) expect(response.status, `${query}: ${response.text}`).not.toBe(404);
    return response;
  };

  it('rejects an unknown query parameter with 400 naming it', async () => {
    expectFieldsNamed(await call('?bogusParam=1'), ['bogusParam']);
  });

  if (route.paginated) {
    it('rejects bad pagination with 400 naming the parameter', async () => {
      for (const [query, field] of [
        ['?limit=abc', 'limit'],
        ['?limit=0', 'limit'],
        ['?limit=-5', 'limit'],
        ['?limit=1.5', 'limit'],
        ['?limit=10&limit=20', 'limit'],
        ['?offset=-1', 'offset'],
        ['?offset=abc', 'offset'],
      ]) {
        expectFieldsNamed(await call(query as string), [field as string]);
      }
      expect((await call('?limit=1&offset=0')).status).toBe(200);
    });
  }

  it('never answers 500 for odd query strings', async () => {
    for (const query of ['?', '?&&', '?=1', '?%ZZ=1', '?limit=%00', '?a[b]=1', `?x=${'y'.repeat(5000)}`, '?offset=1e20']) {
      const response = await call(query);
      expect(response.status, `${query}: ${response.text}`).toBeLessThan(500);
      if (response.status >= 400) expectErrorBody(response);
    }
  });
});

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
