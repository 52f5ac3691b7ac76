import { z } from 'zod';
import type { SessionProxy } from '../../../db/entities/BrowserSession.ts';

/**
 * Proxies, inline on a session and stored proxy records (spec 2, Proxy; 4.7): the rules the api
 * checks when they are written, so the browser host can launch with what is stored.
 */

const hostLabel = '[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?';
const hostnamePattern = new RegExp(`^${hostLabel}(?:\\.${hostLabel})*$`);
export const ipv6Literal = /^\[[0-9a-f:.]+\]$/;

export const proxyProtocols = ['http', 'https', 'socks5'] as const;

/** Spec 2, Proxy: `protocol` a required non-empty string; we take the ones Chromium can use. */
export const proxyProtocolSchema = z
  .string()
  // Spelled out without the `i` flag: the OpenAPI document carries the pattern, not its flags.
  .regex(/^\s*(?:[Hh][Tt][Tt][Pp][Ss]?|[Ss][Oo][Cc][Kk][Ss]5)\s*$/, `one of ${proxyProtocols.join(', ')}`)
  .trim()
  .toLowerCase()
  .pipe(z.enum(proxyProtocols))
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
    z.number().int('a whole number').min(1, 'a positive integer').max(65535),
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
