import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { LogEntry } from '../../db/entities/index.ts';
import { BadRequest } from '../errors.ts';
import { openEventStream, wantsEventStream } from '../eventStream.ts';
import { BROWSER_LOG_WITHHELD_MESSAGE, RUN_LOG_WITHHELD_MESSAGE } from '../permissions/permissions.ts';
import { pagination } from '../wireShapes.ts';
import type { LogNotifications } from './logNotifications.ts';

export const logEntryView = z.object({
  seq: z.number(),
  context: z.string(),
  severity: z.string(),
  message: z.string(),
  area: z.string(),
  object: z.record(z.string(), z.unknown()).nullable(),
  created: z.string(),
});

function present(entry: LogEntry) {
  return {
    seq: entry.seq,
    context: entry.context,
    severity: entry.severity,
    message: entry.message,
    area: entry.area,
    object: entry.object ?? null,
    created: entry.created.toISOString(),
  };
}

/**
 * A run's line for a reader from whom its outputs are withheld (canSeeRunOutputs): a run that
 * read cookies can put a value it read into a URL it opens or a selector it clicks, and its
 * lines quote both (`opened <url>`, a browser node's context is its page's address). Such a
 * reader sees that a line was written, when, how severe and of what area, not what it says; the
 * run's own status lines stay whole, as they quote no value of the run (a failure's message is
 * left out of them when the run reads cookies, activities/runNode.ts `withheldMessage`).
 */
function presentWithheld(entry: LogEntry) {
  const view = present(entry);
  if (entry.area === 'run') return view;
  return { ...view, context: 'withheld', message: RUN_LOG_WITHHELD_MESSAGE, object: null };
}

/**
 * A browser's line for a reader who may not read its session's cookies: a page (or a run driving
 * it) can put a cookie value into an address, and the browser's log quotes addresses: a
 * navigation's, a failed request's, and the page's own as every page line's context. Navigation
 * and network lines say nothing but when, how severe and of what area; console output and page
 * errors keep their text and lose the page's address. The host's own lifecycle lines stay whole.
 */
function presentBrowserWithheld(entry: LogEntry) {
  const view = present(entry);
  if (entry.area === 'lifecycle') return view;
  if (entry.area === 'navigation' || entry.area === 'network') {
    return { ...view, context: 'withheld', message: BROWSER_LOG_WITHHELD_MESSAGE, object: null };
  }
  return { ...view, context: 'withheld' };
}

/** The areas of a browser's own lines (server/browsers/host/pool/browserLogs.ts `capturePageLogs`). */
const BROWSER_LINE_AREAS = new Set(['console', 'navigation', 'network', 'page']);

/**
 * A run's line for a reader who may see the run's outputs but may not read its session's cookies:
 * the browser lines of a call (docs/browsers.md, Contexts for calls: a call's context logs into its
 * run's log) are withheld as in a browser's own log (`presentBrowserWithheld`); the run's own lines
 * stay whole.
 */
function presentRunBrowserWithheld(entry: LogEntry) {
  return BROWSER_LINE_AREAS.has(entry.area) ? presentBrowserWithheld(entry) : present(entry);
}

const views = { run: presentWithheld, browser: presentBrowserWithheld, runBrowser: presentRunBrowserWithheld };

const query = z.strictObject({ ...pagination, lastEventId: z.coerce.number().int().min(0).optional() });

/**
 * Serves one log stream, as paged JSON (`offset`, `limit`) or, with `Accept: text/event-stream`,
 * as SSE: every entry after `Last-Event-ID` (the entry's `seq`), then live ones as NOTIFY
 * announces them, until the client leaves or `isFinished` says the stream has ended.
 */
const isStatusEntry = (entry: LogEntry) =>
  typeof entry.object === 'object' && entry.object !== null && 'status' in (entry.object as Record<string, unknown>);

export async function serveLogs(
  req: FastifyRequest,
  reply: FastifyReply,
  options: {
    em: EntityManager;
    notifications: LogNotifications;
    stream: string;
    isFinished: () => Promise<boolean>;
    /** The server shutting down: the stream ends without `end` (it did not finish), for a reconnect elsewhere. */
    closing: AbortSignal;
    /**
     * What is withheld from this reader: `run`, a run's log whose reader may not see the run's
     * outputs (`presentWithheld`); `browser`, a browser's log whose reader may not read its
     * session's cookies (`presentBrowserWithheld`); `runBrowser`, a run's log whose reader may see
     * its outputs but not read its session's cookies (`presentRunBrowserWithheld`).
     */
    withheld?: keyof typeof views;
  },
) {
  const show = options.withheld ? views[options.withheld] : present;
  const parsed = query.safeParse(req.query ?? {});
  if (!parsed.success) {
    throw new BadRequest(
      'invalid_input',
      `Invalid input: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ')}`,
      {
        issues: parsed.error.issues.map((i) => ({ path: i.path as (string | number)[], message: i.message, code: i.code })),
      },
    );
  }
  const { em, stream } = options;
  if (!wantsEventStream(req)) {
    const entries = await em.find(LogEntry, { stream }, { orderBy: { seq: 'asc' }, limit: parsed.data.limit, offset: parsed.data.offset });
    return reply.send(entries.map(show));
  }

  const header = req.headers['last-event-id'];
  let lastSeq = Number(Array.isArray(header) ? header[0] : (header ?? parsed.data.lastEventId ?? parsed.data.offset));
  if (!Number.isFinite(lastSeq) || lastSeq < 0) lastSeq = 0;

  const raw = openEventStream(reply);
  raw.write('retry: 2000\n\n');

  let closed = false;
  let statusSeen = false;
  let draining: Promise<void> | undefined;
  let again = false;
  const drain = async (): Promise<void> => {
    if (closed) return;
    if (draining) {
      again = true;
      return draining;
    }
    draining = (async () => {
      do {
        again = false;
        const fresh = await em.fork().find(LogEntry, { stream, seq: { $gt: lastSeq } }, { orderBy: { seq: 'asc' }, limit: 500 });
        for (const entry of fresh) {
          raw.write(`id: ${entry.seq}\nevent: log\ndata: ${JSON.stringify(show(entry))}\n\n`);
          lastSeq = entry.seq;
          // Status changes are logged (after they are stored): the stream may have ended with this one.
          if (isStatusEntry(entry)) statusSeen = true;
        }
        if (fresh.length === 500) again = true;
      } while (again && !closed);
    })().finally(() => {
      draining = undefined;
    });
    return draining;
  };

  const finishIfDone = async () => {
    if (closed || !(await options.isFinished())) return;
    await drain();
    raw.write('event: end\ndata: {}\n\n');
    close();
  };

  const unsubscribe = await options.notifications.subscribe(stream, () => {
    drain()
      .then(() => {
        if (!statusSeen) return;
        statusSeen = false;
        return finishIfDone();
      })
      .catch(() => close());
  });
  // The keep-alive also checks for an end no status entry announced (a row settled without one).
  const ticker = setInterval(() => {
    raw.write(': keep-alive\n\n');
    finishIfDone().catch(() => close());
  }, 2_000);
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(ticker);
    unsubscribe();
    options.closing.removeEventListener('abort', close);
    raw.end();
  };
  req.raw.on('close', close);
  if (options.closing.aborted) return close();
  options.closing.addEventListener('abort', close, { once: true });
  await drain();
  await finishIfDone();
}
