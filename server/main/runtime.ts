import { existsSync } from 'node:fs';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { closeWithin } from '../../db/driverBounds.ts';
import { initORM, migrate } from '../../db/orm.ts';
import { JwtSigner, resolveJwtSecret } from '../auth/jwt.ts';
import { ResourceTokens } from '../browsers/tokens/resourceTokens.ts';
import type { Config } from '../config.ts';
import { securePrivateDataDir, TEMPORAL_DB_FILE } from '../infra/dataDir.ts';
import { startDevTemporal } from '../infra/devTemporal.ts';
import { startEmbeddedPostgres } from '../infra/embeddedPostgres.ts';
import { whenParentEnds } from '../infra/parentDeath.ts';
import { connectTemporalClient } from '../infra/temporalClient.ts';

type Stoppable = () => Promise<unknown> | unknown;

/** How long one step of a shutdown may take when it does not say (`ProcessShutdown.add`). */
const STEP_WITHIN_MS = 10_000;

/**
 * A process main waits this long, at most, for the start-up step under way when a signal comes
 * (so that what it starts is registered and stopped); past it the shutdown goes on without it.
 */
const STARTUP_WAIT_MS = 5_000;

/**
 * A second signal this soon after the first is the same one: `npm start` forwards the terminal's
 * Ctrl-C to node, which got it from the terminal too (both are in its foreground process group).
 */
const SAME_SIGNAL_MS = 1_000;

type StepOptions = {
  /** The step's deadline (default 10 s): past it, the shutdown goes on to the next step. */
  withinMs?: number;
  /**
   * Stopped after every other step, together with the other `last` ones, in the time the
   * process keeps for them: the embedded PostgreSQL and Temporal dev server the other steps use.
   */
  last?: boolean;
};

type Step = { name: string; stop: Stoppable; withinMs: number; last: boolean };

/** Start-up cut short by a shutdown signal: not a failure. */
export class ShutdownRequested extends Error {
  constructor() {
    super('shutdown requested during start-up');
  }
}

/**
 * The embedded PostgreSQL and Temporal dev server are stopped last, together, within this: each
 * is killed if it has not gone after `KILL_AFTER_MS` (server/infra/parentDeath.ts).
 */
const LAST_STEPS_WITHIN_MS = 2_500;

/** The database connection's close waits this long for the connections lent out (`closeWithin`). */
const DATABASE_CLOSE_MS = 1_500;

const sleep = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

/**
 * How to stop what a process has started, in start order. It exists before anything starts, so a
 * signal during start-up (Ctrl-C while the Temporal dev server or embedded PostgreSQL comes up)
 * still stops what was started, detached children included. Every step has a deadline: a step
 * that hangs (a database client waiting for a connection PostgreSQL will never give back) is left
 * behind, and the process still exits.
 */
export class ProcessShutdown {
  readonly #steps: Step[] = [];
  readonly #kills: (() => void)[] = [];
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
  add(name: string, stop: Stoppable, options: StepOptions = {}) {
    this.#steps.push({ name, stop, withinMs: options.withinMs ?? STEP_WITHIN_MS, last: options.last ?? false });
    this.throwIfRequested();
  }

  /**
   * Registers a synchronous kill for an exit that cannot wait (a second Ctrl-C, a shutdown out of
   * time): what must not outlive the process and would not die with it by itself (browsers).
   */
  addKill(kill: () => void) {
    this.#kills.push(kill);
  }

  throwIfRequested() {
    if (this.#requested) throw new ShutdownRequested();
  }

  get stopping() {
    return this.#stopping;
  }

  /** Runs the kills (newest first), then exits with `code` at once. */
  exitNow(code: number): never {
    for (const kill of this.#kills.splice(0).reverse()) {
      try {
        kill();
      } catch (error) {
        this.#log.warn({ err: error }, 'a kill at exit failed');
      }
    }
    process.exit(code);
  }

  /**
   * Newest first, every step even if an earlier one failed or ran out of time; the `last` steps
   * after the others, together. Within `withinMs` in all when given: the others share what is left
   * once the `last` steps' time is kept aside.
   */
  async stopAll(withinMs?: number) {
    const steps = this.#steps.splice(0).reverse();
    const last = steps.filter((step) => step.last);
    const end = performance.now() + (withinMs ?? Number.POSITIVE_INFINITY);
    const lastTime = Math.max(0, ...last.map((step) => step.withinMs));
    for (const step of steps.filter((candidate) => !candidate.last)) await this.#stopStep(step, end - lastTime);
    await Promise.all(last.map((step) => this.#stopStep(step, end)));
    this.#stopping = undefined;
  }

  async #stopStep({ name, stop, withinMs }: Step, end: number) {
    const bound = Math.min(withinMs, end - performance.now());
    if (bound <= 0) {
      this.#log.warn(`no time left to stop the ${name}: it ends with the process`);
      return;
    }
    this.#stopping = name;
    try {
      const outcome = await Promise.race([Promise.resolve().then(stop), sleep(bound)]);
      if (outcome === 'timeout') this.#log.warn(`stopping the ${name} took more than ${Math.round(bound)} ms: going on without it`);
    } catch (error) {
      this.#log.warn({ err: error }, `stopping the ${name} failed`);
    }
  }
}

/**
 * Runs a process main under SIGINT/SIGTERM handlers installed before `start` begins. A signal
 * lets the start-up step under way finish (at most 5 s; the next `add` then ends start-up), and
 * stops everything in reverse order, each step within its deadline, and all within `stopWithinMs`
 * when given. A second signal (a second Ctrl-C) runs the kills (browsers) and exits at once; so
 * does a shutdown still under way after `stopWithinMs`. A start-up failure is logged in one line,
 * stops what was started and exits 1.
 */
export function runProcess(
  log: Logger,
  start: (shutdown: ProcessShutdown) => Promise<void>,
  options: {
    stopWithinMs?: number;
    /**
     * The process that started this one (npm, for `npm start`) ending, however (kill -9 included),
     * shuts this one down as a signal would: nothing of the service is left behind it.
     */
    endWithParent?: boolean;
  } = {},
) {
  const shutdown = new ProcessShutdown(log);
  let startup: Promise<void> = Promise.resolve();
  let firstSignalAt = 0;
  // The handlers come first: start-up reads them (embedded PostgreSQL's loader keeps only these).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (shutdown.requested) {
        if (performance.now() - firstSignalAt < SAME_SIGNAL_MS) return;
        log.warn(`${signal} again: killing the browsers and exiting now`);
        shutdown.exitNow(1);
      }
      shutDown(signal);
    });
  }
  if (options.endWithParent) {
    whenParentEnds(() => {
      if (!shutdown.requested) shutDown('the process that started this one (npm) ended');
    });
  }

  function shutDown(why: string) {
    firstSignalAt = performance.now();
    shutdown.request();
    log.info(`${why}: shutting down`);
    if (options.stopWithinMs) {
      // What the steps would have stopped dies with the process: the dev server and embedded
      // PostgreSQL by their parent-death signal, browsers by the kills, found gone by their workflows.
      setTimeout(() => {
        log.warn(`shutdown still under way after ${options.stopWithinMs} ms (${shutdown.stopping ?? 'start-up'}): exiting now`);
        shutdown.exitNow(1);
      }, options.stopWithinMs + 500).unref();
    }
    Promise.race([startup, sleep(STARTUP_WAIT_MS)])
      .then((waited) => {
        if (waited === 'timeout') log.warn('start-up did not stop in time: stopping what it started so far');
        // The time start-up took out of the bound is gone: the steps share what is left.
        const { stopWithinMs } = options;
        return shutdown.stopAll(stopWithinMs === undefined ? undefined : stopWithinMs - (performance.now() - firstSignalAt));
      })
      .then(
        () => shutdown.exitNow(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          shutdown.exitNow(1);
        },
      );
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
  // A process that keeps nothing there (DATABASE_URL, TEMPORAL_ADDRESS, JWT_SECRET) need not have one.
  if (options.embedded || existsSync(config.dataDir)) securePrivateDataDir(config.dataDir);
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    if (!options.embedded) throw new Error('DATABASE_URL is required for this process (only `npm start` embeds PostgreSQL)');
    const pg = await startEmbeddedPostgres(config, log);
    shutdown.addKill(pg.stopNow);
    shutdown.add('embedded PostgreSQL', pg.stop, { last: true, withinMs: LAST_STEPS_WITHIN_MS });
    databaseUrl = pg.url;
  }

  if (options.migrate) {
    // On a connection of their own, without the statement bound: a migration may run long.
    const migrating = await initORM(databaseUrl, {}, null);
    try {
      const applied = await migrate(migrating);
      log.info(applied.length ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date');
    } finally {
      await migrating.close(true);
    }
  }
  const orm: MikroORM = await initORM(databaseUrl, {}, config.databaseTimeoutMs);
  // A connection still lent out at 1.5 s (an activity the worker's stop cut short, a database that
  // stopped answering) is ended then, within the step's bound.
  shutdown.add(
    'database connection',
    async () => {
      const { cut } = await closeWithin(orm, DATABASE_CLOSE_MS);
      if (cut) log.info(`closed the database connection with ${cut} connection(s) still in use: they were ended`);
    },
    { withinMs: DATABASE_CLOSE_MS + 500 },
  );

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
      dbFile: path.join(config.dataDir, TEMPORAL_DB_FILE),
      log,
    });
    shutdown.addKill(dev.stopNow);
    shutdown.add('Temporal dev server', dev.stop, { last: true, withinMs: LAST_STEPS_WITHIN_MS });
    temporalAddress = dev.address;
    temporalUi = dev.uiUrl;
    // The SDK's download of the dev server creates its history with the default modes.
    securePrivateDataDir(config.dataDir);
  }
  const temporal = await connectTemporalClient(temporalAddress, config.temporal.namespace, { timeoutMs: config.temporal.timeoutMs });
  shutdown.add('Temporal client', temporal.close, { withinMs: 2_000 });

  const secret = resolveJwtSecret(config);
  const jwt = new JwtSigner(secret);
  const resourceTokens = new ResourceTokens(secret);
  return { orm, temporal: temporal.client, temporalAddress, temporalUi, jwt, resourceTokens, serviceSecret: secret };
}
