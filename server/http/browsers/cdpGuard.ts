import { downloadBehaviorRule, ruleDownloadBehavior } from '../../browsers/downloads/downloadBehavior.ts';
import { allowedCdpMethods, refusedCdpDomains, refusedCdpMethods } from './cdpAllowList.ts';

/**
 * What a remoteUrl holder may ask of the browser over CDP.
 *
 * Chromium runs on the host as the service's user, so the raw protocol is a way into the host:
 * navigate to `file:///proc/self/environ` or `chrome://…`, hand a file input or a drag the path of
 * any host file, make downloads land on the host's disk, give a new context its own proxy (or
 * none) around the service's, expose the protocol to a page's script (which would then speak to
 * the browser without passing here). The CDP proxy runs every client→browser message through
 * `guardCdpMessage` and forwards only what it returns: a method on the allow-list
 * (./cdpAllowList.ts), with its parameters checked by `parameterRules` where they can reach the
 * host. Everything else is answered here and never reaches the browser.
 *
 * The message forwarded is the one checked, re-serialised: a message Chromium's JSON reader
 * would read differently from ours (duplicate keys, say) cannot slip past. Pure: the browser host
 * may run the same check.
 */

type CdpCommand = { id?: unknown; method?: unknown; params?: unknown; sessionId?: unknown; [key: string]: unknown };

export type CdpVerdict =
  | { forward: string }
  /** Answered to the client in place of the browser's answer; nothing reaches the browser. */
  | { refuse: string; reply: string };

/** Schemes a browser-initiated navigation may use; about: only as about:blank and about:srcdoc. */
const navigableSchemes = new Set(['http:', 'https:', 'data:', 'blob:', 'ws:', 'wss:', 'about:']);
/** Other about: pages are rewritten by Chromium to chrome:// ones (about:net-export, …). */
const aboutPages = new Set(['blank', 'srcdoc']);

/** Whether a browser-initiated navigation to `raw` stays off the host (no file:, chrome:, devtools:). */
export function isNavigableUrl(raw: string) {
  if (raw === '') return true; // Target.createTarget's default, about:blank
  let url: URL;
  try {
    // The WHATWG parser drops tabs, newlines and surrounding controls as Chromium's GURL does,
    // so `fi\tle:` is seen as `file:` here too.
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.protocol === 'view-source:') return isNavigableUrl(url.href.slice(url.protocol.length));
  if (!navigableSchemes.has(url.protocol)) return false;
  return url.protocol !== 'about:' || aboutPages.has(url.pathname.toLowerCase());
}

/** JSON-RPC's "method not found": what Chromium answers for a method it does not have. */
const unlistedCode = -32601;
const refusedCode = -32000;

type Refusal = { reason: string; code: number };

function refusal(command: CdpCommand, { reason, code }: Refusal): CdpVerdict {
  const message = `${String(command.method)} refused by the service: ${reason}`;
  const reply: Record<string, unknown> = { id: command.id, error: { code, message } };
  if (typeof command.sessionId === 'string') reply.sessionId = command.sessionId;
  return { refuse: message, reply: JSON.stringify(reply) };
}

function params(command: CdpCommand): Record<string, unknown> {
  return command.params && typeof command.params === 'object' && !Array.isArray(command.params)
    ? (command.params as Record<string, unknown>)
    : {};
}

const listedMethods = new Set(Object.entries(allowedCdpMethods).flatMap(([domain, methods]) => methods.map((name) => `${domain}.${name}`)));

/** Whether `method` is on the allow-list (its parameters may still be refused). */
export function isAllowedCdpMethod(method: string) {
  return listedMethods.has(method);
}

const navigableRule =
  '`url`, if given, is `http(s)`, `data`, `blob`, `ws(s)`, `about:blank` or `about:srcdoc` (`view-source:` looked through)';
const navigableUrl = (p: Record<string, unknown>) =>
  p.url !== undefined && (typeof p.url !== 'string' || !isNavigableUrl(p.url))
    ? 'only http, https, data, blob and about:blank URLs may be opened'
    : null;
const noHostFiles = (p: Record<string, unknown>) =>
  Array.isArray(p.files) && p.files.length > 0
    ? 'file paths name files on the host; set files from their contents (Playwright setInputFiles with buffers)'
    : null;
/**
 * Refusing would fail Playwright's connectOverCDP, which asks to allow downloads into a folder of
 * the client's machine, a folder that means nothing on the host (or the wrong thing). The
 * behaviour passes as allow or deny, and the folder is dropped: the browser's host names its own
 * (server/browsers/downloads/downloadBehavior.ts; docs/browsers.md, Downloads).
 */
const ruledDownloads = (p: Record<string, unknown>) => {
  ruleDownloadBehavior(p);
  return null;
};

/**
 * Parameter checks of allowed methods, with what they enforce (docs/browsers.md shows `rule`).
 * `check` answers why the command may not pass, or null; it may rewrite `p` in place, and what
 * it rewrites is what is forwarded.
 */
export const parameterRules: ReadonlyMap<string, { rule: string; check(p: Record<string, unknown>): string | null }> = new Map([
  ['Page.navigate', { rule: navigableRule, check: navigableUrl }],
  ['Target.createTarget', { rule: navigableRule, check: navigableUrl }],
  ['Fetch.continueRequest', { rule: navigableRule, check: navigableUrl }],
  [
    'Network.loadNetworkResource',
    {
      rule: '`url` is `http:` or `https:`',
      check: (p) =>
        typeof p.url !== 'string' || !/^https?:$/.test(safeProtocol(p.url)) ? 'only http and https resources may be loaded' : null,
    },
  ],
  ['DOM.setFileInputFiles', { rule: 'no `files` (host paths); set files from their contents', check: noHostFiles }],
  [
    'Input.dispatchDragEvent',
    {
      rule: 'no `data.files` (host paths)',
      check: (p) => {
        const data = p.data as { files?: unknown } | undefined;
        return data && Array.isArray(data.files) && data.files.length > 0 ? 'dragged files would be read from the host' : null;
      },
    },
  ],
  ['Browser.setDownloadBehavior', { rule: downloadBehaviorRule, check: ruledDownloads }],
  ['Page.setDownloadBehavior', { rule: downloadBehaviorRule, check: ruledDownloads }],
  [
    'Target.createBrowserContext',
    {
      rule: 'no `proxyServer`, `proxyBypassList` or `originsWithUniversalNetworkAccess`',
      check: (p) => {
        // A context's own proxy (`direct://` above all) would take its pages around the service's proxy.
        if ('proxyServer' in p || 'proxyBypassList' in p) return 'a context’s proxy is the session’s; set the session’s proxy instead';
        if ('originsWithUniversalNetworkAccess' in p) return 'origins may not be given access to every other origin';
        return null;
      },
    },
  ],
  [
    'Tracing.start',
    {
      rule: 'no `perfettoConfig`; `tracingBackend` not `system`',
      check: (p) => {
        // A perfetto config can name an output file; the trace config streams to the client.
        if (p.perfettoConfig !== undefined) return 'perfetto configs may write files on the host';
        if (p.tracingBackend === 'system') return 'the system tracing backend is the host’s';
        return null;
      },
    },
  ],
  [
    'Target.sendMessageToTarget',
    { rule: 'the command in `message` is checked like any other', check: (p) => (typeof p.message === 'string' ? innerRefusal(p) : null) },
  ],
]);

/** Why `command` may not reach the browser, or null; may rewrite `command.params` in place. */
function refusalReason(command: CdpCommand): Refusal | null {
  // Chromium would answer it with an error; nothing that is not a listed method passes.
  if (typeof command.method !== 'string') return { reason: 'a command needs a method', code: -32600 };
  const method = command.method;
  const denied = refusedCdpMethods.get(method) ?? refusedCdpDomains.get(method.split('.', 1)[0] as string);
  if (denied) return { reason: denied, code: refusedCode };
  if (!listedMethods.has(method)) {
    return { reason: 'the service does not allow this method (docs/browsers.md lists those it does)', code: unlistedCode };
  }
  const reason = parameterRules.get(method)?.check(params(command)) ?? null;
  return reason ? { reason, code: refusedCode } : null;
}

/** The old non-flat sessions carry a whole command as a string: it is checked like any other. */
function innerRefusal(p: Record<string, unknown>) {
  let inner: CdpCommand;
  try {
    inner = JSON.parse(p.message as string);
  } catch {
    return 'the message is not JSON';
  }
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) return 'the message is not a command';
  const refused = refusalReason(inner);
  if (refused) return `${String(inner.method)}: ${refused.reason}`;
  p.message = JSON.stringify(inner);
  return null;
}

function safeProtocol(raw: string) {
  try {
    return new URL(raw).protocol;
  } catch {
    return '';
  }
}

/** One client→browser message: forwarded (as re-serialised, perhaps rewritten) or refused. */
export function guardCdpMessage(raw: string): CdpVerdict {
  let command: CdpCommand;
  try {
    command = JSON.parse(raw);
  } catch {
    return { refuse: 'not JSON', reply: JSON.stringify({ error: { code: -32700, message: 'Message must be valid JSON' } }) };
  }
  if (!command || typeof command !== 'object' || Array.isArray(command)) {
    return { refuse: 'not an object', reply: JSON.stringify({ error: { code: -32600, message: 'Message must be an object' } }) };
  }
  const refused = refusalReason(command);
  return refused ? refusal(command, refused) : { forward: JSON.stringify(command) };
}
