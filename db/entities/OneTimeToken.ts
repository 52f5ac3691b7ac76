import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';
import { User } from './User.ts';

/** Short-lived, single-use tokens sent by mail. Only a SHA-256 of the token is stored. */
export const OneTimeToken = defineEntity({
  name: 'OneTimeToken',
  tableName: 'one_time_tokens',
  properties: {
    id: id(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    purpose: p.enum(['verify_email', 'reset_password'] as const),
    tokenHash: p.string().length(64).unique().hidden(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    created: created(),
  },
});

export type OneTimeToken = InferEntity<typeof OneTimeToken>;
