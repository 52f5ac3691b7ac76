import {
  Client,
  Connection,
  type ConnectionLike,
  type ConnectionOptions,
  isGrpcCancelledError,
  isGrpcDeadlineError,
  type WorkflowClientInterceptor,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ServiceUnavailable } from '../errors.ts';

/** TEMPORAL_TIMEOUT_SECONDS' default (server/config.ts), for callers without a config. */
export const DEFAULT_TEMPORAL_TIMEOUT_MS = 3_000;

/**
 * Deadlines on every call the client makes to start, signal, query, describe, cancel or update a
 * workflow: without one, an engine that stops answering without closing its connection (a
 * stalled disk, a partition, a SIGSTOP) holds the call, and the request behind it, for ever.
 * A call that got no answer by its own deadline fails as a 503 at once (`ServiceUnavailable`);
 * an engine that answers "too late" itself (DEADLINE_EXCEEDED from the server under a burst) is
 * alive, and its errors are left as they are (`repeatWhileEngineSlow` repeats those calls).
 *
 * An update waits for a worker on purpose (a browser launched and ready takes seconds), so it gets
 * no deadline of its own: it waits as long as the engine is alive, which a ping checks (a trivial
 * call within `timeoutMs`, one every `timeoutMs` from the update's start); the first ping without
 * an answer ends the update with a 503. The SDK's polls for an update's outcome after it and
 * `result()` are long polls the engine answers within its interval, outside these interceptors.
 */
export function engineDeadlines(connection: ConnectionLike, timeoutMs: number): WorkflowClientInterceptor {
  const unanswered = (error: unknown) =>
    new ServiceUnavailable(`The workflow engine did not answer within ${timeoutMs / 1000} s; try again shortly`, error);
  const call = async <T>(send: () => Promise<T>): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    try {
      return await connection.withDeadline(deadline, send);
    } catch (error) {
      if (Date.now() >= deadline && isUnanswered(error)) throw unanswered(error);
      throw error;
    }
  };
  const whileAlive = async <T>(send: () => Promise<T>): Promise<T> => {
    const stop = new AbortController();
    let silent: (error: unknown) => void = () => {};
    const silence = new Promise<never>((_resolve, reject) => {
      silent = reject;
    });
    const watch = async () => {
      while (!stop.signal.aborted) {
        const pinged = Date.now();
        try {
          await call(() => connection.workflowService.getSystemInfo({}));
        } catch (error) {
          if (error instanceof ServiceUnavailable && !stop.signal.aborted) {
            silent(error);
            stop.abort();
          }
        }
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, pinged + timeoutMs - Date.now())).unref());
      }
    };
    void watch();
    // A native connection (the worker's, `npm start`) cannot abort a call: it is left to end by
    // itself when the engine answers again, and the caller is answered now.
    const sent = connection.withAbortSignal(stop.signal, send);
    sent.catch(() => {});
    try {
      return await Promise.race([sent, silence]);
    } finally {
      stop.abort();
    }
  };
  return {
    start: (input, next) => call(() => next(input)),
    startWithDetails: (input, next) => call(() => next(input)),
    signal: (input, next) => call(() => next(input)),
    signalWithStart: (input, next) => call(() => next(input)),
    query: (input, next) => call(() => next(input)),
    terminate: (input, next) => call(() => next(input)),
    cancel: (input, next) => call(() => next(input)),
    describe: (input, next) => call(() => next(input)),
    startUpdate: (input, next) => whileAlive(() => next(input)),
    startUpdateWithStart: (input, next) => whileAlive(() => next(input)),
  };
}

function isUnanswered(error: unknown) {
  return error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isGrpcDeadlineError(error) || isGrpcCancelledError(error);
}

/**
 * The Temporal client the api and domain code start and signal workflows with. It is apart from
 * the workers (server/main/controlWorker.ts, the browser host's own), so a process that only
 * starts workflows loads no activity code. Its calls have deadlines (`engineDeadlines`).
 * `interceptors` replace the client's own gRPC retries (a test that injects faults passes them with its own).
 */
export async function connectTemporalClient(
  address: string,
  namespace: string,
  options: { timeoutMs?: number; interceptors?: ConnectionOptions['interceptors'] } = {},
) {
  const connection = await Connection.connect({ address, interceptors: options.interceptors });
  const client = new Client({
    connection,
    namespace,
    interceptors: { workflow: [engineDeadlines(connection, options.timeoutMs ?? DEFAULT_TEMPORAL_TIMEOUT_MS)] },
  });
  return { client, close: () => connection.close() };
}
