/**
 * What a remoteUrl holder may ask of the browser over CDP.
 *
 * Chromium runs on the host as the service's user, without a sandbox, so the raw protocol is a
 * way into the host: navigate to `file:///proc/self/environ` or `chrome://…`, hand a file input
 * or a drag the path of any host file, make downloads land in any folder, expose the protocol to
 * a page's script (which would then speak to the browser without passing here). The CDP proxy
 * runs every client→browser message through `guardCdpMessage` and forwards only what it returns.
 * Everything else — what Playwright `connectOverCDP` and Puppeteer `connect` use — passes.
 *
 * The message forwarded is the one checked, re-serialised: a message Chromium's JSON reader
 * would read differently from ours (duplicate keys, say) cannot slip past.
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

const refusedMethods = new Map<string, string>([
  // Page script would get an unguarded CDP channel of its own.
  ['Target.exposeDevToolsProtocol', 'it gives page script the protocol'],
  // Opens a devtools:// page, which has host file-system access.
  ['Target.openDevTools', 'it opens DevTools on the host'],
]);
const refusedDomains = new Map<string, string>([
  // Extensions.loadUnpacked takes a host folder; extensions outlive the check of any one message.
  ['Extensions', 'extensions are managed by the service'],
  // PWA.install takes any URL, a file: one included.
  ['PWA', 'web apps are not installed on the host'],
]);

function refusal(command: CdpCommand, reason: string): CdpVerdict {
  const message = `${String(command.method)} refused by the service: ${reason}`;
  const reply: Record<string, unknown> = { id: command.id, error: { code: -32000, message } };
  if (typeof command.sessionId === 'string') reply.sessionId = command.sessionId;
  return { refuse: message, reply: JSON.stringify(reply) };
}

function params(command: CdpCommand): Record<string, unknown> {
  return command.params && typeof command.params === 'object' && !Array.isArray(command.params)
    ? (command.params as Record<string, unknown>)
    : {};
}

/** Why `command` may not reach the browser, or null; may rewrite `command.params` in place. */
function refusalReason(command: CdpCommand): string | null {
  if (typeof command.method !== 'string') return null; // Chromium answers it with an error
  const method = command.method;
  const p = params(command);
  const domain = method.split('.', 1)[0] as string;
  const denied = refusedMethods.get(method) ?? refusedDomains.get(domain);
  if (denied) return denied;
  switch (method) {
    case 'Page.navigate':
    case 'Target.createTarget':
    case 'Fetch.continueRequest':
    case 'Network.continueInterceptedRequest':
      if (p.url !== undefined && (typeof p.url !== 'string' || !isNavigableUrl(p.url))) {
        return 'only http, https, data, blob and about:blank URLs may be opened';
      }
      return null;
    case 'Network.loadNetworkResource':
      if (typeof p.url !== 'string' || !/^https?:$/.test(safeProtocol(p.url))) return 'only http and https resources may be loaded';
      return null;
    case 'DOM.setFileInputFiles':
    case 'Page.setFileInputFiles':
    case 'Page.handleFileChooser':
      if (Array.isArray(p.files) && p.files.length > 0) {
        return 'file paths name files on the host; set files from their contents (Playwright setInputFiles with buffers)';
      }
      return null;
    case 'Input.dispatchDragEvent': {
      const data = p.data as { files?: unknown } | undefined;
      if (data && Array.isArray(data.files) && data.files.length > 0) return 'dragged files would be read from the host';
      return null;
    }
    case 'Browser.setDownloadBehavior':
    case 'Page.setDownloadBehavior':
      // Refusing would fail Playwright's connectOverCDP, which asks to allow downloads into a
      // folder of the client's machine; a folder that means nothing on the host (or the wrong
      // thing). Downloads are denied instead: the answer and the download events still come.
      if (p.behavior === 'allow' || p.behavior === 'allowAndName') p.behavior = 'deny';
      delete p.downloadPath;
      return null;
    case 'Tracing.start':
      // A perfetto config can name an output file; the trace config streams to the client.
      if (p.perfettoConfig !== undefined) return 'perfetto configs may write files on the host';
      return null;
    case 'Target.sendMessageToTarget':
      return typeof p.message === 'string' ? innerRefusal(p) : null;
    default:
      return null;
  }
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
  const reason = refusalReason(inner);
  if (!reason) p.message = JSON.stringify(inner);
  return reason;
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
  const reason = refusalReason(command);
  return reason ? refusal(command, reason) : { forward: JSON.stringify(command) };
}
