import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/**
 * A Stripe event, recorded in the transaction that applies it: its id is the primary key, so an
 * event delivered again (or at once, five times) is applied once.
 */
export const StripeEvent = defineEntity({
  name: 'StripeEvent',
  tableName: 'stripe_events',
  properties: {
    id: p.string().length(255).primary(),
    type: p.string().length(100),
    /** The event's own `created` (Unix seconds): what orders subscription changes. */
    eventCreated: p.bigint('number'),
    /** What applying it did (`credited`, `activated`, `ignored: older than the state` …). */
    outcome: p.string().length(300),
    receivedAt: p.datetime().onCreate(() => new Date()),
  },
});

export type StripeEvent = InferEntity<typeof StripeEvent>;
