import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitedRoutes } from '../../server/auth/rateLimits.ts';
import { rateLimitedActions } from '../../server/config.ts';
import { errorCodes } from '../../server/errors.ts';
import { launchChromium } from '../support/chromium.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * The spec's endpoint list (test/fixtures/spec-endpoints.txt, a copy of the shared
 * /work/shared/spec/endpoints.txt): every entry must be in the document at exactly its path, with
 * its method and its parameter names. "Nearly the path" is a bug: a client written from the spec
 * calls the spec's path.
 */
const specListFile = fileURLToPath(new URL('../fixtures/spec-endpoints.txt', import.meta.url));
const sharedSpecListFile = '/work/shared/spec/endpoints.txt';

/** "METHOD /path" lines; blank lines and `#` comments are skipped (the shared file has none). */
function readEndpointList(file: string) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

const specEndpoints = readEndpointList(specListFile);

/**
 * What the document lists beyond the spec's list, each for a reason of its own. With the spec's
 * list this is the whole document, so a route that moved cannot linger at its old path too.
 */
const beyondTheSpec = [
  // Accounts: registration, 2FA recovery codes, changing the password, external sign-in's second steps.
  'POST /api/auth/register',
  'GET /api/auth/2fa',
  'POST /api/auth/2fa/recovery-codes',
  'POST /api/auth/password',
  'GET /api/auth/external/register/{token}',
  'POST /api/auth/external/register',
  'GET /api/auth/external/link/{token}',
  'POST /api/auth/external/link/confirm',
  'POST /api/auth/external/link/cancel',
  // The global admins' view of the browser hosts.
  'GET /api/admin/hosts',
  // Whether the database and the workflow engine answer, for a load balancer or an operator.
  'GET /api/health',
  // A function by id, beside the spec's by slug.
  'POST /{project}/api/functions/{functionId}/execute',
  // An execution by its run id: how an execute with `wait` that answered 202 is followed to its end.
  'GET /{project}/api/functions/{functionId}/runs/{runId}',
  // Webhooks: endpoints, their deliveries, and a resend.
  'GET /{project}/api/webhooks',
  'POST /{project}/api/webhooks',
  'GET /{project}/api/webhooks/{webhookId}',
  'PATCH /{project}/api/webhooks/{webhookId}',
  'DELETE /{project}/api/webhooks/{webhookId}',
  'POST /{project}/api/webhooks/{webhookId}/secret',
  'GET /{project}/api/webhooks/{webhookId}/deliveries',
  'GET /{project}/api/webhooks/{webhookId}/deliveries/{deliveryId}',
  'POST /{project}/api/webhooks/{webhookId}/deliveries/{deliveryId}/resend',
  // A running browser: CDP, the live view and its input.
  'GET /{project}/api/sessions/{sessionId}/{resourceId}/cdp',
  'GET /{project}/api/sessions/{sessionId}/{resourceId}/live',
  'GET /{project}/api/sessions/{sessionId}/{resourceId}/live/ws',
  // A running or stopped browser's downloaded files: the list, one file's bytes, its deletion.
  'GET /{project}/api/sessions/{sessionId}/{resourceId}/downloads',
  'GET /{project}/api/sessions/{sessionId}/{resourceId}/downloads/{downloadId}',
  'DELETE /{project}/api/sessions/{sessionId}/{resourceId}/downloads/{downloadId}',
  // A browser's recordings (docs/browsers.md, Recordings).
  'GET /{project}/api/sessions/{sessionId}/{resourceId}/recordings',
  'GET /{project}/api/sessions/{sessionId}/{resourceId}/recordings/{page}',
  // The MCP endpoint's other methods (streamable HTTP).
  'POST /{project}/api/mcp-servers/{serverId}/mcp',
  'DELETE /{project}/api/mcp-servers/{serverId}/mcp',
  // A run's screenshot (JPEG), as its `screenshots` list it.
  'GET /{project}/api/screenshots/{screenshotId}',
  // Usage summed by day and session (the console's billing page).
  'GET /api/billing/usage',
  // Browser hosts' usage reports and external sessions.
  'POST /api/coordinator/{token}/usage',
  'PUT /api/external-session',
  'POST /api/external-session/{id}/capture',
  // The document itself.
  'GET /api/openapi.json',
  'GET /api/docs',
  // The pages behind the service's own links (mails, OpenID Connect redirects).
  'GET /auth/verify',
  'GET /auth/reset',
  'GET /auth/external-register/{token}',
  'GET /auth/external-link/{token}',
  'GET /auth/2fa',
  // Where Stripe sends users back: the console's billing page.
  'GET /billing',
];

type Operation = {
  summary?: string;
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
  responses: Record<string, unknown>;
};
type Document = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, unknown> };
};

let stack: TestStack;
let document: Document;

beforeAll(async () => {
  stack = await startTestStack();
  const response = await stack.http.get('/api/openapi.json');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  document = response.body;
});

afterAll(async () => {
  await stack?.close();
});

function operation(endpoint: string) {
  const [method, path] = endpoint.split(' ') as [string, string];
  return document.paths[path]?.[method.toLowerCase()];
}

describe('GET /api/openapi.json', () => {
  it('is an OpenAPI 3.1 document with the API version', async () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info.title).toBeTruthy();
    const root = await stack.http.get('/api');
    expect(document.info.version).toBe(root.body.version);
    // 3.1 is JSON Schema: no 3.0-only `nullable` keyword anywhere.
    expect(JSON.stringify(document)).not.toContain('"nullable"');
  });

  it('reads the spec’s endpoint list from its copy, which is the shared list where that exists', () => {
    expect(specEndpoints).toHaveLength(101);
    for (const endpoint of specEndpoints) expect(endpoint).toMatch(/^(GET|PUT|POST|PATCH|DELETE) \/\S*$/);
    expect(new Set(specEndpoints).size).toBe(specEndpoints.length);
    if (existsSync(sharedSpecListFile)) expect(specEndpoints).toEqual(readEndpointList(sharedSpecListFile));
  });

  it.each(specEndpoints)('lists %s at exactly that path, with a summary and a success answer', (endpoint) => {
    const op = operation(endpoint);
    expect(op, `${endpoint} is missing`).toBeDefined();
    expect(op?.summary).toBeTruthy();
    // 200, or 302 for the external sign-in's redirects.
    expect(Object.keys(op?.responses ?? {}).some((status) => /^[23]\d\d$/.test(status))).toBe(true);
  });

  it.each(specEndpoints.filter((endpoint) => endpoint.includes('{')))(
    'declares the path parameters of %s, by the spec’s names',
    (endpoint) => {
      const names = [...endpoint.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const declared = operation(endpoint)?.parameters?.filter((p) => p.in === 'path');
      expect(declared?.map((p) => p.name).sort()).toEqual(names.sort());
      for (const parameter of declared ?? []) expect(parameter).toMatchObject({ required: true });
    },
  );

  it('lists nothing else but the named operations beyond the spec (no route at a second, almost-spec path)', () => {
    const listed = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ['get', 'put', 'post', 'patch', 'delete'].includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(listed.filter((endpoint) => !specEndpoints.includes(endpoint)).sort()).toEqual([...beyondTheSpec].sort());
  });

  it('documents the request bodies with the spec’s field names', () => {
    const fields = (endpoint: string) =>
      Object.keys(operation(endpoint)?.requestBody?.content['application/json']?.schema.properties ?? {}).sort();
    expect(fields('POST /api/auth/login')).toEqual(['email', 'password', 'remember']);
    expect(fields('PUT /api/projects')).toEqual(['description', 'name', 'public', 'slug']);
    expect(fields('PATCH /{project}/api')).toEqual(['description', 'name', 'public', 'slug']);
    expect(fields('PUT /api/api-keys')).toEqual(expect.arrayContaining(['name', 'accessType', 'projectIds']));
    expect(fields('POST /api/auth/reset/submit')).toEqual(['confirmPassword', 'password', 'token']);
  });

  it('marks the bodyless POST as taking an optional body', () => {
    expect(operation('POST /api/auth/verify/request')?.requestBody?.required).not.toBe(true);
  });

  it('documents the pagination and `my` query parameters of the project list', () => {
    const names = operation('GET /api/projects')
      ?.parameters?.filter((p) => p.in === 'query')
      .map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['limit', 'offset', 'my']));
  });

  it('documents the real error body on every operation, with the codes of each status from the catalogue', () => {
    for (const [status, codes] of Object.entries(errorCodes)) {
      expect(document.components.schemas[`Error${status}`]).toMatchObject({
        required: ['status', 'code', 'message'],
        additionalProperties: false,
        properties: { status: { const: 'error' }, code: { enum: [...codes] } },
      });
    }
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { responses: Record<string, { $ref?: string; content?: any }> }>)) {
        const errors = Object.entries(op.responses).filter(([status]) => Number(status) >= 400);
        expect(
          errors.map(([status]) => status),
          `${method} ${path}`,
        ).toEqual(expect.arrayContaining(['400', '401', '500', '503']));
        for (const [status, response] of errors) {
          const schema = response.$ref ?? response.content?.['application/json']?.schema?.$ref;
          expect(schema, `${method} ${path} ${status}`).toMatch(new RegExp(`/Error${status}$`));
        }
      }
    }
  });

  it('documents 404 where a path names something, 409 where a request changes something, and 402/429 where the code answers them', () => {
    const statuses = (endpoint: string) => Object.keys(operation(endpoint)?.responses ?? {});
    expect(statuses('GET /{project}/api/sessions/{sessionId}')).toContain('404');
    expect(statuses('GET /api')).not.toContain('404');
    expect(statuses('PUT /api/projects')).toEqual(expect.arrayContaining(['409', '413', '415']));
    expect(statuses('GET /api/projects')).not.toContain('409');
    expect(statuses('POST /api/auth/login')).toContain('429');
    expect(statuses('POST /{project}/api/sessions/{sessionId}/start')).toEqual(expect.arrayContaining(['402', '429']));
    expect(statuses('GET /{project}/api/sessions')).not.toContain('429');
  });

  it('documents 429 on every rate-limited route, read from the rate limiter’s own list of them', () => {
    const routes = Object.keys(rateLimitedRoutes);
    // Every action the limits are configured for guards at least one route.
    expect(new Set(Object.values(rateLimitedRoutes))).toEqual(new Set(rateLimitedActions));
    expect(routes).toContain('GET /api/auth/external/{provider}/redirect');
    for (const route of routes) {
      const op = operation(route);
      expect(op, `${route} is in the document`).toBeDefined();
      expect(op?.responses['429'], route).toMatchObject({
        headers: { 'Retry-After': expect.anything() },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error429' } } },
      });
    }
    expect(document.components.responses.Error429).toMatchObject({ headers: { 'Retry-After': expect.anything() } });
  });

  it('gives each operation examples of its own error codes per status, not one shared list', () => {
    type Examples = Record<string, { value: { status: string; code: string; message: string } }>;
    const codes = (endpoint: string, status: string) => {
      const response = operation(endpoint)?.responses[status] as { content?: { 'application/json'?: { examples?: Examples } } } | undefined;
      return Object.keys(response?.content?.['application/json']?.examples ?? {});
    };
    // Creating a project can meet a taken slug; a public sign-up needs no credentials; a read sends no body.
    expect(codes('PUT /api/projects', '409')).toContain('slug_taken');
    expect(codes('PUT /api/projects', '401')).toContain('unauthenticated');
    expect(codes('POST /api/auth/register', '401')).not.toContain('unauthenticated');
    expect(codes('PUT /api/projects', '400')).toContain('invalid_json');
    expect(codes('GET /{project}/api', '400')).not.toContain('invalid_json');
    expect(codes('GET /{project}/api', '400')).not.toEqual(codes('PUT /api/projects', '400'));
    // Every example is a body the API sends: a code of that status from the catalogue.
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { responses: Record<string, { content?: any }> }>)) {
        for (const [status, response] of Object.entries(op.responses).filter(([status]) => Number(status) >= 400)) {
          const given = Object.values((response.content?.['application/json']?.examples ?? {}) as Examples);
          expect(given.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
          for (const { value } of given) {
            expect(value.status).toBe('error');
            expect(errorCodes[Number(status) as keyof typeof errorCodes], `${method} ${path} ${status}`).toContain(value.code);
          }
        }
      }
    }
  });

  it('documents 408 where a request carries a body (it must arrive within REQUEST_TIMEOUT_SECONDS)', () => {
    const statuses = (endpoint: string) => Object.keys(operation(endpoint)?.responses ?? {});
    expect(statuses('PUT /api/projects')).toContain('408');
    expect(statuses('GET /api/projects')).not.toContain('408');
  });

  it('documents the global admins’ GET /api/admin/hosts with its 401 and 403', () => {
    const statuses = Object.keys(operation('GET /api/admin/hosts')?.responses ?? {});
    expect(statuses).toEqual(expect.arrayContaining(['200', '401', '403']));
    expect(statuses).not.toContain('404');
  });

  it('states in request schemas that no text may hold NUL', () => {
    const schema = operation('POST /api/auth/login')?.requestBody?.content['application/json']?.schema;
    const password = schema?.properties?.password as { pattern: string };
    expect(new RegExp(password.pattern, 'u').test('a\u0000b')).toBe(false);
    expect(new RegExp(password.pattern, 'u').test('correct horse')).toBe(true);
  });

  it('lists only paths the service answers (no route in the document is a 404)', async () => {
    for (const [path, item] of Object.entries(document.paths)) {
      if (!item.get || path.includes('{') || path.includes('external') || path.includes('2fa')) continue;
      const response = await stack.http.get(path);
      expect(response.status, path).not.toBe(404);
    }
  });
});

describe('GET /api/docs', () => {
  it('is Swagger UI, served from this host: a browser finds the operations and the API-key authorisation', async () => {
    const page = await stack.http.get('/api/docs/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs)/);
    const browser = await launchChromium();
    try {
      const tab = await browser.newPage();
      await tab.goto(`${stack.url}/api/docs`);
      await tab.waitForSelector('.opblock', { timeout: 30_000 });
      // Swagger UI renders a long list virtualised (only what is near the viewport): scroll
      // through it, a screen at a time, collecting every operation that was shown.
      const shown = new Set<string>();
      for (let previous = -1; ; ) {
        for (const path of await tab.locator('.opblock-summary-path').allTextContents()) shown.add(path.replace(/\u200b/g, ''));
        const at = await tab.evaluate(() => {
          window.scrollBy(0, window.innerHeight);
          return window.scrollY;
        });
        if (at === previous) break;
        previous = at;
        await tab.waitForTimeout(50);
      }
      for (const endpoint of ['/api/projects', '/api/billing/plans', '/{project}/api/sessions/{sessionId}/start']) {
        expect([...shown], endpoint).toContain(endpoint);
      }
      await tab.click('button.authorize');
      await expect
        .poll(() => tab.locator('.auth-container').allTextContents())
        .toEqual(expect.arrayContaining([expect.stringContaining('x-api-key')]));
    } finally {
      await browser.close();
    }
  });
});
