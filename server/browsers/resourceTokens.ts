import { jwtVerify, SignJWT } from 'jose';

/**
 * Tokens in remoteUrl and vncUrl. Each names one resource and one use (`cdp` or `live`), and
 * expires at the resource's maximum lifetime; the routes also refuse a resource that stopped.
 */
export type ResourceTokenUse = 'cdp' | 'live';

export class ResourceTokens {
  readonly #key: Uint8Array;

  constructor(secret: string) {
    // Derived from the JWT secret but never valid as a session token: different audience.
    this.#key = new TextEncoder().encode(`resource-url:${secret}`);
  }

  sign(resourceId: string, use: ResourceTokenUse, expiresAt: Date) {
    return new SignJWT({ use })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(resourceId)
      .setAudience('resource')
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.#key);
  }

  async verify(token: string, resourceId: string, use: ResourceTokenUse) {
    try {
      const { payload } = await jwtVerify(token, this.#key, { algorithms: ['HS256'], audience: 'resource', subject: resourceId });
      return payload.use === use;
    } catch {
      return false;
    }
  }
}
