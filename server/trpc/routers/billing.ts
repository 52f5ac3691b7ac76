import { z } from 'zod';
import { LedgerEntry, UsageRecord } from '../../../db/entities/index.ts';
import { accountOf, activeSubscription, poolColumns } from '../../billing/ledger.ts';
import { microsString, minorString, parseQuantity, quantityString, scaledString } from '../../billing/money.ts';
import { checkoutPlan, checkoutTopUp, portalSession } from '../../billing/stripe.ts';
import type { Config } from '../../config.ts';
import { authorizeAccountBilling } from '../../permissions/permissions.ts';
import { iso } from '../../wireShapes.ts';
import { publicProcedure, router, verifiedProcedure } from '../base.ts';

/**
 * Billing (spec 4.9): plans, the overview, and the Stripe sessions a user is sent to. Money goes
 * out as strings of minor units; sub-minor figures (usage cost, prices per unit) as decimals of
 * minor units. The money arrives by webhook (server/http/billingRoutes.ts).
 */

const tags = ['billing'];
const TRANSACTIONS = 50;
const units = ['cpu', 'network', 'tokens'] as const;
const pools = z.object({ cpu: z.string(), network: z.string(), tokens: z.string() });

const planCard = z.object({
  priceId: z.string(),
  planId: z.string(),
  name: z.string(),
  currency: z.string(),
  monthlyPrice: z.string(),
  discount: z.string(),
  headline: z.string(),
  subheading: z.string(),
  features: z.array(z.string()),
  bonuses: pools.describe('Included each period: CPU seconds, network bytes, model tokens'),
});

function cardOf(plan: Config['billing']['plans'][number]) {
  return {
    priceId: plan.priceId,
    planId: plan.planId,
    name: plan.name,
    currency: plan.currency,
    monthlyPrice: minorString(plan.monthlyPrice),
    discount: minorString(plan.discount),
    headline: plan.headline,
    subheading: plan.subheading,
    features: plan.features,
    bonuses: { cpu: plan.bonuses.cpu ?? '0', network: plan.bonuses.network ?? '0', tokens: plan.bonuses.tokens ?? '0' },
  };
}

const transaction = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('usage'),
    id: z.string(),
    created: z.string(),
    resourceId: z.string(),
    unit: z.string(),
    quantity: z.string().describe('How much of the unit was used'),
    currency: z.string(),
    cost: z.string().describe('What the part beyond the plan’s pool cost, in minor units (may be fractional)'),
    discounts: z.string().describe('What the plan’s pool covered, in minor units (may be fractional)'),
    billed: z.string().describe('Minor units taken from the balance'),
    pending: z.string().describe('Minor units the balance did not cover'),
  }),
  z.object({ type: z.literal('top_up'), id: z.string(), created: z.string(), currency: z.string(), amount: z.string() }),
]);

const overview = z.object({
  billingEnabled: z.boolean(),
  balances: z.array(z.object({ currency: z.string(), available: z.string(), pending: z.string() })),
  activeSubscription: z
    .object({
      plan: planCard.nullable(),
      status: z.string(),
      currentPeriodEnd: z.string().nullable(),
      bonuses: pools,
      remaining: pools.describe('What is left of each pool this period'),
    })
    .nullable(),
  transactions: z.array(transaction),
  usagePricing: z.array(z.object({ unit: z.enum(units), currency: z.string(), pricePerUnit: z.string().describe('Minor units per unit') })),
});

const urlAnswer = z.object({ url: z.string() });

const quantities = z.object({ cpu: z.string(), network: z.string(), tokens: z.string() });
const usageSummary = z.object({
  currency: z.string(),
  since: z.string().describe('The first day counted (UTC midnight)'),
  days: z
    .array(
      quantities.extend({
        day: z.string().describe('YYYY-MM-DD (UTC)'),
        billed: z.string().describe('Minor units taken from the balance'),
      }),
    )
    .describe('One entry per day with usage, oldest first: CPU seconds, network bytes, model tokens'),
  sessions: z
    .array(
      quantities.extend({
        project: z.string().nullable().describe('The project’s slug; null for projects since deleted'),
        session: z.object({ id: z.string(), name: z.string() }).nullable().describe('null: not one session (`of` says what)'),
        of: z
          .enum(['session', 'calls', 'analysis and generation', 'deleted sessions', 'deleted projects'])
          .describe(
            'a session; the browsers of the project’s calls (function executes, MCP tool calls, runs in a context: docs/browsers.md); model tokens of analysis and generation, which run on no session; browsers of sessions since deleted; or all usage of projects since deleted',
          ),
        billed: z.string(),
      }),
    )
    .describe('The same usage by session, most billed first'),
});

/** The account's own billing: a verified account, signed in or through a full-access key. */
const accountProcedure = verifiedProcedure.use(({ ctx, next }) => {
  authorizeAccountBilling(ctx.subject);
  return next();
});

type UsageRow = { key: string; unit: string; amount: string; billed: string };

/** Rows of (key, unit, amount, billed) folded into one entry per key with each unit's quantity. */
function byUnit(rows: UsageRow[]) {
  const entries = new Map<string, { cpu: bigint; network: bigint; tokens: bigint; billed: bigint }>();
  for (const row of rows) {
    const entry = entries.get(row.key) ?? { cpu: 0n, network: 0n, tokens: 0n, billed: 0n };
    if (row.unit === 'cpu' || row.unit === 'network' || row.unit === 'tokens') entry[row.unit] += parseQuantity(row.amount) ?? 0n;
    entry.billed += BigInt(row.billed);
    entries.set(row.key, entry);
  }
  return [...entries].map(([key, entry]) => ({
    key,
    cpu: quantityString(entry.cpu),
    network: quantityString(entry.network),
    tokens: quantityString(entry.tokens),
    billed: minorString(entry.billed),
    billedMinor: entry.billed,
  }));
}

export const billingRouter = router({
  plans: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/billing/plans', tags, summary: 'The plans one may subscribe to (signed in or not)' } })
    .input(z.strictObject({}).optional())
    .output(z.array(planCard))
    .query(({ ctx }) => (ctx.deps.config.billing.enabled ? ctx.deps.config.billing.plans.map(cardOf) : [])),

  overview: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/billing/overview',
        tags,
        summary: 'Balances, the active subscription and its pools, the last 50 transactions, usage prices',
      },
    })
    .input(z.strictObject({}).optional())
    .output(overview)
    .query(async ({ ctx }) => {
      const billing = ctx.deps.config.billing;
      const account = await accountOf(ctx.em, billing, ctx.user.id);
      const subscription = await activeSubscription(ctx.em, account);
      const plan = subscription && billing.plans.find((candidate) => candidate.priceId === subscription.priceId);
      const [usage, topUps] = await Promise.all([
        ctx.em.find(UsageRecord, { account }, { orderBy: { created: 'desc', id: 'desc' }, limit: TRANSACTIONS }),
        ctx.em.find(LedgerEntry, { account, kind: 'top_up' }, { orderBy: { created: 'desc', id: 'desc' }, limit: TRANSACTIONS }),
      ]);
      const transactions = [
        ...usage.map((record) => ({
          type: 'usage' as const,
          id: record.id,
          created: iso(record.created),
          resourceId: record.resourceId,
          unit: record.unit,
          quantity: quantityString(parseQuantity(record.amount) ?? 0n),
          currency: record.currency ?? account.currency,
          cost: microsString(record.costMicros),
          discounts: microsString(record.discountMicros),
          billed: minorString(record.billed),
          pending: minorString(record.pending),
        })),
        ...topUps.map((entry) => ({
          type: 'top_up' as const,
          id: entry.id,
          created: iso(entry.created),
          currency: entry.currency,
          amount: minorString(entry.amount),
        })),
      ]
        .sort((a, b) => b.created.localeCompare(a.created))
        .slice(0, TRANSACTIONS);
      const card = plan ? cardOf(plan) : null;
      return {
        billingEnabled: billing.enabled,
        balances: [{ currency: account.currency, available: minorString(account.available), pending: minorString(account.pending) }],
        activeSubscription: subscription
          ? {
              plan: card,
              status: subscription.status,
              currentPeriodEnd: subscription.currentPeriodEnd ? new Date(subscription.currentPeriodEnd * 1000).toISOString() : null,
              bonuses: card?.bonuses ?? { cpu: '0', network: '0', tokens: '0' },
              remaining: {
                cpu: quantityString(subscription[poolColumns.cpu]),
                network: quantityString(subscription[poolColumns.network]),
                tokens: quantityString(subscription[poolColumns.tokens]),
              },
            }
          : null,
        transactions,
        usagePricing: units.map((unit) => ({ unit, currency: account.currency, pricePerUnit: scaledString(billing.pricing[unit]) })),
      };
    }),

  usage: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/billing/usage',
        tags,
        summary: 'Your usage summed by day and by session over the last `days` (default 30, at most 366)',
      },
    })
    .input(z.strictObject({ days: z.coerce.number().int().min(1).max(366).default(30) }).optional())
    .output(usageSummary)
    .query(async ({ ctx, input }) => {
      const account = await accountOf(ctx.em, ctx.deps.config.billing, ctx.user.id);
      const now = new Date();
      const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
      since.setUTCDate(since.getUTCDate() - ((input?.days ?? 30) - 1));
      const connection = ctx.em.getConnection();
      const [days, sessions] = await Promise.all([
        connection.execute<UsageRow[]>(
          `select to_char(created at time zone 'UTC', 'YYYY-MM-DD') as key, unit, sum(amount)::text as amount, sum(billed)::text as billed
             from usage_records where account_id = ? and created >= ? group by 1, 2 order by 1`,
          [account.id, since],
        ),
        connection.execute<(UsageRow & { slug: string | null; name: string | null })[]>(
          // A browser's usage outlives its session's rows (usage names the resource by id, no key):
          // tokens are an agent's, CPU and network of a browser whose session is gone. Usage of
          // deleted projects (no project any more) is one entry, keyed by no slug.
          `select case when p.id is null then '' else p.slug || '/' || coalesce(s.id::text, case when u.unit = 'tokens' then '' when u.report_id like 'calls:%' then 'calls' else '-' end) end as key,
                  p.slug, s.name, u.unit, sum(u.amount)::text as amount, sum(u.billed)::text as billed
             from usage_records u
             left join projects p on p.id = u.project_id
             left join session_resources r on r.id = u.resource_id
             left join browser_sessions s on s.id = r.session_id
            where u.account_id = ? and u.created >= ?
            group by 1, 2, 3, 4`,
          [account.id, since],
        ),
      ]);
      const named = new Map(sessions.map((row) => [row.key, row]));
      return {
        currency: account.currency,
        since: iso(since),
        days: byUnit(days).map(({ key, billedMinor: _billed, ...entry }) => ({ day: key, ...entry })),
        sessions: byUnit(sessions)
          .sort((a, b) => (b.billedMinor > a.billedMinor ? 1 : b.billedMinor < a.billedMinor ? -1 : a.key.localeCompare(b.key)))
          .map(({ key, billedMinor: _billed, ...entry }) => {
            const row = named.get(key) as UsageRow & { slug: string | null; name: string | null };
            if (row.slug === null) return { project: null, session: null, of: 'deleted projects' as const, ...entry };
            const sessionId = key.slice(row.slug.length + 1);
            const of =
              sessionId === ''
                ? 'analysis and generation'
                : sessionId === '-'
                  ? 'deleted sessions'
                  : sessionId === 'calls'
                    ? 'calls'
                    : 'session';
            return { project: row.slug, session: of === 'session' ? { id: sessionId, name: row.name ?? '' } : null, of, ...entry };
          }),
      };
    }),

  subscribe: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/billing/subscription',
        tags,
        summary: 'A Checkout page for a plan',
        description: 'An unknown price, a downgrade or a plan in another currency answers 400; a Stripe failure 500.',
      },
    })
    .input(z.strictObject({ priceId: z.string().min(1).max(255) }))
    .output(urlAnswer)
    .mutation(({ ctx, input }) => checkoutPlan(ctx.em, ctx.deps.config, ctx.user, input.priceId)),

  topUp: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/billing/top-up',
        tags,
        summary: 'A Checkout page to add funds',
        description:
          '`amount` is a decimal string in major units with at most the currency’s minor digits ("10.5"); only the default currency.',
      },
    })
    .input(z.strictObject({ amount: z.string().max(40), currency: z.string().max(10) }))
    .output(urlAnswer)
    .mutation(({ ctx, input }) => checkoutTopUp(ctx.em, ctx.deps.config, ctx.user, input.amount, input.currency)),

  portal: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/billing/portal', tags, summary: 'A Billing Portal page (invoices, payment methods, cancel)' },
    })
    .input(z.strictObject({}).optional())
    .output(urlAnswer)
    .mutation(({ ctx }) => portalSession(ctx.em, ctx.deps.config, ctx.user)),
});
