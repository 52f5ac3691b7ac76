import type { MikroORM } from '@mikro-orm/postgresql';
import type { PipelineRun } from '../db/entities/index.ts';
import { appendLogsIn, logStreams, type NewLogEntry } from '../server/logs/logWriter.ts';
import type { Redactor } from '../server/logs/redact.ts';
import { runStatusLine, whileDatabaseDown } from './runNode.ts';

/** A batch of outputs and log lines is stored at most this long after its first entry. */
const STORE_EVERY_MS = 100;

/**
 * Stores a stretch's node outputs and log lines, in order, one transaction per batch (outputs
 * first, so a reader woken by a node's `done` line finds its outputs); `onStored(done)` tells how
 * many nodes are stored after each batch. A batch the database refuses for good (`whileDatabaseDown`
 * gave up) breaks the store: nothing later is written out of order, and `check` throws.
 */
export class StretchStore {
  readonly hide: Redactor;
  readonly #orm: MikroORM;
  readonly #run: PipelineRun;
  readonly #whileWaiting: () => void;
  readonly #onStored: (done: number) => void;
  #outputs: Record<string, unknown> = {};
  #entries: NewLogEntry[] = [];
  #done = 0;
  #timer: NodeJS.Timeout | undefined;
  #markRunning = false;
  #writing: Promise<void> = Promise.resolve();
  #broken: unknown;
  #closed = false;

  constructor(orm: MikroORM, run: PipelineRun, hide: Redactor, whileWaiting: () => void, onStored: (done: number) => void) {
    this.#orm = orm;
    this.#run = run;
    this.hide = hide;
    this.#whileWaiting = whileWaiting;
    this.#onStored = onStored;
  }

  log(entry: NewLogEntry) {
    if (this.#closed) return;
    this.#entries.push(entry);
    this.#schedule();
  }

  /** Node `index` of the stretch ended with `outputs` (redacted). */
  completed(index: number, path: string, outputs: unknown, line: NewLogEntry) {
    if (this.#closed) return;
    this.#outputs[path] = outputs;
    this.#done = index + 1;
    this.log(line);
  }

  check() {
    if (this.#broken) throw this.#broken;
  }

  /** Marks the run running (if it is still queued: an ended run keeps its end) with the next batch, written now. */
  markRunning() {
    this.#markRunning = true;
    return this.flush();
  }

  /** Writes what is pending; resolves once it and every earlier batch are stored. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#entries.length === 0 && Object.keys(this.#outputs).length === 0 && !this.#markRunning) return this.#writing;
    const batch = { outputs: this.#outputs, entries: this.#entries, done: this.#done, markRunning: this.#markRunning };
    this.#outputs = {};
    this.#entries = [];
    this.#markRunning = false;
    this.#writing = this.#writing.then(async () => {
      if (this.#broken) throw this.#broken;
      try {
        await whileDatabaseDown(() => this.#write(batch), this.#whileWaiting);
      } catch (error) {
        this.#broken = error;
        throw error;
      }
      if (batch.done) this.#onStored(batch.done);
    });
    return this.#writing;
  }

  /** Nothing more is taken (a node call of a stopped attempt may still log). */
  close() {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #schedule() {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      // A failed batch is seen by `check` and by the stretch's final flush.
      this.flush().catch(() => {});
    }, STORE_EVERY_MS);
  }

  async #write(batch: { outputs: Record<string, unknown>; entries: NewLogEntry[]; markRunning: boolean }) {
    const run = this.#run;
    await this.#orm.em.fork().transactional(async (tx) => {
      let entries = batch.entries;
      if (batch.markRunning) {
        // The row's lock orders this with the run's end: after it, nothing is marked or logged.
        const marked = await tx.getConnection().execute<{ id: string }[]>(
          `update pipeline_runs set status = 'running', evaluation = 'running', started_at = coalesce(started_at, now()), updated = now()
             where id = ? and status = 'queued' and finished_at is null returning id`,
          [run.id],
          'all',
          tx.getTransactionContext(),
        );
        if (marked.length) entries = [runStatusLine('run running', { status: 'running', evaluation: 'running' }), ...entries];
      }
      if (Object.keys(batch.outputs).length) {
        await tx
          .getConnection()
          .execute(
            `update pipeline_runs set node_outputs = node_outputs || ?::jsonb, updated = now() where id = ?`,
            [JSON.stringify(batch.outputs), run.id],
            'run',
            tx.getTransactionContext(),
          );
      }
      await appendLogsIn(tx, run.project.id, logStreams.run(run.id), entries, this.hide);
    });
  }
}
