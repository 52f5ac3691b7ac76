import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DestinationStream } from 'pino';
import { inject } from 'vitest';
import { initORM, migrate } from '../../db/orm.ts';
import { createScratchDatabase } from '../../scripts/scratch-database.ts';
import { buildApp } from '../../server/app.ts';
import { JwtSigner } from '../../server/auth/jwt.ts';
import { startBrowserHost } from '../../server/browsers/host/browserHost.ts';
import { RelayTokens } from '../../server/browsers/tokens/relayTokens.ts';
import { ResourceTokens } from '../../server/browsers/tokens/resourceTokens.ts';
import { parseConfig } from '../../server/config.ts';
import { freePort } from '../../server/infra/ports.ts';
import { connectTemporalClient } from '../../server/infra/temporalClient.ts';
import { createLogger } from '../../server/logger.ts';
import { createControlWorker } from '../../server/main/controlWorker.ts';
import { HttpClient } from './http.ts';
import { PAGE_HOST } from './pages.ts';
import { startSmtpSink } from './smtp.ts';

export const testDatabaseBase = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

let bundle: { code: string } | undefined;

/**
 * The real stack for one test file: a fresh PostgreSQL database with every migration, an SMTP
 * server that receives the mail, a control worker on its own task queue of the shared Temporal
 * dev server, and the app listening on a loopback port.
 */
export async function startTestStack(
  env: Record<string, string> = {},
  options: {
    browserHost?: boolean;
    /** false: no control worker in this process; the test serves the control queue itself. */
    controlWorker?: boolean;
    /** Where the app's log lines go (a test that reads them); LOG_LEVEL still applies. */
    logDestination?: DestinationStream;
    /** The database URL the stack uses, from the scratch database's (a test that puts a cuttable link in between). */
    databaseUrl?: (url: string) => string;
    /**
     * The app on the control worker's connection, starting workflows eagerly, as `npm start` runs
     * it (AppDeps.eagerStart); otherwise on a connection of its own, as an api process apart.
     */
    eagerStart?: boolean;
    /** A Temporal dev server of the test's own (one with a history file, as `npm start` runs it) instead of the shared one. */
    temporalAddress?: string;
    /** gRPC interceptors on the app's Temporal client, in place of its own retries (a test that injects faults). */
    temporalInterceptors?: NonNullable<Parameters<typeof connectTemporalClient>[2]>['interceptors'];
  } = {},
) {
  const port = await freePort();
  const database = await createScratchDatabase(testDatabaseBase, 'bftest');
  const databaseUrl = options.databaseUrl?.(database.url) ?? database.url;
  const smtp = await startSmtpSink();
  const taskQueue = `test-${randomBytes(6).toString('hex')}`;
  const temporalAddress = options.temporalAddress ?? inject('temporalAddress');
  const settings: Record<string, string> = {
    NODE_ENV: 'test',
    // A port known up front, so PUBLIC_URL (and the resource URLs built from it) is right.
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    BROWSER_HOST_ID: `host-${taskQueue}`,
    // No warm browsers unless a test asks: they would turn the cold starts tests expect warm. A
    // fixed pool (no demand above BROWSER_WARM_POOL) unless a test asks, for the same reason.
    BROWSER_WARM_POOL: '0',
    BROWSER_WARM_POOL_MAX: '0',
    BROWSER_WARM_RECENT: '0',
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'bf-stack-')),
    JWT_SECRET: randomBytes(32).toString('hex'),
    SMTP_URL: smtp.url,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ADMIN_EMAILS: 'admin@example.test',
    // Every test file signs in from 127.0.0.1 over and over; test/auth/rate-limits.test.ts turns them on.
    RATE_LIMITS: 'off',
    // The pages tests serve to the service's browsers (test/support/pages.ts, PAGE_HOST).
    BROWSER_ALLOWED_PRIVATE_DESTINATIONS: PAGE_HOST,
    ...env,
  };
  const config = parseConfig(settings);
  const log = createLogger(config, options.logDestination);
  const orm = await initORM(databaseUrl, {}, config.databaseTimeoutMs);
  await migrate(orm);
  const temporal = await connectTemporalClient(temporalAddress, config.temporal.namespace, {
    timeoutMs: config.temporal.timeoutMs,
    interceptors: options.temporalInterceptors,
  });
  bundle ??= { code: readFileSync(inject('workflowBundlePath'), 'utf8') };
  const control =
    options.controlWorker === false
      ? undefined
      : await createControlWorker(
          { config, orm, log },
          { address: temporalAddress, namespace: config.temporal.namespace, taskQueue, workflowBundle: bundle },
        );
  const running = control?.worker.run();
  // A browser host in this process, with its own id (and so its own queue and browsers folder).
  const browserHost = options.browserHost
    ? await startBrowserHost({ config, orm, log, temporalAddress, temporal: temporal.client })
    : undefined;
  const secret = config.jwtSecret as string;
  const app = await buildApp({
    config,
    orm,
    jwt: new JwtSigner(secret),
    serviceSecret: secret,
    resourceTokens: new ResourceTokens(secret),
    ...(options.eagerStart && control ? { temporal: control.client, eagerStart: true } : { temporal: temporal.client }),
    log,
  });
  // A test that must know the URL before the stack starts (OIDC redirect URIs) passes its own
  // PORT and PUBLIC_URL in `env`.
  await app.listen({ port: config.port, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${config.port}`;

  return {
    url,
    app,
    config,
    /** The environment `config` was parsed from: another process of the same service starts from it. */
    settings,
    orm,
    smtp,
    serviceSecret: secret,
    /** The relay tokens the app mints (for a test that calls a start's halves itself, or dials a relay). */
    relayTokens: new RelayTokens({ relaySecret: config.browsers.relaySecret, serviceSecret: secret }),
    temporal: temporal.client,
    /** The app's logger (for a test that calls the service's functions with the app's deps). */
    log,
    http: new HttpClient(url),
    browserHost,
    async close() {
      // Each step bounded: a component that does not stop is named in the output and the rest
      // still closes (the database is dropped), instead of the whole file failing on its hook.
      const step = async (name: string, work: () => unknown) => {
        const t0 = Date.now();
        let timer: NodeJS.Timeout | undefined;
        const done = await Promise.race([
          Promise.resolve(work()).then(() => true),
          new Promise<false>((resolve) => {
            timer = setTimeout(() => resolve(false), 30_000);
          }),
        ]);
        clearTimeout(timer);
        if (!done || Date.now() - t0 > 5_000)
          console.warn(`test stack: closing ${name} took ${done ? `${Date.now() - t0} ms` : 'over 30 s; went on'}`);
      };
      await step('the app', () => app.close());
      await step('the browser host', () => browserHost?.stop('kill'));
      control?.worker.shutdown();
      await step('the control worker', () => running);
      await step('the worker connection', () => control?.connection.close());
      await step('the Temporal client', () => temporal.close());
      await step('the ORM', () => orm.close(true));
      await step('the SMTP sink', () => smtp.close());
      await database.drop();
    },
  };
}

export type TestStack = Awaited<ReturnType<typeof startTestStack>>;
