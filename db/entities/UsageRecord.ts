import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BillingAccount } from './BillingAccount.ts';
import { created, id } from './common.ts';
import { Project } from './Project.ts';

export const usageUnits = ['cpu', 'network', 'tokens'] as const;
export type UsageUnit = (typeof usageUnits)[number];

/**
 * One metered report (server/billing/metering.ts): `amount` of `unit` used by a resource (a
 * browser, an agent job), priced when it was written. `fromPool` is the part the plan's bonus
 * covered (`discount` its worth, micro-units); `costMicros` what the rest cost; `billed` the
 * minor units it took from the balance and `pending` those funds did not cover.
 */
export const UsageRecord = defineEntity({
  name: 'UsageRecord',
  tableName: 'usage_records',
  /** A project's usage by time: the console's usage page (server/trpc/routers/projectOverview.ts). */
  indexes: [{ properties: ['project', 'created'] }],
  properties: {
    id: id(),
    /** Null once the project is deleted: the account's usage (what it paid for) outlives it. */
    project: () => p.manyToOne(Project).deleteRule('set null').nullable().index(),
    account: () => p.manyToOne(BillingAccount).deleteRule('cascade').nullable().index(),
    resourceId: p.uuid().index(),
    unit: p.string().length(40),
    amount: p.decimal('string').precision(20).scale(6),
    /** A reporter's id for this report: a retried report is recorded (and debited) once. */
    reportId: p.string().length(200).nullable().unique(),
    currency: p.string().length(3).nullable(),
    fromPool: p.decimal('string').precision(20).scale(6).default('0'),
    discountMicros: p.bigint('bigint').default(0),
    costMicros: p.bigint('bigint').default(0),
    billed: p.bigint('bigint').default(0),
    pending: p.bigint('bigint').default(0),
    created: created(),
  },
});

export type UsageRecord = InferEntity<typeof UsageRecord>;
