import { DefaultLogger, type LogLevel, type NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type { Logger } from 'pino';

// Apart from server/main/controlWorker.ts, which builds the control worker over every control
// activity: a browser host runs its worker without loading those (and the model code they reach).

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

/**
 * Runs `worker`; the answer stops it, then closes its connection, as one shutdown step. In this
 * order only: a connection closed while its worker still holds it (a Ctrl-C while the worker was
 * being created, or a worker stop out of time) refuses with `IllegalStateError: Cannot close
 * connection while Workers hold a reference to it`. A stop that runs out of time leaves both to
 * end with the process.
 */
export function runWorker(worker: Worker, connection: NativeConnection) {
  const running = worker.run();
  return async () => {
    try {
      worker.shutdown();
      await running;
    } finally {
      await connection.close();
    }
  };
}
