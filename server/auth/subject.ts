import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey, AuthSession, User } from '../../db/entities/index.ts';
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

/**
 * The key, its user and, for `projects` keys, its allow list, in one round trip. The user's
 * columns come from the entity's metadata, leaving out the lazy ones (password hash, TOTP
 * secret): a request on an API key never holds them.
 */
let apiKeyQuery: string | undefined;
function apiKeySql(em: EntityManager) {
  apiKeyQuery ??= `
    select k.id as key_id, k.name as key_name, k.access_type, k.secret_hash, k.permissions, k.last_used,
      case when k.access_type = 'projects'
        then array(select kp.project_id from api_key_projects kp where kp.api_key_id = k.id) end as project_ids,
      ${em
        .getMetadata(User)
        .props.filter((prop) => !prop.lazy && prop.persist !== false)
        .flatMap((prop) => prop.fieldNames ?? [])
        .map((column) => `u.${column}`)
        .join(', ')}
    from api_keys k join users u on u.id = k.user_id
    where k.key_prefix = ?`;
  return apiKeyQuery;
}

type ApiKeyRow = {
  key_id: string;
  key_name: string;
  access_type: 'full' | 'projects' | 'custom';
  secret_hash: string;
  permissions: string[];
  last_used: Date | null;
  project_ids: string[] | null;
} & Record<string, unknown>;

/**
 * Every API request comes through here, so it is one raw query rather than the ORM's query
 * builder (which cost more than PostgreSQL did); the user row is still mapped to the entity.
 */
async function resolveApiKey(em: EntityManager, value: string): Promise<Subject> {
  const parsed = parseApiKey(value);
  const [row] = parsed ? await em.getConnection().execute<ApiKeyRow[]>(apiKeySql(em), [parsed.keyPrefix]) : [];
  if (!parsed || !row || !apiKeyMatches(parsed.secret, row.secret_hash)) {
    throw new Unauthenticated('API key is invalid or revoked', 'invalid_api_key');
  }
  const { key_id, key_name, access_type, secret_hash: _hash, permissions, last_used, project_ids, ...userRow } = row;
  // `lastUsed` is shown on key reads; a minute's precision spares a busy key a write per request.
  const now = new Date();
  if (!last_used || now.getTime() - new Date(last_used).getTime() > LAST_USED_PRECISION_MS) {
    await em.nativeUpdate(ApiKey, { id: key_id }, { lastUsed: now });
  }
  return {
    kind: 'apiKey',
    user: em.map(User, userRow),
    apiKey: {
      id: key_id,
      name: key_name,
      keyPrefix: parsed.keyPrefix,
      accessType: access_type,
      permissions,
      // Only `projects` keys have an allow list.
      projectIds: project_ids ?? [],
    },
  };
}
