import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ApiKey, apiKeyAccessTypes, type Project, type User } from '../../../db/entities/index.ts';
import type { AppDeps } from '../../appDeps.ts';
import { generateApiKey } from '../../auth/apiKeys.ts';
import type { Subject } from '../../auth/subject.ts';
import { BadRequest, NotFound, PermissionDenied } from '../../errors.ts';
import { canScopeApiKeyTo, permissionPattern, projectRef } from '../../permissions/permissions.ts';
import { findProject } from '../../projects/projectRepository.ts';
import { iso, pagination, statusOk } from '../../wireShapes.ts';
import { authedProcedure, router } from '../base.ts';

const permissionString = z
  .string()
  .max(300)
  .regex(
    permissionPattern,
    'not a permission string: <project>.<area>.<action>[.<id>], segments of letters, digits, dashes, underscores or *',
  );

const keyFields = {
  name: z.string().trim().min(1).max(200),
  accessType: z.enum(apiKeyAccessTypes),
  projectIds: z.array(z.string().min(1).max(100)).max(100),
  permissions: z.array(permissionString).max(200),
};

const keyView = z.object({
  id: z.string(),
  name: z.string(),
  accessType: z.enum(apiKeyAccessTypes),
  projectIds: z.array(z.string()),
  permissions: z.array(z.string()),
  keyPrefix: z.string(),
  lastUsed: z.string().nullable(),
  created: z.string(),
  updated: z.string(),
});

function present(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    accessType: key.accessType,
    projectIds: key.projects.getItems().map((project) => project.id),
    permissions: key.permissions,
    keyPrefix: key.keyPrefix,
    lastUsed: key.lastUsed ? iso(key.lastUsed) : null,
    created: iso(key.created),
    updated: iso(key.updated),
  };
}

/**
 * Keys are managed with a signed-in session only: a key that could mint keys could widen
 * its own access.
 */
const keyManagerProcedure = authedProcedure.use(({ ctx, next }) => {
  if (ctx.subject.kind !== 'session') throw new PermissionDenied('API keys are managed from a signed-in session, not with an API key');
  return next();
});

/** Projects named by id or slug; each must exist and be one the caller may scope a key to. */
async function resolveProjects({ deps, em, subject }: { deps: AppDeps; em: EntityManager; subject: Subject }, refs: string[]) {
  const projects: Project[] = [];
  for (const ref of new Set(refs)) {
    const project = await findProject(deps.access, em, ref);
    if (!project || !canScopeApiKeyTo(subject, projectRef(project))) {
      throw new BadRequest('unknown_project', `Project ${ref} does not exist or is not yours`, {
        issues: [{ path: ['projectIds'], message: `unknown project ${ref}` }],
      });
    }
    projects.push(project);
  }
  return projects;
}

/** Each access type takes exactly the fields it uses, so a key never carries dead grants. */
function checkShape(accessType: ApiKey['accessType'], projectIds: string[], permissions: string[]) {
  if (accessType === 'projects' && projectIds.length === 0) {
    throw new BadRequest('invalid_input', 'accessType projects needs at least one entry in projectIds', {
      issues: [{ path: ['projectIds'], message: 'required for accessType projects' }],
    });
  }
  if (accessType !== 'projects' && projectIds.length > 0) {
    throw new BadRequest('invalid_input', 'projectIds is used only with accessType projects', {
      issues: [{ path: ['projectIds'], message: 'only for accessType projects' }],
    });
  }
  if (accessType === 'custom' && permissions.length === 0) {
    throw new BadRequest('invalid_input', 'accessType custom needs at least one permission string', {
      issues: [{ path: ['permissions'], message: 'required for accessType custom' }],
    });
  }
  if (accessType !== 'custom' && permissions.length > 0) {
    throw new BadRequest('invalid_input', 'permissions is used only with accessType custom', {
      issues: [{ path: ['permissions'], message: 'only for accessType custom' }],
    });
  }
}

async function findOwnKey(em: EntityManager, user: User, id: string) {
  const key = z.uuid().safeParse(id).success ? await em.findOne(ApiKey, { id, user }, { populate: ['projects'] }) : null;
  if (!key) throw new NotFound('API key');
  return key;
}

const tags = ['api-keys'];

export const apiKeysRouter = router({
  create: keyManagerProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/api-keys', tags, summary: 'Create an API key; the secret is shown only in this answer' },
    })
    .input(
      z.strictObject({
        name: keyFields.name,
        accessType: keyFields.accessType,
        projectIds: keyFields.projectIds.default([]),
        permissions: keyFields.permissions.default([]),
      }),
    )
    .output(keyView.extend({ secret: z.string() }))
    .mutation(async ({ ctx, input }) => {
      checkShape(input.accessType, input.projectIds, input.permissions);
      const projects = await resolveProjects(ctx, input.projectIds);
      const { keyPrefix, secret, secretHash } = generateApiKey();
      const key = ctx.em.create(ApiKey, {
        user: ctx.user,
        name: input.name,
        accessType: input.accessType,
        keyPrefix,
        secretHash,
        permissions: input.permissions,
      });
      key.projects.set(projects);
      await ctx.em.flush();
      return { ...present(key), secret };
    }),

  list: keyManagerProcedure
    .meta({ openapi: { method: 'GET', path: '/api/api-keys', tags, summary: 'Your API keys' } })
    .input(z.strictObject({ ...pagination }))
    .output(z.array(keyView))
    .query(async ({ ctx, input }) => {
      const keys = await ctx.em.find(
        ApiKey,
        { user: ctx.user },
        { populate: ['projects'], orderBy: { created: 'asc', id: 'asc' }, limit: input.limit, offset: input.offset },
      );
      return keys.map(present);
    }),

  get: keyManagerProcedure
    .meta({ openapi: { method: 'GET', path: '/api/api-keys/{id}', tags, summary: 'One API key (never its secret)' } })
    .input(z.strictObject({ id: z.string().max(100) }))
    .output(keyView)
    .query(async ({ ctx, input }) => present(await findOwnKey(ctx.em, ctx.user, input.id))),

  update: keyManagerProcedure
    .meta({ openapi: { method: 'PATCH', path: '/api/api-keys/{id}', tags, summary: 'Rename or re-scope an API key' } })
    .input(
      z.strictObject({
        id: z.string().max(100),
        name: keyFields.name.optional(),
        accessType: keyFields.accessType.optional(),
        projectIds: keyFields.projectIds.optional(),
        permissions: keyFields.permissions.optional(),
      }),
    )
    .output(keyView)
    .mutation(async ({ ctx, input }) => {
      const key = await findOwnKey(ctx.em, ctx.user, input.id);
      const accessType = input.accessType ?? key.accessType;
      const changesType = input.accessType !== undefined && input.accessType !== key.accessType;
      // Switching type drops the fields of the old type unless new ones are given.
      const projectIds = input.projectIds ?? (changesType ? [] : key.projects.getItems().map((project) => project.id));
      const permissions = input.permissions ?? (changesType ? [] : key.permissions);
      checkShape(accessType, projectIds, permissions);
      key.projects.set(await resolveProjects(ctx, projectIds));
      if (input.name !== undefined) key.name = input.name;
      key.accessType = accessType;
      key.permissions = permissions;
      await ctx.em.flush();
      return present(key);
    }),

  delete: keyManagerProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/api-keys/{id}', tags, summary: 'Revoke an API key' } })
    .input(z.strictObject({ id: z.string().max(100) }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const key = await findOwnKey(ctx.em, ctx.user, input.id);
      await ctx.em.nativeDelete(ApiKey, { id: key.id });
      return { status: 'ok' as const };
    }),
});
