import type { EntityManager } from '@mikro-orm/postgresql';
import { Project } from '../../db/entities/index.ts';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Any slug slugSchema ever let through; anything else (a NUL byte, 10 kB) names no project. */
const slugShape = /^[A-Za-z0-9_-]{1,64}$/;

export function isUuid(value: string) {
  return uuidPattern.test(value);
}

/**
 * The project a path names, by UUID or by slug (slugs are stored lower-case). Every project route
 * starts here, so it is one raw query mapped to the entity, not the ORM's query builder.
 */
export async function findProject(em: EntityManager, slugOrId: string): Promise<Project | null> {
  // PostgreSQL refuses text with a NUL byte outright (a 500), so the shape is checked first.
  if (!slugShape.test(slugOrId)) return null;
  const column = isUuid(slugOrId) ? 'id' : 'slug';
  const [row] = await em.getConnection().execute(`select * from projects where ${column} = ? limit 1`, [slugOrId.toLowerCase()]);
  return row ? em.map(Project, row) : null;
}
