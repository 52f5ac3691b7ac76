import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteOptions,
} from 'fastify';
import type { Logger } from 'pino';
import type { OpenAPIObject } from 'trpc-to-openapi';
import type WebSocket from 'ws';
import type { AppDeps } from '../appDeps.ts';
import { safeEqual } from '../auth/secrets.ts';

/**
 * A raw route (one that is not a JSON-in, JSON-out procedure: pages, streams, webhooks,
 * WebSockets) is one declaration: its method, its path as OpenAPI writes it, its OpenAPI entry
 * and its handler. Fastify's path, the document's entry with its path-parameter block, and the
 * registration are all made from it (server/http/routes.ts lists them). A raw route throws
 * domain errors; the app's error handler answers them.
 */

export type RawApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, Logger>;

export type RawPathItem = NonNullable<OpenAPIObject['paths']>[string];
type Operation = NonNullable<RawPathItem['get']>;
export type RawParameter = Exclude<NonNullable<Operation['parameters']>[number], { $ref: string }>;

type PathParameter = { description?: string; schema?: RawParameter['schema'] };

/** The `{name}`s of an OpenAPI path. */
export type PathParamNames<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}`
  ? Name | PathParamNames<Rest>
  : never;

type RouteRequest<Path extends string> = FastifyRequest<{
  Params: Record<PathParamNames<Path>, string>;
  Querystring: Record<string, string | undefined>;
}>;
type Handler<Path extends string> = (req: RouteRequest<Path>, reply: FastifyReply) => unknown;

/** What the route runs: a handler, or a handler with an upgrade check and a WebSocket's. */
type Served<Path extends string> =
  | Handler<Path>
  | { handler: Handler<Path>; preValidation?: Handler<Path>; wsHandler?: (socket: WebSocket, req: RouteRequest<Path>) => void };

/** The route's OpenAPI operation, but for its path parameters, which are made from its path. */
type RawOperation<Path extends string> = {
  /** In the procedures' style (`area-verb`): what a generated client names its method. */
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** What a path parameter says beyond its name: each is a required string unless its schema says otherwise. */
  pathParameters?: Partial<Record<PathParamNames<Path>, PathParameter>>;
  /** Query and header parameters; they follow the path's. */
  parameters?: RawParameter[];
  requestBody?: Operation['requestBody'];
  responses: Operation['responses'];
};

type RawMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

type RouteDeclaration<Path extends string, Scope> = {
  method: RawMethod;
  /** As OpenAPI writes it (`{name}`); Fastify's (`:name`) is made from it. */
  path: Path;
  /** Its OpenAPI entry; none for what the document does not list (the console's files, the pages' script). */
  doc?: RawOperation<Path>;
  /**
   * Where Fastify serves it, when that is wider than the documented path: every method under a
   * prefix, so that what the route refuses answers the 404 of no route (not a 405 naming it).
   */
  servedAt?: { path: string; anyMethod: true };
  /** `bytes`: the body arrives untouched, as a Buffer (a signature covers it byte for byte). */
  body?: 'bytes';
  /** Its handler, given what its group shares. None for what a plugin of its group's setup serves (Swagger UI). */
  serve?: (scope: Scope) => Served<Path>;
};

/** A declared route, its path's parameter names no longer tracked (a list holds many paths). */
export type RawRoute<Scope> = Omit<RouteDeclaration<string, Scope>, 'doc' | 'serve'> & {
  doc?: RawOperation<string> & { pathParameters?: Record<string, PathParameter> };
  serve?: (scope: Scope) => Served<string>;
};

/**
 * Declares routes whose handlers share a `Scope` (what their group's setup makes). Curried so
 * that `Scope` is named once and each route's path is inferred, typing its handler's params.
 */
export function routesOf<Scope>() {
  // The one widening: a handler typed for its own path's params is stored among other paths'.
  return <Path extends string>(route: RouteDeclaration<Path, Scope>) => route as unknown as RawRoute<Scope>;
}

/**
 * What is made from the route list itself, handed to every group's setup by app.ts: no route
 * module may import it, as it imports them (openapi.ts reads routes.ts).
 */
export type FromTheRoutes = {
  /** The OpenAPI document, built on the first call. */
  openApiDocument(): OpenAPIObject;
};

/** Routes with what they share: registered together, after their setup, and documented in order. */
export type RawRouteGroup = {
  routes: readonly RawRoute<never>[];
  register(app: RawApp, deps: AppDeps, fromTheRoutes: FromTheRoutes): Promise<void>;
};

/**
 * A group of routes and the setup that makes what their handlers share (a LISTEN connection, a
 * session map, a plugin, a hook that ends their streams on close). Setup runs before any of them
 * is registered.
 */
export function rawRouteGroup<Scope>(
  setup: (app: RawApp, deps: AppDeps, fromTheRoutes: FromTheRoutes) => Scope | Promise<Scope>,
  routes: RawRoute<Scope>[],
): RawRouteGroup {
  return {
    routes,
    async register(app, deps, fromTheRoutes) {
      const scope = await setup(app, deps, fromTheRoutes);
      for (const route of routes) await registerRoute(app, route, scope);
    },
  };
}

/** The setup of routes that share nothing but the app's dependencies. */
export const appDeps = (_app: RawApp, deps: AppDeps) => deps;

/** Fastify's form of an OpenAPI path: `{name}` becomes `:name`. */
export const fastifyPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

async function registerRoute<Scope>(app: RawApp, route: RawRoute<Scope>, scope: Scope) {
  if (!route.serve) return;
  const served = route.serve(scope);
  const options = (typeof served === 'function' ? { handler: served } : served) as Omit<RouteOptions, 'method' | 'url'>;
  // The app, or the encapsulated scope below (whose logger Fastify types more loosely).
  const declare = (on: { route(options: never): unknown; all(path: string, options: never): unknown }) =>
    route.servedAt
      ? on.all(fastifyPath(route.servedAt.path), options as never)
      : on.route({ ...options, method: route.method, url: fastifyPath(route.path) } as never);
  if (route.body !== 'bytes') {
    declare(app);
    return;
  }
  // An encapsulated scope: only here is a body kept as the bytes that arrived.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    declare(scope);
  });
}

/** The OpenAPI entries of a list of routes: each path's operations, its path parameters first. */
export function documentRoutes(routes: readonly RawRoute<never>[]) {
  const paths: Record<string, RawPathItem> = {};
  for (const route of routes) {
    if (!route.doc) continue;
    const { pathParameters = {}, parameters = [], ...operation } = route.doc;
    const inPath = [...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({
      name: name as string,
      in: 'path' as const,
      required: true,
      schema: { type: 'string' as const },
      ...pathParameters[name as string],
    }));
    const item: Record<string, unknown> = { ...paths[route.path] };
    const all = [...inPath, ...parameters];
    item[route.method.toLowerCase()] = all.length ? { ...operation, parameters: all } : operation;
    paths[route.path] = item as RawPathItem;
  }
  return paths;
}

/** Whether `given` (a path segment, a header, a query value) is the configured secret, in constant time. */
export function sameSecret(given: unknown, expected: string) {
  return typeof given === 'string' && safeEqual(given, expected);
}
