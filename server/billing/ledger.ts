import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { BillingAccount, LedgerEntry, type Project, Subscription, type UsageRecord, type UsageUnit } from '../../db/entities/index.ts';
import type { Config } from '../config.ts';
import { PaymentRequired } from '../errors.ts';
import { MICROS_PER_MINOR, minBig } from './money.ts';

/**
 * The one writer of an account's money. Every change locks the account row first (so webhooks,
 * usage reports and credits of one account happen one after another) and writes a ledger entry
 * in the same transaction: the entries sum to `available` and `pending`, always.
 */

type Billing = Config['billing'];

/** The statuses of a Stripe subscription whose plan is in force. */
const liveStatuses = ['active', 'trialing', 'past_due'];

/** The user's account, made on first use (in the default currency). */
export async function accountOf(em: EntityManager, billing: Billing, userId: string): Promise<BillingAccount> {
  const existing = await em.findOne(BillingAccount, { user: userId });
  if (existing) return existing;
  await em
    .getConnection()
    .execute(
      `insert into billing_accounts (id, user_id, currency, created, updated) values (gen_random_uuid(), ?, ?, now(), now()) on conflict (user_id) do nothing`,
      [userId, billing.currency],
      'run',
      em.getTransactionContext(),
    );
  return em.findOneOrFail(BillingAccount, { user: userId });
}

/** Inside a transaction: the account, locked until it commits. */
export async function lockAccount(tx: EntityManager, billing: Billing, userId: string) {
  const account = await accountOf(tx, billing, userId);
  return tx.findOneOrFail(BillingAccount, { id: account.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** The subscription whose plan is in force: activated by a paid checkout, not deleted, live. */
export function activeSubscription(em: EntityManager, account: BillingAccount) {
  return em.findOne(
    Subscription,
    { account, deleted: false, activatedBy: { $ne: null }, status: { $in: liveStatuses } },
    { orderBy: { stateCreated: 'desc', created: 'desc' } },
  );
}

export const poolColumns = { cpu: 'leftCpu', network: 'leftNetwork', tokens: 'leftTokens' } as const satisfies Record<UsageUnit, string>;

/** Whether the account may start work: billing off, or money or a plan pool left, and not cut off. */
export async function hasFunds(em: EntityManager, billing: Billing, userId: string) {
  if (!billing.enabled) return true;
  const account = await accountOf(em, billing, userId);
  if (account.exhaustedAt) return false;
  if (account.available > 0n) return true;
  const subscription = await activeSubscription(em, account);
  return Boolean(subscription && Object.values(poolColumns).some((column) => subscription[column] > 0n));
}

/** Refuses a new start in the project (browser, run, analysis) with 402 when its owner's account has no funds. */
export async function requireFunds(em: EntityManager, billing: Billing, project: Project) {
  if (!(await hasFunds(em, billing, ownerOf(project)))) throw new PaymentRequired();
}

/** Whose funds a project's work draws on: its owner's. */
export function ownerOf(project: Project): string {
  return typeof project.owner === 'string' ? project.owner : project.owner.id;
}

/**
 * Credits `amount` minor units (a paid top-up) once per Checkout session: what is pending is
 * settled first, and an account that was cut off may work again. Answers false when that
 * session was already credited.
 */
export async function creditTopUp(
  tx: EntityManager,
  account: BillingAccount,
  credit: { amount: bigint; currency: string; checkoutSessionId: string; stripeEventId: string },
) {
  const already = await tx.findOne(LedgerEntry, { checkoutSessionId: credit.checkoutSessionId });
  if (already) return false;
  tx.create(LedgerEntry, {
    account,
    kind: 'top_up',
    currency: credit.currency,
    amount: credit.amount,
    checkoutSessionId: credit.checkoutSessionId,
    stripeEventId: credit.stripeEventId,
  });
  account.available += credit.amount;
  settlePending(tx, account, credit.stripeEventId);
  if (account.available > 0n) account.exhaustedAt = null;
  return true;
}

/** Pays what usage left pending from the available balance, as far as it goes. */
function settlePending(tx: EntityManager, account: BillingAccount, stripeEventId: string | null) {
  const settled = minBig(account.pending, account.available);
  if (settled <= 0n) return;
  tx.create(LedgerEntry, {
    account,
    kind: 'settlement',
    currency: account.currency,
    amount: -settled,
    pendingChange: -settled,
    stripeEventId,
  });
  account.available -= settled;
  account.pending -= settled;
}

/** What one report did to the money: drawn from the pool, cost, billed, pending, and whether it ended the funds. */
export type Debit = { fromPool: bigint; discountMicros: bigint; costMicros: bigint; billed: bigint; pending: bigint; exhausted: boolean };

/**
 * Draws one report from the plan's pool first, then the balance: the cost is carried in
 * micro-units until whole minor units add up (so ten thousand reports of a thousandth of a cent
 * bill ten cents), a shortfall is pending, and the report that spends the last funds marks the
 * account exhausted. Reports after that are recorded and not billed: the workload is being
 * stopped, so at most one report's amount is ever owed. With billing off nothing is debited.
 */
export async function debitUsage(
  tx: EntityManager,
  billing: Billing,
  account: BillingAccount,
  usage: { unit: UsageUnit; quantityMicro: bigint; cost: (quantityMicro: bigint) => bigint },
  record: UsageRecord,
): Promise<Debit> {
  const none = { fromPool: 0n, discountMicros: 0n, billed: 0n, pending: 0n, exhausted: false };
  if (!billing.enabled) return { ...none, costMicros: usage.cost(usage.quantityMicro) };
  if (account.exhaustedAt) return { ...none, costMicros: usage.cost(usage.quantityMicro), exhausted: true };
  const subscription = await activeSubscription(tx, account);
  const column = poolColumns[usage.unit];
  const left = subscription ? subscription[column] : 0n;
  const fromPool = minBig(left, usage.quantityMicro);
  if (subscription && fromPool > 0n) subscription[column] = left - fromPool;
  const costMicros = usage.cost(usage.quantityMicro - fromPool);
  const carried = account.carryMicros + costMicros;
  const whole = carried / MICROS_PER_MINOR;
  account.carryMicros = carried % MICROS_PER_MINOR;
  const billed = minBig(whole, account.available);
  const pending = whole - billed;
  account.available -= billed;
  account.pending += pending;
  if (billed > 0n || pending > 0n) {
    tx.create(LedgerEntry, {
      account,
      kind: 'usage',
      currency: account.currency,
      amount: -billed,
      pendingChange: pending,
      usageRecord: record,
    });
  }
  const exhausted = costMicros > 0n && account.available === 0n;
  if (exhausted) account.exhaustedAt = new Date();
  return { fromPool, discountMicros: usage.cost(fromPool), costMicros, billed, pending, exhausted };
}
