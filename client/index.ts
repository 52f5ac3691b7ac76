/**
 * The TypeScript SDK, package `@browserflow/client`: the router type and a client factory over it.
 *
 *   const bf = createBrowserflowClient({ url: 'http://localhost:3000', apiKey: process.env.BROWSERFLOW_API_KEY });
 *   const project = await bf.projects.get.query({ project: 'my-shop' });
 *
 * Every procedure of the REST API is here under the same name as in the router tree
 * (`root.info` is `GET /api`, `projects.get` is `GET /{project}/api`, …), with its input and
 * output types. Errors arrive as `TRPCClientError`; `error.data.httpStatus` is the status the REST
 * call would have answered and `error.data.domainCode` the `code` of its error body.
 */
import { createTRPCClient, httpBatchLink, isTRPCClientError, type TRPCClient, type TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from './appRouter.ts';

export { isTRPCClientError, TRPCClientError } from '@trpc/client';
export type { AppRouter };

/** Each procedure's input, by path: `RouterInputs['projects']['create']`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Each procedure's output, by path: `RouterOutputs['projects']['get']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

/** A failed call: `data.httpStatus` is the REST answer's status, `data.domainCode` its error `code`. */
export type BrowserflowError = TRPCClientError<AppRouter>;

/** Whether `cause` is a failed call of this client, with `data` typed by the service's error shape. */
export function isBrowserflowError(cause: unknown): cause is BrowserflowError {
  return isTRPCClientError<AppRouter>(cause);
}

export type BrowserflowClientOptions = {
  /** Where the service runs, e.g. `http://localhost:3000`; the client calls `<url>/trpc`. */
  url: string;
  /** An API key (`bfk_…`), sent as `x-api-key`. */
  apiKey?: string;
  /** A session token (the JWT from login), sent as `Authorization: Bearer`. */
  token?: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
};

export type BrowserflowClient = TRPCClient<AppRouter>;

export function createBrowserflowClient(options: BrowserflowClientOptions): BrowserflowClient {
  if (options.apiKey && options.token) throw new Error('Give either apiKey or token, not both');
  const headers: Record<string, string> = {};
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${options.url.replace(/\/+$/, '')}/trpc`,
        headers: () => headers,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ],
  });
}
