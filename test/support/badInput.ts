import { describe, expect, it } from 'vitest';
import type { Credentials, HttpResponse } from './http.ts';
import type { TestStack } from './stack.ts';

/**
 * The bad-input sweep every route gets (test/http/bad-input.test.ts, test/functions/bad-input-functions.test.ts): missing, wrongly typed and
 * unknown fields, bodies that are not JSON objects, odd query strings. Every refusal is a 4xx
 * with the one error body `{status: "error", code, message, issues?}`; nothing a client sends
 * may produce a 500.
 */

export type BodyRoute = {
  method: 'POST' | 'PUT' | 'PATCH';
  path: () => string;
  as?: () => Credentials;
  /** A body that passes validation, as a base for single-field changes. */
  valid: () => Record<string, unknown>;
  required: string[];
  /** One wrongly typed value per field. */
  wrongTypes: Record<string, unknown>;
  /**
   * How the valid body is answered, checked first so the refusals are known to be about the
   * change made to it. Unset: that check is left out (e.g. a body valid only once).
   */
  acceptsValid?: (response: HttpResponse) => void;
};

export type QueryRoute = {
  method: 'GET' | 'DELETE';
  path: () => string;
  as?: () => Credentials;
  paginated?: boolean;
  /** A DELETE: makes a new target before each call, since a valid query really deletes the last one. */
  renew?: () => Promise<void>;
};

const allowedErrorKeys = ['status', 'code', 'message', 'issues'];

/** Exactly `{status: "error", code, message, issues?}`, with well-formed issues. */
export function expectErrorBody(response: HttpResponse, status?: number) {
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
export function expectFieldsNamed(response: HttpResponse, fields: string[]) {
  expectErrorBody(response, 400);
  expect(response.body.code).toBe('invalid_input');
  const named = (response.body.issues ?? []).map((issue: { path: (string | number)[] }) => String(issue.path[0]));
  for (const field of fields) {
    expect(named, response.text).toContain(field);
    expect(response.body.message, response.text).toContain(field);
  }
}

const hostileValues: unknown[] = [
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
  '00000000-0000-4000-8000-000000000000',
  '\ud83d\ude00 emoji and \u202e bidi',
  "'; drop table users; --",
  { $gt: '' },
  ['00000000-0000-4000-8000-000000000000', 'nope', null],
  JSON.parse('{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":{}}}}}}}}}}}'),
];

/**
 * One describe block per route. `stack` is read when the tests run (it is made in beforeAll);
 * `as` is the credentials of routes that name none; `hostile` adds values for the no-500 sweep.
 */
export function describeBodyRoutes(
  routes: Record<string, BodyRoute>,
  options: { stack: () => TestStack; as?: () => Credentials; hostile?: unknown[] },
) {
  const credentials = (route: BodyRoute) => (route.as ?? options.as)?.();
  const send = (route: BodyRoute, body: unknown) =>
    options.stack().http.request(route.method, route.path(), { body, as: credentials(route) });
  const sendRaw = (route: BodyRoute, rawBody: string, contentType: string) =>
    options.stack().http.request(route.method, route.path(), { rawBody, headers: { 'content-type': contentType }, as: credentials(route) });

  describe.each(Object.entries(routes))('%s', (_name, route) => {
    if (route.acceptsValid) {
      it('accepts the valid body (so the refusals below are about the changes)', async () => {
        route.acceptsValid?.(await send(route, route.valid()));
      });
    }

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
      const big = JSON.stringify({ ...route.valid(), padding: 'x'.repeat(options.stack().config.bodyLimitBytes + 1) });
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
      const fields = [...new Set([...Object.keys(route.valid()), ...Object.keys(route.wrongTypes)])];
      for (const field of fields) {
        for (const value of [...hostileValues, ...(options.hostile ?? [])]) {
          const response = await send(route, { ...route.valid(), [field]: value });
          expect(response.status, `${field}=${JSON.stringify(value).slice(0, 40)}: ${response.text}`).toBeLessThan(500);
          if (response.status >= 400) expectErrorBody(response);
        }
      }
    });
  });
}

export function describeQueryRoutes(routes: Record<string, QueryRoute>, options: { stack: () => TestStack; as?: () => Credentials }) {
  describe.each(Object.entries(routes))('%s', (_name, route) => {
    const call = async (query: string) => {
      await route.renew?.();
      const response = await options.stack().http.request(route.method, `${route.path()}${query}`, { as: (route.as ?? options.as)?.() });
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
}
