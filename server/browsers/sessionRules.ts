import { z } from 'zod';
import type { Screen, SessionCookie, SessionProxy } from '../../db/entities/BrowserSession.ts';
import { BadRequest } from '../errors.ts';
import { isKnownImage } from './images.ts';

/**
 * The rules a session definition obeys (spec 2, Session; 4.4). The api checks them on create and
 * update, and the browser host can trust what is stored: cookies are in the shape Playwright's
 * `addCookies` accepts, the screen fits a real display, the launch flags leave the host in charge.
 */

export const defaultScreen: Screen = { width: 1280, height: 720 };

export const screenSchema = z.strictObject({
  width: z.number().int().min(200).max(7680),
  height: z.number().int().min(200).max(4320),
});

// ---------------------------------------------------------------------------------------------
// Cookies

/** Playwright refuses later dates (year 9999). */
const maxCookieExpires = 253402300799;
/** Chromium drops a cookie whose name and value together exceed 4096 bytes. */
const maxCookieBytes = 4096;
export const maxCookiesPerSession = 1000;

const hostLabel = '[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?';
const hostnamePattern = new RegExp(`^${hostLabel}(?:\\.${hostLabel})*$`);
const ipv6Literal = /^\[[0-9a-f:.]+\]$/;
/** Checked after lower-casing; the letters' case is spelled out for the OpenAPI pattern. */
const cookieDomainLabel = '[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?';
const cookieDomainPattern = new RegExp(`^\\.?${cookieDomainLabel}(?:\\.${cookieDomainLabel})*$`);

/** A cookie's name and value may not break the `Cookie` header: no controls, no `;`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const cookieNameChars = /^[^\u0000-\u0020\u007f;=,]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const cookieValueChars = /^[^\u0000-\u001f\u007f;]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const cookiePathChars = /^\/[^\u0000-\u001f\u007f;]*$/;

const cookiePriorities = ['Low', 'Medium', 'High'] as const;
const cookieSourceSchemes = ['Unset', 'NonSecure', 'Secure'] as const;

/**
 * Chromium keys a partition by site (scheme and registrable domain); it takes any http(s) origin
 * and reduces it, but refuses what is not a URL, so the api refuses it first.
 */
const partitionKeySchema = z.strictObject({
  topLevelSite: z
    .url({ protocol: /^https?$/, error: 'an http or https site, such as https://example.com' })
    .max(2048)
    .refine((site) => {
      // Refinements run after a failed check too: an unparsable site is already reported.
      const url = URL.canParse(site) ? new URL(site) : null;
      return !url || (url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password);
    }, 'a site (scheme and host), without path, query or credentials'),
  hasCrossSiteAncestor: z.boolean(),
});

/**
 * One cookie in the CDP shape (`Network.CookieParam`, which Playwright's `addCookies` narrows).
 * Either `url`, or `domain` (with `path`, `/` when left out) — never both, as Playwright insists.
 * `expires` is -1 (a session cookie) or unix seconds. `sameSite: None`, a `partitionKey` and the
 * `__Secure-` and `__Host-` prefixes need `secure`, or Chromium drops (or refuses) the cookie at
 * launch.
 *
 * What capture answers (`Storage.getCookies`, a `Network.Cookie`) is accepted as is, so captured
 * cookies can be written back: its read-only fields (`size`, `session`, `partitionKeyOpaque`) and
 * `sameParty` (gone from Chromium with First-Party Sets; older captures carry it) are checked
 * for type and dropped.
 */
export const cookieSchema = z
  .strictObject({
    name: z.string().min(1).max(maxCookieBytes).regex(cookieNameChars, 'a cookie name has no spaces, controls, ";", "=" or ","'),
    value: z.string().max(maxCookieBytes).regex(cookieValueChars, 'a cookie value has no controls or ";"'),
    domain: z
      .string()
      .trim()
      .toLowerCase()
      .min(1)
      .max(253)
      .refine((domain) => cookieDomainPattern.test(domain) || ipv6Literal.test(domain), 'not a cookie domain')
      .optional(),
    path: z.string().max(1024).regex(cookiePathChars, 'a cookie path starts with "/" and has no controls or ";"').optional(),
    url: z
      .url({ protocol: /^https?$/, error: 'an http or https URL' })
      .max(2048)
      .optional(),
    expires: z
      .number()
      .refine((value) => value === -1 || (value > 0 && value <= maxCookieExpires), 'either -1 (session cookie) or unix time in seconds')
      .optional(),
    httpOnly: z.boolean().optional(),
    secure: z.boolean().optional(),
    sameSite: z.enum(['Strict', 'Lax', 'None']).optional(),
    priority: z.enum(cookiePriorities).optional(),
    sourceScheme: z.enum(cookieSourceSchemes).optional(),
    sourcePort: z
      .number()
      .int()
      .refine((port) => port === -1 || (port >= 1 && port <= 65535), '-1 (unspecified) or a port from 1 to 65535')
      .optional(),
    partitionKey: partitionKeySchema.optional(),
    // Read-only in CDP: accepted from capture's output, never stored.
    size: z.number().int().min(0).optional(),
    session: z.boolean().optional(),
    partitionKeyOpaque: z.boolean().optional(),
    sameParty: z.boolean().optional(),
  })
  .superRefine((cookie, ctx) => {
    if (cookie.url === undefined && cookie.domain === undefined) {
      ctx.addIssue({ code: 'custom', path: ['domain'], message: 'a cookie needs a url or a domain' });
    }
    if (cookie.url !== undefined && cookie.domain !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'give either url or domain, not both' });
    }
    if (cookie.url !== undefined && cookie.path !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'the path comes from the url; give either url or path' });
    }
    if (new TextEncoder().encode(cookie.name + cookie.value).length > maxCookieBytes) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `name and value together exceed ${maxCookieBytes} bytes` });
    }
    const secure = cookie.secure ?? cookie.url?.startsWith('https:') ?? false;
    if (cookie.sameSite === 'None' && !secure) {
      ctx.addIssue({ code: 'custom', path: ['secure'], message: 'sameSite None needs secure: true' });
    }
    // Cookie prefixes (RFC 6265bis 4.1.3), which Chromium enforces in any case at launch.
    const prefix = /^__(secure|host)-/i.exec(cookie.name)?.[1]?.toLowerCase();
    if (prefix && !secure) {
      ctx.addIssue({
        code: 'custom',
        path: ['secure'],
        message: `a cookie named __${prefix === 'host' ? 'Host' : 'Secure'}-… needs secure: true`,
      });
    }
    if (prefix === 'host' && cookie.path !== undefined && cookie.path !== '/') {
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'a cookie named __Host-… has the path /' });
    }
    if (cookie.partitionKey && !secure) {
      ctx.addIssue({ code: 'custom', path: ['secure'], message: 'a partitioned cookie needs secure: true' });
    }
    // An opaque partition (a sandboxed frame's) has no site to name, so it cannot be set again.
    if (cookie.partitionKeyOpaque) {
      ctx.addIssue({ code: 'custom', path: ['partitionKeyOpaque'], message: 'a cookie of an opaque partition cannot be set' });
    }
  })
  .transform((cookie): SessionCookie => {
    const { size: _size, session: _session, partitionKeyOpaque: _opaque, sameParty: _sameParty, ...stored } = cookie;
    return stored.domain !== undefined && stored.path === undefined ? { ...stored, path: '/' } : stored;
  });

export const cookiesSchema = z.array(cookieSchema).max(maxCookiesPerSession);

/** The stored cookies (for the output schema: no transforms). */
export const cookieView = z.object({
  name: z.string(),
  value: z.string(),
  domain: z.string().optional(),
  path: z.string().optional(),
  url: z.string().optional(),
  expires: z.number().optional(),
  httpOnly: z.boolean().optional(),
  secure: z.boolean().optional(),
  sameSite: z.enum(['Strict', 'Lax', 'None']).optional(),
  priority: z.enum(cookiePriorities).optional(),
  sourceScheme: z.enum(cookieSourceSchemes).optional(),
  sourcePort: z.number().int().optional(),
  partitionKey: z.object({ topLevelSite: z.string(), hasCrossSiteAncestor: z.boolean() }).optional(),
});

/**
 * Stored cookies as `Storage.setCookies` takes them: every field applies, where Playwright's
 * `addCookies` drops priority and the source fields and wants `partitionKey` as a string. A url
 * cookie is secure when its url is https, as Playwright makes it.
 */
export function cdpCookieParams(cookies: readonly SessionCookie[]) {
  return cookies.map(({ expires, ...cookie }) => ({
    ...(cookie.url === undefined ? { path: '/' } : {}),
    ...cookie,
    ...(cookie.url !== undefined && cookie.secure === undefined ? { secure: cookie.url.startsWith('https:') } : {}),
    // Omitted is CDP's session cookie; -1 is only how it is stored.
    ...(expires !== undefined && expires >= 0 ? { expires } : {}),
  }));
}

// ---------------------------------------------------------------------------------------------
// Proxies (inline on a session, and stored proxy records)

export const proxyProtocols = ['http', 'https', 'socks5'] as const;

/** Spec 2, Proxy: `protocol` a required non-empty string; we take the ones Chromium can use. */
export const proxyProtocolSchema = z
  .string()
  .trim()
  .toLowerCase()
  .min(1, 'must not be empty')
  .refine((protocol) => (proxyProtocols as readonly string[]).includes(protocol), `one of ${proxyProtocols.join(', ')}`)
  .describe('http, https or socks5 (any case)');

/** Lower-cased and trimmed; a DNS name, an IPv4 address, or an IPv6 address in brackets. */
export const proxyHostnameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .min(1, 'must not be empty')
  .max(253)
  .refine((host) => hostnamePattern.test(host) || ipv6Literal.test(host), 'not a host name or IP address (IPv6 in brackets)')
  .describe('a host name or IP address (IPv6 in brackets); stored lower-case');

/** A positive integer; a string of digits (`"8080"`) is taken as that integer. */
export const proxyPortSchema = z
  .union([
    z.number(),
    z
      .string()
      .trim()
      .regex(/^\d{1,5}$/, 'a port number'),
  ])
  .transform((port) => Number(port))
  .pipe(z.number().int('a whole number').min(1, 'a positive integer').max(65535));

/** Empty (or blank) credentials are stored as null (spec 2, Proxy). */
const credential = (max: number) =>
  z
    .string()
    .max(max)
    .nullable()
    .transform((value) => (value === null || value.trim() === '' ? null : value));

export const proxyUsernameSchema = credential(255);
export const proxyPasswordSchema = credential(1000);

type ProxyCredentials = { protocol: string; username?: string | null; password?: string | null };

/**
 * Chromium cannot authenticate to a SOCKS5 proxy (Playwright refuses the launch with "Browser does
 * not support socks5 proxy authentication"), so such a proxy would save fine and never start.
 * Refused when written: stored proxies, inline session proxies, `PROXY_LIST` entries.
 */
export const socks5CredentialsMessage =
  'Chromium cannot authenticate to a socks5 proxy: leave username and password empty, or use an http or https proxy';

/** The credential field to name when `proxy` is socks5 with credentials; null when it is usable. */
export function socks5CredentialsField(proxy: ProxyCredentials): 'username' | 'password' | null {
  if (proxy.protocol !== 'socks5') return null;
  return proxy.username ? 'username' : proxy.password ? 'password' : null;
}

/** For `superRefine` on an object with `protocol`, `username`, `password` (after their transforms). */
export function refineSocks5Credentials(proxy: ProxyCredentials, ctx: z.RefinementCtx) {
  const field = socks5CredentialsField(proxy);
  if (field) ctx.addIssue({ code: 'custom', path: [field], message: socks5CredentialsMessage });
}

/** A proxy written inline on a session. */
export const sessionProxySchema = z
  .strictObject({
    protocol: proxyProtocolSchema,
    hostname: proxyHostnameSchema,
    port: proxyPortSchema,
    username: proxyUsernameSchema.optional(),
    password: proxyPasswordSchema.optional(),
  })
  .superRefine(refineSocks5Credentials)
  .transform(
    (proxy): SessionProxy => ({
      protocol: proxy.protocol,
      hostname: proxy.hostname,
      port: proxy.port,
      username: proxy.username ?? null,
      password: proxy.password ?? null,
    }),
  );

/** A proxy as callers see it: everything but the password, which never leaves the service. */
export const proxyEndpointView = z.object({
  protocol: z.string(),
  hostname: z.string(),
  port: z.number(),
  username: z.string().nullable(),
  hasPassword: z.boolean(),
});

export function presentProxyEndpoint(proxy: SessionProxy) {
  return {
    protocol: proxy.protocol,
    hostname: proxy.hostname,
    port: proxy.port,
    username: proxy.username,
    hasPassword: proxy.password !== null,
  };
}

// ---------------------------------------------------------------------------------------------
// Launch flags

/**
 * Flags a session may not pass to Chromium, with why. The host owns debugging (its CDP endpoint is
 * what the api proxies behind tokens), the sandbox, the file system and the processes it starts;
 * screen and proxy have their own fields, so flags cannot bypass their rules.
 */
const hostControlled = 'the browser host sets it';
const debugging = 'the browser host owns the debugging endpoint';
const writesFiles = 'it writes to or reads from the host’s file system';
const runsPrograms = 'it runs programs on the host';
const sandbox = 'it weakens the sandbox';
const hangs = 'it stops the browser until a debugger attaches';
const internal = 'it is internal to Chromium’s child processes';
const deniedFlags = new Map<string, string>([
  ['remote-allow-origins', debugging],
  ['auto-open-devtools-for-tabs', debugging],
  ['custom-devtools-frontend', debugging],
  ['enable-unsafe-extension-debugging', debugging],
  ['silent-debugger-extension-api', debugging],
  ['expose-internals-for-testing', debugging],
  ['enable-gpu-benchmarking', writesFiles],
  ['wait-for-debugger', hangs],
  ['wait-for-debugger-children', hangs],
  ['wait-for-debugger-on-navigation', hangs],
  ['renderer-startup-dialog', hangs],
  ['gpu-startup-dialog', hangs],
  ['profile-directory', writesFiles],
  ['ssl-key-log-file', writesFiles],
  ['media-cache-dir', writesFiles],
  ['trace-startup', writesFiles],
  ['trace-config-file', writesFiles],
  ['trace-to-file', writesFiles],
  ['trace-to-file-name', writesFiles],
  ['enable-tracing-output', writesFiles],
  ['profiling-file', writesFiles],
  ['profiling-at-start', writesFiles],
  ['enable-profiling', writesFiles],
  ['ozone-dump-file', writesFiles],
  ['file-url-path-alias', writesFiles],
  ['use-file-for-fake-video-capture', writesFiles],
  ['use-file-for-fake-audio-capture', writesFiles],
  ['enable-remote-extensions', writesFiles],
  ['allowlisted-extension-id', writesFiles],
  ['whitelisted-extension-id', writesFiles],
  ['extensions-on-chrome-urls', writesFiles],
  ['load-apps', writesFiles],
  ['install-chrome-app', writesFiles],
  ['policy', hostControlled],
  ['repl', hostControlled],
  ['field-trial-handle', internal],
  ['metrics-shmem-handle', internal],
  ['mojo-platform-channel-handle', internal],
  ['shared-files', internal],
  ['service-sandbox-type', internal],
  ['disable-site-isolation-trials', sandbox],
  ['user-data-dir', writesFiles],
  ['disk-cache-dir', writesFiles],
  ['crash-dumps-dir', writesFiles],
  ['log-file', writesFiles],
  ['log-net-log', writesFiles],
  ['trace-startup-file', writesFiles],
  ['enable-logging', writesFiles],
  ['v', writesFiles],
  ['vmodule', writesFiles],
  ['print-to-pdf', writesFiles],
  ['screenshot', writesFiles],
  ['dump-dom', hostControlled],
  ['allow-file-access-from-files', writesFiles],
  ['allow-file-access', writesFiles],
  ['load-extension', writesFiles],
  ['disable-extensions-except', writesFiles],
  ['disable-web-security', 'it turns off the same-origin policy'],
  ['renderer-cmd-prefix', runsPrograms],
  ['utility-cmd-prefix', runsPrograms],
  ['gpu-launcher', runsPrograms],
  ['plugin-launcher', runsPrograms],
  ['ppapi-plugin-launcher', runsPrograms],
  ['zygote-cmd-prefix', runsPrograms],
  ['browser-subprocess-path', runsPrograms],
  ['type', internal],
  ['no-sandbox', sandbox],
  ['disable-setuid-sandbox', sandbox],
  ['disable-gpu-sandbox', sandbox],
  ['disable-seccomp-filter-sandbox', sandbox],
  ['disable-namespace-sandbox', sandbox],
  ['no-zygote', sandbox],
  ['single-process', sandbox],
  ['js-flags', sandbox],
  ['headless', hostControlled],
  ['window-size', 'use the session’s screen'],
  ['proxy-server', 'use the session’s proxy'],
  ['proxy-pac-url', 'use the session’s proxy'],
  ['proxy-bypass-list', 'use the session’s proxy'],
  ['proxy-auto-detect', 'use the session’s proxy'],
  ['no-proxy-server', 'use the session’s proxy'],
]);
const deniedPrefixes: [string, string][] = [
  ['remote-debugging-', debugging],
  // Chromium connects native messaging hosts: programs on the host.
  ['native-messaging-', runsPrograms],
];

export const maxLaunchArgsLength = 4000;
const maxLaunchFlags = 100;
/** `--name` or `--name=value`. Chromium also reads `-name`, so a single dash is refused rather than missed. */
const flagPattern = /^--([a-z0-9][a-z0-9._-]*)(?:=[\s\S]*)?$/i;

function badArg(message: string, flag?: string) {
  return new BadRequest('invalid_launch_args', message, { issues: [{ path: ['args'], message: flag ? `${flag}: ${message}` : message }] });
}

/** Splits like a shell: whitespace separates, single and double quotes group, `\` escapes. */
function tokenize(args: string) {
  const tokens: string[] = [];
  let current = '';
  let inToken = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < args.length; i++) {
    const char = args[i] as string;
    if (quote) {
      if (char === quote) quote = null;
      else if (char === '\\' && quote === '"' && i + 1 < args.length) current += args[++i];
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      inToken = true;
    } else if (char === '\\' && i + 1 < args.length) {
      current += args[++i];
      inToken = true;
    } else if (/\s/.test(char)) {
      if (inToken) tokens.push(current);
      current = '';
      inToken = false;
    } else {
      current += char;
      inToken = true;
    }
  }
  if (quote) throw badArg(`unterminated ${quote} quote in args`);
  if (inToken) tokens.push(current);
  return tokens;
}

/**
 * The session's `args` string as a list of Chromium flags. Throws BadRequest naming the first flag
 * that is not a `--flag[=value]` or that the deny-list refuses. The host calls it again at launch.
 */
export function parseLaunchArgs(args: string): string[] {
  if (args.length > maxLaunchArgsLength) throw badArg(`args is longer than ${maxLaunchArgsLength} characters`);
  const flags = tokenize(args);
  if (flags.length > maxLaunchFlags) throw badArg(`at most ${maxLaunchFlags} flags`);
  for (const flag of flags) {
    const match = flagPattern.exec(flag);
    const shown = flag.length > 80 ? `${flag.slice(0, 80)}…` : flag;
    if (!match) throw badArg(`${shown} is not a launch flag (--name or --name=value)`, shown);
    // Caught here rather than by the launch: a NUL cannot be passed to a process at all (the start
    // would fail), and a newline or other control is no part of any flag's value.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    if (/[\u0000-\u001f\u007f]/.test(flag)) throw badArg(`--${match[1]} has a control character in its value`, `--${match[1]}`);
    const name = (match[1] as string).toLowerCase();
    const reason = deniedFlags.get(name) ?? deniedPrefixes.find(([prefix]) => name.startsWith(prefix))?.[1];
    if (reason) throw badArg(`--${name} is not allowed: ${reason}`, `--${name}`);
  }
  return flags;
}

export function checkImage(image: string) {
  if (!isKnownImage(image)) {
    throw new BadRequest('unknown_image', `Unknown browser image ${image}`, { issues: [{ path: ['image'], message: 'unknown image' }] });
  }
}
