import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import {
  BadRequest,
  domainTRPCError,
  EmailNotVerified,
  type ErrorCode,
  formatTRPCError,
  PermissionDenied,
  toTRPCError,
  Unauthenticated,
} from '../errors.ts';
import { enterProject, type ProjectScope, readableProject } from '../requestEdge.ts';
import { CallContext, type Context } from './context.ts';

/**
 * `errorCodes`: codes a procedure's own code answers beyond what its guards and input do (a taken
 * slug), shown as its examples in the OpenAPI document (server/http/openapiContract.ts).
 */
export type ProcedureMeta = OpenApiMeta & { errorCodes?: readonly ErrorCode[] };

const t = initTRPC.context<Context>().meta<ProcedureMeta>().create({ errorFormatter: formatTRPCError });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Where the input holds a NUL (U+0000), which PostgreSQL text and jsonb cannot store. Iterative,
 * and linear in the input's size: each value keeps a link to its parent, and a path is spelled
 * out only for the one value found.
 */
function findNulCharacter(input: unknown): (string | number)[] | undefined {
  type Step = { value: unknown; key?: string; parent?: Step };
  const pathOf = (step: Step) => {
    const path: string[] = [];
    for (let at: Step | undefined = step; at?.key !== undefined; at = at.parent) path.unshift(at.key);
    return path;
  };
  const pending: Step[] = [{ value: input }];
  while (pending.length) {
    const step = pending.pop() as Step;
    const { value } = step;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return pathOf(step);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key.includes('\u0000')) return pathOf(step);
        pending.push({ value: child, key, parent: step });
      }
    }
  }
  return undefined;
}

/** The raw input, unless it holds a NUL: then 400 naming where. */
async function refuseNul(getRawInput: () => Promise<unknown>) {
  const input = await getRawInput();
  const path = findNulCharacter(input);
  if (path) {
    const message = 'text may not contain NUL (\\u0000) characters';
    throw toTRPCError(
      new BadRequest('invalid_input', `Invalid input: ${path.length ? `${path.join('.')}: ` : ''}${message}`, {
        issues: [{ path, message }],
      }),
    );
  }
  return input;
}

/** A failed result whose cause is a domain error (or a unique violation), as its tRPC error. */
function translated<Result extends { ok: boolean; error?: { cause?: unknown } }>(result: Result) {
  const error = result.ok ? undefined : domainTRPCError(result.error?.cause);
  if (error) throw error;
  return result;
}

/**
 * The first middleware of every procedure. Input holding a NUL is refused with 400 here, rather
 * than failing at the database with a 500; domain errors (and the database's unique violations)
 * are translated to tRPC errors on the way out (`domainTRPCError`, which createContext uses for
 * the caller's credential). One middleware, not two: tRPC copies a call's options at each one,
 * on every request.
 */
const refuseNulAndTranslateErrors = t.middleware(async ({ getRawInput, next }) => {
  await refuseNul(getRawInput);
  return translated(await next());
});

export const publicProcedure = t.procedure.use(refuseNulAndTranslateErrors);

/** Signed in with a full session or an API key. */
export const authedProcedure = publicProcedure.use(({ ctx, next }) => {
  const { subject } = ctx;
  if (subject.kind !== 'session' && subject.kind !== 'apiKey') throw new Unauthenticated();
  return next({ ctx: { subject, user: subject.user } });
});

/**
 * Signed in with a session (a browser or a native client's token), not an API key: account
 * security settings (2FA, linked providers, the password) are not for scripts.
 */
export const sessionProcedure = publicProcedure.use(({ ctx, next }) => {
  const { subject } = ctx;
  if (subject.kind === 'apiKey') throw new PermissionDenied('This needs a signed-in session; API keys cannot change account security');
  if (subject.kind !== 'session') throw new Unauthenticated();
  return next({ ctx: { subject, user: subject.user } });
});

/** Signed in, and the account's e-mail is verified (spec 5.4: HTTP 400 otherwise). */
export const verifiedProcedure = authedProcedure.use(({ ctx, next }) => {
  if (!ctx.user.emailVerified) throw new EmailNotVerified();
  return next();
});

/**
 * Scoped to the project named by the `project` path segment (slug or id). The project is loaded
 * from the path, never from the body, and the caller must be able to read it (else 404).
 * Routes check their own action with `ctx.authorize(action, resourceId?)` (or ask `ctx.can`), and
 * load rows through server/projects/projectRows.ts.
 */
export const projectProcedure = t.procedure.use(async ({ ctx, next, getRawInput }) => {
  // publicProcedure's middleware and the project's in one: tRPC copies the call's options and
  // context at every middleware, a measurable part of each request (docs/benchmarks/project-get.md).
  const raw = (await refuseNul(getRawInput)) as { project?: unknown } | undefined;
  const translate = (error: unknown) => {
    throw domainTRPCError(error) ?? error;
  };
  if (ctx instanceof CallContext) {
    // A context made for this one call (a REST route's) takes the project in place: `next({ ctx })`
    // would copy the context, and the copy would read `project`, mapping the entity that a read
    // never uses. A shared context (a tRPC batch's calls share one) must not be changed: it gets
    // the scope merged into a copy.
    ctx.enter(await readableProject(ctx.deps, () => ctx.em, ctx.subject, raw?.project).catch(translate));
    return translated(await next()) as unknown as Awaited<ReturnType<typeof next<ProjectScope>>>;
  }
  const scope = await enterProject(ctx.deps, () => ctx.em, ctx.subject, raw?.project).catch(translate);
  // tRPC merges these into the context.
  return translated(await next({ ctx: scope }));
});

/** The context a projectProcedure's resolver receives, for helpers that take it. */
export type ProjectContext = Parameters<Parameters<typeof projectProcedure.query>[0]>[0]['ctx'];

/** The last middleware a builder added: the guard that makes it what it is. */
function guardOf(builder: { _def: { middlewares: unknown[] } }) {
  return builder._def.middlewares.at(-1);
}

/**
 * Which of the base procedures' guards a procedure passes through, read from its middlewares:
 * what the OpenAPI document says each operation can refuse with (server/http/openapiContract.ts).
 */
export function procedureGuards(procedure: { _def: { middlewares: unknown[] } }) {
  const { middlewares } = procedure._def;
  return {
    signedIn: middlewares.includes(guardOf(authedProcedure)) || middlewares.includes(guardOf(sessionProcedure)),
    sessionOnly: middlewares.includes(guardOf(sessionProcedure)),
    verified: middlewares.includes(guardOf(verifiedProcedure)),
    project: middlewares.includes(guardOf(projectProcedure)),
  };
}

export type ProcedureGuards = ReturnType<typeof procedureGuards>;
