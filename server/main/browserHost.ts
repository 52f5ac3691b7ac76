/** Production browser host: runs Chromium for the browserSession workflows of its queue. */
import { startBrowserHost } from '../browsers/host/browserHost.ts';
import { createLogger } from '../logger.ts';
import { loadConfigOrExit } from './loadConfig.ts';
import { onShutdownSignal, startRuntime } from './runtime.ts';

const config = loadConfigOrExit();
const log = createLogger(config);
try {
  const runtime = await startRuntime(config, log, { embedded: false, migrate: false });
  const host = await startBrowserHost({ config, orm: runtime.orm, log, temporalAddress: runtime.temporalAddress });
  onShutdownSignal(log, async () => {
    await host.stop();
    await runtime.stop();
  });
} catch (error) {
  log.fatal({ err: error }, `could not start: ${(error as Error).message}`);
  process.exit(1);
}
