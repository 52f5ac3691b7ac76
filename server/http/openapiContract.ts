import type { OpenAPIObject } from 'trpc-to-openapi';
import { rateLimitedRoutes } from '../auth/rateLimits.ts';
import { type ErrorStatus, errorCodes } from '../errors.ts';
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

/** `errorResponses` a procedure's meta names beyond the common ones (402, 429 of a concurrency limit), by `method path`. */
function declaredByProcedures() {
  const declared = new Map<string, number[]>();
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: { openapi?: Record<string, unknown> } } }>;
  for (const procedure of Object.values(procedures)) {
    const openapi = procedure._def.meta?.openapi;
    if (!openapi?.errorResponses) continue;
    const statuses = Array.isArray(openapi.errorResponses)
      ? (openapi.errorResponses as number[])
      : Object.keys(openapi.errorResponses as object).map(Number);
    // Fork's `{sourceProject}` is `{project}` in the document (openapi.ts).
    const path = String(openapi.path).replace('{sourceProject}', '{project}');
    declared.set(`${String(openapi.method).toLowerCase()} ${path}`, statuses);
  }
  return declared;
}

/**
 * What an operation can answer besides success. Every request may be malformed (400), carry a bad
 * credential (401), meet an unexpected failure (500) or a database out of reach (503); a protected
 * or project-scoped one may be refused (403); a path with ids may name something missing (404); a
 * change may conflict (409); a body may come too slowly (408), be too large (413) or not JSON (415);
 * a rate-limited route may answer 429 (the rate limiter's own list of its routes); and what a
 * procedure's code adds (402 funds, 429 a concurrency limit) is declared beside it, in its meta.
 */
function statusesOf(path: string, method: string, operation: Operation, declared: number[] = []) {
  const statuses = new Set<number>([400, 401, 500, 503, ...declared]);
  const hasPathIds = operation.parameters?.some((parameter) => parameter.in === 'path') ?? false;
  if (operation.security?.length || hasPathIds) statuses.add(403);
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
 * statuses each operation can answer. A raw route's own description of a status is kept.
 */
export function withExactErrors(document: OpenAPIObject): OpenAPIObject {
  const declared = declaredByProcedures();
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
      for (const status of statusesOf(path, method, operation, declared.get(`${method} ${path}`))) {
        const own = operation.responses?.[String(status)] as { description?: string; content?: unknown } | undefined;
        // A raw route's words for its own statuses stay; the lib's generic ones do not.
        const ownDescription = own?.description && !own.content ? own.description : undefined;
        responses[String(status)] = ownDescription
          ? { ...(components.responses[`Error${status}`] as object), description: ownDescription }
          : { $ref: `#/components/responses/Error${status}` };
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
