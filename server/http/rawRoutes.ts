import type { FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Logger } from 'pino';
import { safeEqual } from '../auth/secrets.ts';

/**
 * What the raw routes (server/http/) share: the app they register on, and the comparison of a
 * shared secret. A raw route throws domain errors; the app's error handler answers them.
 */
export type RawApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, Logger>;

/** Whether `given` (a path segment, a header, a query value) is the configured secret, in constant time. */
export function sameSecret(given: unknown, expected: string) {
  return typeof given === 'string' && safeEqual(given, expected);
}
