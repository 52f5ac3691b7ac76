import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyReply } from 'fastify';
import { AuthSession, type User } from '../../db/entities/index.ts';
import type { JwtSigner } from './jwt.ts';

const DAY = 24 * 60 * 60 * 1000;
/** `remember` keeps a session 30 days; otherwise the cookie dies with the browser, the row in 7 days. */
export const SESSION_TTL = { remember: 30 * DAY, browser: 7 * DAY, twoFactorPending: 10 * 60 * 1000 } as const;

export async function startSession(
  em: EntityManager,
  jwt: JwtSigner,
  user: User,
  options: { remember: boolean; kind?: 'full' | '2fa_pending' },
) {
  const kind = options.kind ?? 'full';
  const ttl = kind === '2fa_pending' ? SESSION_TTL.twoFactorPending : options.remember ? SESSION_TTL.remember : SESSION_TTL.browser;
  const expiresAt = new Date(Date.now() + ttl);
  const session = em.create(AuthSession, { user, kind, remember: options.remember, expiresAt });
  await em.flush();
  const token = await jwt.sign({ sub: user.id, sid: session.id, kind }, expiresAt);
  return { session, token, expiresAt };
}

export async function endSession(em: EntityManager, sessionId: string) {
  await em.nativeDelete(AuthSession, { id: sessionId });
}

/** Ends every session of the user except `keepSessionId` (password reset, security changes). */
export async function revokeSessions(em: EntityManager, userId: string, keepSessionId?: string) {
  await em.nativeDelete(AuthSession, keepSessionId ? { user: userId, id: { $ne: keepSessionId } } : { user: userId });
}

export function setSessionCookie(reply: FastifyReply, token: string, options: { remember: boolean; expiresAt: Date; secure: boolean }) {
  reply.setCookie('token', token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: options.secure,
    // Without `remember` the cookie has no expiry: the browser drops it when it closes.
    ...(options.remember ? { expires: options.expiresAt } : {}),
  });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean) {
  reply.clearCookie('token', { path: '/', httpOnly: true, sameSite: 'lax', secure });
}
