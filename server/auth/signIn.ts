import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyReply } from 'fastify';
import type { User } from '../../db/entities/index.ts';
import type { AppDeps } from '../appDeps.ts';
import { setSessionCookie, startSession } from './sessions.ts';

export type SignInTarget = { em: EntityManager; deps: AppDeps; reply: FastifyReply };

export type SignInStatus = 'ok' | 'email_not_verified' | '2fa_required';

/**
 * Starts a session, sets the `token` cookie and answers with the token, as every sign-in does.
 * An account with two-factor sign-in gets a `2fa_pending` session instead, good only for
 * `POST /api/auth/2fa/verify`, unless the second factor was just checked (`secondFactorDone`).
 */
export async function signIn(
  target: SignInTarget,
  user: User,
  options: { remember: boolean; secondFactorDone?: boolean },
): Promise<{ status: SignInStatus; token: string }> {
  const pending = user.twoFactorEnabled && !options.secondFactorDone;
  const { token, expiresAt } = await startSession(target.em, target.deps.jwt, user, {
    remember: options.remember,
    kind: pending ? '2fa_pending' : 'full',
  });
  setSessionCookie(target.reply, token, {
    // The pending cookie dies with the browser; `remember` is kept on the row for the full session.
    remember: pending ? false : options.remember,
    expiresAt,
    secure: target.deps.config.publicUrl.startsWith('https:'),
  });
  if (pending) return { status: '2fa_required', token };
  return { status: user.emailVerified ? 'ok' : 'email_not_verified', token };
}
