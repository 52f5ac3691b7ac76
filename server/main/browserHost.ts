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
  // A drain lets browsers go on BROWSER_DRAIN_SECONDS, then gives their workflows 30 s to stop them.
  shutdown.add('browser host', () => host.stop(), { withinMs: (config.browsers.drainSeconds + 45) * 1000 });
  shutdown.addKill(() => host.killBrowsers());
});
