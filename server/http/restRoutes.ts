import { type AnyRouter, getTRPCErrorFromUnknown, TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { getParseFn, type ParseFn, type Parser } from '@trpc/server/unstable-core-do-not-import';
import type { FastifyInstance, FastifyReply, FastifyRequest, RawServerDefault } from 'fastify';
import {
  coerceSchema,
  getInputOutputParsers,
  getPathRegExp,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  normalizePath,
  unwrapZodType,
} from 'trpc-to-openapi';

/**
 * The spec's REST paths, served by the service's own Fastify routes: one route per procedure with
 * `meta.openapi`, made at start-up. They answer exactly as trpc-to-openapi's catch-all did (same
 * paths, input mapping and coercion, statuses, error bodies, content type), without its per-call
 * fetch `Request` (built only to take an abort signal no procedure reads), its per-call schema
 * walk and its linear search through every path's regular expression. The OpenAPI document is
 * still trpc-to-openapi's generator's (server/http/openapi.ts): only the serving is ours.
 *
 * Precedence is Fastify's router's: a static segment wins over a `{param}`. A request no route
 * takes falls to one catch-all, which still answers what the old adapter would have for paths
 * only its case-insensitive, undecoded matching took; else 405 with `allow` for a known path
 * with a wrong method (raw routes too), else 404.
 */

type Procedure = {
  (opts: {
    path: string;
    getRawInput: () => Promise<unknown>;
    ctx: unknown;
    type: string;
    signal: AbortSignal | undefined;
    batchIndex: number;
  }): Promise<unknown>;
  _def: {
    type: string;
    meta?: { openapi?: { method: string; path: string; enabled?: boolean } };
    inputs: unknown[];
    output?: unknown;
    middlewares: Middleware[];
  };
};

type MiddlewareResult = { ok: boolean; data?: unknown; error?: unknown; marker?: unknown; ctx?: unknown };
type NextOptions = { ctx?: object; input?: unknown; getRawInput?: () => Promise<unknown> };
type Middleware = ((opts: {
  ctx: unknown;
  type: string;
  path: string;
  input: unknown;
  getRawInput: () => Promise<unknown>;
  meta: unknown;
  signal: undefined;
  batchIndex: number;
  next: (next?: NextOptions) => Promise<MiddlewareResult>;
}) => Promise<MiddlewareResult>) & { _type?: string };

/**
 * One call of a procedure through its middlewares, as tRPC's own caller runs it (callRecursive in
 * @trpc/server: each middleware's options, `next` merging a context it is given, a throw as a
 * failed result), with plain object literals: tRPC's compiled helper copies the call's options
 * property by property, twice at every middleware, the largest part of a read's CPU
 * (docs/benchmarks/project-get.md). The data, or the failure thrown, as `procedure(opts)` does.
 *
 * One difference: a context a middleware passes on (`next({ ctx })`) is merged into the call's
 * context in place, getters as getters, not into a copy. A REST call's context serves that one
 * call, so nothing else sees the change, and it may be a class whose getters a copy would lose.
 * tRPC's output middleware is run here as its code reads (the same parse and failure), for the
 * same reason: its compiled spread helper.
 */
async function callProcedure(procedure: Procedure, path: string, ctx: unknown, given: unknown, parseOutput?: ParseFn<unknown>) {
  const { middlewares, meta, type } = procedure._def;
  const run = async (index: number, ctx: unknown, input: unknown, getRawInput: () => Promise<unknown>): Promise<MiddlewareResult> => {
    try {
      const middleware = middlewares[index] as Middleware;
      if (middleware._type === 'output' && parseOutput) {
        // tRPC's output middleware (createOutputMiddleware), without its compiled spread helper:
        // the same parse, the same failure.
        const result = await run(index + 1, ctx, input, getRawInput);
        if (!result.ok) return result;
        try {
          return { ...result, data: await parseOutput(result.data) };
        } catch (cause) {
          throw new TRPCError({ message: 'Output validation failed', code: 'INTERNAL_SERVER_ERROR', cause });
        }
      }
      return await middleware({
        ctx,
        type,
        path,
        input,
        getRawInput,
        meta,
        signal: undefined,
        batchIndex: 0,
        next: (next) =>
          run(
            index + 1,
            next?.ctx ? Object.defineProperties(ctx, Object.getOwnPropertyDescriptors(next.ctx)) : ctx,
            next && 'input' in next ? next.input : input,
            next?.getRawInput ?? getRawInput,
          ),
      });
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause), marker: 'middlewareMarker' };
    }
  };
  const result = await run(0, ctx, undefined, async () => given);
  if (!result)
    throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'No result from middlewares - did you forget to `return next()`?' });
  if (!result.ok) throw result.error;
  return result.data;
}

export type RestRouteOptions<Ctx> = {
  router: AnyRouter;
  createContext: (req: FastifyRequest, reply: FastifyReply) => Ctx | Promise<Ctx>;
  /** Told of every failed call (not of a 404 or 405 for a path no procedure has). */
  onError?: (failed: { error: TRPCError; path?: string; input: unknown; req: FastifyRequest }) => void;
  /** The body of a failed call's answer. */
  errorBody: (error: TRPCError) => unknown;
  /** Extra headers (Retry-After) of a failed call's answer. */
  errorHeaders?: (error: TRPCError) => Record<string, string> | undefined;
  /** The body of a 404 or 405 the catch-all answers. */
  routeErrorBody: (status: 404 | 405, message: string) => unknown;
};

/** Any app, whatever its logger. */
// biome-ignore lint/suspicious/noExplicitAny: the logger type is the caller's
type AnyApp = FastifyInstance<RawServerDefault, any, any, any>;

/** trpc-to-openapi's map from tRPC codes to statuses (adapters/node-http/errors). */
const statusOfCode: Partial<Record<TRPC_ERROR_CODE_KEY, number>> = {
  PARSE_ERROR: 400,
  BAD_REQUEST: 400,
  NOT_FOUND: 404,
  INTERNAL_SERVER_ERROR: 500,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  TIMEOUT: 408,
  CONFLICT: 409,
  CLIENT_CLOSED_REQUEST: 499,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  METHOD_NOT_SUPPORTED: 405,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  UNPROCESSABLE_CONTENT: 422,
  NOT_IMPLEMENTED: 501,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
  PAYMENT_REQUIRED: 402,
  PRECONDITION_REQUIRED: 428,
};

const restMethods = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;

function asTRPCError(cause: unknown) {
  if (cause instanceof Error && cause.name === 'TRPCError') return cause as TRPCError;
  const error = new TRPCError({
    message: 'Internal server error',
    code: 'INTERNAL_SERVER_ERROR',
    cause: cause instanceof Error ? cause : undefined,
  });
  if (cause instanceof Error && cause.stack) error.stack = cause.stack;
  return error;
}

/** A Fastify route's URL as a matcher of concrete paths (for the 405's `allow`). */
function routeRegExp(url: string) {
  const source = normalizePath(url)
    .split('/')
    .map((segment) =>
      segment === '*'
        ? '.*'
        : segment.startsWith(':')
          ? '[^/]+'
          : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[\w-]+(\([^)]*\))?/g, '[^/]+'),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}

/** What a query string gives a procedure: empty values dropped, a single value unwrapped (as trpc-to-openapi's getQuery). */
function queryInput(query: Record<string, unknown>) {
  const input: Record<string, unknown> = {};
  for (const key of Object.keys(query)) {
    const value = query[key];
    if (value) input[key] = Array.isArray(value) && value.length === 1 ? value[0] : value;
  }
  return input;
}

/**
 * Call before any route is registered: it hears every route, to tell a wrong method (405) from
 * an unknown path (404).
 */
export function recordRoutes(app: AnyApp) {
  const routes: { methods: string[]; url: string }[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url === '/*') return;
    routes.push({ methods: [route.method].flat().map(String), url: route.url });
  });
  let compiled: { methods: string[]; match: RegExp }[] | undefined;
  /** The methods some route answers on this path. */
  return (path: string) => {
    compiled ??= routes.map(({ methods, url }) => ({ methods, match: routeRegExp(url) }));
    const allowed = new Set<string>();
    for (const route of compiled) if (route.match.test(path)) for (const method of route.methods) allowed.add(method);
    return allowed;
  };
}

export function registerRestRoutes<Ctx>(app: AnyApp, options: RestRouteOptions<Ctx>, methodsOf?: (path: string) => Set<string>) {
  const { createContext, onError, errorBody, errorHeaders, routeErrorBody } = options;
  const fallback = new Map<
    string,
    { match: RegExp; handle: (req: FastifyRequest, reply: FastifyReply, params: object) => Promise<FastifyReply> }[]
  >();

  /** The first procedure whose path matches, case-insensitively and in order: trpc-to-openapi's matching. */
  const matchedAsBefore = (req: FastifyRequest, reply: FastifyReply, path = normalizePath(new URL(req.url, 'http://local').pathname)) => {
    for (const route of fallback.get(req.method) ?? []) {
      const groups = route.match.exec(path)?.groups;
      if (groups) return route.handle(req, reply, { ...groups });
    }
    return undefined;
  };

  for (const [procedurePath, value] of Object.entries(options.router._def.procedures)) {
    const procedure = value as Procedure;
    const openapi = procedure._def.meta?.openapi;
    if (!openapi || openapi.enabled === false || procedure._def.type === 'subscription') continue;
    const method = openapi.method.toUpperCase();
    const path = normalizePath(openapi.path);
    const useBody = method !== 'GET' && method !== 'DELETE';
    const { inputParser } = getInputOutputParsers(procedure as never);
    const parseOutput = procedure._def.output ? getParseFn(procedure._def.output as Parser) : undefined;
    const schema = unwrapZodType(inputParser, true);
    const takesInput = !instanceofZodTypeLikeVoid(schema);
    // Query strings parse into the input's number, boolean and date fields; trpc-to-openapi turned
    // this on at each request, this does it once (server/http/bodyCoercion.ts pins bodies off).
    const arrayFields: string[] = [];
    if (instanceofZodTypeObject(schema)) {
      const shape = (
        schema as { shape: Record<string, { _zod: { def: { type: string; innerType?: { _zod: { def: { type: string } } } } } }> }
      ).shape;
      for (const [key, field] of Object.entries(shape)) {
        const def = field._zod.def;
        if (def.type === 'array' || (def.type === 'optional' && def.innerType?._zod.def.type === 'array')) arrayFields.push(key);
      }
      coerceSchema(schema);
    }

    const handle = async (req: FastifyRequest, reply: FastifyReply, params: object) => {
      let input: Record<string, unknown> | undefined;
      try {
        const contentType = req.headers['content-type'];
        if (useBody && !contentType?.startsWith('application/json')) {
          throw new TRPCError({
            code: 'UNSUPPORTED_MEDIA_TYPE',
            message: contentType ? `Unsupported content-type "${contentType}` : 'Missing content-type header',
          });
        }
        if (takesInput) {
          input = { ...(useBody ? (req.body as object | undefined) : queryInput(req.query as Record<string, unknown>)), ...params };
          if (!useBody)
            for (const key of arrayFields) if (input[key] !== undefined && !Array.isArray(input[key])) input[key] = [input[key]];
        }
        const ctx = await createContext(req, reply);
        const data = await callProcedure(procedure, procedurePath, ctx, input, parseOutput);
        // A 2xx the procedure chose (202 for a start still running) stands; anything else is 200.
        const status = reply.statusCode >= 200 && reply.statusCode < 300 ? reply.statusCode : 200;
        return reply.code(status).header('content-type', 'application/json').send(JSON.stringify(data));
      } catch (cause) {
        const error = asTRPCError(cause);
        onError?.({ error, path: procedurePath, input, req });
        const headers = errorHeaders?.(error);
        if (headers) reply.headers(headers);
        return reply
          .code(statusOfCode[error.code] ?? 500)
          .header('content-type', 'application/json')
          .send(JSON.stringify(errorBody(error)));
      }
    };

    const url = path.replace(/\{(.+?)\}/g, ':$1');
    const match = getPathRegExp(path);
    // Path parameters reach the procedure as sent, percent escapes and all (`%00` is a project
    // that does not exist, not a NUL), as they did through trpc-to-openapi; Fastify decodes them.
    const paramsOf = (req: FastifyRequest) =>
      req.url.includes('%') ? { ...match.exec(normalizePath(new URL(req.url, 'http://local').pathname))?.groups } : (req.params as object);
    // A raw route on the same method and path was there first, and won before too.
    if (!app.hasRoute({ method, url })) {
      app.route({
        method,
        url,
        exposeHeadRoute: false,
        // A path with capitals is matched as the old adapter matched it (case-insensitively, in the
        // procedures' order), so `…/pipelines/Versions` stays the versions list, not a pipeline.
        handler: (req, reply) =>
          /[A-Z]/.test(req.url.split('?', 1)[0] as string)
            ? (matchedAsBefore(req, reply) ?? handle(req, reply, paramsOf(req)))
            : handle(req, reply, paramsOf(req)),
      });
    }
    const forMethod = fallback.get(method) ?? [];
    forMethod.push({ match, handle });
    fallback.set(method, forMethod);
  }

  app.route({
    method: [...restMethods, 'HEAD', 'OPTIONS'],
    url: '/*',
    handler: async (req, reply) => {
      const path = normalizePath(new URL(req.url, 'http://local').pathname);
      const matched = matchedAsBefore(req, reply, path);
      if (matched) return matched;
      // The old adapter answered any HEAD it had no route for with an empty 204 (a warm-up probe).
      if (req.method === 'HEAD') return reply.code(204).send();
      const allowed = methodsOf?.(path) ?? new Set<string>();
      for (const [method, routes] of fallback) if (routes.some((route) => route.match.test(path))) allowed.add(method);
      allowed.delete('HEAD');
      if (allowed.size && !allowed.has(req.method)) {
        const allow = [...allowed].sort();
        return reply
          .code(405)
          .header('allow', allow.join(', '))
          .header('content-type', 'application/json')
          .send(JSON.stringify(routeErrorBody(405, `${req.method} is not allowed on ${path}; use ${allow.join(' or ')}`)));
      }
      // As the old adapter answered: its own content type, not Fastify's.
      return reply
        .code(404)
        .header('content-type', 'application/json')
        .send(JSON.stringify(routeErrorBody(404, 'Not found')));
    },
  });
}
