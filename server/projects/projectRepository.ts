import type { EntityManager } from '@mikro-orm/postgresql';
import { Project } from '../../db/entities/index.ts';
import type { AccessCache } from '../auth/accessCache.ts';
import { type EntityManagerOf, entityManagerGetter } from '../auth/subject.ts';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Any slug slugSchema ever let through; anything else (a NUL byte, 10 kB) names no project. */
const slugShape = /^[A-Za-z0-9_-]{1,64}$/;

export function isUuid(value: string) {
  return uuidPattern.test(value);
}

/**
 * A project's fields as read, for answering and deciding without an EntityManager. Shared by
 * every request until the project changes: frozen, so none can alter it for the next.
 */
export type ProjectSnapshot = Readonly<{
  id: string;
  name: string;
  description: string;
  slug: string;
  visibility: 'public' | 'private';
  owner: Readonly<{ id: string }>;
  created: Date;
  updated: Date;
  /** `created` and `updated` as answers write them, formatted once (toISOString takes about 1 µs). */
  isoDates: Readonly<{ created: string; updated: string }>;
}>;

/** What the access cache keeps of a project: its row, and the snapshot made from it on first use. */
type CachedProject = { row: { id: string }; snapshot?: ProjectSnapshot };

/**
 * A project found by path: its snapshot, and `entity()` to map it into the request's
 * EntityManager (for writes, relations and queries) only when something needs the entity.
 */
export type FoundProject = { snapshot: ProjectSnapshot; entity: () => Project };

function snapshotOf(em: EntityManager, row: { id: string }): ProjectSnapshot {
  // Mapped in a fork of its own, so no request's EntityManager (and what it changed) is involved.
  const project = em.fork().map(Project, row);
  return Object.freeze({
    id: project.id,
    name: project.name,
    description: project.description,
    slug: project.slug,
    visibility: project.visibility,
    owner: Object.freeze({ id: project.owner.id }),
    created: project.created,
    updated: project.updated,
    isoDates: Object.freeze({ created: project.created.toISOString(), updated: project.updated.toISOString() }),
  });
}

/**
 * The project a path names, by UUID or by slug (slugs are stored lower-case). Every project route
 * starts here: the row comes from the access cache, or from one raw query (not the ORM's query
 * builder) when it is not there; a change to the project drops it.
 */
export async function lookUpProject(access: AccessCache, em: EntityManagerOf, slugOrId: string): Promise<FoundProject | null> {
  const emOf = entityManagerGetter(em);
  // PostgreSQL refuses text with a NUL byte outright (a 500), so the shape is checked first.
  if (!slugShape.test(slugOrId)) return null;
  const name = slugOrId.toLowerCase();
  const cached = await access.read<CachedProject>(`project:${name}`, async () => {
    const column = isUuid(name) ? 'id' : 'slug';
    const [found] = await emOf().getConnection().execute<{ id: string }[]>(`select * from projects where ${column} = ? limit 1`, [name]);
    return found ? { value: { row: found }, tags: [`project:${found.id}`] } : null;
  });
  if (!cached) return null;
  cached.snapshot ??= snapshotOf(emOf(), cached.row);
  let entity: Project | undefined;
  return {
    snapshot: cached.snapshot,
    entity: () => {
      entity ??= emOf().map(Project, cached.row);
      return entity;
    },
  };
}

/** The project a path names (see lookUpProject), mapped into `em`. */
export async function findProject(access: AccessCache, em: EntityManager, slugOrId: string): Promise<Project | null> {
  return (await lookUpProject(access, em, slugOrId))?.entity() ?? null;
}
