import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';
import { User } from './User.ts';

/**
 * A signed-in session. The JWT in the `token` cookie names one of these rows, so deleting
 * the row (logout, password reset) revokes the token at once.
 */
export const AuthSession = defineEntity({
  name: 'AuthSession',
  tableName: 'auth_sessions',
  properties: {
    id: id(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    /** `full` signs in; `2fa_pending` is good only for completing a two-factor login. */
    kind: p.enum(['full', '2fa_pending'] as const),
    remember: p.boolean(),
    expiresAt: p.datetime(),
    created: created(),
  },
});

export type AuthSession = InferEntity<typeof AuthSession>;
