import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: id(),
    email: p.string().length(320).unique(),
    firstName: p.string().length(100),
    lastName: p.string().length(100),
    /** argon2id; null for accounts created through an external provider. */
    passwordHash: p.string().nullable().hidden().lazy(),
    emailVerified: p.boolean().default(false),
    isAdmin: p.boolean().default(false),
    /**
     * The TOTP secret, sealed under the service secret (server/auth/twoFactor.ts). Set by
     * `2fa/enable/request`, in force once `twoFactorEnabled`; never returned after setup.
     */
    totpSecret: p.text().nullable().hidden().lazy(),
    twoFactorEnabled: p.boolean().default(false),
    /** The last TOTP time step accepted: a code is good once, and no older code after it. */
    totpLastStep: p.integer().nullable().hidden(),
    created: created(),
    updated: updated(),
  },
});

export type User = InferEntity<typeof User>;
