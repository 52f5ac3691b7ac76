import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BrowserSession, Project } from '../../../db/entities/index.ts';
import type { AppDeps } from '../../appDeps.ts';
import type { Subject } from '../../auth/subject.ts';
import { deleteSessionProfile } from '../../browsers/sessions/sessionProfiles.ts';
import { Conflict, EmailNotVerified, PermissionDenied, Unauthenticated } from '../../errors.ts';
import {
  can,
  canCreateProjects,
  projectActions,
  projectRef,
  type ReadableProjects,
  readableProjects,
} from '../../permissions/permissions.ts';
import { provisionDefaultSession } from '../../projects/defaultSession.ts';
import type { ProjectSnapshot } from '../../projects/projectRepository.ts';
import { slugSchema } from '../../projects/slugs.ts';
import { iso, pagination, queryFlag, statusOk } from '../../wireShapes.ts';
import { authedProcedure, projectProcedure, publicProcedure, router } from '../base.ts';

export const projectView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  visibility: z.enum(['public', 'private']),
  slug: z.string(),
  owner: z.string().optional(),
  created: z.string().optional(),
  updated: z.string().optional(),
});

const name = z.string().trim().min(1).max(200);
const description = z.string().max(10_000);

function signedIn(subject: Subject) {
  return subject.kind === 'session' || subject.kind === 'apiKey';
}

function isoDates(project: Project) {
  return { created: iso(project.created), updated: iso(project.updated) };
}

/** Owner and timestamps only for authenticated callers (spec 2, Project). */
export function presentProject(subject: Subject, project: Project | ProjectSnapshot) {
  return {
    id: project.id,
    name: project.name,
    description: project.description,
    visibility: project.visibility,
    slug: project.slug,
    ...(signedIn(subject) ? { owner: project.owner.id, ...('isoDates' in project ? project.isoDates : isoDates(project)) } : {}),
  };
}

async function slugFree(deps: { em: EntityManager }, slug: string, exceptId?: string) {
  const existing = await deps.em.findOne(Project, { slug }, { fields: ['id'] });
  if (existing && existing.id !== exceptId) throw new Conflict('slug_taken', `The slug ${slug} is taken`);
}

/**
 * 409 `project_limit_reached` when `ownerId` owns PROJECTS_PER_ACCOUNT projects. Counted under a lock
 * of that owner's, held to the end of the caller's transaction (the one that writes the project),
 * so two creates at once cannot both take the last place.
 */
async function requireProjectRoom(limit: number, tx: EntityManager, ownerId: string) {
  await tx
    .getConnection()
    .execute('select pg_advisory_xact_lock(hashtext(?))', [`projects_of:${ownerId}`], 'run', tx.getTransactionContext());
  if ((await tx.count(Project, { owner: ownerId })) >= limit) {
    throw new Conflict('project_limit_reached', `Your account already owns its maximum of ${limit} projects; delete one first`);
  }
}

/** Later capabilities add to the project (a "Default session"); a failure there loses no project. */
async function runProjectCreatedHooks(deps: AppDeps, projectId: string, log: { warn: (obj: object, msg: string) => void }) {
  for (const hook of [provisionDefaultSession, ...(deps.onProjectCreated ?? [])]) {
    try {
      await hook(projectId, deps);
    } catch (error) {
      log.warn({ err: error, projectId }, 'a project-created hook failed; the project was created');
    }
  }
}

/** The permission module's readable-projects scope as a query filter. */
function readableProjectsWhere({ privateScope }: ReadableProjects): FilterQuery<Project> {
  const isPublic = { visibility: 'public' as const };
  if (!privateScope) return isPublic;
  const mine: FilterQuery<Project>[] = [];
  if (privateScope.ownerId) mine.push({ owner: privateScope.ownerId });
  if (privateScope.ids || privateScope.slugs) {
    mine.push({ $or: [{ id: { $in: privateScope.ids ?? [] } }, { slug: { $in: privateScope.slugs ?? [] } }] });
  }
  return mine.length ? { $or: [isPublic, { $and: mine }] } : {};
}

const tags = ['projects'];

export const projectsRouter = router({
  list: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/projects', tags, summary: 'Projects visible to the caller' } })
    .input(z.strictObject({ ...pagination, my: queryFlag.optional() }))
    .output(z.array(projectView))
    .query(async ({ ctx, input }) => {
      const { subject } = ctx;
      if (input.my && !signedIn(subject)) throw new Unauthenticated('`my` lists your own projects: sign in');
      const user = signedIn(subject) ? (subject as Extract<Subject, { user: unknown }>).user : undefined;
      const readable = readableProjectsWhere(readableProjects(subject));
      const where = input.my ? { $and: [{ owner: user?.id }, readable] } : readable;
      const page = await ctx.em.find(Project, where, {
        orderBy: { created: 'asc', id: 'asc' },
        offset: input.offset,
        limit: input.limit,
      });
      // The permission module has the last word; the filter above is built to agree with it.
      return page
        .filter((project) => can(subject, projectRef(project), projectActions.read))
        .map((project) => presentProject(subject, project));
    }),

  create: authedProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/projects', tags, summary: 'Create a project' },
      errorCodes: ['slug_taken', 'project_limit_reached'],
    })
    .input(
      z.strictObject({
        name,
        description: description.default(''),
        public: z.boolean().default(false),
        slug: slugSchema,
      }),
    )
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      if (!canCreateProjects(ctx.subject)) throw new PermissionDenied('Only a signed-in user or a full-access API key can create projects');
      if (!ctx.user.emailVerified) throw new EmailNotVerified();
      await slugFree(ctx, input.slug);
      const project = await ctx.em.transactional(async (tx) => {
        await requireProjectRoom(ctx.deps.config.quotas.projectsPerAccount, tx, ctx.user.id);
        return tx.create(Project, {
          name: input.name,
          description: input.description,
          slug: input.slug,
          visibility: input.public ? 'public' : 'private',
          owner: ctx.user.id,
        });
      });
      await runProjectCreatedHooks(ctx.deps, project.id, ctx.log);
      return { id: project.id };
    }),

  get: projectProcedure
    .meta({ openapi: { method: 'GET', path: '/{project}/api', tags, summary: 'Project metadata' } })
    .input(z.strictObject({ project: z.string().max(100) }))
    .output(projectView)
    .query(({ ctx }) => presentProject(ctx.subject, ctx.projectSnapshot)),

  update: projectProcedure
    .meta({
      openapi: { method: 'PATCH', path: '/{project}/api', tags, summary: 'Change a project; `public` and `slug` are the owner’s' },
      errorCodes: ['slug_taken'],
    })
    .input(
      z.strictObject({
        project: z.string().max(100),
        name: name.optional(),
        description: description.optional(),
        public: z.boolean().optional(),
        slug: slugSchema.optional(),
      }),
    )
    .output(projectView)
    .mutation(async ({ ctx, input }) => {
      const { project } = ctx;
      // Name and description need `projects.write`; `public` and `slug` need the owner's
      // `projects.admin`, which is enough on its own. An empty patch still needs write.
      const changesSettings = input.public !== undefined || input.slug !== undefined;
      const changesText = input.name !== undefined || input.description !== undefined;
      if (changesText || !changesSettings) ctx.authorize(projectActions.write);
      if (changesSettings) ctx.authorize(projectActions.admin);
      if (input.slug !== undefined && input.slug !== project.slug) await slugFree(ctx, input.slug, project.id);
      if (input.name !== undefined) project.name = input.name;
      if (input.description !== undefined) project.description = input.description;
      if (input.public !== undefined) project.visibility = input.public ? 'public' : 'private';
      if (input.slug !== undefined) project.slug = input.slug;
      await ctx.em.flush();
      return presentProject(ctx.subject, project);
    }),

  delete: projectProcedure
    .meta({ openapi: { method: 'DELETE', path: '/{project}/api', tags, summary: 'Delete a project and everything in it (owner only)' } })
    .input(z.strictObject({ project: z.string().max(100) }))
    .output(statusOk)
    .mutation(async ({ ctx }) => {
      ctx.authorize(projectActions.delete);
      // Every child table references projects with ON DELETE CASCADE, so one statement removes all;
      // the sessions' saved profiles are in the blob store, keyed by session (sessionProfiles.ts).
      const sessions = await ctx.em.find(BrowserSession, { project: ctx.project.id }, { fields: ['id'] });
      await ctx.em.nativeDelete(Project, { id: ctx.project.id });
      for (const session of sessions) await deleteSessionProfile(ctx.deps.orm, session.id);
      return { status: 'ok' as const };
    }),
});
