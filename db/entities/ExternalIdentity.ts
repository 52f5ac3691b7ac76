import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';
import { User } from './User.ts';

/** An OpenID Connect identity (`sub` at a configured provider) linked to a user. */
export const ExternalIdentity = defineEntity({
  name: 'ExternalIdentity',
  tableName: 'external_identities',
  // One account per identity, and one identity per provider per account.
  uniques: [{ properties: ['provider', 'subject'] }, { properties: ['user', 'provider'] }],
  properties: {
    id: id(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    provider: p.string().length(64),
    subject: p.string().length(255),
    email: p.string().length(320).nullable(),
    created: created(),
  },
});

export type ExternalIdentity = InferEntity<typeof ExternalIdentity>;
