import type { OpenAPIObject } from 'trpc-to-openapi';
import { rateLimitedRoutes } from '../auth/rateLimits.ts';
import { type ErrorCode, type ErrorStatus, errorCodes } from '../errors.ts';
import { type ProcedureGuards, procedureGuards } from '../trpc/base.ts';
import { appRouter } from '../trpc/router.ts';

type Paths = NonNullable<OpenAPIObject['paths']>;
type Operation = {
  security?: unknown[];
  parameters?: { in?: string }[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
};

const methods = ['get', 'put', 'post', 'patch', 'delete'] as const;

const descriptions: Record<ErrorStatus, string> = {
  400: 'The input is wrong, or a rule forbids the request as made (`issues` names each problem)',
  401: 'No credentials, or credentials that are not (or no longer) valid',
  402: 'The account has no funds left (billing on)',
  403: 'Signed in, but not allowed to do this',
  404: 'Not found, or not visible to the caller. Asked without credentials, the message says that no credentials were sent (the same for a project that does not exist)',
  405: 'The path is known, but not with this method: the `Allow` header and the message name the ones it takes',
  408: 'The request took too long to arrive',
  409: 'A unique name is taken, or the resource is in a state that forbids this',
  413: 'The body is larger than the service accepts',
  414: 'The URL is too long',
  415: 'The body is not `application/json`',
  429: 'Too many requests, or a concurrency limit is reached; see Retry-After',
  431: 'The request headers are too large',
  500: 'An unexpected failure; the message names no internals',
  503: 'A dependency (the database, Temporal, a browser host) is out of reach; see Retry-After',
};

/** Statuses that say when to come back. */
const retryAfter = new Set<number>([429, 503]);

/**
 * The one error body, per status: `code` is that status's enum from the errors module's catalogue,
 * so a generated client can switch on it.
 */
function errorComponents() {
  const schemas: Record<string, unknown> = {
    ErrorIssue: {
      type: 'object',
      properties: {
        path: { type: 'array', items: { type: ['string', 'integer'] }, description: 'Where in the input' },
        message: { type: 'string' },
        code: { type: 'string', description: 'What kind of problem (zod issue codes for invalid input)' },
      },
      required: ['path', 'message'],
      additionalProperties: false,
    },
  };
  const responses: Record<string, unknown> = {};
  for (const key of Object.keys(errorCodes)) {
    const status = Number(key) as ErrorStatus;
    schemas[`Error${status}`] = {
      type: 'object',
      description: `The error body of a ${status} answer`,
      properties: {
        status: { type: 'string', const: 'error' },
        code: { type: 'string', enum: [...errorCodes[status]] },
        message: { type: 'string', description: 'For people: what went wrong, and what to do' },
        issues: { type: 'array', items: { $ref: '#/components/schemas/ErrorIssue' } },
      },
      required: ['status', 'code', 'message'],
      additionalProperties: false,
    };
    responses[`Error${status}`] = {
      description: descriptions[status],
      ...(retryAfter.has(status)
        ? { headers: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } } } }
        : {}),
      content: { 'application/json': { schema: { $ref: `#/components/schemas/Error${status}` } } },
    };
  }
  return { schemas, responses };
}

type ProcedureFacts = {
  /** `errorResponses` its meta names beyond the common ones (402, 429 of a concurrency limit). */
  declared: number[];
  /** Codes its own code answers (meta `errorCodes`), beyond its guards' and its input's. */
  ownCodes: readonly ErrorCode[];
  guards: ProcedureGuards;
};

/** What each REST procedure's definition says about its failures, by `method path`. */
function factsOfProcedures() {
  const facts = new Map<string, ProcedureFacts>();
  const procedures = appRouter._def.procedures as unknown as Record<
    string,
    { _def: { middlewares: unknown[]; meta?: { openapi?: Record<string, unknown>; errorCodes?: readonly ErrorCode[] } } }
  >;
  for (const procedure of Object.values(procedures)) {
    const openapi = procedure._def.meta?.openapi;
    if (!openapi?.path) continue;
    const { errorResponses } = openapi;
    const declared = !errorResponses
      ? []
      : Array.isArray(errorResponses)
        ? (errorResponses as number[])
        : Object.keys(errorResponses as object).map(Number);
    // Fork's `{sourceProject}` is `{project}` in the document (openapi.ts).
    const path = String(openapi.path).replace('{sourceProject}', '{project}');
    facts.set(`${String(openapi.method).toLowerCase()} ${path}`, {
      declared,
      ownCodes: procedure._def.meta?.errorCodes ?? [],
      guards: procedureGuards(procedure),
    });
  }
  return facts;
}

/**
 * The codes an operation can answer with `status`, for its examples: what its guards refuse with
 * (no credentials, an API key where a session is needed, an unverified e-mail), what its input
 * can be refused for, and the one code each common status has. Undefined: nothing narrower than
 * the status's whole list is known (a raw route's own status, a procedure's declared 402 or 429).
 */
function codesOf(status: ErrorStatus, method: string, operation: Operation, facts: ProcedureFacts | undefined): ErrorCode[] | undefined {
  const guards = facts?.guards;
  const unsafe = method !== 'get';
  const hasPathIds = operation.parameters?.some((parameter) => parameter.in === 'path') ?? false;
  const hasInput = Boolean(operation.parameters?.length || operation.requestBody);
  const codes: (ErrorCode | false | undefined)[] | undefined = (() => {
    switch (status) {
      case 400:
        return [
          hasInput && 'invalid_input',
          Boolean(operation.requestBody) && 'invalid_json',
          Boolean(operation.requestBody) && 'too_deep',
          hasPathIds && 'bad_url',
          guards?.verified && 'email_not_verified',
          'bad_request',
        ];
      case 401:
        // A credential that is sent is checked on every operation; none at all fails only where one is needed.
        return [
          (guards ? guards.signedIn : Boolean(operation.security?.length)) && 'unauthenticated',
          'invalid_api_key',
          'invalid_token',
          'session_ended',
          'invalid_credentials',
        ];
      case 403:
        // Any change a browser's cookie could sign may be a forgery (server/requestEdge.ts).
        return guards ? [(Boolean(operation.security?.length) || hasPathIds) && 'forbidden', unsafe && 'cross_site_request'] : undefined;
      case 404:
        return guards ? ['not_found'] : undefined;
      case 405:
        return ['method_not_allowed'];
      case 408:
        return ['request_timeout'];
      case 409:
        return guards ? ['conflict'] : undefined;
      case 413:
        return ['body_too_large'];
      case 414:
        return ['uri_too_long'];
      case 415:
        return ['unsupported_media_type'];
      case 429:
        return facts?.declared.includes(429) ? undefined : ['rate_limited'];
      case 431:
        return ['headers_too_large'];
      case 500:
        return ['internal_error'];
      case 503:
        return ['service_unavailable'];
      default:
        return undefined;
    }
  })();
  if (!codes) return undefined;
  const statusCodes: readonly string[] = errorCodes[status];
  const own = facts?.ownCodes.filter((code) => statusCodes.includes(code)) ?? [];
  const known = [...new Set([...own, ...codes.filter((code): code is ErrorCode => Boolean(code))])];
  return known.length ? known : undefined;
}

/**
 * One error response of one operation: the status's shared body schema, and an example per code
 * this operation can answer, so Swagger UI lists that operation's own codes.
 */
function errorResponse(status: ErrorStatus, codes: readonly ErrorCode[], description = descriptions[status]) {
  const examples = Object.fromEntries(
    codes.map((code) => [code, { summary: code, value: { status: 'error', code, message: descriptions[status] } }]),
  );
  return {
    description,
    ...(retryAfter.has(status)
      ? { headers: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } } } }
      : {}),
    content: { 'application/json': { schema: { $ref: `#/components/schemas/Error${status}` }, examples } },
  };
}

/**
 * What an operation can answer besides success. Every request may be malformed (400), carry a bad
 * credential (401), meet an unexpected failure (500) or a database out of reach (503); a protected
 * or project-scoped one may be refused (403), and so may a change a browser was made to send
 * (403 `cross_site_request`); a path with ids may name something missing (404); a
 * change may conflict (409); a body may come too slowly (408), be too large (413) or not JSON (415);
 * a rate-limited route may answer 429 (the rate limiter's own list of its routes); and what a
 * procedure's code adds (402 funds, 429 a concurrency limit) is declared beside it, in its meta.
 */
function statusesOf(path: string, method: string, operation: Operation, declared: readonly number[] = []) {
  const statuses = new Set<number>([400, 401, 500, 503, ...declared]);
  const hasPathIds = operation.parameters?.some((parameter) => parameter.in === 'path') ?? false;
  if (operation.security?.length || hasPathIds || method !== 'get') statuses.add(403);
  if (hasPathIds) statuses.add(404);
  if (method !== 'get') statuses.add(409);
  if (operation.requestBody) {
    statuses.add(408);
    statuses.add(413);
    statuses.add(415);
  }
  if (`${method.toUpperCase()} ${path}` in rateLimitedRoutes) statuses.add(429);
  // A raw route's own statuses (described by hand, no body schema); the REST adapter's defaults are not.
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (Number(status) >= 400 && !(response as { content?: unknown }).content) statuses.add(Number(status));
  }
  return [...statuses].filter((status): status is ErrorStatus => status in errorCodes).sort();
}

/**
 * Replaces every error response of the document with the API's real error body, and documents the
 * statuses each operation can answer, with an example of each code it can answer there. A raw
 * route's own description of a status is kept.
 */
export function withExactErrors(document: OpenAPIObject): OpenAPIObject {
  const factsByOperation = factsOfProcedures();
  const components = errorComponents();
  const paths: Paths = {};
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const entry: Record<string, unknown> = { ...item };
    for (const method of methods) {
      const operation = item[method] as Operation | undefined;
      if (!operation) continue;
      const responses: Record<string, unknown> = {};
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (Number(status) < 400) responses[status] = response;
      }
      const facts = factsByOperation.get(`${method} ${path}`);
      for (const status of statusesOf(path, method, operation, facts?.declared)) {
        const own = operation.responses?.[String(status)] as { description?: string; content?: unknown } | undefined;
        // A raw route's words for its own statuses stay; the lib's generic ones do not.
        const ownDescription = own?.description && !own.content ? own.description : undefined;
        const codes = (ownDescription ? undefined : codesOf(status, method, operation, facts)) ?? errorCodes[status];
        responses[String(status)] = errorResponse(status, codes, ownDescription);
      }
      entry[method] = { ...operation, responses };
    }
    paths[path] = entry as Paths[string];
  }
  return {
    ...document,
    paths,
    components: {
      ...document.components,
      // The REST adapter's generic error schemas (`error.BAD_REQUEST` …) describe a body never sent.
      schemas: {
        ...Object.fromEntries(Object.entries(document.components?.schemas ?? {}).filter(([name]) => !name.startsWith('error.'))),
        ...components.schemas,
      },
      responses: { ...document.components?.responses, ...components.responses },
    },
  } as OpenAPIObject;
}

/** What every text of a request must match: the tRPC layer refuses NUL (server/trpc/base.ts). */
const withoutNul = '^[^\\u0000]*$';

type Schema = Record<string, unknown>;

const subschemaLists = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const subschemas = ['items', 'additionalProperties', 'not', 'propertyNames'];
const subschemaMaps = ['properties', 'patternProperties', '$defs'];

/** `schema` with every string it describes (not an enum, a constant or its own pattern) refusing NUL. */
function refuseNul(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out: Schema = { ...(schema as Schema) };
  for (const key of subschemaLists) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(refuseNul);
  for (const key of subschemas) if (key in out) out[key] = refuseNul(out[key]);
  for (const key of subschemaMaps) {
    if (out[key] && typeof out[key] === 'object') {
      out[key] = Object.fromEntries(Object.entries(out[key] as Schema).map(([name, item]) => [name, refuseNul(item)]));
    }
  }
  const types = ([] as unknown[]).concat(out.type ?? []);
  if (types.includes('string') && out.pattern === undefined && out.enum === undefined && out.const === undefined) {
    out.pattern = withoutNul;
  }
  return out;
}

/** A parameter's or a body's media types' schemas, NUL refused. */
function withSchemasRefusingNul<T extends { schema?: unknown; content?: Record<string, { schema?: unknown }> }>(part: T): T {
  return {
    ...part,
    ...(part.schema ? { schema: refuseNul(part.schema) } : {}),
    ...(part.content
      ? {
          content: Object.fromEntries(
            Object.entries(part.content).map(([type, media]) => [
              type,
              media.schema ? { ...media, schema: refuseNul(media.schema) } : media,
            ]),
          ),
        }
      : {}),
  };
}

/**
 * Request schemas say what the server refuses: no text of any request may hold a NUL (PostgreSQL
 * cannot store it), so every string parameter and body field carries that pattern, and a client
 * generated from the document refuses the same input before sending it.
 */
export function withNulRefused(document: OpenAPIObject): OpenAPIObject {
  const paths: Paths = {};
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const entry: Record<string, unknown> = { ...item };
    for (const method of methods) {
      const operation = item[method] as
        | (Omit<Operation, 'parameters' | 'requestBody'> & {
            parameters?: { in?: string; schema?: unknown }[];
            requestBody?: { content?: Record<string, { schema?: unknown }> };
          })
        | undefined;
      if (!operation) continue;
      entry[method] = {
        ...operation,
        ...(operation.parameters ? { parameters: operation.parameters.map((parameter) => refuseNul(parameter) as { in?: string }) } : {}),
        ...(operation.requestBody ? { requestBody: withSchemasRefusingNul(operation.requestBody) } : {}),
      };
    }
    paths[path] = entry as Paths[string];
  }
  return { ...document, paths };
}
