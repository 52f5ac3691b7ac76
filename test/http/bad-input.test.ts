import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import {
  type BodyRoute,
  describeBodyRoutes,
  describeQueryRoutes,
  expectErrorBody,
  expectFieldsNamed,
  type QueryRoute,
} from '../support/badInput.ts';
import type { Credentials } from '../support/http.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

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

describeBodyRoutes(bodyRoutes, { stack: () => stack });
describeQueryRoutes(queryRoutes, { stack: () => stack });

describe('paths and methods', () => {
  it.each([
    ['GET', '/api/nope'],
    ['POST', '/api/nope'],
    ['GET', '/api/projects/extra'],
    ['GET', '/nope'],
    ['GET', '/a/b/c/d'],
  ])('%s %s is 404 with the error body', async (method, path) => {
    const response = await stack.http.request(method, path, { as: signedIn() });
    expectErrorBody(response, 404);
    expect(response.body.code).toBe('not_found');
  });

  it.each([
    ['PUT', '/api', 'GET'],
    ['POST', '/api/projects', 'GET, PUT'],
    ['DELETE', '/api/users', 'GET'],
    ['OPTIONS', '/api', 'GET'],
  ])('%s %s, a known path, is 405 with the error body and allow', async (method, path, allow) => {
    const response = await stack.http.request(method, path, { as: signedIn() });
    expectErrorBody(response, 405);
    expect(response.body.code).toBe('method_not_allowed');
    expect(response.headers.get('allow')).toBe(allow);
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
