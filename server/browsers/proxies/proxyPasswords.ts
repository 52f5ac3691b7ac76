import { openString, sealString } from '../../auth/secrets.ts';

/**
 * Proxy passwords at rest (`proxies.password`, the `password` of `browser_sessions.proxy`) are
 * sealed under the service secret, like TOTP secrets, and opened only by the browser host when
 * it launches a browser with the proxy. Dynamic proxies (PROXY_LIST) are not stored, so not
 * sealed, until a session copies one inline.
 */

const PROXY_PASSWORD_PURPOSE = 'proxy-password';

/**
 * `v1.<iv>.<tag>.<ciphertext>` with a 12-byte iv and a 16-byte tag, in base64url. Passwords saved
 * in clear before sealing are read as they are; only one of exactly this shape is taken as sealed.
 */
const sealedShape = /^v1\.[\w-]{16}\.[\w-]{22}\.[\w-]*$/;

export function sealProxyPassword(serviceSecret: string, password: string | null) {
  return password === null ? null : sealString(serviceSecret, PROXY_PASSWORD_PURPOSE, password);
}

/**
 * The password to launch with: `null` when there is none; `undefined` when it is sealed under
 * another service secret (JWT_SECRET changed) and must be set again.
 */
export function openProxyPassword(serviceSecret: string, stored: string | null | undefined): string | null | undefined {
  if (!stored) return null;
  if (!sealedShape.test(stored)) return stored;
  return openString(serviceSecret, PROXY_PASSWORD_PURPOSE, stored) ?? undefined;
}
