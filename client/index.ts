/**
 * The TypeScript SDK, package `@browserflow/client`: the router type and a client factory over it.
 *
 *   const bf = createBrowserflowClient({ url: 'http://localhost:3000', apiKey: process.env.BROWSERFLOW_API_KEY });
 *   const project = await bf.projects.get.query({ project: 'my-shop' });
 *
 * Waiting for an end: `bf.waitForRun(project, pipelineId, runId, {timeoutMs})`, `bf.waitForFunctionRun`, `bf.waitForAnalysis`,
 * `bf.waitForGeneration` answer the finished object or throw a `WaitTimedOut`.
 *
 * A run's pictures: `run.screenshots` lists them; `bf.screenshot(run.screenshots[0])` answers one's JPEG bytes.
 *
 * Every procedure of the REST API is here under the same name as in the router tree
 * (`root.info` is `GET /api`, `projects.get` is `GET /{project}/api`, …), with its input and
 * output types. Errors arrive as `TRPCClientError`; `error.data.httpStatus` is the status the REST
 * call would have answered and `error.data.domainCode` the `code` of its error body.
 */
import { createTRPCClient, httpBatchLink, isTRPCClientError, type TRPCClient, type TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from './appRouter.ts';

export { isTRPCClientError, TRPCClientError } from '@trpc/client';
export type { AppRouter };

/** Each procedure's input, by path: `RouterInputs['projects']['create']`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Each procedure's output, by path: `RouterOutputs['projects']['get']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

/** A failed call: `data.httpStatus` is the REST answer's status, `data.domainCode` its error `code`. */
export type BrowserflowError = TRPCClientError<AppRouter>;

/** Whether `cause` is a failed call of this client, with `data` typed by the service's error shape. */
export function isBrowserflowError(cause: unknown): cause is BrowserflowError {
  return isTRPCClientError<AppRouter>(cause);
}

export type BrowserflowClientOptions = {
  /** Where the service runs, e.g. `http://localhost:3000`; the client calls `<url>/trpc`. */
  url: string;
  /** An API key (`bfk_…`), sent as `x-api-key`. */
  apiKey?: string;
  /** A session token (the JWT from login), sent as `Authorization: Bearer`. */
  token?: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
};

/** A run, an analysis or a generation as its GET answers it. */
export type Run = RouterOutputs['pipelineRuns']['get'];
export type Analysis = RouterOutputs['agentJobs']['getAnalysis'];
export type Generation = RouterOutputs['agentJobs']['getGeneration'];
/** A function's execution, as its execute answers it and GET …/functions/{functionId}/runs/{runId}. */
export type FunctionExecution = RouterOutputs['functions']['getRun'];
/** A webhook endpoint, and one delivery of an event to it (docs/webhooks.md). */
export type WebhookEndpoint = RouterOutputs['webhooks']['get'];
export type WebhookDelivery = RouterOutputs['webhooks']['delivery'];
/** A picture of a run's page, as `run.screenshots` lists it (docs/pipelines.md, Screenshots). */
export type Screenshot = Run['screenshots'][number];
/**
 * A browser's recordings (docs/browsers.md, Recordings): `bf.resources.recordings.query(…)` lists
 * the recorded pages, `bf.resources.recording.query({…, page})` answers one's rrweb events.
 */
export type Recordings = RouterOutputs['resources']['recordings'];
export type RecordedPageEvents = RouterOutputs['resources']['recording'];

export type WaitOptions = {
  /** How long to wait in all, in milliseconds; default 120 000. */
  timeoutMs?: number;
  /** Aborting ends the wait (with the signal's reason); the work goes on. */
  signal?: AbortSignal;
};

/** The object did not finish within `timeoutMs`; `last` is how it was when the wait gave up. It goes on. */
export class WaitTimedOut<T = unknown> extends Error {
  override name = 'WaitTimedOut';
  readonly last: T;
  readonly timeoutMs: number;
  constructor(what: string, timeoutMs: number, last: T) {
    super(`${what} did not finish within ${timeoutMs} ms; it goes on (see \`last\` for how it was)`);
    this.last = last;
    this.timeoutMs = timeoutMs;
  }
}

/** Waiting for an end, on top of the procedures: GET polled with backoff (250 ms doubling to 2 s). */
export type BrowserflowWaits = {
  /** The run once it has ended (`status.pipeline` succeeded, failed or cancelled). */
  waitForRun(project: string, pipelineId: string, runId: string, options?: WaitOptions): Promise<Run>;
  /**
   * A function's execution once it has ended (an execute with `wait` that answered 202): its
   * `identifier` is the run id; the function's id is in the 202's `location`, or `functions.list`.
   */
  waitForFunctionRun(project: string, functionId: string, runId: string, options?: WaitOptions): Promise<FunctionExecution>;
  /** The analysis once its agent has stopped. */
  waitForAnalysis(project: string, analysisId: string, options?: WaitOptions): Promise<Analysis>;
  /** The generation once its agent has stopped. */
  waitForGeneration(project: string, generationId: string, options?: WaitOptions): Promise<Generation>;
};

/** What is not a procedure: a run's screenshot is a JPEG at its `url`, read with the client's credentials. */
export type BrowserflowFiles = {
  /** The JPEG of a screenshot (one of a run's `screenshots`, or its `url`). Throws on any answer but 200. */
  screenshot(shot: Pick<Screenshot, 'url'> | string): Promise<Uint8Array>;
  /** The bytes of a browser's downloaded file (one of `resources.downloads`, a `page.download` node's `file`, or its `url`). Throws on any answer but 200. */
  download(file: { url: string } | string): Promise<Uint8Array>;
};

export type BrowserflowClient = TRPCClient<AppRouter> & BrowserflowWaits & BrowserflowFiles;

const FIRST_POLL_MS = 250;
const LONGEST_POLL_MS = 2_000;

async function pollUntil<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, options: WaitOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  for (let pause = FIRST_POLL_MS; ; pause = Math.min(pause * 2, LONGEST_POLL_MS)) {
    options.signal?.throwIfAborted();
    const value = await read();
    if (done(value)) return value;
    const left = deadline - Date.now();
    if (left <= 0) throw new WaitTimedOut(what, timeoutMs, value);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(wake, Math.min(pause, left));
      function wake() {
        options.signal?.removeEventListener('abort', aborted);
        resolve();
      }
      function aborted() {
        clearTimeout(timer);
        reject(options.signal?.reason);
      }
      options.signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}

function waitsOn(client: TRPCClient<AppRouter>): BrowserflowWaits {
  return {
    waitForRun: (project, pipelineId, runId, options) =>
      pollUntil(
        `Run ${runId}`,
        () => client.pipelineRuns.get.query({ project, pipelineId, runId }),
        (run) => run.status.pipeline !== 'queued' && run.status.pipeline !== 'running',
        options,
      ),
    waitForFunctionRun: (project, functionId, runId, options) =>
      pollUntil(
        `Execution ${runId}`,
        () => client.functions.getRun.query({ project, functionId, runId }),
        (execution) => execution.result.status.pipeline !== 'queued' && execution.result.status.pipeline !== 'running',
        options,
      ),
    waitForAnalysis: (project, analysisId, options) =>
      pollUntil(
        `Analysis ${analysisId}`,
        () => client.agentJobs.getAnalysis.query({ project, analysisId }),
        (job) => job.agent === 'stopped',
        options,
      ),
    waitForGeneration: (project, generationId, options) =>
      pollUntil(
        `Generation ${generationId}`,
        () => client.agentJobs.getGeneration.query({ project, generationId }),
        (job) => job.agent === 'stopped',
        options,
      ),
  };
}

export function createBrowserflowClient(options: BrowserflowClientOptions): BrowserflowClient {
  if (options.apiKey && options.token) throw new Error('Give either apiKey or token, not both');
  const headers: Record<string, string> = {};
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const client = createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${options.url.replace(/\/+$/, '')}/trpc`,
        headers: () => headers,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ],
  });
  const bytesAt = async (url: string) => {
    const answer = await (options.fetch ?? fetch)(url, { headers });
    if (answer.status !== 200) throw new Error(`GET ${url} answered ${answer.status}: ${(await answer.text()).slice(0, 300)}`);
    return new Uint8Array(await answer.arrayBuffer());
  };
  const files: BrowserflowFiles = {
    screenshot: (shot) => bytesAt(typeof shot === 'string' ? shot : shot.url),
    download: (file) => bytesAt(typeof file === 'string' ? file : file.url),
  };
  // The procedures' proxy answers every name: the waits and the files are looked up first.
  const extras: Record<string, unknown> = { ...waitsOn(client), ...files };
  return new Proxy(client, {
    get: (target, key, receiver) => (Object.hasOwn(extras, key) ? extras[key as string] : Reflect.get(target, key, receiver)),
  }) as BrowserflowClient;
}
