import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, PASSWORD, registerUser } from './support/accounts.ts';
import type { Credentials, HttpResponse } from './support/http.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

/**
 * Bad input on every route of spec 4.1–4.3 (the 2FA and external-provider routes have their own
 * tests). Every refusal is a 4xx with the one error body `{status: "error", code, message,
 * issues?}`; nothing a client sends may produce a 500.
 */

let stack: TestStack;
let owner: { token: string; id: string; email: string };
let unverified: { token: string };
let project: { id: string; slug: string };
let key: { id: string };
/** DELETE routes get their own targets: an odd but valid query string really deletes. */
let doomedProject: { id: string; slug: string };
let doomedKey: { id: string };

beforeAll(async () => {
  stack = await startTestStack();
  owner = await registerUser(stack);
  unverified = await registerUser(stack, { verify: false });
  project = await createProject(stack, owner.token);
  key = await createApiKey(stack, owner.token, { accessType: 'full' });
  doomedProject = await createProject(stack, owner.token);
  doomedKey = await createApiKey(stack, owner.token, { accessType: 'full' });
});

afterAll(async () => {
  await stack?.close();
});

const signedIn = (): Credentials => ({ token: owner.token });

type BodyRoute = {
  method: 'POST' | 'PUT' | 'PATCH';
  path: () => string;
  as?: () => Credentials;
  /** A body that passes validation, as a base for single-field changes. */
  valid: () => Record<string, unknown>;
  required: string[];
  /** One wrongly typed value per field. */
  wrongTypes: Record<string, unknown>;
};

type QueryRoute = {
  method: 'GET' | 'DELETE';
  path: () => string;
  as?: () => Credentials;
  paginated?: boolean;
  /** A DELETE: makes a new target before each call, since a valid query really deletes the last one. */
  renew?: () => Promise<void>;
};

const bodyRoutes: Record<string, BodyRoute> = {
  'PATCH /{project}/api': {
    method: 'PATCH',
    path: () => `/${project.slug}/api`,
    as: signedIn,
    valid: () => ({ name: 'Renamed' }),
    required: [],
    wrongTypes: { name: 5, description: ['text'], public: 'true', slug: 7 },
  },
  'PUT /api/projects': {
    method: 'PUT',
    path: () => '/api/projects',
    as: signedIn,
    valid: () => ({ name: 'Project', description: '', public: false, slug: `bad-${randomBytes(4).toString('hex')}` }),
    required: ['name', 'slug'],
    wrongTypes: { name: 1, description: 2, public: 'false', slug: false },
  },
  'POST /api/auth/register': {
    method: 'POST',
    path: () => '/api/auth/register',
    valid: () => ({ email: `bad-${randomBytes(4).toString('hex')}@example.test`, password: PASSWORD, firstName: 'A', lastName: 'B' }),
    required: ['email', 'password', 'firstName', 'lastName'],
    wrongTypes: { email: 1, password: 2, firstName: 3, lastName: ['B'] },
  },
  'POST /api/auth/login': {
    method: 'POST',
    path: () => '/api/auth/login',
    valid: () => ({ email: owner.email, password: PASSWORD, remember: false }),
    required: ['email', 'password'],
    wrongTypes: { email: true, password: 1, remember: 'yes' },
  },
  'POST /api/auth/verify/request': {
    method: 'POST',
    path: () => '/api/auth/verify/request',
    as: () => ({ token: unverified.token }),
    valid: () => ({}),
    required: [],
    wrongTypes: { returnUrl: 5 },
  },
  'POST /api/auth/verify/submit': {
    method: 'POST',
    path: () => '/api/auth/verify/submit',
    valid: () => ({ token: 'not-a-real-token' }),
    required: ['token'],
    wrongTypes: { token: 5 },
  },
  'POST /api/auth/reset/request': {
    method: 'POST',
    path: () => '/api/auth/reset/request',
    valid: () => ({ email: 'nobody@example.test' }),
    required: ['email'],
    wrongTypes: { email: 5, returnUrl: {} },
  },
  'POST /api/auth/reset/submit': {
    method: 'POST',
    path: () => '/api/auth/reset/submit',
    valid: () => ({ token: 'not-a-real-token', password: PASSWORD, confirmPassword: PASSWORD }),
    required: ['token', 'password', 'confirmPassword'],
    wrongTypes: { token: 1, password: 2, confirmPassword: 3 },
  },
  'PUT /api/api-keys': {
    method: 'PUT',
    path: () => '/api/api-keys',
    as: signedIn,
    valid: () => ({ name: 'key', accessType: 'full' }),
    required: ['name', 'accessType'],
    wrongTypes: { name: 1, accessType: 'everything', projectIds: 'all', permissions: 'all' },
  },
  'PATCH /api/api-keys/{id}': {
    method: 'PATCH',
    path: () => `/api/api-keys/${key.id}`,
    as: signedIn,
    valid: () => ({ name: 'renamed key' }),
    required: [],
    wrongTypes: { name: 1, accessType: 2, projectIds: {}, permissions: [1] },
  },
};

const queryRoutes: Record<string, QueryRoute> = {
  'GET /api': { method: 'GET', path: () => '/api' },
  'GET /{project}/api': { method: 'GET', path: () => `/${project.slug}/api`, as: signedIn },
  'DELETE /{project}/api': {
    method: 'DELETE',
    path: () => `/${doomedProject.slug}/api`,
    as: signedIn,
    renew: async () => {
      doomedProject = await createProject(stack, owner.token);
    },
  },
  'GET /api/projects': { method: 'GET', path: () => '/api/projects', paginated: true },
  'GET /api/auth': { method: 'GET', path: () => '/api/auth', as: signedIn },
  'GET /api/auth/logout': { method: 'GET', path: () => '/api/auth/logout' },
  'GET /api/api-keys': { method: 'GET', path: () => '/api/api-keys', as: signedIn, paginated: true },
  'GET /api/api-keys/{id}': { method: 'GET', path: () => `/api/api-keys/${key.id}`, as: signedIn },
  'DELETE /api/api-keys/{id}': {
    method: 'DELETE',
    path: () => `/api/api-keys/${doomedKey.id}`,
    as: signedIn,
    renew: async () => {
      doomedKey = await createApiKey(stack, owner.token, { accessType: 'full' });
    },
  },
  'GET /api/users': { method: 'GET', path: () => '/api/users', paginated: true },
  'GET /api/users/{id}': { method: 'GET', path: () => `/api/users/${owner.id}` },
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

function send(route: BodyRoute, body: unknown, headers?: Record<string, string>) {
  return stack.http.request(route.method, route.path(), { body, headers, as: route.as?.() });
}

function sendRaw(route: BodyRoute, rawBody: string, contentType: string | undefined) {
  return stack.http.request(route.method, route.path(), {
    rawBody,
    headers: contentType ? { 'content-type': contentType } : {},
    as: route.as?.(),
  });
}

describe.each(Object.entries(bodyRoutes))('%s', (_name, route) => {
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

  // Routes whose body fields are all optional have nothing to miss.
  if (route.required.length > 0) {
    it('rejects missing required fields with 400 naming each', async () => {
      expectFieldsNamed(await send(route, {}), route.required);
      for (const field of route.required) {
        const { [field]: _dropped, ...rest } = route.valid();
        expectFieldsNamed(await send(route, rest), [field]);
      }
    });
  }

  it('rejects a body that is not JSON with 400 invalid_json', async () => {
    for (const raw of ['{"name": ', "{'single': 'quotes'}", 'not json at all', '{"a":1}}']) {
      const response = await sendRaw(route, raw, 'application/json');
      expectErrorBody(response, 400);
      expect(response.body.code).toBe('invalid_json');
    }
  });

  it('rejects JSON that is not an object with 400', async () => {
    for (const raw of ['[]', '[{"name":"x"}]', '"text"', '42', 'true', 'null']) {
      const response = await sendRaw(route, raw, 'application/json');
      expectErrorBody(response, 400);
      expect(response.body.message).toMatch(/JSON object/);
    }
  });

  it('rejects an oversized body with 413 and the error body', async () => {
    const big = JSON.stringify({ ...route.valid(), padding: 'x'.repeat(stack.config.bodyLimitBytes + 1) });
    const response = await sendRaw(route, big, 'application/json');
    expectErrorBody(response, 413);
    expect(response.body.code).toBe('body_too_large');
  });

  it('rejects a body in another content type with 415 and the error body', async () => {
    const json = JSON.stringify(route.valid());
    for (const contentType of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const response = await sendRaw(route, json, contentType);
      expectErrorBody(response, 415);
      expect(response.body.code).toBe('unsupported_media_type');
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
      0.5,
      '',
      ' ',
      'x'.repeat(100_000),
      'NUL\u0000inside',
      '\ud83d\ude00 emoji and \u202e bidi',
      "'; drop table users; --",
      { $gt: '' },
      JSON.parse('{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":{}}}}}}}}}}}'),
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

describe.each(Object.entries(queryRoutes))('%s', (_name, route) => {
  const call = async (query: string) => {
    await route.renew?.();
    const response = await stack.http.request(route.method, `${route.path()}${query}`, { as: route.as?.() });
    // The target exists: a 404 would mean the query was never looked at.
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
        ['?limit=201', 'limit'],
        ['?limit=1.5', 'limit'],
        ['?limit=1e9', 'limit'],
        ['?limit=10&limit=20', 'limit'],
        ['?limit', 'limit'],
        ['?offset=-1', 'offset'],
        ['?offset=abc', 'offset'],
        ['?offset=0.5', 'offset'],
      ]) {
        expectFieldsNamed(await call(query as string), [field as string]);
      }
      expect((await call('?limit=1&offset=0')).status).toBe(200);
    });
  }

  it('never answers 500 for odd query strings', async () => {
    for (const query of [
      '?',
      '?&&',
      '?=1',
      '?%ZZ=1',
      '?limit=%00',
      '?a[b]=1',
      `?x=${'y'.repeat(5000)}`,
      '?limit=9'.repeat(50),
      '?offset=9007199254740991',
      '?offset=1e20',
    ]) {
      const response = await call(query);
      expect(response.status, `${query}: ${response.text}`).toBeLessThan(500);
      if (response.status >= 400) expectErrorBody(response);
    }
  });
});

describe('paths and methods', () => {
  it.each([
    ['GET', '/api/nope'],
    ['POST', '/api/nope'],
    ['GET', '/api/projects/extra'],
    ['GET', '/nope'],
    ['GET', '/a/b/c/d'],
    ['PUT', '/api'],
    ['POST', '/api/projects'],
    ['DELETE', '/api/users'],
    ['OPTIONS', '/api'],
  ])('%s %s is 404 with the error body', async (method, path) => {
    const response = await stack.http.request(method, path, { as: signedIn() });
    expectErrorBody(response, 404);
    expect(response.body.code).toBe('not_found');
  });

  it('answers unknown or invisible projects with 404', async () => {
    for (const path of ['/no-such-project/api', '/00000000-0000-4000-8000-000000000000/api', `/${'x'.repeat(300)}/api`]) {
      expectErrorBody(await stack.http.get(path, signedIn()), 404);
    }
  });

  it('answers the user lookup of an unknown id with the spec’s 400 naming the id', async () => {
    for (const id of ['no-such-user', '00000000-0000-4000-8000-000000000000']) {
      const response = await stack.http.get(`/api/users/${id}`);
      expectErrorBody(response, 400);
      expect(response.body.message).toContain(id);
    }
  });

  it('never answers 500 for malformed paths', async () => {
    for (const path of [
      '/%ZZ/api',
      '/%00/api',
      '/..%2F..%2Fetc/api',
      '/api/api-keys/%ZZ',
      '/api/users/%00',
      '/api/api-keys/not-a-uuid',
      '//api',
    ]) {
      const response = await stack.http.get(path, signedIn());
      expect(response.status, `${path}: ${response.text}`).toBeLessThan(500);
      expectErrorBody(response);
    }
  });

  it('answers a NUL byte or an odd shape in the project segment of raw routes with 404', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const project of ['%00', 'a%00b', '%F0%9F%98%80', 'x'.repeat(65)]) {
      for (const path of [
        `/${project}/api/pipelines/${id}/${id}/logs`,
        `/${project}/api/sessions/${id}/${id}/logs`,
        `/${project}/api/sessions/${id}/${id}/capture`,
        `/${project}/api/pipelines`,
      ]) {
        const response = await stack.http.get(path, signedIn());
        expectErrorBody(response, 404);
      }
    }
  });
});

describe('credentials', () => {
  it.each([
    ['a revoked-looking API key', { apiKey: 'bfk_abcdefgh_0000000000000000000000000000000000000000000' }],
    ['garbage in x-api-key', { apiKey: 'garbage' }],
    ['a garbage bearer token', { authorization: 'Bearer garbage' }],
    ['a forged JWT', { token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' }],
    ['an unknown scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['an empty bearer', { authorization: 'Bearer' }],
  ] as [string, Credentials][])('%s is 401 with the error body, not 500', async (_name, as) => {
    for (const path of ['/api', '/api/projects', `/${project.slug}/api`]) {
      expectErrorBody(await stack.http.get(path, as), 401);
    }
  });

  it('a stale cookie reads as signed out rather than failing', async () => {
    const response = await stack.http.get('/api/auth', { cookie: 'token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' });
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('anonymous');
  });
});

describe('bodyless POST', () => {
  it('POST /api/auth/verify/request works without a body and without a content type', async () => {
    const response = await stack.http.request('POST', '/api/auth/verify/request', { as: { token: unverified.token } });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('…and with a JSON content type and an empty body', async () => {
    const response = await stack.http.request('POST', '/api/auth/verify/request', {
      rawBody: '',
      headers: { 'content-type': 'application/json' },
      as: { token: unverified.token },
    });
    expect(response.status, response.text).toBe(200);
  });

  it('a route with required fields still names them when the body is missing', async () => {
    expectFieldsNamed(await stack.http.request('POST', '/api/auth/login'), ['email', 'password']);
  });
});

describe('typed fields are not coerced', () => {
  it('`public: "false"` is refused, never read as true', async () => {
    const slug = `coerce-${randomBytes(4).toString('hex')}`;
    const response = await stack.http.put('/api/projects', { name: 'x', slug, public: 'false' }, signedIn());
    expectFieldsNamed(response, ['public']);
    expect((await stack.http.get(`/${slug}/api`, signedIn())).status).toBe(404);
  });

  it('nor through tRPC, after the REST route has been used', async () => {
    const slug = `coerce-${randomBytes(4).toString('hex')}`;
    const response = await stack.http.request('POST', '/trpc/projects.create', {
      body: { name: 'x', slug, public: 'false' },
      as: signedIn(),
    });
    expect(response.status, response.text).toBe(400);
    expect((await stack.http.get(`/${slug}/api`, signedIn())).status).toBe(404);
  });
});

/** Sends `raw` bytes on a fresh connection and reads the answer until the server closes it. */
function rawExchange(raw: string) {
  const { hostname, port } = new URL(stack.url);
  return new Promise<{ status: number; headers: Record<string, string>; body: any }>((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(raw));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      try {
        resolve({ status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) });
      } catch {
        reject(new Error(`not a JSON answer: ${text}`));
      }
    });
  });
}

describe('request ids', () => {
  it('echoes a well-formed x-request-id, and makes one up otherwise', async () => {
    const given = `req-${randomBytes(6).toString('hex')}`;
    expect((await stack.http.request('GET', '/api', { headers: { 'x-request-id': given } })).headers.get('x-request-id')).toBe(given);
    for (const headers of [{} as Record<string, string>, { 'x-request-id': 'not valid!' }, { 'x-request-id': 'x'.repeat(65) }]) {
      const made = (await stack.http.request('GET', '/api', { headers })).headers.get('x-request-id');
      expect(made).toMatch(/^[0-9a-f-]{36}$/);
    }
    // Also on errors: a 404, a refused body, a malformed path (answered before routing).
    for (const response of [
      await stack.http.request('GET', '/api/nope', { headers: { 'x-request-id': given } }),
      await stack.http.request('PUT', '/api/projects', {
        rawBody: '{',
        headers: { 'content-type': 'application/json', 'x-request-id': given },
      }),
      await stack.http.request('GET', '/%ZZ/api', { headers: { 'x-request-id': given } }),
    ]) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.headers.get('x-request-id')).toBe(given);
    }
  });
});

describe('requests Node refuses before Fastify sees them', () => {
  it('answers headers that are too large with 431 and the error body', async () => {
    const answer = await rawExchange(`GET /api HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toEqual({ status: 'error', code: 'headers_too_large', message: expect.any(String) });
  });

  it('answers malformed HTTP with 400 and the error body', async () => {
    const answer = await rawExchange('NOT HTTP AT ALL\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toEqual({ status: 'error', code: 'bad_request', message: expect.any(String) });
  });
});
