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

/** Start-up cut short by a shutdown signal: not a failure. */
export class ShutdownRequested extends Error {
  constructor() {
    super('shutdown requested during start-up');
  }
}

/**
 * How to stop what a process has started, in start order. It exists before anything starts, so a
 * signal during start-up (Ctrl-C while the Temporal dev server or embedded PostgreSQL comes up)
 * still stops what was started, detached children included.
 */
export class ProcessShutdown {
  readonly #steps: { name: string; stop: Stoppable }[] = [];
  readonly #log: Logger;
  #requested = false;
  /** The step under way, for the message when a shutdown runs out of time. */
  #stopping: string | undefined;

  constructor(log: Logger) {
    this.#log = log;
  }

  get requested() {
    return this.#requested;
  }

  request() {
    this.#requested = true;
  }

  /** Registers how to stop something just started; a shutdown asked for meanwhile ends start-up here. */
  add(name: string, stop: Stoppable) {
    this.#steps.push({ name, stop });
    this.throwIfRequested();
  }

  throwIfRequested() {
    if (this.#requested) throw new ShutdownRequested();
  }

  get stopping() {
    return this.#stopping;
  }

  /** Newest first, every step even if an earlier one failed. */
  async stopAll() {
    for (const { name, stop } of this.#steps.splice(0).reverse()) {
      this.#stopping = name;
      try {
        await stop();
      } catch (error) {
        this.#log.warn({ err: error }, `stopping the ${name} failed`);
      }
    }
    this.#stopping = undefined;
  }
}

/**
 * Runs a process main under SIGINT/SIGTERM handlers installed before `start` begins. A signal
 * lets the start-up step under way finish (the next `add` then ends start-up), and stops
 * everything in reverse order; a second signal exits at once, and so does a shutdown still under
 * way after `stopWithinMs`. A start-up failure is logged in one line, stops what was started and
 * exits 1.
 */
export function runProcess(log: Logger, start: (shutdown: ProcessShutdown) => Promise<void>, options: { stopWithinMs?: number } = {}) {
  const shutdown = new ProcessShutdown(log);
  let startup: Promise<void> = Promise.resolve();
  // The handlers come first: start-up reads them (embedded PostgreSQL's loader keeps only these).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (shutdown.requested) process.exit(1);
      shutdown.request();
      log.info(`${signal}: shutting down`);
      if (options.stopWithinMs) {
        // What the steps would have stopped dies with the process: the dev server and embedded
        // PostgreSQL by their parent-death signal, browsers found gone by their workflows.
        setTimeout(() => {
          log.warn(`shutdown still under way after ${options.stopWithinMs} ms (${shutdown.stopping ?? 'start-up'}): exiting now`);
          process.exit(1);
        }, options.stopWithinMs).unref();
      }
      startup
        .then(() => shutdown.stopAll())
        .then(
          () => process.exit(0),
          (error: unknown) => {
            log.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
    });
  }
  startup = start(shutdown).catch(async (error: unknown) => {
    // After a signal, a step may also fail because of it: the signal's shutdown is the story.
    if (shutdown.requested) return;
    log.fatal({ err: error }, `could not start: ${(error as Error).message}`);
    await shutdown.stopAll();
    process.exit(1);
  });
}

/**
 * Brings up what the processes share: the database (embedded when DATABASE_URL is unset, in
 * the all-in-one start only), Temporal (a local dev server likewise), and their clients. Each
 * part is registered with `shutdown` as soon as it runs.
 */
export async function startRuntime(
  config: Config,
  log: Logger,
  shutdown: ProcessShutdown,
  options: { embedded: boolean; migrate: boolean },
) {
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    if (!options.embedded) throw new Error('DATABASE_URL is required for this process (only `npm start` embeds PostgreSQL)');
    const pg = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
    shutdown.add('embedded PostgreSQL', pg.stop);
    databaseUrl = pg.url;
  }

  const orm: MikroORM = await initORM(databaseUrl);
  shutdown.add('database connection', () => orm.close(true));
  if (options.migrate) {
    const applied = await migrate(orm);
    log.info(applied.length ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');
  }

  let temporalAddress = config.temporal.address;
  let temporalUi: string | undefined;
  if (!temporalAddress) {
    if (!options.embedded) throw new Error('TEMPORAL_ADDRESS is required for this process (only `npm start` runs a dev server)');
    shutdown.throwIfRequested();
    log.info('starting a local Temporal dev server');
    const dev = await startDevTemporal({
      cliPath: config.temporal.cliPath,
      port: config.temporal.devPort,
      uiPort: config.temporal.uiPort,
      dbFile: `${config.dataDir}/temporal.sqlite`,
      log,
    });
    shutdown.add('Temporal dev server', dev.stop);
    temporalAddress = dev.address;
    temporalUi = dev.uiUrl;
  }
  const temporal = await connectTemporalClient(temporalAddress, config.temporal.namespace);
  shutdown.add('Temporal client', temporal.close);

  const secret = resolveJwtSecret(config);
  const jwt = new JwtSigner(secret);
  const resourceTokens = new ResourceTokens(secret);
  return { orm, temporal: temporal.client, temporalAddress, temporalUi, jwt, resourceTokens, serviceSecret: secret };
}
