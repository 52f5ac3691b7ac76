/** Production api process: serves HTTP only. Needs DATABASE_URL and TEMPORAL_ADDRESS. */
import { buildApp } from '../app.ts';
import { createLogger } from '../logger.ts';
import { loadConfigOrExit } from './loadConfig.ts';
import { onShutdownSignal, startRuntime } from './runtime.ts';

const config = loadConfigOrExit();
const log = createLogger(config);
try {
  const runtime = await startRuntime(config, log, { embedded: false, migrate: false });
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
  onShutdownSignal(log, async () => {
    await app.close();
    await runtime.stop();
  });
} catch (error) {
  log.fatal({ err: error }, `could not start: ${(error as Error).message}`);
  process.exit(1);
}
