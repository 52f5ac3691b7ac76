import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/activity';
import { PipelineRun } from '../db/entities/index.ts';
import { resolveJwtSecret } from '../server/auth/jwt.ts';
import type { Config } from '../server/config.ts';
import { appendLogs, logStreams, type NewLogEntry } from '../server/logs/logWriter.ts';
import { executeNode } from '../server/pipelines/executors.ts';
import { NodeError } from '../server/pipelines/nodes/errors.ts';
import { openRunSecrets } from '../server/pipelines/runSecrets.ts';

export type NodeCall = { runId: string; path: string; type: string; inputs: Record<string, unknown> };
type RunStatus = { status: PipelineRun['status']; evaluation: PipelineRun['evaluation'] };

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
    execute: (inputs: Record<string, unknown>, log: (entry: NewLogEntry) => void) => Promise<Record<string, unknown>>,
  ) {
    const em = orm.em.fork();
    const run = await em.findOne(PipelineRun, { id: call.runId }, { populate: ['sealedSecrets'] });
    if (!run) throw ApplicationFailure.nonRetryable(`run ${call.runId} does not exist`, 'RunMissing');
    // One redactor for everything this node writes: its outputs, log lines and error.
    const secrets = openRunSecrets(serviceSecret, run.sealedSecrets);
    const hide = secrets.redactor;
    const stream = logStreams.run(run.id);
    const pending: NewLogEntry[] = [];
    const log = (entry: NewLogEntry) => pending.push(entry);
    const flush = () => appendLogs(orm.em.fork(), run.project.id, stream, pending.splice(0), hide);
    const started = Date.now();
    log({ context: call.path, severity: 'info', message: `${call.type} started`, area: 'node' });
    try {
      const outputs = await execute(secrets.reveal(call.inputs), log);
      const stored = hide.object(outputs);
      await em
        .getConnection()
        .execute(
          `update pipeline_runs set node_outputs = jsonb_set(node_outputs, ?::text[], ?::jsonb, true), updated = now() where id = ?`,
          [`{${JSON.stringify(call.path)}}`, JSON.stringify(stored), run.id],
        );
      log({ context: call.path, severity: 'info', message: `${call.type} done in ${Date.now() - started} ms`, area: 'node' });
      await flush();
      return secrets.seal(outputs);
    } catch (error) {
      const message = hide.text(error instanceof Error ? error.message : String(error));
      log({ context: call.path, severity: 'error', message: `${call.type} failed: ${message}`, area: 'node' });
      await flush().catch(() => {});
      // A node's own errors carry a code and whether another attempt could help.
      if (error instanceof NodeError) throw ApplicationFailure.create({ message, type: error.code, nonRetryable: !error.retryable });
      const type = (error instanceof ApplicationFailure ? error.type : undefined) ?? 'node_failed';
      throw ApplicationFailure.create({ message, type, nonRetryable: error instanceof ApplicationFailure && Boolean(error.nonRetryable) });
    }
  };
}

/** Control-queue activities of the pipelineRun workflow. */
export function createPipelineRunActivities(deps: { orm: MikroORM; config: Config }) {
  const { orm } = deps;
  const serviceSecret = resolveJwtSecret(deps.config);
  const withRunNode = createRunNodeContext(deps);

  async function update(
    runId: string,
    patch: Partial<RunStatus> & { result?: Record<string, unknown>; error?: PipelineRun['error'] },
    message: string,
  ) {
    const em = orm.em.fork();
    const run = await em.findOne(PipelineRun, { id: runId });
    if (!run) return;
    if (patch.status) run.status = patch.status;
    if (patch.evaluation) run.evaluation = patch.evaluation;
    if (patch.status === 'running') run.startedAt ??= new Date();
    if (patch.result !== undefined) run.result = patch.result;
    if (patch.error !== undefined) run.error = patch.error;
    if (patch.status && patch.status !== 'running' && patch.status !== 'queued') run.finishedAt ??= new Date();
    await em.flush();
    const severity = patch.status === 'failed' ? 'error' : patch.status === 'cancelled' ? 'warn' : 'info';
    await appendLogs(em, run.project.id, logStreams.run(run.id), [
      { context: 'run', severity, message, area: 'run', object: { status: run.status, evaluation: run.evaluation } },
    ]);
  }

  return {
    async markRun(runId: string, patch: RunStatus) {
      await update(runId, patch, `run ${patch.status}`);
    },

    async finishRun(
      runId: string,
      patch: RunStatus & { result?: Record<string, unknown>; error?: { node: string | null; code: string; message: string } },
    ) {
      const em = orm.em.fork();
      const run = await em.findOne(PipelineRun, { id: runId }, { populate: ['sealedSecrets'] });
      const secrets = openRunSecrets(serviceSecret, run?.sealedSecrets);
      // The result holds sealed values where it holds secrets: opened, then redacted for storing.
      const result = patch.result ? (secrets.redactor.object(secrets.reveal(patch.result)) as Record<string, unknown>) : undefined;
      const error = patch.error ? { ...patch.error, message: secrets.redactor.text(patch.error.message) } : undefined;
      const message =
        patch.status === 'failed' && error
          ? `run failed${error.node ? ` at node ${error.node}` : ''}: ${error.message}`
          : `run ${patch.status}`;
      await update(runId, { ...patch, result, error }, message);
    },

    async runPureNode(call: NodeCall) {
      return withRunNode(call, (inputs, log) => executeNode(call.type, inputs, { log }));
    },
  };
}
