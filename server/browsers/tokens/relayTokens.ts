import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * Tokens of the browser relay (server/browsers/host/relay/browserRelay.ts): the api mints one for each
 * connection it opens to a browser, the relay of the browser's host checks it before forwarding.
 * A token names one resource on one host and opens a connection until it expires, a minute after
 * it was minted; a connection once open stays (as the resource tokens of remoteUrl and vncUrl do).
 *
 * Format `<expiry, unix seconds>.<base64url HMAC-SHA256 over resource id, host id and expiry>`: the
 * relay knows the resource from the path and its own host id, so a token for another resource or
 * another host fails its MAC exactly as a forged one does.
 */
export const RELAY_TOKEN_SECONDS = 60;

/** Why the relay refused a token; said to the client, which already holds the token. */
export type RelayTokenRefusal = 'missing' | 'invalid' | 'expired';

const TOKEN = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

export class RelayTokens {
  readonly #key: Buffer;

  /**
   * `relaySecret` is BROWSER_RELAY_SECRET, shared by the api and every host; unset, the key is
   * derived from the service secret (JWT_SECRET) under a label of its own, so a deployment with one
   * secret works and no other key derived from that secret equals this one.
   */
  constructor(secrets: { relaySecret?: string; serviceSecret: string }) {
    const ikm = secrets.relaySecret ?? secrets.serviceSecret;
    const label = secrets.relaySecret ? 'browser-relay-token/v1' : 'browser-relay-token/v1 from JWT_SECRET';
    this.#key = Buffer.from(hkdfSync('sha256', ikm, '', label, 32));
  }

  mint(resourceId: string, hostId: string, now = Date.now()) {
    const expires = Math.floor(now / 1000) + RELAY_TOKEN_SECONDS;
    return `${expires}.${this.#mac(resourceId, hostId, expires).toString('base64url')}`;
  }

  /** Null when `token` opens `resourceId` on `hostId` now; otherwise why not. */
  check(token: string | null | undefined, resourceId: string, hostId: string, now = Date.now()): RelayTokenRefusal | null {
    if (!token) return 'missing';
    const match = TOKEN.exec(token);
    if (!match) return 'invalid';
    const expires = Number(match[1]);
    // Compared as text, so a MAC spelt another way (its last character's spare bits) is no token.
    const given = Buffer.from(match[2] as string);
    const expected = Buffer.from(this.#mac(resourceId, hostId, expires).toString('base64url'));
    // The MAC first, in constant time: a forged token is `invalid` whatever expiry it claims.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return expires * 1000 > now ? null : 'expired';
  }

  #mac(resourceId: string, hostId: string, expires: number) {
    // Newline-separated: neither a uuid nor a host id (`[A-Za-z0-9_-]`) can hold one.
    return createHmac('sha256', this.#key).update(`${resourceId}\n${hostId}\n${expires}`).digest();
  }
}
