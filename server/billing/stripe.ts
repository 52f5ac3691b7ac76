import type { EntityManager } from '@mikro-orm/postgresql';
import Stripe from 'stripe';
import { BillingAccount, type User } from '../../db/entities/index.ts';
import type { Config } from '../config.ts';
import { currencyOf } from '../decimals.ts';
import { BadRequest, DomainError } from '../errors.ts';
import { accountOf, activeSubscription } from './ledger.ts';
import { parseTopUpAmount } from './money.ts';

/**
 * What the service asks of Stripe: a customer per user, Checkout sessions (a plan, a top-up) and
 * Billing Portal sessions, through the `stripe` SDK; `STRIPE_API_BASE` points it elsewhere (the
 * tests' stand-in). The money itself arrives later, by webhook (server/billing/stripeEvents.ts).
 */

type Billing = Config['billing'];

/** 400: billing is off on this service (no STRIPE_SECRET_KEY). */
export class BillingDisabled extends DomainError {
  override name = 'BillingDisabled';
  readonly status = 400;
  constructor() {
    super('billing_disabled', 'Billing is not enabled on this service (STRIPE_SECRET_KEY is not set)');
  }
}

/** 500 by the spec: Stripe did not create the session. Stripe's own words stay in the log. */
export class PaymentProviderFailed extends DomainError {
  override name = 'PaymentProviderFailed';
  readonly status = 500;
  constructor(what: string, cause: unknown) {
    const type = cause instanceof Stripe.errors.StripeError ? ` (${cause.type}${cause.code ? `: ${cause.code}` : ''})` : '';
    super('payment_provider_error', `The payment provider could not create the ${what}${type}; try again later`, { cause });
  }
}

const clients = new WeakMap<object, Stripe>();

export function stripeOf(billing: Billing): Stripe {
  if (!billing.stripe) throw new BillingDisabled();
  let client = clients.get(billing.stripe);
  if (!client) {
    const base = billing.stripe.apiBase ? new URL(billing.stripe.apiBase) : undefined;
    client = new Stripe(billing.stripe.secretKey, {
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
      ...(base && {
        host: base.hostname,
        port: base.port || (base.protocol === 'https:' ? 443 : 80),
        protocol: base.protocol === 'http:' ? 'http' : 'https',
      }),
    });
    clients.set(billing.stripe, client);
  }
  return client;
}

async function provider<T>(what: string, call: () => Promise<T>) {
  try {
    return await call();
  } catch (error) {
    throw new PaymentProviderFailed(what, error);
  }
}

/** The user's Stripe customer, made once (the idempotency key makes two concurrent first calls one customer). */
async function customerOf(em: EntityManager, billing: Billing, user: User) {
  const account = await accountOf(em, billing, user.id);
  if (account.stripeCustomerId) return account.stripeCustomerId;
  const customer = await provider('customer', () =>
    stripeOf(billing).customers.create(
      { email: user.email, name: `${user.firstName} ${user.lastName}`.trim(), metadata: { userId: user.id } },
      { idempotencyKey: `customer-${user.id}` },
    ),
  );
  await em.nativeUpdate(BillingAccount, { id: account.id, stripeCustomerId: null }, { stripeCustomerId: customer.id });
  return customer.id;
}

/** Repeated within a minute, the same request answers the same session (a double click is one checkout). */
const minute = () => Math.floor(Date.now() / 60_000);

export async function checkoutPlan(em: EntityManager, config: Config, user: User, priceId: string) {
  const billing = config.billing;
  stripeOf(billing); // billing is on, or 400 before anything is checked
  const plan = billing.plans.find((candidate) => candidate.priceId === priceId);
  if (!plan) throw new BadRequest('unknown_price', `No plan has the price ${priceId}`);
  const account = await accountOf(em, billing, user.id);
  if (plan.currency !== account.currency) {
    throw new BadRequest('currency_switch', `The plan is in ${plan.currency}; this account is billed in ${account.currency}`);
  }
  const current = await activeSubscription(em, account);
  const currentPlan = current && billing.plans.find((candidate) => candidate.priceId === current.priceId);
  if (current && current.priceId === plan.priceId) throw new BadRequest('already_subscribed', `You are already subscribed to ${plan.name}`);
  if (currentPlan && currentPlan.currency !== plan.currency) {
    throw new BadRequest('currency_switch', `Your plan is in ${currentPlan.currency}; a plan in ${plan.currency} cannot replace it`);
  }
  if (currentPlan && plan.monthlyPrice < currentPlan.monthlyPrice) {
    throw new BadRequest('downgrade', `${plan.name} costs less than your plan ${currentPlan.name}; downgrades are not allowed`);
  }
  return openCheckout(em, config, user, 'checkout', `plan-${user.id}-${plan.priceId}-${minute()}`, {
    mode: 'subscription',
    line_items: [{ price: plan.priceId, quantity: 1 }],
    metadata: { userId: user.id, kind: 'plan', planId: plan.planId, priceId: plan.priceId },
    subscription_data: { metadata: { userId: user.id, planId: plan.planId } },
  });
}

export async function checkoutTopUp(em: EntityManager, config: Config, user: User, amount: string, currencyCode: string) {
  const billing = config.billing;
  stripeOf(billing); // billing is on, or 400 before anything is checked
  if (currencyCode.toLowerCase() !== billing.currency) {
    throw new BadRequest('currency_not_accepted', `Top-ups are in ${billing.currency} only`);
  }
  const currency = currencyOf(billing.currency);
  if (!currency) throw new Error(`unknown billing currency ${billing.currency}`);
  const parsed = parseTopUpAmount(amount, currency);
  if ('problem' in parsed) {
    const digits = Number(currency.exponent);
    const why = {
      not_a_decimal: 'must be a plain decimal such as "10.50"',
      too_many_decimals: `has more than ${digits} decimals`,
      not_positive: 'must be more than zero',
      too_large: 'is more than one payment may be',
    }[parsed.problem];
    throw new BadRequest('invalid_amount', `Invalid input: amount ${why}`, { issues: [{ path: ['amount'], message: why }] });
  }
  return openCheckout(em, config, user, 'top-up', `top-up-${user.id}-${parsed.minor}-${minute()}`, {
    mode: 'payment',
    line_items: [
      {
        price_data: { currency: billing.currency, unit_amount: Number(parsed.minor), product_data: { name: 'Account top-up' } },
        quantity: 1,
      },
    ],
    metadata: { userId: user.id, kind: 'top_up', amount: parsed.minor.toString() },
  });
}

/** A Checkout session for the user's customer; the user comes back to /billing either way. */
async function openCheckout(
  em: EntityManager,
  config: Config,
  user: User,
  back: 'checkout' | 'top-up',
  idempotencyKey: string,
  params: Pick<Stripe.Checkout.SessionCreateParams, 'mode' | 'line_items' | 'metadata' | 'subscription_data'>,
) {
  const customer = await customerOf(em, config.billing, user);
  const session = await provider('checkout session', () =>
    stripeOf(config.billing).checkout.sessions.create(
      {
        ...params,
        customer,
        client_reference_id: user.id,
        success_url: `${config.publicUrl}/billing?${back}=done`,
        cancel_url: `${config.publicUrl}/billing?${back}=cancelled`,
      },
      { idempotencyKey },
    ),
  );
  if (!session.url) throw new PaymentProviderFailed('checkout session', new Error('the session has no url'));
  return { url: session.url };
}

export async function portalSession(em: EntityManager, config: Config, user: User) {
  const stripe = stripeOf(config.billing);
  const customer = await customerOf(em, config.billing, user);
  const session = await provider('billing portal session', () =>
    stripe.billingPortal.sessions.create({ customer, return_url: `${config.publicUrl}/billing` }),
  );
  return { url: session.url };
}
