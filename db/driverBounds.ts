import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';

/** pg's own message when `query_timeout` passes with no answer from the server. */
const UNANSWERED = 'Query read timeout';

/** How much longer than the server's own statement bound the client waits for any answer. */
const UNANSWERED_AFTER_MS = 500;

/**
 * A pg client that drops its connection once a statement has gone unanswered (`query_timeout`).
 * pg answers the caller with "Query read timeout" but keeps the connection waiting for the
 * server's late answer: every later statement on it (a transaction's ROLLBACK first) would queue
 * behind that answer, and the pool would hand it out again. A server that stopped answering (a
 * stalled disk, a partition, a SIGSTOP) sends none, so the connection is ended here: what is
 * queued on it fails at once and the pool leaves it out.
 */
export class BoundedClient extends pg.Client {
  // pg's overloads (callback, promise, submittable) all come through here; only the promise form
  // (the one Kysely uses) is watched.
  override query(...args: unknown[]): never {
    const result = (super.query as (...args: unknown[]) => unknown).apply(this, args);
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if ((error as Error)?.message === UNANSWERED) void this.end().catch(() => {});
      });
    }
    return result as never;
  }
}

/**
 * The connections each pool has lent out (`closeWithin`), by the hook that made the pool: MikroORM
 * copies the driver options, but not the functions in them.
 */
const lentOut = new WeakMap<object, Set<pg.Client>>();

/**
 * The driver's bounds, so that nothing waits on the database for ever: a connection from the pool
 * (or a new one) within `timeoutMs`, a statement within it too. A live server cancels a statement
 * that runs longer (`statement_timeout`, SQLSTATE 57014) and the connection stays usable; a server
 * that stops answering never says so, so the client gives up a moment later (`query_timeout`) and
 * drops the connection (BoundedClient). Dead peers are found by TCP keep-alive. `timeoutMs` null:
 * no statement bound (migrations), a connect within 10 s.
 */
export function driverBounds(timeoutMs: number | null) {
  const lent = new Set<pg.Client>();
  const options = {
    connectionTimeoutMillis: timeoutMs ?? 10_000,
    keepAlive: true,
    ...(timeoutMs === null ? {} : { Client: BoundedClient, statement_timeout: timeoutMs, query_timeout: timeoutMs + UNANSWERED_AFTER_MS }),
    onPoolCreated: (pool: pg.Pool) => {
      pool.on('acquire', (client) => lent.add(client));
      pool.on('release', (_error, client) => lent.delete(client));
      pool.on('remove', (client) => lent.delete(client));
    },
  };
  lentOut.set(options.onPoolCreated, lent);
  return options;
}

/**
 * Closes the ORM within `withinMs`. The pool's close waits for every connection lent out to come
 * back; one still held at the bound (a statement of a worker's activity cut short by the shutdown,
 * a database that stopped answering) is ended there, its holder's statements fail, and the close
 * goes on without waiting for it.
 */
export async function closeWithin(orm: MikroORM, withinMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const closed = orm.close(true).then(() => true);
  const inTime = await Promise.race([closed, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), withinMs)))]);
  clearTimeout(timer);
  if (inTime) return { cut: 0 };
  const lent = lentOut.get((orm.config.get('driverOptions') as { onPoolCreated?: object }).onPoolCreated ?? {}) ?? new Set();
  const cut = lent.size;
  for (const client of lent) void client.end().catch(() => {});
  return { cut };
}
