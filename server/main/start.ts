/**
 * `npm start`: api, control worker and a browser host in one
 * process, on embedded defaults: PostgreSQL and a Temporal dev server when their URLs are unset.
 */
import { buildApp } from '../app.ts';
import { startBrowserHost } from '../browsers/host/browserHost.ts';
import { bundleWorkflows, createControlWorker } from '../infra/temporal.ts';
import { createLogger } from '../logger.ts';
import { loadConfigOrExit } from './loadConfig.ts';
import { onShutdownSignal, startRuntime } from './runtime.ts';

const config = loadConfigOrExit();
const log = createLogger(config);

try {
  const runtime = await startRuntime(config, log, { embedded: true, migrate: true });
  log.info('bundling workflow code');
  const workflowBundle = await bundleWorkflows();
  const { worker, connection } = await createControlWorker(
    { config, orm: runtime.orm, log },
    { address: runtime.temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue, workflowBundle },
  );
  const running = worker.run();
  log.info('starting the browser host');
  const host = await startBrowserHost({ config, orm: runtime.orm, log, temporalAddress: runtime.temporalAddress });
  const app = await buildApp({
    config,
    orm: runtime.orm,
    jwt: runtime.jwt,
    serviceSecret: runtime.serviceSecret,
    resourceTokens: runtime.resourceTokens,
    temporal: runtime.temporal,
    log,
  });
  await app.listen({ port: config.port, host: config.host });
  log.info(`API ready at ${config.publicUrl}/api  (docs ${config.publicUrl}/api/docs)`);
  if (runtime.temporalUi) log.info(`Temporal UI at ${runtime.temporalUi}`);

  onShutdownSignal(log, async () => {
    // Every step runs even if an earlier one fails (embedded PostgreSQL stops itself on SIGINT).
    const steps: [string, () => Promise<unknown>][] = [
      ['api', () => app.close()],
      ['browser host', () => host.stop()],
      [
        'worker',
        async () => {
          worker.shutdown();
          await running;
          await connection.close();
        },
      ],
      ['runtime', () => runtime.stop()],
    ];
    for (const [name, step] of steps) {
      await step().catch((error: unknown) => log.warn({ err: error }, `stopping the ${name} failed`));
    }
  });
} catch (error) {
  log.fatal({ err: error }, `could not start: ${(error as Error).message}`);
  process.exit(1);
}
