import type { BrowserContext } from 'playwright-core';
import { z } from 'zod';
import type { SessionCookie } from '../../../db/entities/BrowserSession.ts';
import { CdpClient } from '../cdp/cdpClient.ts';
import { ipv6Literal } from '../proxies/sessionProxies.ts';

/**
 * A session's cookies (spec 2, Session; 4.4): the api checks them on create and update, so the
 * browser host can trust what is stored, and both processes set them over CDP the same way.
 */

/** Playwright refuses later dates (year 9999). */
const maxCookieExpires = 253402300799;
/** Chromium drops a cookie whose name and value together exceed 4096 bytes. */
const maxCookieBytes = 4096;
export const maxCookiesPerSession = 1000;

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
function cdpCookieParams(cookies: readonly SessionCookie[]) {
  return cookies.map(({ expires, ...cookie }) => ({
    ...(cookie.url === undefined ? { path: '/' } : {}),
    ...cookie,
    ...(cookie.url !== undefined && cookie.secure === undefined ? { secure: cookie.url.startsWith('https:') } : {}),
    // Omitted is CDP's session cookie; -1 is only how it is stored.
    ...(expires !== undefined && expires >= 0 ? { expires } : {}),
  }));
}

/**
 * Sets `cookies` in the browser at `cdpEndpoint`, over a CDP connection of its own. Over CDP
 * rather than Playwright's addCookies, which drops priority, source port and partition: a cold
 * launch (on the host) and a warm start (the api, on the browser it claimed) apply them alike.
 */
export async function setSessionCookies(cdpEndpoint: string, cookies: readonly SessionCookie[]) {
  const cdp = await CdpClient.connect(cdpEndpoint);
  try {
    await cdp.send('Storage.setCookies', { cookies: cdpCookieParams(cookies) });
  } finally {
    cdp.close();
  }
}

/**
 * Sets `cookies` in one Playwright context (a call's, server/browsers/host/pool/projectBrowsers.ts),
 * over CDP as `setSessionCookies` does, so every field applies alike. `Storage.setCookies` reaches a
 * context only from the browser's own target, given the context's id (on a tab's target Chromium
 * refuses the id, and without it sets the default context's cookies, which every context of the
 * browser would then share): the id is read from a tab of the context. Opens the context's first
 * tab for it (a run takes that tab for its first page).
 */
export async function setContextCookies(context: BrowserContext, cookies: readonly SessionCookie[]) {
  const browser = context.browser();
  if (!browser) throw new Error('the context has no browser to set its cookies through');
  const page = context.pages()[0] ?? (await context.newPage());
  const tab = await context.newCDPSession(page);
  let browserContextId: string | undefined;
  try {
    ({
      targetInfo: { browserContextId },
    } = (await tab.send('Target.getTargetInfo')) as { targetInfo: { browserContextId?: string } });
  } finally {
    await tab.detach().catch(() => {});
  }
  // Never without it: the cookies would go to the default context.
  if (!browserContextId) throw new Error('the context’s id could not be read to set its cookies');
  const cdp = await browser.newBrowserCDPSession();
  try {
    await cdp.send('Storage.setCookies', { cookies: cdpCookieParams(cookies) as never, browserContextId });
  } finally {
    await cdp.detach().catch(() => {});
  }
}
