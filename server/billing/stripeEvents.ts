import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { BillingAccount, StripeEvent, Subscription, User } from '../../db/entities/index.ts';
import { type StripeEventInput, type StripeEventWorkflow, stripeEventWorkflowType } from '../../workflows/contracts/billing.ts';
import { workflowIds } from '../../workflows/contracts/workflowIds.ts';
import type { Config, PlanEntry } from '../config.ts';
import { creditTopUp, lockAccount, poolColumns } from './ledger.ts';
import { parseQuantity } from './money.ts';

/**
 * Applying one Stripe event, exactly once: the event's id is recorded in the transaction that
 * applies it, after the account's row is locked (so two deliveries of one event, or two events of
 * one account, happen one after the other, and the second sees the first). The webhook route
 * verifies the signature; a workflow whose id is the event id calls this (workflows/billing.ts).
 */

type Billing = Config['billing'];

/**
 * Hands a verified event to its workflow and waits until it is applied. A copy arriving while the
 * first is applied waits for that one; a copy of an event applied already finds its closed
 * workflow (a failed one is run again), and its start throws WorkflowExecutionAlreadyStartedError.
 */
export async function applyStripeEventOnce(client: Client, taskQueue: string, event: StripeEventInput) {
  const handle = await client.workflow.start<StripeEventWorkflow>(stripeEventWorkflowType, {
    taskQueue,
    workflowId: workflowIds.stripeEvent(event.id),
    args: [event],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  });
  return handle.result();
}

const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
const idOf = (value: unknown) => text(value) ?? text((value as { id?: unknown } | null)?.id);
const metadataOf = (object: Record<string, unknown>) => (object.metadata ?? {}) as Record<string, string | undefined>;

export async function applyStripeEvent(em: EntityManager, billing: Billing, event: StripeEventInput): Promise<string> {
  return em.transactional(async (tx) => {
    const userId = await userOfEvent(tx, event.object);
    if (userId) await lockAccount(tx, billing, userId);
    const seen = await tx.findOne(StripeEvent, { id: event.id });
    if (seen) return `already applied: ${seen.outcome}`;
    const outcome = userId ? await apply(tx, billing, userId, event) : 'recorded: no account of this service';
    tx.create(StripeEvent, { id: event.id, type: event.type, eventCreated: event.created, outcome });
    await tx.flush();
    return outcome;
  });
}

/** Whose event it is: the user id the service put in the metadata, else the Stripe customer. */
async function userOfEvent(em: EntityManager, object: Record<string, unknown>) {
  const fromMetadata = text(metadataOf(object).userId) ?? text(object.client_reference_id);
  if (fromMetadata && /^[0-9a-f-]{36}$/i.test(fromMetadata) && (await em.count(User, { id: fromMetadata.toLowerCase() }))) {
    return fromMetadata.toLowerCase();
  }
  const customer = idOf(object.customer);
  if (!customer) return undefined;
  const account = await em.findOne(BillingAccount, { stripeCustomerId: customer });
  return account ? (typeof account.user === 'string' ? account.user : account.user.id) : undefined;
}

async function apply(tx: EntityManager, billing: Billing, userId: string, event: StripeEventInput): Promise<string> {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return applyCheckout(tx, billing, userId, event);
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return applySubscriptionChange(tx, billing, userId, event);
    default:
      return 'recorded';
  }
}

async function applyCheckout(tx: EntityManager, billing: Billing, userId: string, event: StripeEventInput) {
  const session = event.object;
  const sessionId = idOf(session);
  if (!sessionId) return 'ignored: no checkout session id';
  if (session.payment_status !== 'paid') return `not credited: payment ${String(session.payment_status)}`;
  const account = await tx.findOneOrFail(BillingAccount, { user: userId });
  if (session.mode === 'payment') {
    const amount =
      typeof session.amount_total === 'number' && Number.isSafeInteger(session.amount_total) ? BigInt(session.amount_total) : 0n;
    const currency = text(session.currency)?.toLowerCase();
    if (amount <= 0n) return 'ignored: no amount';
    if (currency !== account.currency) return `ignored: a top-up in ${currency}, the account is in ${account.currency}`;
    const credited = await creditTopUp(tx, account, { amount, currency, checkoutSessionId: sessionId, stripeEventId: event.id });
    return credited ? `credited ${amount} ${currency}` : 'already credited';
  }
  if (session.mode === 'subscription') {
    const subscriptionId = idOf(session.subscription);
    if (!subscriptionId) return 'ignored: no subscription';
    const priceId = text(metadataOf(session).priceId);
    const plan = billing.plans.find((candidate) => candidate.priceId === priceId);
    let row = await tx.findOne(Subscription, { stripeSubscriptionId: subscriptionId });
    if (!row) {
      row = tx.create(Subscription, {
        account,
        stripeSubscriptionId: subscriptionId,
        planId: plan?.planId ?? null,
        priceId: priceId ?? null,
        status: 'active',
        stateCreated: event.created,
      });
    }
    if (row.activatedBy) return 'already activated';
    if (row.deleted) {
      row.activatedBy = sessionId;
      return 'paid, not activated: the subscription was already deleted';
    }
    row.activatedBy = sessionId;
    row.planId ??= plan?.planId ?? null;
    row.priceId ??= priceId ?? null;
    fillPools(row, planOf(billing, row) ?? plan);
    account.exhaustedAt = null;
    return `activated ${row.planId ?? 'an unknown plan'}`;
  }
  return `ignored: checkout mode ${String(session.mode)}`;
}

async function applySubscriptionChange(tx: EntityManager, billing: Billing, userId: string, event: StripeEventInput) {
  const object = event.object;
  const subscriptionId = idOf(object);
  if (!subscriptionId) return 'ignored: no subscription id';
  const deleted = event.type === 'customer.subscription.deleted';
  const item = ((object.items as { data?: Record<string, unknown>[] } | undefined)?.data ?? [])[0] ?? {};
  const priceId = idOf(item.price) ?? null;
  const periodStart = numberOf(item.current_period_start) ?? numberOf(object.current_period_start);
  const periodEnd = numberOf(item.current_period_end) ?? numberOf(object.current_period_end);
  const status = deleted ? 'canceled' : (text(object.status) ?? 'active');
  const plan = billing.plans.find((candidate) => candidate.priceId === priceId);
  const row = await tx.findOne(Subscription, { stripeSubscriptionId: subscriptionId });
  if (!row) {
    const account = await tx.findOneOrFail(BillingAccount, { user: userId });
    tx.create(Subscription, {
      account,
      stripeSubscriptionId: subscriptionId,
      planId: plan?.planId ?? null,
      priceId,
      status,
      deleted,
      stateCreated: event.created,
      currentPeriodStart: periodStart ?? null,
      currentPeriodEnd: periodEnd ?? null,
    });
    return deleted ? 'recorded: deleted' : `recorded: ${status}`;
  }
  if (row.deleted) return 'ignored: a deleted subscription stays deleted';
  if (event.created <= row.stateCreated) return 'ignored: older than the recorded state';
  row.stateCreated = event.created;
  row.status = status;
  row.deleted = deleted;
  if (deleted) emptyPools(row);
  if (priceId) {
    row.priceId = priceId;
    row.planId = plan?.planId ?? row.planId;
  }
  row.currentPeriodStart = periodStart ?? row.currentPeriodStart;
  row.currentPeriodEnd = periodEnd ?? row.currentPeriodEnd;
  // A new period of an activated plan brings its bonuses again.
  if (!deleted && row.activatedBy && periodStart !== undefined && periodStart > (row.poolPeriod ?? -1)) {
    fillPools(row, planOf(billing, row));
    const account = await tx.findOneOrFail(BillingAccount, { user: userId });
    account.exhaustedAt = null;
  }
  return deleted ? 'deleted' : `updated: ${status}`;
}

/** A deleted subscription has nothing left to draw on. */
function emptyPools(row: Subscription) {
  for (const column of Object.values(poolColumns)) row[column] = 0n;
  row.poolPeriod = null;
}

function numberOf(value: unknown) {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}

function planOf(billing: Billing, row: Subscription) {
  return billing.plans.find((plan) => plan.priceId === row.priceId);
}

/** The plan's bonuses for the subscription's current period (the period of `currentPeriodStart`, if known). */
function fillPools(row: Subscription, plan: PlanEntry | undefined) {
  for (const unit of ['cpu', 'network', 'tokens'] as const) {
    const bonus = plan?.bonuses[unit];
    row[poolColumns[unit]] = bonus ? (parseQuantity(bonus) ?? 0n) : 0n;
  }
  row.poolPeriod = row.currentPeriodStart ?? 0;
}
