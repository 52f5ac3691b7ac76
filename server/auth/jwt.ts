import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Config } from '../config.ts';
import { JWT_SECRET_FILE } from '../infra/dataDir.ts';
import { randomToken } from './secrets.ts';

export type SessionClaims = { sub: string; sid: string; kind: 'full' | '2fa_pending' };

/** Signs and checks the HS256 JWTs that name a row of `auth_sessions`. */
export class JwtSigner {
  readonly #key: Uint8Array;

  constructor(secret: string) {
    this.#key = new TextEncoder().encode(secret);
  }

  sign(claims: SessionClaims, expiresAt: Date) {
    return new SignJWT({ sid: claims.sid, kind: claims.kind })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.#key);
  }

  /** The claims of a valid token, or null for anything else (bad signature, expired, malformed). */
  async verify(token: string) {
    try {
      const { payload } = await jwtVerify(token, this.#key, { algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') return null;
      const kind = payload.kind === '2fa_pending' ? '2fa_pending' : 'full';
      return { sub: payload.sub, sid: payload.sid, kind, iat: payload.iat, exp: payload.exp } as const;
    } catch (error) {
      if (error instanceof errors.JOSEError || error instanceof TypeError) return null;
      throw error;
    }
  }
}

/** JWT_SECRET, or one generated on first start and kept under the data directory. */
export function resolveJwtSecret(config: Config) {
  if (config.jwtSecret) return config.jwtSecret;
  const file = path.join(config.dataDir, JWT_SECRET_FILE);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const secret = randomToken(48);
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/** Looks like a JWT (three base64url segments) rather than an API key. */
export function looksLikeJwt(value: string) {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(value);
}
