import type { Logger } from 'pino';
import type { BrowserContext, Page } from 'playwright-core';
import { isDatabaseUnavailable } from '../../../infra/databaseErrors.ts';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import { redactor } from '../../../logs/redact.ts';

/** Writes a resource's browser log lines; `secrets` are the values to hide in them. */
export type BrowserLogSink = (resourceId: string, projectId: string, entries: NewLogEntry[], secrets: string[]) => Promise<void>;

/** Lines wait this long for more before a batch is written. */
const FLUSH_DELAY_MS = 250;
/** At most this many lines go in one write (one statement: PostgreSQL takes 65535 parameters). */
const BATCH_LINES = 1_000;
/**
 * What one browser keeps while the database is out of reach, in characters of its lines (a few MB):
 * past it, further lines are counted, not kept, until a write goes through.
 */
export const BUFFER_BOUND_CHARS = 2_000_000;
/** A line is stored with at most this much of its message (server/logs/logWriter.ts cuts it there too). */
const MESSAGE_CHARS = 20_000;
/** Retries of a write the database did not take start at this delay and double up to the next. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

const sizeOf = (entry: NewLogEntry) =>
  entry.message.length + entry.context.length + entry.area.length + (entry.object ? JSON.stringify(entry.object).length : 0);

/**
 * One browser's own log (console, navigations, page errors, failed requests): lines are buffered
 * and written in batches, in order, to the resource that holds the browser, with the values it must
 * hide. A warm browser's lines wait in the buffer until a resource adopts it. A line leaves the
 * buffer only once it is written: while the database is out of reach the batch is retried (with
 * backoff, after the browser's stop too), and what comes past `BUFFER_BOUND_CHARS` meanwhile is
 * counted, then logged once with its count, in the host's log and in the browser's where the lines
 * are missing.
 */
export class BrowserLog {
  /** Values hidden in every line written: the session's cookie values and proxy password, a run's secrets. */
  secrets: string[] = [];
  readonly #owner: () => { resourceId: string; projectId: string };
  readonly #write: BrowserLogSink;
  readonly #log: Logger;
  /** Lines not written yet, oldest first; a write in flight takes its batch from the front and removes it once stored. */
  readonly #buffer: NewLogEntry[] = [];
  #bufferedChars = 0;
  /** Lines refused since the buffer filled up. */
  #dropped = 0;
  #flushTimer?: NodeJS.Timeout;
  #retryTimer?: NodeJS.Timeout;
  #retryDelay = 0;
  #writing?: Promise<void>;
  /** A flush asked for while one was writing: it runs once that one is done. */
  #next?: Promise<void>;

  /** `owner` is read at each write: a warm browser gets its resource (and project) on adoption. */
  constructor(owner: () => { resourceId: string; projectId: string }, write: BrowserLogSink, log: Logger) {
    this.#owner = owner;
    this.#write = write;
    this.#log = log;
  }

  push(entry: NewLogEntry) {
    const line = entry.message.length > MESSAGE_CHARS ? { ...entry, message: entry.message.slice(0, MESSAGE_CHARS) } : entry;
    const size = sizeOf(line);
    if (this.#dropped > 0 || this.#bufferedChars + size > BUFFER_BOUND_CHARS) {
      // Refused from here on until a write goes through: the lines kept stay whole and in order.
      this.#dropped++;
      return;
    }
    this.#buffer.push(line);
    this.#bufferedChars += size;
    // While a retry is due, it writes these lines too: no more attempts than its backoff allows.
    if (!this.#retryTimer) this.#flushTimer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
  }

  /**
   * Writes what is buffered, in batches, in order. Resolves once this attempt is over; it never
   * rejects: a batch the database did not take stays buffered and is retried.
   */
  flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#writing) {
      this.#next ??= this.#writing.then(() => {
        this.#next = undefined;
        return this.flush();
      });
      return this.#next;
    }
    this.#writing = this.#writeBuffered().finally(() => {
      this.#writing = undefined;
    });
    return this.#writing;
  }

  /** Writes what is buffered now, instead of when the pending batch is due. */
  async flushNow() {
    clearTimeout(this.#flushTimer);
    await this.flush();
  }

  async #writeBuffered() {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const { resourceId, projectId } = this.#owner();
    if (!resourceId) return; // a warm browser nobody adopted yet
    while (this.#buffer.length > 0) {
      const batch = this.#buffer.slice(0, BATCH_LINES);
      try {
        // A copy: a release may take a run's secrets out of the list while this batch is written.
        await this.#write(resourceId, projectId, batch, [...this.secrets]);
      } catch (error) {
        if (isDatabaseUnavailable(error)) {
          this.#retryLater(error, resourceId);
          return;
        }
        // Refused for good (its project deleted, say): retrying would not mend it.
        this.#log.warn({ err: error, resourceId, lines: batch.length }, 'could not write browser logs: the database refused them');
      }
      this.#taken(batch.length);
    }
    if (this.#retryDelay > 0) this.#log.info({ resourceId }, 'browser logs written again: the database is back');
    this.#retryDelay = 0;
    if (this.#dropped > 0) {
      const count = this.#dropped;
      this.#dropped = 0;
      this.#log.warn(
        { resourceId, count },
        `${count} browser log line(s) lost: the database was out of reach and the buffer was full (${BUFFER_BOUND_CHARS} characters)`,
      );
      this.push({
        context: 'browser',
        severity: 'warn',
        message: `${count} line(s) of this log were lost here: the database was out of reach for longer than the host could keep them`,
        area: 'lifecycle',
      });
    }
  }

  #taken(count: number) {
    for (const entry of this.#buffer.splice(0, count)) this.#bufferedChars -= sizeOf(entry);
  }

  #retryLater(error: unknown, resourceId: string) {
    if (this.#retryDelay === 0) {
      this.#log.warn(
        { err: error, resourceId },
        'could not write browser logs: they stay buffered and are retried until the database answers',
      );
    }
    this.#retryDelay = Math.min(RETRY_MAX_MS, this.#retryDelay ? this.#retryDelay * 2 : RETRY_FIRST_MS);
    // Unref'd: a host that exits while the database is away does not wait for it.
    this.#retryTimer = setTimeout(() => this.flush(), this.#retryDelay).unref();
  }

  /**
   * Hides `values` until the answered release is called. The release writes what is buffered
   * first; what is still buffered after (the database away) has the values taken out of it before
   * they leave the list, so no line logged meanwhile goes out without them hidden.
   */
  hide(values: readonly string[]): () => Promise<void> {
    const added = values.filter((value) => value.length > 0);
    if (!added.length) return async () => {};
    this.secrets.push(...added);
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.flushNow();
      if (this.#buffer.length > 0) {
        const hideAdded = redactor(added);
        for (const [index, entry] of this.#buffer.entries()) {
          const hidden = {
            ...entry,
            context: hideAdded.text(entry.context),
            message: hideAdded.text(entry.message),
            ...(entry.object ? { object: hideAdded.object(entry.object) as Record<string, unknown> } : {}),
          };
          this.#buffer[index] = hidden;
          this.#bufferedChars += sizeOf(hidden) - sizeOf(entry);
        }
      }
      for (const value of added) {
        const index = this.secrets.lastIndexOf(value);
        if (index >= 0) this.secrets.splice(index, 1);
      }
    };
  }
}

/** Sends the log lines of every page of `context` (those open now and those to come) to `push`. */
export function capturePageLogs(context: BrowserContext, push: (entry: NewLogEntry) => void) {
  const watchPage = (page: Page) => {
    // A page another CDP client opened may have navigated before this client saw it (the
    // 'page' event races the client's goto), so its first navigation would go unlogged.
    const seenAt = page.url();
    if (seenAt && seenAt !== 'about:blank') {
      push({ context: seenAt, severity: 'info', message: `navigated to ${seenAt}`, area: 'navigation' });
    }
    page.on('console', (message) => {
      const type = message.type();
      const severity = type === 'error' ? 'error' : type === 'warning' ? 'warn' : type === 'debug' ? 'debug' : 'info';
      push({ context: page.url() || 'about:blank', severity, message: message.text(), area: 'console' });
    });
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame())
        push({ context: frame.url(), severity: 'info', message: `navigated to ${frame.url()}`, area: 'navigation' });
    });
    page.on('pageerror', (error) => push({ context: page.url(), severity: 'error', message: error.message, area: 'page' }));
    page.on('crash', () => push({ context: page.url(), severity: 'error', message: 'the page crashed', area: 'page' }));
    page.on('requestfailed', (request) =>
      push({
        context: page.url(),
        severity: 'warn',
        message: `${request.method()} ${request.url()} failed: ${request.failure()?.errorText}`,
        area: 'network',
      }),
    );
  };
  context.pages().forEach(watchPage);
  context.on('page', watchPage);
}
