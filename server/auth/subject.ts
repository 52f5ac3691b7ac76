import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey, AuthSession, type User } from '../../db/entities/index.ts';
import { Unauthenticated } from '../errors.ts';
import { apiKeyMatches, parseApiKey } from './apiKeys.ts';
import { type JwtSigner, looksLikeJwt } from './jwt.ts';

/** Who is calling. Resolved once per request from the cookie or the headers. */
export type Subject =
  | { kind: 'anonymous' }
  | {
      kind: 'session';
      user: User;
      session: AuthSession;
      claims: { sub: string; sid: string; kind: string; iat?: number; exp?: number };
    }
  | { kind: 'pending2fa'; user: User; session: AuthSession }
  | {
      kind: 'apiKey';
      user: User;
      apiKey: {
        id: string;
        name: string;
        keyPrefix: string;
        accessType: 'full' | 'projects' | 'custom';
        permissions: string[];
        projectIds: string[];
      };
    };

export type SignedInSubject = Extract<Subject, { kind: 'session' | 'apiKey' }>;

export type CredentialSource = {
  cookieToken?: string;
  authorization?: string;
  apiKeyHeader?: string;
};

/**
 * Precedence: an explicit header beats the cookie, so a script that sends a key while a browser
 * cookie is present acts as the key. A credential that is present but invalid is an error (401),
 * never silently anonymous: a revoked key must fail loudly.
 */
export async function resolveSubject(em: EntityManager, jwt: JwtSigner, source: CredentialSource): Promise<Subject> {
  const credential = pickCredential(source);
  if (!credential) return { kind: 'anonymous' };
  if (credential.type === 'apiKey') return resolveApiKey(em, credential.value);
  try {
    return await resolveJwt(em, jwt, credential.value);
  } catch (error) {
    // A stale cookie must not lock a browser out of public pages: it reads as signed out.
    if (credential.fromCookie && error instanceof Unauthenticated) return { kind: 'anonymous' };
    throw error;
  }
}

const LAST_USED_PRECISION_MS = 60_000;

type Credential = { type: 'jwt' | 'apiKey'; value: string; fromCookie?: boolean };

function pickCredential(source: CredentialSource): Credential | null {
  if (source.apiKeyHeader) return { type: 'apiKey', value: source.apiKeyHeader.trim() };
  if (source.authorization) {
    const [scheme, ...rest] = source.authorization.trim().split(/\s+/);
    const value = rest.join(' ');
    if (!scheme || !value) throw new Unauthenticated('Malformed Authorization header', 'invalid_credentials');
    const lower = scheme.toLowerCase();
    if (lower === 'apikey') return { type: 'apiKey', value };
    if (lower === 'bearer') return { type: looksLikeJwt(value) ? 'jwt' : 'apiKey', value };
    throw new Unauthenticated('Unsupported Authorization scheme; use Bearer or ApiKey', 'invalid_credentials');
  }
  if (source.cookieToken) return { type: 'jwt', value: source.cookieToken, fromCookie: true };
  return null;
}

async function resolveJwt(em: EntityManager, jwt: JwtSigner, token: string): Promise<Subject> {
  const claims = await jwt.verify(token);
  if (!claims) throw new Unauthenticated('Session token is invalid or expired', 'invalid_token');
  const session = await em.findOne(AuthSession, { id: claims.sid }, { populate: ['user'] });
  if (!session || session.user.id !== claims.sub || session.expiresAt < new Date()) {
    throw new Unauthenticated('Session has ended; sign in again', 'session_ended');
  }
  if (session.kind === '2fa_pending') return { kind: 'pending2fa', user: session.user, session };
  return { kind: 'session', user: session.user, session, claims };
}

async function resolveApiKey(em: EntityManager, value: string): Promise<Subject> {
  const parsed = parseApiKey(value);
  const key = parsed ? await em.findOne(ApiKey, { keyPrefix: parsed.keyPrefix }, { populate: ['user', 'secretHash'] }) : null;
  if (!parsed || !key || !apiKeyMatches(parsed.secret, key.secretHash)) {
    throw new Unauthenticated('API key is invalid or revoked', 'invalid_api_key');
  }
  // `lastUsed` is shown on key reads; a minute's precision spares a busy key a write per request.
  const now = new Date();
  if (!key.lastUsed || now.getTime() - key.lastUsed.getTime() > LAST_USED_PRECISION_MS) {
    await em.nativeUpdate(ApiKey, { id: key.id }, { lastUsed: now });
  }
  return {
    kind: 'apiKey',
    user: key.user,
    apiKey: {
      id: key.id,
      name: key.name,
      keyPrefix: key.keyPrefix,
      accessType: key.accessType,
      permissions: key.permissions,
      // Only `projects` keys use the allow list: the others skip that query on every request.
      projectIds: key.accessType === 'projects' ? (await key.projects.loadItems()).map((project) => project.id) : [],
    },
  };
}
