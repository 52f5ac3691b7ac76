import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type AuthSession, ExternalIdentity, ExternalLinkRequest, ExternalRegistration, User } from '../../db/entities/index.ts';
import { BadRequest, Conflict } from '../errors.ts';
import type { ExternalProfile } from './oidc.ts';
import { randomToken, sha256 } from './secrets.ts';

/** How long the link to `/auth/external-register/<token>` works. */
export const EXTERNAL_REGISTRATION_TTL_MS = 15 * 60 * 1000;
/** How long a link waits at `/auth/external-link/<token>` for the user to confirm it. */
export const EXTERNAL_LINK_TTL_MS = 10 * 60 * 1000;

export function findIdentity(em: EntityManager, provider: string, subject: string) {
  return em.findOne(ExternalIdentity, { provider, subject }, { populate: ['user'] });
}

/**
 * Whether the identity may be linked to `user`: an identity belongs to one account only, and an
 * account has one identity per provider; either clash is a 409, never a silent move. Answers the
 * identity when it is linked to `user` already.
 */
export async function linkableIdentity(em: EntityManager, user: User, profile: ExternalProfile) {
  const existing = await findIdentity(em, profile.provider, profile.subject);
  if (existing && existing.user.id !== user.id) {
    throw new Conflict('identity_linked_elsewhere', `This ${profile.provider} account is already linked to another user`);
  }
  if (existing) return existing;
  if (await em.count(ExternalIdentity, { user: user.id, provider: profile.provider })) {
    throw new Conflict('provider_already_linked', `Another ${profile.provider} account is linked to this user; unlink it first`);
  }
  return null;
}

/** Links the identity to `user` (409 as linkableIdentity says), or refreshes the e-mail of the one linked already. */
export async function linkIdentity(em: EntityManager, user: User, profile: ExternalProfile) {
  const existing = await linkableIdentity(em, user, profile);
  if (existing) {
    existing.email = profile.email;
  } else {
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
    ...profileColumns(profile),
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

/**
 * Remembers the identity a link flow of `session` came back with, for the user to confirm at
 * `/auth/external-link/<token>`; returns the single-use token. Nothing is linked yet: /init is a
 * GET another site can send a signed-in browser to, so only the user's own click links.
 */
export async function startExternalLink(
  em: EntityManager,
  link: { user: User; session: AuthSession; profile: ExternalProfile; returnTo: string },
) {
  const token = randomToken(32);
  em.create(ExternalLinkRequest, {
    tokenHash: sha256(token),
    user: link.user,
    session: link.session,
    ...profileColumns(link.profile),
    returnTo: link.returnTo,
    expiresAt: new Date(Date.now() + EXTERNAL_LINK_TTL_MS),
  });
  await em.flush();
  return token;
}

const invalidLink = () => new BadRequest('invalid_token', 'The link token is invalid, expired or already used; start linking again');

/**
 * The pending link of a token that is still good (unused, unexpired), for the session that
 * started its flow only: another session, of the same user or not, is refused and does not use
 * it up, so a leaked token gives nobody else a way to confirm or to read it.
 */
export async function findExternalLink(em: EntityManager, token: string, session: AuthSession) {
  // Looked up by a SHA-256 of a 256-bit token: the lookup's timing tells nothing about the token.
  const row = await em.findOne(ExternalLinkRequest, { tokenHash: sha256(token) }, { populate: ['user'] });
  if (!row || row.usedAt || row.expiresAt < new Date()) throw invalidLink();
  if (row.session.id !== session.id) {
    throw new BadRequest(
      'external_flow_mismatch',
      'This provider link was started by another session than the one signed in now; start again',
    );
  }
  return row;
}

/**
 * Links the pending identity and uses the token up, in one transaction: a 409 (the identity went
 * to another account meanwhile, or the account got another identity of the provider) leaves the
 * token usable, as a registration's does, so the user can unlink the other one and confirm again.
 */
export async function confirmExternalLink(em: EntityManager, row: ExternalLinkRequest) {
  const profile = linkRequestProfile(row);
  try {
    await em.transactional(async (tx) => {
      await claimExternalLink(tx, row);
      await linkIdentity(tx, await tx.findOneOrFail(User, row.user.id), profile);
    });
  } catch (error) {
    // Several users confirming one identity at once all pass the check before any inserts: the
    // losers' unique violations become the 409 the check would have answered.
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
    await linkableIdentity(em.fork(), row.user, profile);
    throw error;
  }
}

/** Uses the token up without linking (the user said no). */
export async function cancelExternalLink(em: EntityManager, row: ExternalLinkRequest) {
  await claimExternalLink(em, row);
}

/** Conditional, so two confirmations of one token (or a confirm and a cancel) cannot both win. */
async function claimExternalLink(em: EntityManager, row: ExternalLinkRequest) {
  const claimed = await em.nativeUpdate(ExternalLinkRequest, { id: row.id, usedAt: null }, { usedAt: new Date() });
  if (claimed !== 1) throw invalidLink();
}

function profileColumns(profile: ExternalProfile) {
  return {
    provider: profile.provider,
    subject: profile.subject,
    email: profile.email,
    emailVerified: profile.emailVerified,
    firstName: profile.firstName,
    lastName: profile.lastName,
  };
}

/** The provider's profile a pending link request holds. */
export function linkRequestProfile(row: ExternalLinkRequest): ExternalProfile {
  return {
    provider: row.provider,
    subject: row.subject,
    email: row.email ?? null,
    emailVerified: row.emailVerified,
    firstName: row.firstName ?? null,
    lastName: row.lastName ?? null,
  };
}
