/** Production browser host: runs Chromium for the browserSession workflows of its queue. */
import { startBrowserHost } from '../browsers/host/browserHost.ts';
import { createLogger } from '../logger.ts';
import { loadConfigOrExit } from './loadConfig.ts';
import { runProcess, startRuntime } from './runtime.ts';

const config = loadConfigOrExit();
const log = createLogger(config);
runProcess(log, async (shutdown) => {
  const runtime = await startRuntime(config, log, shutdown, { embedded: false, migrate: false });
  const host = await startBrowserHost({
    config,
    orm: runtime.orm,
    log,
    temporalAddress: runtime.temporalAddress,
    temporal: runtime.temporal,
  });
  shutdown.add('browser host', () => host.stop());
});
