import { gzipSync } from 'node:zlib';
import type { Logger } from 'pino';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import type { BlobStore } from '../../../blobs/blobStore.ts';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import { manifestKey, partKey, type RecordedPage, type RecordingManifest, scrubSecrets } from '../../recordings/recordingFiles.ts';
import { RECORDER_BINDING, RECORDER_CONTROL, RECORDER_READY, RECORDER_WORLD, recorderLoader, recorderSource } from './recorderWorld.ts';

/** A part is written once this much (uncompressed) waits, or `PART_MS` after its first batch. */
const PART_BYTES = 512 * 1024;
const PART_MS = 5_000;
/** How long a stop waits for the pages' last batches. */
const FINAL_FLUSH_MS = 1_000;
/** Secrets shorter than this are not looked for in the recording (as in the browser's log). */
const MIN_SECRET_LENGTH = 4;

export type RecorderOptions = {
  resourceId: string;
  blobs: BlobStore;
  /** RECORDING_MAX_BYTES: compressed bytes this browser's recording may take. */
  maxBytes: number;
  /** A line of the browser's own log (the note that recording stopped). */
  note: (entry: NewLogEntry) => void;
  log: Logger;
};

/** One recorded page: the host's CDP session on it, and what waits to be written. */
type PageRecording = {
  record: RecordedPage;
  session: CDPSession;
  /** The recorder world's execution contexts (one per document of the page). */
  contexts: Set<number>;
  pending: string[];
  pendingBytes: number;
  timer?: NodeJS.Timeout;
};

/**
 * Records every page of one browser with rrweb (./recorderWorld.ts), from the host's own CDP
 * connection: the pages it has, and each page opened later (by a run, or by a user over CDP).
 * Events are scrubbed of the secrets it was told to hide, compressed and written to the blob store
 * as parts of each page, with a manifest, until `maxBytes`: past it, recording stops with a note
 * in the browser's log. Never throws into the browser's life: a page it cannot record is logged and skipped.
 */
export class BrowserRecorder {
  readonly #options: RecorderOptions;
  readonly #pages = new Map<Page, PageRecording>();
  readonly #manifest: RecordingManifest = { pages: [], bytes: 0, stopped: null };
  /** Every secret hidden while it recorded, kept: a page may print one later. */
  readonly #secrets = new Set<string>();
  /** Releases still held (`hide`): while any is, every input is masked in the pages. */
  #masking = 0;
  #writes: Promise<void> = Promise.resolve();
  #stopped = false;
  #onPage = (page: Page) => void this.#attach(page);
  #context: BrowserContext | undefined;

  constructor(options: RecorderOptions) {
    this.#options = options;
  }

  /** Starts on `context`'s pages, and every page it opens from now on; resolves once the pages it has are recorded. */
  async start(context: BrowserContext) {
    if (this.#context) return;
    this.#context = context;
    context.on('page', this.#onPage);
    await Promise.all(context.pages().map((page) => this.#attach(page)));
  }

  /**
   * Hides `values` (a run's secrets) in what is stored, and masks every input of the pages, until
   * the answered release is called. The values stay hidden in what is stored afterwards as well.
   */
  hide(values: readonly string[]): () => void {
    const added = values.filter((value) => value.length >= MIN_SECRET_LENGTH);
    for (const value of added) this.#secrets.add(value);
    if (added.length === 0) return () => {};
    this.#masking++;
    if (this.#masking === 1) this.#setMasking(true);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#masking--;
      if (this.#masking === 0) this.#setMasking(false);
    };
  }

  /** Writes what the pages still hold and stops; idempotent. */
  async stop() {
    if (this.#stopped) return this.#writes;
    this.#context?.off('page', this.#onPage);
    const pages = [...this.#pages.values()];
    // The last batches come through the binding, as every other batch; a page already closed (its
    // browser crashed, or it was closed) has none to send and is not waited for.
    const open = [...this.#pages].filter(([page]) => !page.isClosed()).map(([, recording]) => recording);
    if (open.length > 0)
      await Promise.race([
        Promise.all(open.flatMap((page) => [...page.contexts].map((id) => this.#call(page, id, 'flush()')))),
        new Promise((resolve) => setTimeout(resolve, FINAL_FLUSH_MS)),
      ]);
    this.#stopped = true;
    for (const page of pages) this.#writePart(page);
    return this.#writes;
  }

  async #attach(page: Page) {
    if (this.#stopped || this.#manifest.stopped || this.#pages.has(page) || page.isClosed()) return;
    const record: RecordedPage = { page: this.#pages.size, url: page.url(), started: '', ended: '', parts: 0, events: 0, bytes: 0 };
    let session: CDPSession;
    try {
      session = await page.context().newCDPSession(page);
    } catch (error) {
      this.#options.log.debug({ err: error, resourceId: this.#options.resourceId }, 'could not record a page');
      return;
    }
    const recording: PageRecording = { record, session, contexts: new Set(), pending: [], pendingBytes: 0 };
    this.#pages.set(page, recording);
    session.on('Runtime.executionContextDestroyed', ({ executionContextId }) => recording.contexts.delete(executionContextId));
    session.on('Runtime.executionContextsCleared', () => recording.contexts.clear());
    session.on('Runtime.bindingCalled', ({ name, payload, executionContextId }) => {
      if (name !== RECORDER_BINDING) return;
      // A document's loader says it is ready once the document loaded: the recorder is sent into its world then, and started with what to mask.
      if (payload === RECORDER_READY) {
        recording.contexts.add(executionContextId);
        void this.#call(recording, executionContextId, `start(${JSON.stringify({ maskAll: this.#masking > 0 })})`, recorderSource());
      } else this.#received(recording, payload);
    });
    page.once('close', () => this.#writePart(recording));
    try {
      // Sent at once, not one after the other: Chromium runs a session's commands in the order they
      // came, and a warm start's attach overlaps the client's first navigation (one round trip, not four).
      await Promise.all([
        session.send('Runtime.enable'),
        // Without the Page domain on, this session's scripts run only in the document it found (runImmediately), not in those that follow.
        session.send('Page.enable'),
        session.send('Runtime.addBinding', { name: RECORDER_BINDING, executionContextName: RECORDER_WORLD }),
        session.send('Page.addScriptToEvaluateOnNewDocument', {
          source: recorderLoader(),
          worldName: RECORDER_WORLD,
          runImmediately: true,
        }),
      ]);
    } catch (error) {
      // The page closed meanwhile, most likely: nothing of it to record.
      this.#options.log.debug({ err: error, resourceId: this.#options.resourceId }, 'could not start recording a page');
    }
  }

  /**
   * Calls the recorder world's control in one of the page's documents, after `before` (the recorder
   * itself, the first time); a document gone meanwhile is no failure.
   */
  async #call(page: PageRecording, contextId: number, call: string, before = '') {
    await page.session
      .send('Runtime.evaluate', { expression: `${before};globalThis.${RECORDER_CONTROL}?.${call}`, contextId })
      .catch(() => page.contexts.delete(contextId));
  }

  #setMasking(all: boolean) {
    for (const page of this.#pages.values()) for (const id of page.contexts) void this.#call(page, id, `mask(${all})`);
  }

  /** A batch of events from a page's recorder world. */
  #received(page: PageRecording, payload: string) {
    if (this.#stopped || this.#manifest.stopped) return;
    const scrubbed = scrubSecrets(payload, this.#secrets);
    let events: { type?: number; timestamp?: number; data?: { href?: unknown } }[];
    try {
      events = JSON.parse(scrubbed);
      if (!Array.isArray(events)) return;
    } catch {
      // Only a scrub can break it (a secret that is JSON syntax itself): the batch is dropped rather than kept whole.
      return;
    }
    const { record } = page;
    for (const event of events) {
      if (typeof event?.timestamp !== 'number') continue;
      const at = new Date(event.timestamp).toISOString();
      if (!record.started) record.started = at;
      record.ended = at;
      // rrweb's Meta event carries the page's address.
      if (event.type === 4 && typeof event.data?.href === 'string' && (!record.url || record.url === 'about:blank'))
        record.url = event.data.href;
    }
    record.events += events.length;
    page.pending.push(scrubbed);
    page.pendingBytes += scrubbed.length;
    if (page.pendingBytes >= PART_BYTES) this.#writePart(page);
    else page.timer ??= setTimeout(() => this.#writePart(page), PART_MS);
  }

  /** Compresses what `page` holds into its next part, and queues its write with the manifest's. */
  #writePart(page: PageRecording) {
    clearTimeout(page.timer);
    page.timer = undefined;
    if (page.pending.length === 0 || this.#manifest.stopped) return;
    const compressed = gzipSync(page.pending.join('\n'));
    page.pending = [];
    page.pendingBytes = 0;
    const { resourceId, maxBytes, blobs } = this.#options;
    if (this.#manifest.bytes + compressed.length > maxBytes) {
      this.#manifest.stopped = `the recording reached its bound of ${maxBytes} bytes (RECORDING_MAX_BYTES): recording stopped`;
      this.#options.note({ context: 'browser', severity: 'warn', message: this.#manifest.stopped, area: 'lifecycle' });
      this.#stopPages();
      this.#queue(() => blobs.put(manifestKey(resourceId), this.#manifestBytes()));
      return;
    }
    const part = page.record.parts;
    page.record.parts++;
    page.record.bytes += compressed.length;
    this.#manifest.bytes += compressed.length;
    if (!this.#manifest.pages.includes(page.record)) this.#manifest.pages.push(page.record);
    this.#queue(async () => {
      await blobs.put(partKey(resourceId, page.record.page, part), compressed);
      await blobs.put(manifestKey(resourceId), this.#manifestBytes());
    });
  }

  /** Past the bound: the pages' recorders stop, and no new document gets one. */
  #stopPages() {
    for (const page of this.#pages.values()) {
      for (const id of page.contexts) void this.#call(page, id, 'stop()');
      page.session.send('Runtime.removeBinding', { name: RECORDER_BINDING }).catch(() => {});
    }
    this.#context?.off('page', this.#onPage);
  }

  #manifestBytes() {
    return Buffer.from(JSON.stringify(this.#manifest));
  }

  /** Writes in order, one at a time; a failed write is logged, and the recording goes on. */
  #queue(write: () => Promise<void>) {
    this.#writes = this.#writes.then(write).catch((error: unknown) => {
      this.#options.log.warn({ err: error, resourceId: this.#options.resourceId }, 'could not store a part of a browser’s recording');
    });
  }
}
