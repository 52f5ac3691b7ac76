import { setTimeout as sleep } from 'node:timers/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { PipelineRun } from '../db/entities/index.ts';
import { resolveJwtSecret } from '../server/auth/jwt.ts';
import type { Config } from '../server/config.ts';
import { isDatabaseUnavailable } from '../server/infra/databaseErrors.ts';
import { appendLogs, logStreams, type NewLogEntry } from '../server/logs/logWriter.ts';
import { NodeError } from '../server/pipelines/engine/nodeErrors.ts';
import { openRunSecrets, storedCookieValues } from '../server/pipelines/runSecrets.ts';

/**
 * How long a node's activity waits for a database that is out of reach, retrying with backoff,
 * before it gives up with `DatabaseUnavailable`. Such waits are the service's trouble, not the
 * node's: they never count as the node's failure or use up its `retries`. The workflow gives node
 * activities this much beyond the node's own timeout (`INFRASTRUCTURE_ALLOWANCE_MS`).
 */
const DATABASE_WAIT_MS = 90_000;

async function whileDatabaseDown<T>(work: () => Promise<T>): Promise<T> {
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
      heartbeatIfActivity();
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

/** One node of a run, as the workflow hands it to the activity that runs it. */
export type NodeCall = { runId: string; path: string; type: string; inputs: Record<string, unknown> };

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
export function createRunNodeContext({ orm, config }: { orm: MikroORM; config: Config }) {
  const serviceSecret = resolveJwtSecret(config);
  return async function withRunNode(
    call: NodeCall,
    execute: (
      inputs: Record<string, unknown>,
      log: (entry: NewLogEntry) => void,
      /** Every string the run hides (its secrets, the session's stored cookie values). */
      hidden: readonly string[],
    ) => Promise<Record<string, unknown>>,
  ) {
    const em = orm.em.fork();
    const run = await whileDatabaseDown(() => em.findOne(PipelineRun, { id: call.runId }, { populate: ['sealedSecrets', 'session'] }));
    if (!run) throw ApplicationFailure.nonRetryable(`run ${call.runId} does not exist`, 'RunMissing');
    // One redactor for everything this node writes: its outputs, log lines and error.
    const secrets = openRunSecrets(serviceSecret, run.sealedSecrets, storedCookieValues(run.session?.cookies));
    const hide = secrets.redactor;
    const stream = logStreams.run(run.id);
    const pending: NewLogEntry[] = [];
    const log = (entry: NewLogEntry) => pending.push(entry);
    const flush = () => {
      const entries = pending.splice(0);
      return whileDatabaseDown(() => appendLogs(orm.em.fork(), run.project.id, stream, entries, hide));
    };
    const started = Date.now();
    log({ context: call.path, severity: 'info', message: `${call.type} started`, area: 'node' });
    let outputs: Record<string, unknown>;
    try {
      outputs = await execute(secrets.reveal(call.inputs), log, secrets.hidden);
    } catch (error) {
      // Without NUL, which PostgreSQL refuses in text and jsonb (a page script may throw one).
      const message = hide.text(error instanceof Error ? error.message : String(error)).replaceAll('\u0000', '');
      log({ context: call.path, severity: 'error', message: `${call.type} failed: ${withheldMessage(run, message)}`, area: 'node' });
      await flush().catch(() => {});
      // A node's own errors carry a code and whether another attempt could help.
      if (error instanceof NodeError) throw ApplicationFailure.create({ message, type: error.code, nonRetryable: !error.retryable });
      const type = (error instanceof ApplicationFailure ? error.type : undefined) ?? 'node_failed';
      throw ApplicationFailure.create({ message, type, nonRetryable: error instanceof ApplicationFailure && Boolean(error.nonRetryable) });
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
    log({ context: call.path, severity: 'info', message: `${call.type} done in ${Date.now() - started} ms`, area: 'node' });
    await flush();
    return secrets.seal(outputs);
  };
}
