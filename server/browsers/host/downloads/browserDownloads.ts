import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import { downloadBehaviorMethods, ruleDownloadBehavior } from '../../downloads/downloadBehavior.ts';
import type { LaunchedBrowser } from '../chromium/chromiumProcess.ts';
import { findProcessesMentioning } from '../chromium/processes.ts';
import type { CdpMux } from '../relay/cdpMux.ts';

/**
 * A browser's downloads, as its host sees them (docs/browsers.md, Downloads).
 *
 * Where they land: the browser's downloads folder (`LaunchedBrowser.downloadsDir`), in its profile,
 * which inside the sandbox is the profile's tmpfs of BROWSER_DISK_LIMIT_MB: the kernel bounds it
 * and the host's disk never sees a byte. The host sets the behaviour itself, on its own root
 * session of the browser's CDP pipe, for the default context at once and for every context as it
 * is created; every `setDownloadBehavior` any client sends through the pipe (the api's guarded
 * remoteUrl clients, the host's own Playwright) has its folder replaced by this one
 * (`ruleDownloadBehavior`). Chromium names each file by its GUID.
 *
 * What happens to each: the host follows `Browser.downloadWillBegin` / `downloadProgress`; one
 * that would take the browser past DOWNLOAD_MAX_BYTES (what it downloaded since it started,
 * files in progress included) is cancelled and the browser's log says so; a finished one is read
 * out of the browser's mount namespace (`/proc/<pid>/root`, the host's view into it), handed to
 * `keep` (the blob store, server/browsers/downloads/downloadFiles.ts) and removed from the folder.
 */

/** What the host does with a finished file: stores it for the resource that holds the browser now. */
export type KeepDownload = (file: {
  resourceId: string;
  name: string;
  sourceUrl: string;
  data: Buffer;
  runId?: string;
}) => Promise<DownloadedFile>;

/** A file kept, as a `page.download` node answers it. */
export type DownloadedFile = { id: string; name: string; size: number; mimeType: string; url: string };

export type DownloadOptions = {
  /** DOWNLOAD_MAX_BYTES: the most one browser may download in its life. */
  maxBytes: number;
  keep: KeepDownload;
};

type Download = {
  guid: string;
  frameId: string;
  url: string;
  name: string;
  received: number;
  cancelled?: string;
  waiter?: Waiter;
};

type Waiter = {
  frameIds: ReadonlySet<string>;
  runId?: string;
  resolve(file: DownloadedFile): void;
  reject(error: Error): void;
};

/** Why a download a node waits for did not come to a file. */
export class DownloadFailed extends Error {}

export class BrowserDownloads {
  readonly #browser: LaunchedBrowser & { downloadsDir: string; mux: CdpMux };
  readonly #options: DownloadOptions;
  readonly #owner: () => { resourceId: string };
  readonly #log: (entry: NewLogEntry) => void;
  readonly #hostLog: Logger;
  readonly #downloads = new Map<string, Download>();
  readonly #waiters = new Set<Waiter>();
  /** Bytes of the files this browser finished (kept or not). */
  #done = 0;

  private constructor(
    browser: LaunchedBrowser & { downloadsDir: string; mux: CdpMux },
    options: DownloadOptions,
    owner: () => { resourceId: string },
    log: (entry: NewLogEntry) => void,
    hostLog: Logger,
  ) {
    this.#browser = browser;
    this.#options = options;
    this.#owner = owner;
    this.#log = log;
    this.#hostLog = hostLog;
  }

  /**
   * Takes over the downloads of a browser this host launched (none for one running elsewhere):
   * every client's download behaviour is ruled from now on, and the default context's is set.
   */
  static watch(
    browser: LaunchedBrowser,
    options: DownloadOptions,
    owner: () => { resourceId: string },
    log: (entry: NewLogEntry) => void,
    hostLog: Logger,
  ) {
    const { mux, downloadsDir } = browser;
    if (browser.external || !mux || !downloadsDir) return undefined;
    const downloads = new BrowserDownloads({ ...browser, mux, downloadsDir }, options, owner, log, hostLog);
    mux.hooks = {
      command: (message) => downloads.#rule(message),
      answered: (method, result) => {
        const contextId = (result as { browserContextId?: unknown }).browserContextId;
        if (method === 'Target.createBrowserContext' && typeof contextId === 'string') downloads.#allow(contextId);
      },
      event: (method, params) => downloads.#event(method, params),
    };
    downloads.#allow();
    return downloads;
  }

  /** Every client's `setDownloadBehavior` names this browser's folder (also inside an old-style `sendMessageToTarget`). */
  #rule(message: { method?: string; params?: Record<string, unknown> }) {
    if (!message.params) return;
    if (message.method && downloadBehaviorMethods.has(message.method)) ruleDownloadBehavior(message.params, this.#browser.downloadsDir);
    if (message.method === 'Target.sendMessageToTarget' && typeof message.params.message === 'string') {
      try {
        const inner = JSON.parse(message.params.message);
        if (inner && typeof inner === 'object' && downloadBehaviorMethods.has(inner.method)) {
          inner.params = inner.params && typeof inner.params === 'object' ? inner.params : {};
          ruleDownloadBehavior(inner.params, this.#browser.downloadsDir);
          message.params.message = JSON.stringify(inner);
        }
      } catch {
        // not JSON: Chromium refuses it
      }
    }
  }

  /** Downloads of a context (the default one without an id) allowed into the folder, their events on the host's session. */
  #allow(browserContextId?: string) {
    const params = {
      behavior: 'allowAndName',
      downloadPath: this.#browser.downloadsDir,
      eventsEnabled: true,
      ...(browserContextId ? { browserContextId } : {}),
    };
    this.#browser.mux.command('Browser.setDownloadBehavior', params, 10_000).catch((error: unknown) => {
      this.#hostLog.warn({ err: error, browserContextId }, 'could not set a browser context’s download behaviour');
    });
  }

  #event(method: string, params: Record<string, unknown>) {
    if (method === 'Browser.downloadWillBegin') {
      const guid = String(params.guid ?? '');
      if (!guid || this.#downloads.has(guid)) return;
      const download: Download = {
        guid,
        frameId: String(params.frameId ?? ''),
        url: String(params.url ?? ''),
        name: safeName(String(params.suggestedFilename ?? '')),
        received: 0,
      };
      this.#downloads.set(guid, download);
      for (const waiter of this.#waiters) {
        if (waiter.frameIds.has(download.frameId)) {
          this.#waiters.delete(waiter);
          download.waiter = waiter;
          break;
        }
      }
      return;
    }
    if (method !== 'Browser.downloadProgress') return;
    const download = this.#downloads.get(String(params.guid ?? ''));
    if (!download) return;
    const state = params.state;
    const total = Number(params.totalBytes) || 0;
    download.received = Math.max(Number(params.receivedBytes) || 0, state === 'inProgress' ? total : 0);
    if (state === 'inProgress') {
      if (!download.cancelled && this.#used() > this.#options.maxBytes) void this.#cancel(download);
      return;
    }
    this.#downloads.delete(download.guid);
    if (state === 'completed' && !download.cancelled)
      void this.#finish(download, typeof params.filePath === 'string' ? params.filePath : undefined);
    else {
      this.#remove(download.guid);
      download.waiter?.reject(new DownloadFailed(download.cancelled ?? `the download of ${download.name} was cancelled or failed`));
    }
  }

  /** What this browser downloaded: finished files and those in progress, as far as they came. */
  #used() {
    let used = this.#done;
    for (const download of this.#downloads.values()) used += download.received;
    return used;
  }

  async #cancel(download: Download) {
    const limit = this.#options.maxBytes;
    download.cancelled = `the download of ${download.name} was cancelled: it would take the browser past its ${limit} bytes of downloads (DOWNLOAD_MAX_BYTES)`;
    this.#log({ context: 'browser', severity: 'warn', message: download.cancelled, area: 'downloads' });
    this.#hostLog.warn({ resourceId: this.#owner().resourceId, limit }, 'a download went past DOWNLOAD_MAX_BYTES: cancelled');
    const { mux } = this.#browser;
    // The event names no context: the default one first, then each other until one knows it.
    const cancelled = await mux.command('Browser.cancelDownload', { guid: download.guid }, 5_000).then(
      () => true,
      () => false,
    );
    if (cancelled) return;
    const contexts = await mux.command('Target.getBrowserContexts', {}, 5_000).catch(() => undefined);
    for (const browserContextId of (contexts?.result as { browserContextIds?: string[] } | undefined)?.browserContextIds ?? []) {
      if (
        await mux.command('Browser.cancelDownload', { guid: download.guid, browserContextId }, 5_000).then(
          () => true,
          () => false,
        )
      )
        return;
    }
  }

  async #finish(download: Download, filePath: string | undefined) {
    const inside =
      filePath && path.dirname(filePath) === this.#browser.downloadsDir ? filePath : path.join(this.#browser.downloadsDir, download.guid);
    try {
      const data = this.#read(inside);
      this.#done += data.length;
      this.#remove(download.guid);
      const { resourceId } = this.#owner();
      // A warm browser nobody holds yet has no one to keep it for.
      if (!resourceId) throw new DownloadFailed(`the download of ${download.name} finished before the browser was a session's`);
      const file = await this.#options.keep({
        resourceId,
        name: download.name,
        sourceUrl: download.url,
        data,
        runId: download.waiter?.runId,
      });
      this.#log({ context: 'browser', severity: 'info', message: `downloaded ${file.name} (${file.size} bytes)`, area: 'downloads' });
      download.waiter?.resolve(file);
    } catch (error) {
      this.#hostLog.warn({ err: error, resourceId: this.#owner().resourceId }, 'could not keep a finished download');
      const reason = error instanceof DownloadFailed ? error.message : `the download of ${download.name} could not be kept`;
      this.#log({ context: 'browser', severity: 'warn', message: reason, area: 'downloads' });
      download.waiter?.reject(new DownloadFailed(reason));
    }
  }

  /**
   * Where the host reads a file the browser sees at `inside`: without the sandbox, there; in it,
   * through the root of a process of the browser (its mount namespace, where the profile's tmpfs
   * is: the host's own profile folder stays empty).
   */
  #hostPath(inside: string) {
    if (existsSync(inside)) return inside;
    for (const pid of findProcessesMentioning(`--user-data-dir=${this.#browser.userDataDir}`)) {
      const seen = `/proc/${pid}/root${inside}`;
      try {
        if (statSync(seen).isFile()) return seen;
      } catch {
        // another process (the sandbox's outer one sees the host's empty folder), or gone
      }
    }
    return undefined;
  }

  #read(inside: string) {
    const seen = this.#hostPath(inside);
    if (!seen) throw new Error(`the finished download is not in the browser's folder (${path.basename(inside)})`);
    return readFileSync(seen);
  }

  #remove(guid: string) {
    const seen = this.#hostPath(path.join(this.#browser.downloadsDir, guid));
    if (seen) rmSync(seen, { force: true });
  }

  /** `expect` for a run's `page.download` nodes: the files they fetch name the run. */
  forRun(runId: string) {
    return { expect: (frameIds: ReadonlySet<string>, timeoutMs: number) => this.expect(frameIds, timeoutMs, runId) };
  }

  /**
   * The next download that begins in one of `frameIds` (a page's frames), once it is kept: call
   * before the action that starts it. Rejects with `DownloadFailed` when it is cancelled or fails,
   * and after `timeoutMs` with none.
   */
  expect(frameIds: ReadonlySet<string>, timeoutMs: number, runId?: string) {
    let waiter: Waiter | undefined;
    let timer: NodeJS.Timeout | undefined;
    const file = new Promise<DownloadedFile>((resolve, reject) => {
      waiter = { frameIds, runId, resolve, reject };
      this.#waiters.add(waiter);
      timer = setTimeout(() => {
        if (waiter) this.#waiters.delete(waiter);
        reject(new DownloadFailed(`no download finished within ${timeoutMs} ms`));
      }, timeoutMs);
    }).finally(() => clearTimeout(timer));
    file.catch(() => {});
    return {
      file,
      cancel: () => {
        if (waiter) this.#waiters.delete(waiter);
        clearTimeout(timer);
      },
    };
  }
}

/** A name for the file as the site suggested it, without folders or control characters; `download` when none is left. */
export function safeName(suggested: string) {
  const base = suggested.split(/[\\/]/).pop() ?? '';
  const clean = [...base]
    .filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f)
    .join('')
    .trim()
    .slice(0, 200);
  return clean === '' || clean === '.' || clean === '..' ? 'download' : clean;
}
