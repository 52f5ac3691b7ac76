import { setTimeout as sleep } from 'node:timers/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { PipelineRun } from '../db/entities/index.ts';
import { isDatabaseUnavailable } from '../server/infra/databaseErrors.ts';
import { appendLogs, logStreams, type NewLogEntry } from '../server/logs/logWriter.ts';
import type { Redactor } from '../server/logs/redact.ts';
import { NodeError } from '../server/pipelines/engine/nodeErrors.ts';
import { openRunSecrets, storedCookieValues } from '../server/pipelines/runSecrets.ts';
import { type NodeActivityCall, runFailures } from '../workflows/contracts/pipelineRun.ts';

/**
 * How long a node's activity waits for a database that is out of reach, retrying with backoff,
 * before it gives up with `DatabaseUnavailable`. Such waits are the service's trouble, not the
 * node's: they never count as the node's failure or use up its `retries`. The workflow gives node
 * activities this much beyond the node's own timeout (`INFRASTRUCTURE_ALLOWANCE_MS`).
 */
const DATABASE_WAIT_MS = 90_000;

export async function whileDatabaseDown<T>(work: () => Promise<T>, whileWaiting: () => void = heartbeatIfActivity): Promise<T> {
  const deadline = Date.now() + DATABASE_WAIT_MS;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await work();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      if (Date.now() + delay > deadline) {
        throw ApplicationFailure.create({
          message: 'the database stayed out of reach',
          type: 'DatabaseUnavailable',
          cause: error as Error,
        });
      }
      whileWaiting();
      await sleep(delay);
    }
  }
}

function heartbeatIfActivity() {
  try {
    Context.current().heartbeat();
  } catch {
    // not inside an activity (a test calling the wrapper directly)
  }
}

/** The log lines of a node's start, end and failure (`path` is its context), the same wherever it runs. */
export const nodeLines = {
  started: (path: string, type: string): NewLogEntry => ({ context: path, severity: 'info', message: `${type} started`, area: 'node' }),
  done: (path: string, type: string, ms: number): NewLogEntry => ({
    context: path,
    severity: 'info',
    message: `${type} done in ${ms} ms`,
    area: 'node',
  }),
  failed: (path: string, type: string, message: string): NewLogEntry => ({
    context: path,
    severity: 'error',
    message: `${type} failed: ${message}`,
    area: 'node',
  }),
};

/** The log line of a run's status change; the run's log stream ends after the one of its end. */
export function runStatusLine(message: string, status: { status: string; evaluation: string }): NewLogEntry {
  const severity = status.status === 'failed' ? 'error' : status.status === 'cancelled' ? 'warn' : 'info';
  return { context: 'run', severity, message, area: 'run', object: { status: status.status, evaluation: status.evaluation } };
}

/**
 * A node's error as the run keeps it: the message without the run's secrets or NUL (PostgreSQL
 * refuses it in text and jsonb; a page script may throw one), a code (the failure type Temporal
 * records), and whether another attempt could help.
 */
export function nodeFailure(error: unknown, hide?: Redactor) {
  const text = error instanceof Error ? error.message : String(error);
  const message = (hide ? hide.text(text) : text).replaceAll('\u0000', '');
  if (error instanceof NodeError) return { message, code: error.code as string, retryable: error.retryable };
  if (error instanceof ApplicationFailure) return { message, code: error.type ?? runFailures.nodeFailed, retryable: !error.nonRetryable };
  return { message, code: runFailures.nodeFailed, retryable: true };
}

/** A run with its secrets opened (server/pipelines/runSecrets.ts), for the activity that runs its nodes; waits out the database. */
export async function openRun(orm: MikroORM, serviceSecret: string, runId: string, whileWaiting?: () => void) {
  const em = orm.em.fork();
  const run = await whileDatabaseDown(
    () => em.findOne(PipelineRun, { id: runId }, { populate: ['sealedSecrets', 'session'] }),
    whileWaiting,
  );
  if (!run) throw ApplicationFailure.nonRetryable(`run ${runId} does not exist`, 'RunMissing');
  return { em, run, secrets: openRunSecrets(serviceSecret, run.sealedSecrets, storedCookieValues(run.session?.cookies)) };
}

/**
 * A run that read cookies shows its error message only to callers who may read the session's
 * cookies (server/trpc/routers/pipelineRuns.ts); its log, open to pipelines.read, leaves it out.
 */
export const withheldMessage = (run: { readsCookies: boolean }, message: string) =>
  run.readsCookies ? 'the message is in the run’s error (shown to who may read the session’s cookies)' : message;

/**
 * What every node activity does around the node itself, on whichever worker runs it: reveal
 * the run's secrets in the inputs, log start and end, store the outputs redacted, hand them back
 * to the workflow with the values that hold a secret sealed (so the next node gets the real
 * value and history only ciphertext), and turn a failure into one that names the node without
 * leaking a secret.
 */
export function createRunNodeContext({ orm, serviceSecret }: { orm: MikroORM; serviceSecret: string }) {
  return async function withRunNode(
    call: NodeActivityCall,
    execute: (
      inputs: Record<string, unknown>,
      log: (entry: NewLogEntry) => void,
      /** Every string the run hides (its secrets, the session's stored cookie values). */
      hidden: readonly string[],
    ) => Promise<Record<string, unknown>>,
  ) {
    const { em, run, secrets } = await openRun(orm, serviceSecret, call.runId);
    // One redactor for everything this node writes: its outputs, log lines and error.
    const hide = secrets.redactor;
    const stream = logStreams.run(run.id);
    const pending: NewLogEntry[] = [];
    const log = (entry: NewLogEntry) => pending.push(entry);
    const flush = () => {
      const entries = pending.splice(0);
      return whileDatabaseDown(() => appendLogs(orm.em.fork(), run.project.id, stream, entries, hide));
    };
    const started = Date.now();
    log(nodeLines.started(call.path, call.type));
    let outputs: Record<string, unknown>;
    try {
      outputs = await execute(secrets.reveal(call.inputs), log, secrets.hidden);
    } catch (error) {
      const failure = nodeFailure(error, hide);
      log(nodeLines.failed(call.path, call.type, withheldMessage(run, failure.message)));
      await flush().catch(() => {});
      throw ApplicationFailure.create({ message: failure.message, type: failure.code, nonRetryable: !failure.retryable });
    }
    // The node ran: what is left is bookkeeping, and a database that is away for it is waited
    // for (running the node again would repeat what it did to the page).
    const stored = hide.object(outputs);
    await whileDatabaseDown(() =>
      em
        .getConnection()
        .execute(
          `update pipeline_runs set node_outputs = jsonb_set(node_outputs, ?::text[], ?::jsonb, true), updated = now() where id = ?`,
          [`{${JSON.stringify(call.path)}}`, JSON.stringify(stored), run.id],
        ),
    );
    log(nodeLines.done(call.path, call.type, Date.now() - started));
    await flush();
    return secrets.seal(outputs);
  };
}
