import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import querystring from 'node:querystring';
import type { Duplex } from 'node:stream';
import fastifyCookie from '@fastify/cookie';
import { fastifyTRPCPlugin } from '@trpc/server/adapters/fastify';
import Fastify, { type FastifyError } from 'fastify';
import type { OpenAPIObject } from 'trpc-to-openapi';
import type { AppDeps } from './appDeps.ts';
import { AccessCache } from './auth/accessCache.ts';
import { listenForAccessChanges } from './auth/accessChanges.ts';
import { RelayTokens } from './browsers/tokens/relayTokens.ts';
import {
  asDomainError,
  BadRequest,
  type ErrorCode,
  errorBody,
  httpAnswer,
  RateLimited,
  restErrorBody,
  ServiceUnavailable,
} from './errors.ts';
import { keepBodyTypesStrict } from './http/bodyCoercion.ts';
import { capConnectionsPerClient, requestTimeoutOptions } from './http/connectionLimits.ts';
import { refuseDeepJson } from './http/jsonDepth.ts';
import { buildOpenApiDocument } from './http/openapi.ts';
import { recordRoutes, registerRestRoutes } from './http/restRoutes.ts';
import { rawRoutes } from './http/routes.ts';
import { requestLogger } from './logger.ts';
import { createCallContext, createContext } from './trpc/context.ts';
import { appRouter } from './trpc/router.ts';

/**
 * `?my` alone is a flag that is on. The REST adapter drops empty query values, so a bare key
 * (no `=`) reads as `true`; `?my=` stays empty and so stays off.
 */
export function parseQueryString(query: string) {
  const parsed = querystring.parse(query);
  for (const part of query.split('&')) {
    if (!part || part.includes('=')) continue;
    const key = querystring.unescape(part.replace(/\+/g, ' '));
    if (parsed[key] === '') parsed[key] = 'true';
  }
  return parsed;
}

/**
 * Builds the HTTP app: tRPC at /trpc, the spec's REST paths from the same procedures, and raw
 * routes beside them. It does not listen; the process mains do. It does hear the database's
 * access changes, for its access cache, until it closes.
 */
export async function buildApp(given: Omit<AppDeps, 'access' | 'relayTokens'>) {
  const access = new AccessCache();
  const accessChanges = listenForAccessChanges(access, {
    url: given.orm.config.get('clientUrl') as string,
    pool: await given.orm.em.getConnection().getNativeClient(),
    log: given.log,
  });
  // Not listening yet (the database is away) is no reason not to start: requests then go to it.
  await accessChanges.ready;
  const relayTokens = new RelayTokens({ relaySecret: given.config.browsers.relaySecret, serviceSecret: given.serviceSecret });
  const deps: AppDeps = { ...given, access, relayTokens };

  const app = Fastify({
    loggerInstance: deps.log,
    childLoggerFactory: requestLogger,
    bodyLimit: deps.config.bodyLimitBytes,
    ...requestTimeoutOptions(deps.config),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // Behind a load balancer, req.ip (the key of per-IP rate limits) must come from X-Forwarded-For.
    trustProxy: deps.config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, querystringParser: parseQueryString },
    // A malformed path (`/%ZZ/api`) or an over-long parameter is refused before routing, where
    // no hook runs: answer in the API's error body here.
    frameworkErrors: (error, req, reply) => {
      const status = error.statusCode ?? 500;
      const body =
        status >= 500
          ? errorBody('internal_error', 'Internal server error')
          : errorBody(status === 414 ? 'uri_too_long' : 'bad_url', error.message);
      // No onRequest hook runs for these: the id header is set here.
      (reply as import('fastify').FastifyReply).header('x-request-id', req.id).status(status).send(body);
    },
    clientErrorHandler: answerClientError,
  });

  // Every route from here on is known to the catch-all's 405 (server/http/restRoutes.ts).
  const methodsOf = recordRoutes(app);
  capConnectionsPerClient(app.server, deps.config.connectionCap, deps.log);
  app.addHook('onClose', () => accessChanges.close());
  await app.register(fastifyCookie);

  // An empty body with a JSON content type reads as "no body", like a bodyless POST.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
    const tooDeep = refuseDeepJson(body as string);
    if (tooDeep) return done(tooDeep, undefined);
    void jsonParser(req, body as string, done);
  });

  // The hooks below take `done` rather than being async: a promise and a tick less per request
  // for each (a throw is still the request's error: Fastify catches it).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    // tRPC queries carry their input as JSON in the query string: the same depth limit.
    if (req.url.startsWith('/trpc/') && req.url.includes('input=')) {
      const input = new URL(req.url, 'http://local').searchParams.get('input');
      const tooDeep = input ? refuseDeepJson(input) : undefined;
      if (tooDeep) throw tooDeep;
    }
    done();
  });

  // The spec's start/stop/accept/reject POSTs carry no body; the REST adapter insists on a
  // content type for POST, PUT and PATCH, so a request without one is read as an empty JSON body.
  app.addHook('preHandler', (req, _reply, done) => {
    // tRPC's adapter parses its own bodies, from the text this hook sees first.
    if (req.url.startsWith('/trpc') && typeof req.body === 'string') {
      const tooDeep = refuseDeepJson(req.body);
      if (tooDeep) throw tooDeep;
    }
    if (!req.headers['content-type'] && req.body === undefined && req.method !== 'GET' && req.method !== 'DELETE') {
      req.headers['content-type'] = 'application/json';
    }
    // The adapter spreads the body into the input, so `[1]` or `"text"` would surface as fields
    // named "0", "1", …; say what is wrong instead. (tRPC at /trpc reads its own body format.)
    const body: unknown = req.body;
    const json = String(req.headers['content-type']).startsWith('application/json');
    if (json && body !== undefined && !req.url.startsWith('/trpc') && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw new BadRequest('invalid_input', 'The body must be a JSON object');
    }
    done();
  });

  app.addHook('onSend', (_req, _reply, _payload, done) => {
    // A change to keys, sessions or projects made while answering is heard by every api process
    // before the caller has the answer (server/auth/accessChanges.ts).
    const held = access.held;
    if (held) held.then(() => done(), done);
    else done();
  });

  app.setErrorHandler((error: FastifyError, req, reply) => {
    const { status, body, domain } = httpAnswer(error);
    const retryAfter = domain instanceof RateLimited || domain instanceof ServiceUnavailable ? domain.retryAfterSeconds : undefined;
    if (retryAfter) reply.header('retry-after', String(retryAfter));
    // A 503 names no internals to the client; the cause (Temporal, SMTP) goes to the log.
    if (domain && status >= 500) req.log.warn({ err: domain }, 'request failed: a dependency is unavailable');
    else if (status >= 500) req.log.error({ err: error }, 'request failed');
    return reply.status(status).send(body);
  });

  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(errorBody('not_found', `No route ${req.method} ${req.url.split('?')[0]}`));
  });

  const context = ({ req, res }: { req: import('fastify').FastifyRequest; res: import('fastify').FastifyReply }) =>
    createContext(deps, req, res);

  const logFault = ({ error, path }: { error: { code: string; cause?: unknown; message: string }; path?: string }) => {
    if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error.cause ?? error, path }, 'procedure failed');
    // The client hears only "unavailable"; why (the ServiceUnavailable's own cause) is logged here.
    if (error.code === 'SERVICE_UNAVAILABLE')
      deps.log.warn({ err: error.cause ?? error, path }, 'procedure failed: a dependency is unavailable');
  };

  await app.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: { router: appRouter, createContext: context, onError: logFault, responseMeta: retryAfterMeta },
  });

  // The raw routes, each declared once (server/http/routes.ts); the docs group is handed the
  // document, which is made from their list.
  let document: OpenAPIObject | undefined;
  const fromTheRoutes = { openApiDocument: () => (document ??= buildOpenApiDocument(deps.config.publicUrl)) };
  for (const group of rawRoutes) await group.register(app, deps, fromTheRoutes);

  // Before the REST routes turn on query coercion: it pins bodies' fields first.
  keepBodyTypesStrict(appRouter);
  // Last: the spec's REST paths, one route per procedure, and a catch-all for 404 and 405.
  registerRestRoutes(
    app,
    {
      router: appRouter,
      createContext: (req, reply) => createCallContext(deps, req, reply),
      onError: logFault,
      errorBody: restErrorBody,
      errorHeaders: (error) => retryAfterMeta({ errors: [error] }).headers,
      routeErrorBody: (status, message) => errorBody(status === 405 ? 'method_not_allowed' : 'not_found', message),
    },
    methodsOf,
  );

  return app;
}

/**
 * Node's HTTP parser refused the request (headers too large, malformed HTTP), before Fastify
 * has a request: the answer is written to the socket, in the API's error body.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex) {
  // A reset connection is gone; there is no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A request timed out while its answer was already being written (an early 401 or 413 to a body
  // still coming in): a second status line would corrupt that answer, so the socket only closes.
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  const [status, code, message]: [number, ErrorCode, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'The request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request took too long to arrive']
        : [400, 'bad_request', 'The request is not valid HTTP'];
  const body = JSON.stringify(errorBody(code, message));
  if (socket.writable && !answering) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** A rate-limited or unavailable answer says when to come back, on /trpc as on the REST paths. */
function retryAfterMeta({ errors }: { errors: readonly { cause?: unknown }[] }) {
  const later = errors
    .map((error) => asDomainError(error.cause))
    .find((cause): cause is RateLimited | ServiceUnavailable => cause instanceof RateLimited || cause instanceof ServiceUnavailable);
  return later ? { headers: { 'retry-after': String(later.retryAfterSeconds) } } : {};
}
