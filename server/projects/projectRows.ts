import type { EntityName, FilterQuery, QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Project } from '../../db/entities/index.ts';
import { NotFound } from '../errors.ts';
import { isUuid } from './projectRepository.ts';

/**
 * How routers (and the domain code they call) load rows of the project in scope: one row by id (`findInProject`), or the rows a
 * caller may read (`readableIds`, `listReadable`). The permission module decides per row, so a
 * key granted single ids sees exactly those; paging happens after that decision, never before.
 * A row that belongs to a row already loaded (a pipeline's run, a session's resource) comes
 * through `findChild` or `loadChild`.
 */

type ProjectRow = { id: string };

/**
 * The project in scope as a request holds it (a tRPC procedure's context, a raw route's
 * `projectRequest`): its EntityManager and the permission module's answers bound to the caller.
 */
export type ProjectRowScope = {
  em: EntityManager;
  project: Pick<Project, 'id'>;
  authorize: (action: string, resourceId?: string) => void;
  can: (action: string, resourceId?: string) => boolean;
};

/**
 * A row of this project by id, after checking `action` on that id: a malformed, missing or
 * foreign id answers 404, a forbidden one 403 (the check comes first, so both look the same
 * whether or not the row exists). Every per-id route loads its row through this.
 */
export async function findInProject<T extends ProjectRow>(
  ctx: ProjectRowScope,
  entity: EntityName<T>,
  id: string,
  action: string,
  what: string,
  options: { populate?: readonly string[] } = {},
): Promise<T> {
  if (!isUuid(id)) throw new NotFound(what);
  const lower = id.toLowerCase();
  ctx.authorize(action, lower);
  const row = await ctx.em.findOne(entity, { id: lower, project: ctx.project.id } as never, options as never);
  if (!row) throw new NotFound(what);
  return row as T;
}

/** Every row of the project may be read (`'all'`), or only these ids, in `orderBy` order. */
export async function readableIds<T extends ProjectRow>(
  ctx: ProjectRowScope,
  entity: EntityName<T>,
  action: string,
  orderBy: QueryOrderMap<T> = { created: 'asc', id: 'asc' } as never,
): Promise<'all' | string[]> {
  if (ctx.can(action)) return 'all';
  const rows = await ctx.em.find(entity, { project: ctx.project.id } as FilterQuery<T>, { orderBy, fields: ['id'] } as never);
  return rows.map((row) => row.id).filter((id) => ctx.can(action, id));
}

/**
 * The rows of the project the caller may read with `action`, in `orderBy` order (created, then
 * id, unless told), one page of them when `page` is given. A caller who may read every row gets
 * the page from SQL; one with grants per id gets it cut from the readable ids.
 */
export async function listReadable<T extends ProjectRow>(
  ctx: ProjectRowScope,
  entity: EntityName<T>,
  action: string,
  options: { page?: { limit: number; offset: number }; orderBy?: QueryOrderMap<T>; populate?: readonly string[] } = {},
): Promise<T[]> {
  const orderBy = options.orderBy ?? ({ created: 'asc', id: 'asc' } as QueryOrderMap<T>);
  const { page, populate } = options;
  const readable = await readableIds(ctx, entity, action, orderBy);
  if (readable === 'all') {
    return ctx.em.find(entity, { project: ctx.project.id } as FilterQuery<T>, { orderBy, populate, ...page } as never);
  }
  const ids = page ? readable.slice(page.offset, page.offset + page.limit) : readable;
  if (!ids.length) return [];
  return ctx.em.find(entity, { id: { $in: ids } } as never, { orderBy, populate } as never);
}

type ChildOptions = { populate?: readonly string[] };

/**
 * The row `id` under its parent (`within`: the owning columns, e.g. `{ pipeline: pipeline.id }`),
 * or null. A malformed id finds nothing without a query (the id columns are uuid, and a stray
 * text there would fail in the database); ids compare lowercased. The caller has loaded, and so
 * authorised, the parent; what a miss answers is its own.
 */
export async function findChild<T extends ProjectRow>(
  em: EntityManager,
  entity: EntityName<T>,
  id: string,
  within: Record<string, unknown>,
  options: ChildOptions = {},
): Promise<T | null> {
  if (!isUuid(id)) return null;
  return (await em.findOne(entity, { ...within, id: id.toLowerCase() } as never, options as never)) as T | null;
}

/** `findChild`, where a miss is 404 `what`. */
export async function loadChild<T extends ProjectRow>(
  em: EntityManager,
  entity: EntityName<T>,
  id: string,
  within: Record<string, unknown>,
  what: string,
  options: ChildOptions = {},
): Promise<T> {
  const row = await findChild(em, entity, id, within, options);
  if (!row) throw new NotFound(what);
  return row;
}
