import type { EntityManager } from '@mikro-orm/postgresql';
import { Project } from '../../db/entities/index.ts';
import type { AccessCache } from '../auth/accessCache.ts';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Any slug slugSchema ever let through; anything else (a NUL byte, 10 kB) names no project. */
const slugShape = /^[A-Za-z0-9_-]{1,64}$/;

export function isUuid(value: string) {
  return uuidPattern.test(value);
}

/**
 * The project a path names, by UUID or by slug (slugs are stored lower-case), mapped into `em`.
 * Every project route starts here: the row comes from the access cache, or from one raw query
 * (not the ORM's query builder) when it is not there; a change to the project drops it.
 */
export async function findProject(access: AccessCache, em: EntityManager, slugOrId: string): Promise<Project | null> {
  // PostgreSQL refuses text with a NUL byte outright (a 500), so the shape is checked first.
  if (!slugShape.test(slugOrId)) return null;
  const name = slugOrId.toLowerCase();
  const row = await access.read(`project:${name}`, async () => {
    const column = isUuid(name) ? 'id' : 'slug';
    const [found] = await em.getConnection().execute<{ id: string }[]>(`select * from projects where ${column} = ? limit 1`, [name]);
    return found ? { value: found, tags: [`project:${found.id}`] } : null;
  });
  return row ? em.map(Project, row) : null;
}
