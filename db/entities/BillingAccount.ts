import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { User } from './User.ts';

/**
 * The money of one user (server/billing/): what every project the user owns draws on. Amounts
 * are integers: `available` and `pending` in the currency's minor units, `carryMicros` the
 * usage cost not yet a whole minor unit, in millionths of one. The ledger (`LedgerEntry`) sums to
 * `available` and `pending`; only server/billing/ledger.ts writes either.
 */
export const BillingAccount = defineEntity({
  name: 'BillingAccount',
  tableName: 'billing_accounts',
  properties: {
    id: id(),
    user: () => p.oneToOne(User).owner().deleteRule('cascade').unique(),
    currency: p.string().length(3),
    /** The Stripe customer, made once per user (idempotency key `customer-<userId>`). */
    stripeCustomerId: p.string().length(255).nullable().unique(),
    available: p.bigint('bigint').default(0),
    /** Usage that funds did not cover: owed, settled first by the next credit. */
    pending: p.bigint('bigint').default(0),
    carryMicros: p.bigint('bigint').default(0),
    /** Set by the report that exhausted the funds; every later report answers `shutdown` until a credit. */
    exhaustedAt: p.datetime().nullable(),
    created: created(),
    updated: updated(),
  },
});

export type BillingAccount = InferEntity<typeof BillingAccount>;
