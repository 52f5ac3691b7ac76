import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey, AuthSession, User } from '../../db/entities/index.ts';
import { Unauthenticated } from '../errors.ts';
import type { AccessCache } from './accessCache.ts';
import { apiKeyMatches, parseApiKey } from './apiKeys.ts';
import { type JwtSigner, looksLikeJwt } from './jwt.ts';

/**
 * What the permission module decides on about the user behind a credential. It comes with the
 * credential, so deciding needs no entity: `user` (and `session`) are mapped into the request's
 * EntityManager only when something asks for them, which most requests on an API key never do.
 */
export type Account = { readonly id: string; readonly isAdmin: boolean; readonly emailVerified: boolean };

/** Who is calling. Resolved once per request from the cookie or the headers. */
export type Subject =
  | { kind: 'anonymous' }
  | {
      kind: 'session';
      account: Account;
      user: User;
      session: AuthSession;
      claims: { sub: string; sid: string; kind: string; iat?: number; exp?: number };
    }
  | { kind: 'pending2fa'; account: Account; user: User; session: AuthSession }
  | {
      kind: 'apiKey';
      account: Account;
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

export type CredentialSource = {
  cookieToken?: string;
  authorization?: string;
  apiKeyHeader?: string;
};

/**
 * The request's EntityManager, or how to get it: a function forks it only when something needs
 * it (a cache miss, a write, an entity), which a request answered from the access cache does not.
 */
export type EntityManagerOf = EntityManager | (() => EntityManager);

/** An EntityManagerOf as the function that gives it. */
export function entityManagerGetter(em: EntityManagerOf): () => EntityManager {
  return typeof em === 'function' ? em : () => em;
}

/** What resolving a caller needs beside the request's EntityManager. */
export type SubjectDeps = { jwt: JwtSigner; access: AccessCache };

/**
 * Precedence: an explicit header beats the cookie, so a script that sends a key while a browser
 * cookie is present acts as the key. A credential that is present but invalid is an error (401),
 * never silently anonymous: a revoked key must fail loudly.
 */
export async function resolveSubject(em: EntityManagerOf, deps: SubjectDeps, source: CredentialSource): Promise<Subject> {
  const credential = pickCredential(source);
  if (!credential) return { kind: 'anonymous' };
  const emOf = entityManagerGetter(em);
  if (credential.type === 'apiKey') return resolveApiKey(emOf, deps.access, credential.value);
  try {
    return await resolveJwt(emOf, deps, credential.value);
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

/**
 * The user's columns, from the entity's metadata, leaving out the lazy ones (password hash, TOTP
 * secret): a request never holds them, and the access cache never keeps them.
 */
let userColumnList: string | undefined;
function userColumns(em: EntityManager) {
  userColumnList ??= em
    .getMetadata(User)
    .props.filter((prop) => !prop.lazy && prop.persist !== false)
    .flatMap((prop) => prop.fieldNames ?? [])
    .map((column) => `u.${column}`)
    .join(', ');
  return userColumnList;
}

type UserRow = Record<string, unknown> & { id: string; is_admin: boolean; email_verified: boolean };

function accountOf(user: UserRow): Account {
  return Object.freeze({ id: user.id, isAdmin: user.is_admin, emailVerified: user.email_verified });
}

/** The entity `make` builds, built on first use only (see Account). */
/**
 * A caller's user (and sign-in session) as entities of the request's EntityManager, mapped when
 * first asked for. Subjects are classes with their getters on the prototype: an object literal
 * with a getter costs V8 a slow definition per request (docs/benchmarks/project-get.md).
 */
class HeldEntities {
  #em: () => EntityManager;
  #userRow: UserRow;
  #sessionRow: SessionEntry['session'] | undefined;
  #user: User | undefined;
  #session: AuthSession | undefined;

  constructor(em: () => EntityManager, userRow: UserRow, sessionRow?: SessionEntry['session']) {
    this.#em = em;
    this.#userRow = userRow;
    this.#sessionRow = sessionRow;
  }

  get user() {
    this.#user ??= this.#em().map(User, this.#userRow);
    return this.#user;
  }

  get session() {
    if (!this.#session) {
      if (!this.#sessionRow) throw new Error('this caller has no sign-in session');
      // The user first, so the session's `user` reference is that entity.
      this.#user ??= this.#em().map(User, this.#userRow);
      this.#session = this.#em().map(AuthSession, this.#sessionRow);
    }
    return this.#session;
  }
}

/** A caller by sign-in session (a full one, or one waiting for its second factor). */
class SignedInSubject {
  readonly account: Account;
  #held: HeldEntities;

  constructor(account: Account, held: HeldEntities) {
    this.account = account;
    this.#held = held;
  }

  get user() {
    return this.#held.user;
  }

  get session() {
    return this.#held.session;
  }
}

class SessionSubject extends SignedInSubject {
  readonly kind = 'session';
  readonly claims: Extract<Subject, { kind: 'session' }>['claims'];

  constructor(account: Account, held: HeldEntities, claims: SessionSubject['claims']) {
    super(account, held);
    this.claims = claims;
  }
}

class PendingSecondFactorSubject extends SignedInSubject {
  readonly kind = 'pending2fa';
}

class ApiKeySubject {
  readonly kind = 'apiKey';
  readonly account: Account;
  readonly apiKey: ApiKeyEntry['apiKey'];
  #held: HeldEntities;

  constructor(entry: ApiKeyEntry, em: () => EntityManager) {
    this.account = entry.account;
    this.apiKey = entry.apiKey;
    this.#held = new HeldEntities(em, entry.user);
  }

  get user() {
    return this.#held.user;
  }
}

/** A sign-in session and its user, as kept between requests. */
type SessionEntry = {
  /** As the row reads (column names, PostgreSQL's text for timestamps), for `em.map`. */
  session: { id: string; user_id: string; kind: 'full' | '2fa_pending'; remember: boolean; expires_at: string; created: string };
  /** When it ends, in ms; NaN (a date that did not parse) counts as ended. */
  endsAt: number;
  user: UserRow;
  account: Account;
};

async function loadSession(em: EntityManager, sessionId: string) {
  const [row] = await em.getConnection().execute<(UserRow & Record<`session_${string}`, unknown>)[]>(
    `select s.kind as session_kind, s.remember as session_remember, s.expires_at as session_expires_at,
      s.created as session_created, ${userColumns(em)}
    from auth_sessions s join users u on u.id = s.user_id
    where s.id = ?`,
    [sessionId],
  );
  if (!row) return null;
  const { session_kind, session_remember, session_expires_at, session_created, ...user } = row;
  const entry: SessionEntry = {
    session: {
      id: sessionId,
      user_id: user.id,
      kind: session_kind as SessionEntry['session']['kind'],
      remember: session_remember as boolean,
      expires_at: session_expires_at as string,
      created: session_created as string,
    },
    endsAt: new Date(session_expires_at as string).getTime(),
    user,
    account: accountOf(user),
  };
  return { value: entry, tags: [`session:${sessionId}`, `user:${user.id}`] };
}

async function resolveJwt(em: () => EntityManager, deps: SubjectDeps, token: string): Promise<Subject> {
  const claims = await deps.jwt.verify(token);
  if (!claims) throw new Unauthenticated('Session token is invalid or expired', 'invalid_token');
  // The session row is the truth (logout and password changes delete it); the cache hears of that.
  const entry = await deps.access.read(`session:${claims.sid}`, () => loadSession(em(), claims.sid));
  if (!entry || entry.session.user_id !== claims.sub || !(entry.endsAt > Date.now())) {
    throw new Unauthenticated('Session has ended; sign in again', 'session_ended');
  }
  // Entities of this request's EntityManager, when asked for: routers use them as such.
  const held = new HeldEntities(em, entry.user, entry.session);
  return entry.session.kind === '2fa_pending'
    ? new PendingSecondFactorSubject(entry.account, held)
    : new SessionSubject(entry.account, held, claims);
}

/** An API key with its user and, for `projects` keys, its allow list, as kept between requests. */
type ApiKeyEntry = {
  secretHash: string;
  apiKey: Extract<Subject, { kind: 'apiKey' }>['apiKey'];
  user: UserRow;
  account: Account;
  /** When `lastUsed` was last written (or read), so a busy key is written once a minute, not per request. */
  lastUsedAt: number;
  /**
   * The presented secret once it has matched `secretHash`, so later requests skip the SHA-256.
   * Looked up as a Set member (by the string's hash, then equality only on a hash match), not
   * compared character by character, so timing says nothing of how much of a guess was right.
   * It lives in this entry, which the access cache drops when the key or its user changes.
   */
  verified: Set<string>;
};

type ApiKeyRow = {
  key_id: string;
  key_name: string;
  access_type: 'full' | 'projects' | 'custom';
  secret_hash: string;
  permissions: string[];
  last_used: Date | null;
  project_ids: string[] | null;
} & UserRow;

/** The key, its user and, for `projects` keys, its allow list, in one round trip. */
async function loadApiKey(em: EntityManager, keyPrefix: string) {
  const [row] = await em.getConnection().execute<ApiKeyRow[]>(
    `select k.id as key_id, k.name as key_name, k.access_type, k.secret_hash, k.permissions, k.last_used,
      case when k.access_type = 'projects'
        then array(select kp.project_id from api_key_projects kp where kp.api_key_id = k.id) end as project_ids,
      ${userColumns(em)}
    from api_keys k join users u on u.id = k.user_id
    where k.key_prefix = ?`,
    [keyPrefix],
  );
  if (!row) return null;
  const { key_id, key_name, access_type, secret_hash, permissions, last_used, project_ids, ...user } = row;
  const entry: ApiKeyEntry = {
    secretHash: secret_hash,
    // Shared by every request on this key until it changes: frozen, so none can alter it for the next.
    apiKey: Object.freeze({
      id: key_id,
      name: key_name,
      keyPrefix,
      accessType: access_type,
      permissions: Object.freeze([...permissions]) as string[],
      // Only `projects` keys have an allow list.
      projectIds: Object.freeze([...(project_ids ?? [])]) as string[],
    }),
    user,
    account: accountOf(user),
    lastUsedAt: last_used ? new Date(last_used).getTime() : 0,
    verified: new Set(),
  };
  return { value: entry, tags: [`key:${key_id}`, `user:${user.id}`] };
}

/**
 * Every API request comes through here: the key from the access cache (one raw query when it is
 * not there), the secret checked against its SHA-256 in constant time the first time this
 * process sees it for the cached key (then remembered in the entry, see ApiKeyEntry.verified).
 */
async function resolveApiKey(em: () => EntityManager, access: AccessCache, value: string): Promise<Subject> {
  const parsed = parseApiKey(value);
  const entry = parsed ? await access.read(`apiKey:${parsed.keyPrefix}`, () => loadApiKey(em(), parsed.keyPrefix)) : null;
  if (!parsed || !entry) throw new Unauthenticated('API key is invalid or revoked', 'invalid_api_key');
  if (!entry.verified.has(parsed.secret)) {
    if (!apiKeyMatches(parsed.secret, entry.secretHash)) throw new Unauthenticated('API key is invalid or revoked', 'invalid_api_key');
    // Only the one secret that matches is ever kept: a key has one.
    entry.verified.add(parsed.secret);
  }
  // `lastUsed` is shown on key reads; a minute's precision spares a busy key a write per request.
  // (The write is not an access change: the trigger ignores `last_used`.)
  const now = Date.now();
  if (now - entry.lastUsedAt > LAST_USED_PRECISION_MS) {
    entry.lastUsedAt = now;
    await em().nativeUpdate(ApiKey, { id: entry.apiKey.id }, { lastUsed: new Date(now) });
  }
  return new ApiKeySubject(entry, em);
}
