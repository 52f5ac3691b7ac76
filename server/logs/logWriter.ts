import type { EntityManager } from '@mikro-orm/postgresql';
import { type Redactor, redactor } from './redact.ts';

export type LogSeverity = 'debug' | 'info' | 'warn' | 'error';

export type NewLogEntry = {
  context: string;
  severity: LogSeverity;
  message: string;
  area: string;
  object?: Record<string, unknown> | null;
};

export const LOG_NOTIFY_CHANNEL = 'log_entries';

export const logStreams = {
  resource: (resourceId: string) => `resource:${resourceId}`,
  run: (runId: string) => `run:${runId}`,
  analysis: (jobId: string) => `analysis:${jobId}`,
  generation: (jobId: string) => `generation:${jobId}`,
};

/**
 * Appends entries to a stream with consecutive sequence numbers, redacting secrets first, and
 * wakes every api replica's SSE listeners through NOTIFY. The counter row is locked by the
 * upsert, so concurrent writers to one stream never share a number. `secrets` may be a redactor
 * the caller already built (a node activity builds one for all it writes).
 */
export async function appendLogs(
  em: EntityManager,
  projectId: string,
  stream: string,
  entries: NewLogEntry[],
  secrets: readonly string[] | Redactor = [],
) {
  if (entries.length === 0) return;
  // The redactor is made now, not inside the transaction: a caller may change its list once this returns a promise.
  const hide = isRedactor(secrets) ? secrets : redactor(secrets);
  await em.transactional((tx) => appendLogsIn(tx, projectId, stream, entries, hide));
}

/** `appendLogs` inside a transaction the caller holds, with whatever else it writes (`tx` from `em.transactional`). */
export async function appendLogsIn(
  tx: EntityManager,
  projectId: string,
  stream: string,
  entries: NewLogEntry[],
  secrets: readonly string[] | Redactor = [],
) {
  if (entries.length === 0) return;
  const hide = isRedactor(secrets) ? secrets : redactor(secrets);
  const conn = tx.getConnection();
  const [row] = await conn.execute<{ last_seq: number }[]>(
    `insert into log_streams (stream, last_seq) values (?, ?)
       on conflict (stream) do update set last_seq = log_streams.last_seq + excluded.last_seq
       returning last_seq`,
    [stream, entries.length],
    'all',
    tx.getTransactionContext(),
  );
  const first = (row?.last_seq ?? entries.length) - entries.length + 1;
  const values: unknown[] = [];
  const placeholders = entries.map((entry, i) => {
    values.push(
      projectId,
      stream,
      first + i,
      hide.text(entry.context).slice(0, 200),
      entry.severity,
      hide.text(entry.message).slice(0, 20_000),
      entry.area.slice(0, 60),
      entry.object ? JSON.stringify(hide.object(entry.object)) : null,
    );
    return '(?, ?, ?, ?, ?, ?, ?, ?, now())';
  });
  await conn.execute(
    `insert into log_entries (project_id, stream, seq, context, severity, message, area, object, created) values ${placeholders.join(', ')}`,
    values,
    'run',
    tx.getTransactionContext(),
  );
  await conn.execute(`select pg_notify(?, ?)`, [LOG_NOTIFY_CHANNEL, stream], 'run', tx.getTransactionContext());
}

const isRedactor = (secrets: readonly string[] | Redactor): secrets is Redactor => !Array.isArray(secrets);
