import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { User } from '../../db/entities/index.ts';
import { initORM, migrate } from '../../db/orm.ts';
import { createScratchDatabase } from '../../scripts/scratch-database.ts';
import { buildApp } from '../../server/app.ts';
import { JwtSigner } from '../../server/auth/jwt.ts';
import { startBrowserHost } from '../../server/browsers/host/browserHost.ts';
import { ResourceTokens } from '../../server/browsers/tokens/resourceTokens.ts';
import { parseConfig } from '../../server/config.ts';
import { startDevTemporal } from '../../server/infra/devTemporal.ts';
import { freePort } from '../../server/infra/ports.ts';
import { connectTemporalClient } from '../../server/infra/temporalClient.ts';
import { createLogger } from '../../server/logger.ts';
import { bundleWorkflows, createControlWorker } from '../../server/main/controlWorker.ts';

/** Where benchmarks serve the pages the service's browsers visit: allowed through the egress policy, nothing else on loopback is. */
export const BENCH_PAGE_HOST = '127.0.0.5';

/**
 * The whole service for a benchmark, as `npm start` runs it (api, control worker, browser host;
 * the api on the worker's connection, starting workflows eagerly) but on a scratch database and a
 * throw-away Temporal dev server (its history in `temporalHistoryFile` when given), plus a verified user with a project (`browserHost: false`: no
 * host in this process). With `splitApi`, a second
 * api on its own connection, as an api process apart from the worker runs (`splitBase`).
 * `stop` tears it all down.
 */
export async function startBenchStack(
  env: Record<string, string> = {},
  options: { splitApi?: boolean; browserHost?: boolean; temporalHistoryFile?: string } = {},
) {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  const log = createLogger({ logLevel: 'warn' });
  const database = await createScratchDatabase(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL, 'bench');
  cleanups.push(database.drop);
  const temporalServer = await startDevTemporal({
    cliPath: process.env.TEMPORAL_CLI_PATH,
    port: await freePort(),
    // In memory unless asked: `npm start` keeps it in a file, whose writes fall behind under load.
    dbFile: options.temporalHistoryFile,
    log,
  });
  cleanups.push(temporalServer.stop);
  const port = await freePort();
  const config = parseConfig({
    NODE_ENV: 'test',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: temporalServer.address,
    JWT_SECRET: randomBytes(32).toString('hex'),
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'bf-bench-')),
    LOG_LEVEL: 'warn',
    RATE_LIMITS: 'off',
    BROWSER_ALLOWED_PRIVATE_DESTINATIONS: BENCH_PAGE_HOST,
    ...env,
  });
  const orm = await initORM(database.url);
  cleanups.push(() => orm.close(true));
  await migrate(orm);
  const temporal = await connectTemporalClient(temporalServer.address, config.temporal.namespace);
  cleanups.push(temporal.close);
  const {
    worker,
    connection,
    client: workerClient,
  } = await createControlWorker(
    { config, orm, log },
    {
      address: temporalServer.address,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      workflowBundle: await bundleWorkflows(),
    },
  );
  const running = worker.run();
  cleanups.push(async () => {
    worker.shutdown();
    await running;
    await connection.close();
  });
  // Without one, the benchmark runs its hosts as processes of their own.
  const host =
    options.browserHost === false
      ? undefined
      : await startBrowserHost({ config, orm, log, temporalAddress: temporalServer.address, temporal: temporal.client });
  if (host) cleanups.push(() => host.stop('kill'));
  const secret = config.jwtSecret as string;
  const appDeps = { config, orm, jwt: new JwtSigner(secret), serviceSecret: secret, resourceTokens: new ResourceTokens(secret), log };
  const app = await buildApp({ ...appDeps, temporal: workerClient, eagerStart: true });
  await app.listen({ port, host: '127.0.0.1' });
  cleanups.push(() => app.close());
  const base = `http://127.0.0.1:${port}`;
  let splitBase: string | undefined;
  if (options.splitApi) {
    const splitApp = await buildApp({ ...appDeps, temporal: temporal.client });
    const splitPort = await freePort();
    await splitApp.listen({ port: splitPort, host: '127.0.0.1' });
    cleanups.push(() => splitApp.close());
    splitBase = `http://127.0.0.1:${splitPort}`;
  }

  /** A JSON request to the api (`at`: which one, the in-process one by default). */
  const call = async (method: string, url: string, token?: string, body?: unknown, at = base) => {
    const response = await fetch(`${at}${url}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${url} → ${response.status}: ${text}`);
    return JSON.parse(text);
  };
  const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
  const { token: first } = await call('POST', '/api/auth/register', undefined, {
    email,
    password: 'bench password 1',
    firstName: 'Bench',
    lastName: 'Mark',
  });
  await orm.em.fork().nativeUpdate(User, { email }, { emailVerified: true });
  const slug = `bench-${randomBytes(3).toString('hex')}`;
  await call('PUT', '/api/projects', first, { name: 'Bench', slug });
  return { base, splitBase, config, orm, host, temporal: temporal.client, call, token: first, slug, stop };
}

export function percentile(values: number[], p: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export function machineLine() {
  const cpus = os.cpus();
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}`;
}
