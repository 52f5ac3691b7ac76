import type { EntityManager } from '@mikro-orm/postgresql';
import { ExternalIdentity, ExternalRegistration, type User } from '../../db/entities/index.ts';
import { BadRequest, Conflict } from '../errors.ts';
import type { ExternalProfile } from './oidc.ts';
import { randomToken, sha256 } from './secrets.ts';

/** How long the link to `/auth/external-register/<token>` works. */
export const EXTERNAL_REGISTRATION_TTL_MS = 15 * 60 * 1000;

export function findIdentity(em: EntityManager, provider: string, subject: string) {
  return em.findOne(ExternalIdentity, { provider, subject }, { populate: ['user'] });
}

/**
 * Links the identity to `user`. An identity belongs to one account only, and an account has one
 * identity per provider: either clash is a 409, never a silent move.
 */
export async function linkIdentity(em: EntityManager, user: User, profile: ExternalProfile) {
  const existing = await findIdentity(em, profile.provider, profile.subject);
  if (existing && existing.user.id !== user.id) {
    throw new Conflict('identity_linked_elsewhere', `This ${profile.provider} account is already linked to another user`);
  }
  if (existing) {
    existing.email = profile.email;
  } else {
    const other = await em.findOne(ExternalIdentity, { user: user.id, provider: profile.provider });
    if (other) {
      throw new Conflict('provider_already_linked', `Another ${profile.provider} account is linked to this user; unlink it first`);
    }
    em.create(ExternalIdentity, { user, provider: profile.provider, subject: profile.subject, email: profile.email });
  }
  // The provider vouching for the very address of the account proves it as well as our mail does.
  if (profile.emailVerified && profile.email === user.email.toLowerCase()) user.emailVerified = true;
  await em.flush();
}

/** Remembers an unknown identity for the registration page; returns the single-use token. */
export async function startExternalRegistration(em: EntityManager, profile: ExternalProfile) {
  const token = randomToken(32);
  em.create(ExternalRegistration, {
    tokenHash: sha256(token),
    provider: profile.provider,
    subject: profile.subject,
    email: profile.email,
    emailVerified: profile.emailVerified,
    firstName: profile.firstName,
    lastName: profile.lastName,
    expiresAt: new Date(Date.now() + EXTERNAL_REGISTRATION_TTL_MS),
  });
  await em.flush();
  return token;
}

const invalidRegistration = () => new BadRequest('invalid_token', 'The registration token is invalid, expired or already used');

/** The pending registration of a token that is still good (unused, unexpired). */
export async function findExternalRegistration(em: EntityManager, token: string) {
  // Looked up by a SHA-256 of a 256-bit token: the lookup's timing tells nothing about the token.
  const row = await em.findOne(ExternalRegistration, { tokenHash: sha256(token) });
  if (!row || row.usedAt || row.expiresAt < new Date()) throw invalidRegistration();
  return row;
}

/** Marks the registration used; conditional, so two concurrent submissions cannot both create an account. */
export async function claimExternalRegistration(em: EntityManager, row: ExternalRegistration) {
  const claimed = await em.nativeUpdate(ExternalRegistration, { id: row.id, usedAt: null }, { usedAt: new Date() });
  if (claimed !== 1) throw invalidRegistration();
}
