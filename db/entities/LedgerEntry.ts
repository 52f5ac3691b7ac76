import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BillingAccount } from './BillingAccount.ts';
import { created, id } from './common.ts';
import { UsageRecord } from './UsageRecord.ts';

export const ledgerKinds = ['top_up', 'usage', 'settlement'] as const;

/**
 * One movement of an account's money, in minor units: `amount` changes `available`,
 * `pendingChange` changes `pending`. A top-up is unique by its Checkout session (a webhook
 * delivered twice credits once); a usage debit by its usage record.
 */
export const LedgerEntry = defineEntity({
  name: 'LedgerEntry',
  tableName: 'ledger_entries',
  properties: {
    id: id(),
    account: () => p.manyToOne(BillingAccount).deleteRule('cascade').index(),
    kind: p.enum(ledgerKinds),
    currency: p.string().length(3),
    amount: p.bigint('bigint'),
    pendingChange: p.bigint('bigint').default(0),
    checkoutSessionId: p.string().length(255).nullable().unique(),
    usageRecord: () => p.manyToOne(UsageRecord).deleteRule('cascade').nullable().unique(),
    stripeEventId: p.string().length(255).nullable(),
    created: created(),
  },
});

export type LedgerEntry = InferEntity<typeof LedgerEntry>;
