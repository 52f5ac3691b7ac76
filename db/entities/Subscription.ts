import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BillingAccount } from './BillingAccount.ts';
import { created, id, updated } from './common.ts';

/**
 * A Stripe subscription as the newest event told it. `stateCreated` is that event's `created`: an
 * older event never overwrites a newer state, and a deleted subscription stays deleted. The pools
 * (`left*`) are what is left of the plan's bonuses this period, in millionths of the unit.
 */
export const Subscription = defineEntity({
  name: 'Subscription',
  tableName: 'subscriptions',
  properties: {
    id: id(),
    account: () => p.manyToOne(BillingAccount).deleteRule('cascade').index(),
    stripeSubscriptionId: p.string().length(255).unique(),
    planId: p.string().length(100).nullable(),
    priceId: p.string().length(255).nullable(),
    status: p.string().length(40),
    deleted: p.boolean().default(false),
    stateCreated: p.bigint('number'),
    /** Activated by a paid checkout (its session id); until then an update only records the state. */
    activatedBy: p.string().length(255).nullable(),
    /** The current period (Unix seconds), as the newest event told it. */
    currentPeriodStart: p.bigint('number').nullable(),
    currentPeriodEnd: p.bigint('number').nullable(),
    /** The period (Unix seconds of its start) whose bonuses the pools hold. */
    poolPeriod: p.bigint('number').nullable(),
    leftCpu: p.bigint('bigint').default(0),
    leftNetwork: p.bigint('bigint').default(0),
    leftTokens: p.bigint('bigint').default(0),
    created: created(),
    updated: updated(),
  },
});

export type Subscription = InferEntity<typeof Subscription>;
