import type { QueryKey, UseQueryOptions } from '@tanstack/react-query';
import type { TRPCClient } from '@trpc/client';
import type { AppRouter } from '../../client/index.ts';
import { bf } from './api.ts';

/** What `useQuery` takes besides the key and the function, which come from the procedure. */
type QueryExtras<Output> = Omit<UseQueryOptions<Output, Error, Output, QueryKey>, 'queryKey' | 'queryFn'>;

/** A query procedure's helpers, named as `@trpc/tanstack-react-query` names them. */
type QueryHelpers<Input, Output> = {
  /** `useQuery`'s options for the procedure's answer to `input`: its key, its call, and any `extras`. */
  queryOptions(
    ...args: undefined extends Input ? [input?: Input, extras?: QueryExtras<Output>] : [input: Input, extras?: QueryExtras<Output>]
  ): UseQueryOptions<Output, Error, Output, QueryKey>;
  /**
   * The key of the answer to `input`. With part of an input, or none, it is a filter: TanStack
   * Query matches keys partially, so it names every answer to an input that includes that part.
   */
  queryKey(input?: Partial<Input>): QueryKey;
};

type Call = (input: never) => Promise<unknown>;
type Callable = (...args: never[]) => unknown;

/**
 * The router's tree with its queries only: a mutation is called on `bf`, and has no key. A
 * procedure's `mutate` is a function; a router's (billing's `subscribe`) is a procedure.
 */
type QueryTree<Node> = {
  [Name in keyof Node & string as Node[Name] extends { mutate: Callable } | { subscribe: Callable } ? never : Name]: Node[Name] extends {
    query: infer Query extends Call;
  }
    ? QueryHelpers<Parameters<Query>[0], Awaited<ReturnType<Query>>>
    : QueryTree<Node[Name]>;
};

/**
 * The one source of the console's query keys and options: `trpc.projects.get.queryOptions({ project })`
 * for `useQuery`, `trpc.projects.get.queryKey({ project })` to invalidate it. A key is the
 * procedure's path and its input, in the shape `@trpc/tanstack-react-query` gives (docs/console.md
 * says why that package is not used): `[['projects', 'get'], { input, type: 'query' }]`.
 */
export const trpc = helpersAt([]) as QueryTree<TRPCClient<AppRouter>>;

function keyOf(path: readonly string[], input: unknown): QueryKey {
  return [path, input === undefined ? { type: 'query' } : { input, type: 'query' }];
}

/** `bf`'s procedure at `path` (the client's proxy answers every name). */
function procedureAt(path: readonly string[]) {
  let node: unknown = bf;
  for (const part of path) node = (node as Record<string, unknown>)[part];
  return node as { query: Call };
}

function helpersAt(path: readonly string[]): unknown {
  return new Proxy(
    {},
    {
      get(_target, name) {
        if (typeof name !== 'string') return undefined;
        if (name === 'queryKey') return (input?: unknown) => keyOf(path, input);
        if (name === 'queryOptions') {
          return (input?: unknown, extras?: object) => ({
            ...extras,
            queryKey: keyOf(path, input),
            queryFn: () => procedureAt(path).query(input as never),
          });
        }
        return helpersAt([...path, name]);
      },
    },
  );
}
