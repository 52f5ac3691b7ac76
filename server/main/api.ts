/** Production api process: serves HTTP only. Needs DATABASE_URL and TEMPORAL_ADDRESS. */
import { buildApp } from '../app.ts';
import { createLogger } from '../logger.ts';
import { loadConfigOrExit } from './loadConfig.ts';
import { runProcess, startRuntime } from './runtime.ts';

const config = loadConfigOrExit();
const log = createLogger(config);
runProcess(log, async (shutdown) => {
  const runtime = await startRuntime(config, log, shutdown, { embedded: false, migrate: false });
  const app = await buildApp({
    config,
    orm: runtime.orm,
    jwt: runtime.jwt,
    serviceSecret: runtime.serviceSecret,
    resourceTokens: runtime.resourceTokens,
    temporal: runtime.temporal,
    log,
  });
  shutdown.add('api', () => app.close());
  await app.listen({ port: config.port, host: config.host });
});
