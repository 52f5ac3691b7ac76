import { InterceptingCall, type Interceptor, ListenerBuilder, RequesterBuilder, status } from '@grpc/grpc-js';
import {
  Client,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type WorkflowClientInterceptor,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Project, User } from '../../db/entities/index.ts';
import type { Subject } from '../../server/auth/subject.ts';
import { executeFunction } from '../../server/functions/execute.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline, greetingSource, settledRun, startRun, userWithSession } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Under a burst of starts the Temporal dev server's history store falls behind: a start is done
 * on the server while its answer comes past the call's deadline (CI saw a 503 "the workflow
 * engine is unavailable" for it). Here the engine does every start it is asked, and the first
 * answer for each workflow comes back as DEADLINE_EXCEEDED. The app repeats the start, the repeat
 * joins what the first started, and the user sees nothing of it.
 */

const { StartWorkflowExecutionRequest, ExecuteMultiOperationRequest } = temporal.api.workflowservice.v1;
const starts: Record<string, (request: Buffer) => string | null | undefined> = {
  '/temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution': (request) =>
    StartWorkflowExecutionRequest.decode(request).workflowId,
  '/temporal.api.workflowservice.v1.WorkflowService/ExecuteMultiOperation': (request) =>
    ExecuteMultiOperationRequest.decode(request).operations?.[0]?.startWorkflow?.workflowId,
};

/** Workflow ids whose first start was answered late. */
const answeredLate = new Set<string>();

/** Sends the call on; the first start of each workflow id gets DEADLINE_EXCEEDED for its answer. */
const lateFirstAnswers: Interceptor = (options, nextCall) => {
  const workflowIdOf = starts[options.method_definition.path];
  if (!workflowIdOf) return new InterceptingCall(nextCall(options));
  let late = false;
  const listener = new ListenerBuilder()
    // Passed on (a listener that holds it holds the status too); a call whose status is not OK drops it.
    .withOnReceiveMessage((message, next) => next(message))
    .withOnReceiveStatus((received, next) => {
      next(late ? { ...received, code: status.DEADLINE_EXCEEDED, details: 'Deadline Exceeded (the test made the answer late)' } : received);
    })
    .build();
  const requester = new RequesterBuilder()
    .withStart((metadata, _listener, next) => next(metadata, listener))
    .withSendMessage((message: Buffer, next) => {
      const workflowId = workflowIdOf(message);
      if (workflowId && !answeredLate.has(workflowId)) {
        answeredLate.add(workflowId);
        late = true;
      }
      next(message);
    })
    .build();
  return new InterceptingCall(nextCall(options), requester);
};

const logLines: string[] = [];
let stack: TestStack;
let site: Awaited<ReturnType<typeof startTestSite>>;
let token: string;
let slug: string;
let sessionId: string;

beforeAll(async () => {
  stack = await startTestStack(
    { LOG_LEVEL: 'warn' },
    {
      browserHost: true,
      temporalInterceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), lateFirstAnswers],
      logDestination: { write: (line: string) => void logLines.push(line) },
    },
  );
  site = await startTestSite();
  ({ token, slug, sessionId } = await userWithSession(stack, 'late answers'));
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

/** A function answering the test site's greeting; answers its slug. */
async function createGreetingFunction(prefix: string) {
  const fnSlug = `${prefix}-${Date.now().toString(36)}`;
  const definition = { source: greetingSource(site.url), parameters: [], outputs: [{ name: 'greeting', refType: 'string' }] };
  const created = await stack.http.put(`/${slug}/api/functions`, { name: fnSlug, description: '', slug: fnSlug, definition }, { token });
  expect(created.status, created.text).toBe(200);
  return fnSlug;
}

describe('starts whose answer from the workflow engine comes late', () => {
  it('a browser start is repeated and answers the browser the first try started', async () => {
    const started = await stack.http.post(`/${slug}/api/sessions/${sessionId}/start`, undefined, { token });
    expect(started.status, started.text).toBe(200);
    expect(answeredLate).toContain(`browser-${started.body.id}`);
    const stopped = await stack.http.post(`/${slug}/api/sessions/${sessionId}/${started.body.id}/stop`, undefined, { token });
    expect(stopped.status, stopped.text).toBe(200);
  }, 60_000);

  it('a run start is repeated: the run and the browser it starts each run once, and it succeeds', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, greetingSource(site.url));
    const before = answeredLate.size;
    // A run that records starts a browser of its own (a plain one would be a call, in a context).
    const started = await stack.http.post(`/${slug}/api/pipelines/${pipelineId}/start`, { session: sessionId, record: true }, { token });
    expect(started.status, started.text).toBe(200);
    const runId = started.body.id as string;
    // The run's browser and the run itself: both first answers came late.
    expect(answeredLate.size - before).toBe(2);
    expect(answeredLate).toContain(`run-${runId}`);
    const run = await settledRun(stack, `/${slug}/api/pipelines/${pipelineId}/${runId}`, { token });
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.result).toEqual({ greeting: 'Hello from the test site' });
  }, 90_000);

  /** The runs' starts answered late since the first `before` of them. */
  const lateRuns = (before: number) => [...answeredLate].slice(before).filter((id) => id.startsWith('run-'));

  it('a call’s run start is repeated: the run runs once, in a context, and succeeds', async () => {
    const pipelineId = await createPipeline(stack, slug, { token }, greetingSource(site.url));
    const before = answeredLate.size;
    const { runId, runUrl } = await startRun(stack, slug, { token }, pipelineId, sessionId);
    // A call starts no browser workflow: the run's own start is the one answered late (the
    // project browser's usage reports start workflows of their own meanwhile, not counted).
    expect(lateRuns(before)).toEqual([`run-${runId}`]);
    const run = await settledRun(stack, runUrl, { token });
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.result).toEqual({ greeting: 'Hello from the test site' });
    expect(run.resources).toEqual([]);
  }, 90_000);

  it('a function execute (update-with-start) is repeated and answers the outputs', async () => {
    const fnSlug = await createGreetingFunction('late');
    const before = answeredLate.size;
    const done = await stack.http.post(`/${slug}/api/functions/slug/${fnSlug}/execute`, { args: {} }, { token });
    expect(done.status, done.text).toBe(200);
    expect(done.body.outputs).toEqual({ greeting: 'Hello from the test site' });
    // A call (docs/browsers.md, Contexts for calls): its run's update-with-start is the only start, answered late once.
    expect(lateRuns(before)).toEqual([`run-${done.body.identifier}`]);
  }, 90_000);

  it('the wait for a run’s end after an eager start is repeated too, and logged as the engine being slow', async () => {
    // The engine takes the runEnded update, but its first answer comes back late.
    const updatesAnsweredLate = new Set<string>();
    const lateUpdate: WorkflowClientInterceptor = {
      async startUpdate(input, next) {
        const output = await next(input);
        if (!updatesAnsweredLate.has(input.workflowExecution.workflowId)) {
          updatesAnsweredLate.add(input.workflowExecution.workflowId);
          throw new WorkflowUpdateRPCTimeoutOrCancelledError('Timed out waiting for the update (the test made the answer late)');
        }
        return output;
      },
    };
    // A connection of the worker's kind: eager starts need one (the engine answers them to a worker on it, or not eagerly).
    const connection = await NativeConnection.connect({ address: stack.settings.TEMPORAL_ADDRESS as string });
    const temporal = new Client({
      connection,
      namespace: stack.config.temporal.namespace,
      interceptors: { workflow: [lateUpdate] },
    });
    const fnSlug = await createGreetingFunction('eager');
    const em = stack.orm.em.fork();
    const project = await em.findOneOrFail(Project, { slug }, { populate: ['owner'] });
    const user = await em.findOneOrFail(User, { id: project.owner.id });
    const subject = { kind: 'session', account: { id: user.id, isAdmin: false, emailVerified: true }, user } as unknown as Subject;
    // As `npm start` runs it: the workflow started (eagerly), then its end awaited with the update.
    const execution = await executeFunction({ ...stack, temporal, eagerStart: true }, em, subject, project, fnSlug, {});
    expect(execution.outputs).toEqual({ greeting: 'Hello from the test site' });
    expect(updatesAnsweredLate).toContain(`run-${execution.identifier}`);
    const repeats = logLines.filter((line) => line.includes(`slow to answer the wait for the end of run ${execution.identifier}`));
    expect(repeats).toHaveLength(1);
    expect(JSON.parse(repeats[0] as string)).toMatchObject({ level: 40, try: 1 });
    await connection.close();
  }, 90_000);
});
