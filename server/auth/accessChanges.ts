import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { AccessCache } from './accessCache.ts';

/**
 * The triggers' channel (db/migrations, `notify_access_change`): `<tag> <writer backend pid>`,
 * the tag `all` or `<kind>:<id>`.
 */
export const ACCESS_CHANGES_CHANNEL = 'access_changes';
/** Between api processes only: `sync <token>`, answered by each with `ack <token> <its backend pid>`. */
const ACCESS_SYNC_CHANNEL = 'access_sync';
/** How api processes' LISTEN connections show in pg_stat_activity; a sync waits for each of them. */
const LISTENER_NAME = 'browserflow access changes';

/** How often the LISTEN connection proves it is alive, and how long an answer may take. */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 5_000;
/** Waits between attempts to listen again after the connection was lost. */
const RETRY_MS = [250, 1_000, 2_000, 5_000];
/** How long an answer waits for the other api processes to confirm a change (a hung one). */
const SYNC_TIMEOUT_MS = 2_000;

export type AccessChanges = {
  /** Settles after the first attempt to listen, whether or not it succeeded. */
  ready: Promise<void>;
  close: () => Promise<void>;
};

/**
 * Keeps `cache` in step with the database, so that a change holds on the very next request to any
 * api process.
 *
 * - One LISTEN connection of its own hears every change made anywhere. The cache is live only while
 *   that connection is up and answering heartbeats, and starts empty each time it comes back
 *   (server/auth/accessCache.ts says why).
 * - Every connection of the process's own pool (`pool`) listens too. PostgreSQL hands a session
 *   the notifications of its own transaction before that transaction's commit returns, so a change
 *   this process makes is out of its own cache before the code that made it goes on.
 * - The other processes hear it a moment after the commit, when their LISTEN connections are
 *   scheduled: a moment the caller could beat on a busy machine, answer in hand, with a request to
 *   another process. So a change made here holds every answer of this process
 *   (`cache.holdAnswersUntil`) until each api process's LISTEN connection (as pg_stat_activity
 *   lists them) has acknowledged a sync sent after it: notifications arrive in commit order, so an
 *   acknowledgement means the change was heard, and dropped from that process's cache, first.
 */
export function listenForAccessChanges(cache: AccessCache, options: { url: string; pool?: pg.Pool; log: Logger }): AccessChanges {
  const { url, pool, log } = options;

  /** A change: its tag goes to the cache; a change this very connection wrote calls for a sync. */
  const onChange = (client: pg.Client | undefined) => (message: pg.Notification) => {
    if (message.channel !== ACCESS_CHANGES_CHANNEL) return;
    const [tag, writer] = (message.payload ?? '').split(' ');
    cache.invalidate(tag || 'all');
    if (client && writer && Number(writer) === backendPid(client)) spreadOwnChange();
  };

  const poolClients = new WeakSet<pg.PoolClient>();
  // Before the client is handed out: pg runs queries in order, so LISTEN precedes the caller's.
  const listenOnAcquire = (client: pg.PoolClient) => {
    if (poolClients.has(client)) return;
    poolClients.add(client);
    client.on('notification', onChange(client));
    // A broken connection fails the caller's own query too; nothing more to do here.
    client.query(`LISTEN ${ACCESS_CHANGES_CHANNEL}`).catch(() => {});
  };
  pool?.on('acquire', listenOnAcquire);

  let closed = false;
  let listener: pg.Client | undefined;
  let wake: (() => void) | undefined;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });

  /** Sync rounds run one after another; one not yet sent covers every change heard before it is. */
  let rounds: Promise<void> = Promise.resolve();
  let roundQueued = false;
  const acks = new Map<string, { confirmed: Set<number>; check: () => void }>();

  function spreadOwnChange() {
    if (roundQueued) return;
    roundQueued = true;
    rounds = rounds.then(() => {
      roundQueued = false;
      return syncRound().catch((error: unknown) =>
        log.warn({ err: error }, 'access changes: could not confirm a change with the other api processes'),
      );
    });
    cache.holdAnswersUntil(rounds);
  }

  async function syncRound() {
    const client = listener;
    // Not listening: this process serves from the database meanwhile; the others hear the change
    // on their own.
    if (!client || !cache.live) return;
    const token = randomUUID();
    const confirmed = new Set<number>();
    let waitFor: number[] | undefined;
    let done: () => void = () => {};
    const allConfirmed = new Promise<void>((resolve) => {
      done = resolve;
    });
    const check = () => {
      if (waitFor?.every((pid) => confirmed.has(pid))) done();
    };
    // Registered before the sync is sent: acknowledgements may come back before the query does.
    acks.set(token, { confirmed, check });
    let timer: NodeJS.Timeout | undefined;
    try {
      const { rows } = await client.query<{ listeners: number[] }>(
        `select array(select pid from pg_stat_activity where datname = current_database() and application_name = $1) as listeners,
          pg_notify($2, $3)`,
        [LISTENER_NAME, ACCESS_SYNC_CHANNEL, `sync ${token}`],
      );
      waitFor = rows[0]?.listeners ?? [];
      check();
      const timedOut = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), SYNC_TIMEOUT_MS);
      });
      if (await Promise.race([allConfirmed.then(() => false), timedOut])) {
        const silent = waitFor.filter((pid) => !confirmed.has(pid));
        log.warn({ silent }, 'access changes: api processes did not confirm a change in time; answering anyway');
      }
    } finally {
      clearTimeout(timer);
      acks.delete(token);
    }
  }

  function onSync(client: pg.Client, message: pg.Notification) {
    const [kind, token, pid] = (message.payload ?? '').split(' ');
    if (kind === 'sync' && token) {
      // Heard after every change committed before it: say so.
      client.query('select pg_notify($1, $2)', [ACCESS_SYNC_CHANNEL, `ack ${token} ${backendPid(client)}`]).catch(() => {});
    } else if (kind === 'ack' && token && pid) {
      const round = acks.get(token);
      round?.confirmed.add(Number(pid));
      round?.check();
    }
  }

  /** One connection's life: answers whether it listened; by the time it returns, the cache is suspended. */
  async function listenOnce(): Promise<boolean> {
    const client = new pg.Client({
      connectionString: url,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      application_name: LISTENER_NAME,
    });
    let heartbeat: NodeJS.Timeout | undefined;
    const lost = new Promise<void>((resolve) => {
      const drop = (error?: Error) => {
        // At once, in the event that reports it: no request is served from memory after this.
        cache.suspend();
        clearInterval(heartbeat);
        if (!closed && error) log.warn({ err: error }, 'access changes: the LISTEN connection was lost; serving from the database');
        resolve();
      };
      client.once('error', drop);
      client.once('end', () => drop());
      // Later errors of a connection already given up on.
      client.on('error', () => {});
    });
    const changed = onChange(undefined);
    client.on('notification', (message) => (message.channel === ACCESS_SYNC_CHANNEL ? onSync(client, message) : changed(message)));
    try {
      await client.connect();
      await client.query(`LISTEN ${ACCESS_CHANGES_CHANNEL}; LISTEN ${ACCESS_SYNC_CHANNEL}`);
      if (closed) throw new Error('closed');
    } catch (error) {
      cache.suspend();
      if (!closed) log.warn({ err: error }, 'access changes: cannot LISTEN; serving from the database');
      await endQuietly(client);
      return false;
    }
    listener = client;
    cache.resume();
    markReady();
    heartbeat = setInterval(() => {
      const timeout = setTimeout(() => client.emit('error', new Error('heartbeat unanswered')), HEARTBEAT_TIMEOUT_MS);
      client.query('select 1').then(
        () => clearTimeout(timeout),
        (error: Error) => {
          clearTimeout(timeout);
          client.emit('error', error);
        },
      );
    }, HEARTBEAT_MS);
    heartbeat.unref();
    await lost;
    if (listener === client) listener = undefined;
    await endQuietly(client);
    return true;
  }

  const running = (async () => {
    let failures = 0;
    while (!closed) {
      const listened = await listenOnce();
      // The first attempt decides when the app may start; a failed one leaves the cache off.
      markReady();
      if (closed) break;
      failures = listened ? 0 : failures + 1;
      const delay = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)] as number;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, delay).unref();
      });
    }
  })();

  return {
    ready,
    async close() {
      closed = true;
      pool?.off('acquire', listenOnAcquire);
      cache.suspend();
      markReady();
      wake?.();
      if (listener) await endQuietly(listener);
      await running;
    },
  };
}

/** The server process behind a connection, as PostgreSQL announced it on connect (pg keeps it for cancels). */
function backendPid(client: pg.Client) {
  return (client as pg.Client & { processID: number | null }).processID;
}

/** A lost connection's end may never be answered (a dead link): give it a second, not more. */
async function endQuietly(client: pg.Client) {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.end().catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 1_000);
    }),
  ]);
  clearTimeout(timer);
}
