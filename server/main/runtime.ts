import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { initORM, migrate } from '../../db/orm.ts';
import { JwtSigner, resolveJwtSecret } from '../auth/jwt.ts';
import { ResourceTokens } from '../browsers/resourceTokens.ts';
import type { Config } from '../config.ts';
import { startDevTemporal } from '../infra/devTemporal.ts';
import { startEmbeddedPostgres } from '../infra/embeddedPostgres.ts';
import { connectTemporalClient } from '../infra/temporal.ts';

type Stoppable = () => Promise<unknown> | unknown;

/**
 * Brings up what the processes share: the database (embedded when DATABASE_URL is unset, in
 * the all-in-one start only), Temporal (a local dev server likewise), and their clients.
 * `stop` undoes it in reverse order.
 */
export async function startRuntime(config: Config, log: Logger, options: { embedded: boolean; migrate: boolean }) {
  const stops: Stoppable[] = [];
  const stop = async () => {
    for (const fn of stops.reverse()) {
      try {
        await fn();
      } catch (error) {
        log.warn({ err: error }, 'error while shutting down');
      }
    }
  };
  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      if (!options.embedded) throw new Error('DATABASE_URL is required for this process (only `npm start` embeds PostgreSQL)');
      const pg = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
      stops.push(pg.stop);
      databaseUrl = pg.url;
    }

    const orm: MikroORM = await initORM(databaseUrl);
    stops.push(() => orm.close(true));
    if (options.migrate) {
      const applied = await migrate(orm);
      log.info(applied.length ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');
    }

    let temporalAddress = config.temporal.address;
    let temporalUi: string | undefined;
    if (!temporalAddress) {
      if (!options.embedded) throw new Error('TEMPORAL_ADDRESS is required for this process (only `npm start` runs a dev server)');
      log.info('starting a local Temporal dev server');
      const dev = await startDevTemporal({
        cliPath: config.temporal.cliPath,
        port: config.temporal.devPort,
        uiPort: config.temporal.uiPort,
        dbFile: `${config.dataDir}/temporal.sqlite`,
        log,
      });
      stops.push(dev.stop);
      temporalAddress = dev.address;
      temporalUi = dev.uiUrl;
    }
    const temporal = await connectTemporalClient(temporalAddress, config.temporal.namespace);
    stops.push(temporal.close);

    const secret = resolveJwtSecret(config);
    const jwt = new JwtSigner(secret);
    const resourceTokens = new ResourceTokens(secret);
    return { orm, temporal: temporal.client, temporalAddress, temporalUi, jwt, resourceTokens, serviceSecret: secret, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** SIGINT/SIGTERM run `shutdown` once; a second signal exits at once. */
export function onShutdownSignal(log: Logger, shutdown: () => Promise<void>) {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) process.exit(1);
      stopping = true;
      log.info(`${signal}: shutting down`);
      shutdown().then(
        () => process.exit(0),
        (error) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
