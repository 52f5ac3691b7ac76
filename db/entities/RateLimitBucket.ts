import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/**
 * A fixed-window counter, one row per limited key (`login:ip:<address>`, `login:account:<hash>`).
 * Kept in PostgreSQL because api replicas hold no state; server/auth/rateLimits.ts updates it
 * with one atomic upsert per hit.
 */
export const RateLimitBucket = defineEntity({
  name: 'RateLimitBucket',
  tableName: 'rate_limit_buckets',
  properties: {
    key: p.string().length(200).primary(),
    hits: p.integer(),
    resetAt: p.datetime().index(),
  },
});

export type RateLimitBucket = InferEntity<typeof RateLimitBucket>;
