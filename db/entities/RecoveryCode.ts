import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';
import { User } from './User.ts';

/**
 * Two-factor recovery codes: ten per user, each good once. Only an HMAC keyed by the user id is
 * stored, so equal codes of two users never share a hash.
 */
export const RecoveryCode = defineEntity({
  name: 'RecoveryCode',
  tableName: 'recovery_codes',
  properties: {
    id: id(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    codeHash: p.string().length(64).hidden(),
    usedAt: p.datetime().nullable(),
    created: created(),
  },
});

export type RecoveryCode = InferEntity<typeof RecoveryCode>;
