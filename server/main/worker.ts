/** Production control worker: workflows and browser-less activities on the control queue. */
import { createControlWorker } from '../infra/temporal.ts';
import { createLogger } from '../logger.ts';
import { loadConfigOrExit } from './loadConfig.ts';
import { onShutdownSignal, startRuntime } from './runtime.ts';

const config = loadConfigOrExit();
const log = createLogger(config);
try {
  const runtime = await startRuntime(config, log, { embedded: false, migrate: false });
  const { worker, connection } = await createControlWorker(
    { config, orm: runtime.orm, log },
    { address: runtime.temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue },
  );
  const running = worker.run();
  log.info(`worker polling task queue ${config.temporal.taskQueue}`);
  onShutdownSignal(log, async () => {
    worker.shutdown();
    await running;
    await connection.close();
    await runtime.stop();
  });
} catch (error) {
  log.fatal({ err: error }, `could not start: ${(error as Error).message}`);
  process.exit(1);
}
