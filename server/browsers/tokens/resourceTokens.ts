import { jwtVerify, SignJWT } from 'jose';

/**
 * Tokens in remoteUrl and vncUrl. Each names one resource and one use (`cdp` or `live`), and is
 * short-lived (see `server/browsers/sessions/resourceView.ts`): it is checked when a WebSocket opens, and an open
 * connection outlives it. The routes also refuse a resource that stopped. A `live` token says
 * whether its holder may control the browser (input is forwarded) or only watch it.
 */
export type ResourceTokenUse = 'cdp' | 'live';

export type ResourceTokenGrant = { control: boolean };

export class ResourceTokens {
  readonly #key: Uint8Array;

  constructor(secret: string) {
    // Derived from the JWT secret but never valid as a session token: different audience.
    this.#key = new TextEncoder().encode(`resource-url:${secret}`);
  }

  sign(resourceId: string, use: ResourceTokenUse, expiresAt: Date, grant: ResourceTokenGrant = { control: false }) {
    return new SignJWT({ use, control: grant.control })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(resourceId)
      .setAudience('resource')
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.#key);
  }

  /** What the token grants on this resource for this use, or null when it grants nothing. */
  async verify(token: string, resourceId: string, use: ResourceTokenUse): Promise<ResourceTokenGrant | null> {
    try {
      const { payload } = await jwtVerify(token, this.#key, { algorithms: ['HS256'], audience: 'resource', subject: resourceId });
      return payload.use === use ? { control: payload.control === true } : null;
    } catch {
      return null;
    }
  }
}
