import { type EntityName, UniqueConstraintViolationException } from '@mikro-orm/core';
import { initTRPC, TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { ZodError } from 'zod';
import { BadRequest, Conflict, DomainError, EmailNotVerified, NotFound, PermissionDenied, Unauthenticated } from '../errors.ts';
import { authorize, projectActions, projectRef } from '../permissions/permissions.ts';
import { findProject, isUuid } from '../projects/projectRepository.ts';
import type { Context } from './context.ts';

const statusToCode: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

/** The tRPC error a domain error becomes; used by the middleware below and for context errors. */
export function toTRPCError(error: DomainError) {
  return new TRPCError({ code: statusToCode[error.status] ?? 'INTERNAL_SERVER_ERROR', message: error.message, cause: error });
}

type ZodIssue = ZodError['issues'][number];

/** Unknown keys come as one issue at the object; split them so each names its field in `path`. */
function describeZodIssues(issues: ZodIssue[]) {
  return issues.flatMap((issue): { path: PropertyKey[]; message: string; code: string }[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: [...issue.path, key], message: `Unrecognized key: "${key}"`, code: issue.code }))
      : [{ path: issue.path, message: issue.message, code: issue.code }],
  );
}

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
  .create({
    errorFormatter({ shape, error }) {
      const domain = error.cause instanceof DomainError ? error.cause : undefined;
      const zod = error.cause instanceof ZodError ? error.cause : undefined;
      return {
        ...shape,
        message: error.code === 'INTERNAL_SERVER_ERROR' ? 'Internal server error' : shape.message,
        data: {
          code: shape.data.code,
          httpStatus: shape.data.httpStatus,
          path: shape.data.path,
          domainCode: domain?.code ?? (zod ? 'invalid_input' : undefined),
          issues: domain?.issues ?? (zod ? describeZodIssues(zod.issues) : undefined),
        },
      };
    },
  });

/** Translates domain errors (and the database's unique violations) to tRPC errors, once, here. */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    let cause: unknown = result.error.cause;
    if (cause instanceof UniqueConstraintViolationException) {
      cause = new Conflict('conflict', 'A record with the same unique name or slug exists', { cause });
    }
    if (cause instanceof DomainError) {
      throw toTRPCError(cause);
    }
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Where the input holds a NUL (U+0000), which PostgreSQL text and jsonb cannot store. */
function findNulCharacter(input: unknown): (string | number)[] | undefined {
  // Iterative: a body may nest deeper than the call stack allows.
  const pending: [unknown, (string | number)[]][] = [[input, []]];
  while (pending.length) {
    const [value, path] = pending.pop() as [unknown, (string | number)[]];
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path;
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key.includes('\u0000')) return path;
        pending.push([child, [...path, key]]);
      }
    }
  }
  return undefined;
}

/** Refused with 400 at the door, rather than failing at the database with a 500. */
const refuseNulCharacters = t.middleware(async ({ getRawInput, next }) => {
  const path = findNulCharacter(await getRawInput());
  if (path) {
    const message = 'text may not contain NUL (\\u0000) characters';
    throw new BadRequest('invalid_input', `Invalid input: ${path.length ? `${path.join('.')}: ` : ''}${message}`, {
      issues: [{ path, message }],
    });
  }
  return next();
});

export const publicProcedure = t.procedure.use(domainErrors).use(refuseNulCharacters);

/** Signed in with a full session or an API key. */
export const authedProcedure = publicProcedure.use(({ ctx, next }) => {
  const { subject } = ctx;
  if (subject.kind !== 'session' && subject.kind !== 'apiKey') throw new Unauthenticated();
  return next({ ctx: { ...ctx, subject, user: subject.user } });
});

/**
 * Signed in with a session (a browser or a native client's token), not an API key: account
 * security settings (2FA, linked providers, the password) are not for scripts.
 */
export const sessionProcedure = publicProcedure.use(({ ctx, next }) => {
  const { subject } = ctx;
  if (subject.kind === 'apiKey') throw new PermissionDenied('This needs a signed-in session; API keys cannot change account security');
  if (subject.kind !== 'session') throw new Unauthenticated();
  return next({ ctx: { ...ctx, subject, user: subject.user } });
});

/** Signed in, and the account's e-mail is verified (spec 5.4: HTTP 400 otherwise). */
export const verifiedProcedure = authedProcedure.use(({ ctx, next }) => {
  if (!ctx.user.emailVerified) throw new EmailNotVerified();
  return next();
});

/**
 * Scoped to the project named by the `project` path segment (slug or id). The project is loaded
 * from the path, never from the body, and the caller must be able to read it (else 404).
 * Routes check their own action with `ctx.authorize(action, resourceId?)`.
 */
export const projectProcedure = publicProcedure.use(async ({ ctx, next, getRawInput }) => {
  const raw = (await getRawInput()) as { project?: unknown } | undefined;
  const project = typeof raw?.project === 'string' ? await findProject(ctx.em, raw.project) : null;
  if (!project) throw new NotFound('Project');
  const ref = projectRef(project);
  authorize(ctx.subject, ref, projectActions.read);
  return next({
    ctx: {
      ...ctx,
      project,
      authorize: (action: string, resourceId?: string) => authorize(ctx.subject, ref, action, resourceId),
    },
  });
});

/** The context a projectProcedure's resolver receives, for helpers that take it. */
export type ProjectContext = Parameters<Parameters<typeof projectProcedure.query>[0]>[0]['ctx'];

/**
 * A row of this project by id, after checking `action` on that id: a malformed, missing or
 * foreign id answers 404, a forbidden one 403 (the check comes first, so both look the same
 * whether or not the row exists). Every per-id route loads its row through this.
 */
export async function findInProject<T extends object>(
  ctx: ProjectContext,
  entity: EntityName<T>,
  id: string,
  action: string,
  what: string,
): Promise<T> {
  if (!isUuid(id)) throw new NotFound(what);
  const lower = id.toLowerCase();
  ctx.authorize(action, lower);
  const row = await ctx.em.findOne(entity, { id: lower, project: ctx.project.id } as never);
  if (!row) throw new NotFound(what);
  return row as T;
}
