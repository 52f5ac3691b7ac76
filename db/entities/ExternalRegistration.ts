import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';

/**
 * An external identity that signed in without an account yet. The browser is sent to
 * `/auth/external-register/<token>`; `POST /api/auth/external/register` with that token creates
 * the account. Single-use and short-lived; only a SHA-256 of the token is stored.
 */
export const ExternalRegistration = defineEntity({
  name: 'ExternalRegistration',
  tableName: 'external_registrations',
  properties: {
    id: id(),
    tokenHash: p.string().length(64).unique().hidden(),
    provider: p.string().length(64),
    subject: p.string().length(255),
    email: p.string().length(320).nullable(),
    /** True only when the provider said `email_verified: true` for `email`. */
    emailVerified: p.boolean(),
    firstName: p.string().length(100).nullable(),
    lastName: p.string().length(100).nullable(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    created: created(),
  },
});

export type ExternalRegistration = InferEntity<typeof ExternalRegistration>;
