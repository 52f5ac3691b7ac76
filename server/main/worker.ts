/** Production control worker: workflows and browser-less activities on the control queue. */
import { runWorker } from '../infra/temporalRuntime.ts';
import { createLogger } from '../logger.ts';
import { createControlWorker } from './controlWorker.ts';
import { loadConfigOrExit } from './loadConfig.ts';
import { runProcess, startRuntime } from './runtime.ts';

const config = loadConfigOrExit();
const log = createLogger(config);
runProcess(log, async (shutdown) => {
  const runtime = await startRuntime(config, log, shutdown, { embedded: false, migrate: false });
  const { worker, connection } = await createControlWorker(
    { config, orm: runtime.orm, log },
    { address: runtime.temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue },
  );
  // Its activities are cancelled and waited for: 30 s, a container orchestrator's usual grace.
  shutdown.add('worker', runWorker(worker, connection), { withinMs: 30_000 });
  log.info(`worker polling task queue ${config.temporal.taskQueue}`);
});
