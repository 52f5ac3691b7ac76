import { z } from 'zod';
import { isUuid } from './projectRepository.ts';

/**
 * Slugs appear as the first path segment (`/{project}/api`), so words the service uses at the
 * top level, or may use later, are reserved. Slugs are stored lower-case and compared that way.
 */
export const reservedSlugs = new Set([
  'api',
  'trpc',
  'docs',
  'auth',
  'admin',
  'static',
  'assets',
  'public',
  'health',
  'healthz',
  'metrics',
  'openapi',
  'login',
  'logout',
  'register',
  'settings',
  'billing',
  'mcp',
  'live',
  'ws',
  'www',
  'new',
  'projects',
  'users',
]);

export const slugSchema = z
  .string()
  .min(2, 'a slug has at least 2 characters')
  .max(64, 'a slug has at most 64 characters')
  .regex(/^[A-Za-z0-9_-]+$/, 'a slug may contain only letters, digits, dashes and underscores')
  // A UUID in the project segment is read as an id, so only a whole UUID is ambiguous.
  .refine((slug) => !isUuid(slug), 'a slug may not be a UUID')
  .transform((slug) => slug.toLowerCase())
  .refine((slug) => !reservedSlugs.has(slug), 'this slug is reserved');
