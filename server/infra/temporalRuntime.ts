import { DefaultLogger, type LogLevel, Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';

// Apart from ./temporal.ts, which builds the control worker over every control activity: a
// browser host installs the runtime without loading those (and the model code they reach).

let runtimeInstalled = false;

/** Routes the Temporal SDK's own log lines through our logger; once per process. */
export function installTemporalRuntime(log: Logger) {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'debug',
    WARN: 'warn',
    ERROR: 'error',
  };
  Runtime.install({
    // Our processes stop their workers themselves on SIGINT/SIGTERM, once, in order.
    shutdownSignals: [],
    logger: new DefaultLogger('INFO', (entry) => {
      // A browser host's worker serves activities only, by design: not worth a warning on every start.
      const level = entry.message.startsWith('No workflows registered') ? 'debug' : levels[entry.level];
      log[level]({ component: 'temporal-sdk', ...entry.meta }, entry.message);
    }),
  });
}
