/**
 * `npm start`: api, control worker and a browser host in one
 * process, on embedded defaults: PostgreSQL and a Temporal dev server when their URLs are unset.
 */
import { buildApp } from '../app.ts';
import { startBrowserHost } from '../browsers/host/browserHost.ts';
import { runWorker } from '../infra/temporalRuntime.ts';
import { createLogger } from '../logger.ts';
import { bundleWorkflows, createControlWorker } from './controlWorker.ts';
import { loadConfigOrExit } from './loadConfig.ts';
import { type ProcessShutdown, runProcess, startRuntime } from './runtime.ts';

const config = loadConfigOrExit();
const log = createLogger(config);

/**
 * Ctrl-C must not keep someone at a terminal waiting: the browsers are stopped, not drained
 * (`BrowserHostStop`), each step has its deadline, and the embedded PostgreSQL and Temporal dev
 * server are stopped last within this too. Whatever is still under way after it is cut short.
 */
const STOP_WITHIN_MS = 9_000;

// npm cannot exec the service: it stays its parent, and the service must not outlive it (kill -9 of npm).
runProcess(log, startAll, { stopWithinMs: STOP_WITHIN_MS, endWithParent: config.startedByNpm });

// Stops run in reverse: the api first, then the browser host, the worker, the runtime.
async function startAll(shutdown: ProcessShutdown) {
  const runtime = await startRuntime(config, log, shutdown, { embedded: true, migrate: true });
  log.info('bundling workflow code');
  const workflowBundle = await bundleWorkflows();
  shutdown.throwIfRequested();
  const { worker, connection, client } = await createControlWorker(
    { config, orm: runtime.orm, log },
    { address: runtime.temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue, workflowBundle },
  );
  shutdown.add('worker', runWorker(worker, connection), { withinMs: 3_000 });
  log.info('starting the browser host');
  const host = await startBrowserHost({
    config,
    orm: runtime.orm,
    log,
    temporalAddress: runtime.temporalAddress,
    temporal: runtime.temporal,
  });
  // The api is closed by then, and the worker still runs: the browsers' workflows carry the stops out.
  // Its browsers' workflows get 5 s to stop them (BrowserHostStop); a second Ctrl-C kills them.
  shutdown.add('browser host', () => host.stop('stop'), { withinMs: 6_000 });
  shutdown.addKill(() => host.killBrowsers());
  const app = await buildApp({
    config,
    orm: runtime.orm,
    jwt: runtime.jwt,
    serviceSecret: runtime.serviceSecret,
    resourceTokens: runtime.resourceTokens,
    // The worker's own connection: workflow starts hand their first task straight to it.
    temporal: client,
    eagerStart: true,
    log,
  });
  shutdown.add('api', () => app.close(), { withinMs: 2_000 });
  await app.listen({ port: config.port, host: config.host });
  log.info(`API ready at ${config.publicUrl}/api  (docs ${config.publicUrl}/api/docs, console ${config.publicUrl}/)`);
  if (runtime.temporalUi) log.info(`Temporal UI at ${runtime.temporalUi}`);
}
