import { ConnectionException } from '@mikro-orm/core';

/** Connection-level failures of PostgreSQL (and of the pool in front of it), as Node and pg name them. */
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  // A statement the server cancelled at its bound (statement_timeout, db/orm.ts): it did not answer in time.
  '57014',
]);

/**
 * Whether `error` says the database is out of reach (down, restarting, the connection cut) or did
 * not answer within its bound (db/orm.ts: a connection, a connect or a statement), as opposed to
 * a query it refused: the first is the service's trouble, retried or answered 503; the second is
 * the request's.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause && depth < 5; depth++) {
    if (cause instanceof ConnectionException) return true;
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (unavailableCodes.has(code) || code.startsWith('08'))) return true;
    if (
      typeof message === 'string' &&
      /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connect ECONNREFUSED|Client has encountered a connection error|Client was closed and is not queryable/i.test(
        message,
      )
    ) {
      return true;
    }
    cause = (cause as { cause?: unknown; previous?: unknown }).previous ?? (cause as { cause?: unknown }).cause;
  }
  return false;
}
