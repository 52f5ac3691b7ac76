import type { Logger } from 'pino';
import type { BrowserContext, Page } from 'playwright-core';
import type { NewLogEntry } from '../../../logs/logWriter.ts';

/** Writes a resource's browser log lines; `secrets` are the values to hide in them. */
export type BrowserLogSink = (resourceId: string, projectId: string, entries: NewLogEntry[], secrets: string[]) => Promise<void>;

/** Lines wait this long for more before a batch is written. */
const FLUSH_DELAY_MS = 250;

/**
 * One browser's own log (console, navigations, page errors, failed requests): lines are buffered
 * and written in batches to the resource that holds the browser, with the values it must hide.
 * A warm browser's lines wait in the buffer until a resource adopts it.
 */
export class BrowserLog {
  /** Values hidden in every line written: the session's cookie values and proxy password, a run's secrets. */
  secrets: string[] = [];
  readonly #owner: () => { resourceId: string; projectId: string };
  readonly #write: BrowserLogSink;
  readonly #log: Logger;
  readonly #buffer: NewLogEntry[] = [];
  #flushTimer?: NodeJS.Timeout;

  /** `owner` is read at each write: a warm browser gets its resource (and project) on adoption. */
  constructor(owner: () => { resourceId: string; projectId: string }, write: BrowserLogSink, log: Logger) {
    this.#owner = owner;
    this.#write = write;
    this.#log = log;
  }

  push(entry: NewLogEntry) {
    this.#buffer.push(entry);
    this.#flushTimer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
  }

  flush() {
    this.#flushTimer = undefined;
    const { resourceId, projectId } = this.#owner();
    if (!resourceId) return Promise.resolve(); // a warm browser nobody adopted yet

    const entries = this.#buffer.splice(0);
    if (!entries.length) return Promise.resolve();
    // A copy: a release may take a run's secrets out of the list while this batch is written.
    return this.#write(resourceId, projectId, entries, [...this.secrets]).catch((error) => {
      this.#log.warn({ err: error, resourceId }, 'could not write browser logs');
    });
  }

  /** Writes what is buffered now, instead of when the pending batch is due. */
  async flushNow() {
    clearTimeout(this.#flushTimer);
    await this.flush();
  }

  /**
   * Hides `values` until the answered release is called. The release writes what is buffered
   * first, so no line logged meanwhile goes out without them hidden.
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
