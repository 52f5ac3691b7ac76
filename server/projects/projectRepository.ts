import type { EntityManager } from '@mikro-orm/postgresql';
import { Project } from '../../db/entities/index.ts';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string) {
  return uuidPattern.test(value);
}

/** The project a path names, by UUID or by slug (slugs are stored lower-case). */
export function findProject(em: EntityManager, slugOrId: string) {
  const where = isUuid(slugOrId) ? { id: slugOrId.toLowerCase() } : { slug: slugOrId.toLowerCase() };
  return em.findOne(Project, where);
}
