import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { AuthSession } from './AuthSession.ts';
import { created, id } from './common.ts';
import { User } from './User.ts';

/**
 * An external identity a signed-in user's link flow came back with, waiting for that user to
 * confirm it at `/auth/external-link/<token>` (`POST /api/auth/external/link/confirm`). Bound to
 * the auth session that started the flow: ending that session (logout, a password change
 * elsewhere) drops it. Single-use and short-lived; only a SHA-256 of the token is stored.
 */
export const ExternalLinkRequest = defineEntity({
  name: 'ExternalLinkRequest',
  tableName: 'external_link_requests',
  properties: {
    id: id(),
    tokenHash: p.string().length(64).unique().hidden(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    session: () => p.manyToOne(AuthSession).deleteRule('cascade').index(),
    provider: p.string().length(64),
    subject: p.string().length(255),
    email: p.string().length(320).nullable(),
    /** True only when the provider said `email_verified: true` for `email`. */
    emailVerified: p.boolean(),
    firstName: p.string().length(100).nullable(),
    lastName: p.string().length(100).nullable(),
    /** The flow's returnUrl, a path on PUBLIC_URL's origin (checked at /init). */
    returnTo: p.text(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    created: created(),
  },
});

export type ExternalLinkRequest = InferEntity<typeof ExternalLinkRequest>;
