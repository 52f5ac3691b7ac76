import type { EntityManager } from '@mikro-orm/postgresql';
import { OneTimeToken, type User } from '../../db/entities/index.ts';
import { BadRequest } from '../errors.ts';
import { randomToken, sha256 } from './secrets.ts';

export const ONE_TIME_TOKEN_TTL = { verify_email: 24 * 60 * 60 * 1000, reset_password: 60 * 60 * 1000 } as const;
type Purpose = keyof typeof ONE_TIME_TOKEN_TTL;

/** A new single-use token; only its hash is stored. Earlier unused tokens of that purpose die. */
export async function issueOneTimeToken(em: EntityManager, user: User, purpose: Purpose) {
  const token = randomToken(32);
  await em.nativeDelete(OneTimeToken, { user, purpose, usedAt: null });
  em.create(OneTimeToken, {
    user,
    purpose,
    tokenHash: sha256(token),
    expiresAt: new Date(Date.now() + ONE_TIME_TOKEN_TTL[purpose]),
  });
  await em.flush();
  return token;
}

/**
 * Marks the token used and returns its user. The update is conditional on `used_at is null`,
 * so two concurrent submissions of one token cannot both succeed.
 */
export async function consumeOneTimeToken(em: EntityManager, token: string, purpose: Purpose) {
  const row = await em.findOne(OneTimeToken, { tokenHash: sha256(token), purpose }, { populate: ['user'] });
  const now = new Date();
  if (!row || row.usedAt || row.expiresAt < now) {
    throw new BadRequest('invalid_token', 'The token is invalid, expired or already used');
  }
  const claimed = await em.nativeUpdate(OneTimeToken, { id: row.id, usedAt: null }, { usedAt: now });
  if (claimed !== 1) throw new BadRequest('invalid_token', 'The token is invalid, expired or already used');
  return row.user;
}
