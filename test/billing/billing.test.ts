import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BillingAccount,
  BrowserSession,
  LedgerEntry,
  Project,
  SessionResource,
  StripeEvent,
  Subscription,
  UsageRecord,
} from '../../db/entities/index.ts';
import { meter } from '../../server/billing/metering.ts';
import { FUNDS_EXHAUSTED } from '../../workflows/contracts/billing.ts';
import { createApiKey, createProject, PASSWORD, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { checkPage } from '../support/consoleChecks.ts';
import { PAGE_HOST, startTestSite } from '../support/pages.ts';
import { createPipeline, longWaitSource } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { type StripeStandIn, startStripeStandIn } from '../support/stripeStandIn.ts';
import { startWebhookReceiver } from '../support/webhookReceivers.ts';

const WEBHOOK_SECRET = 'whsec_test_secret_for_the_stand_in';
const COORDINATOR_TOKEN = 'coordinator-token-for-the-tests';
const plans = [
  {
    planId: 'starter',
    priceId: 'price_starter',
    name: 'Starter',
    monthlyPrice: 900,
    features: ['10 CPU seconds'],
    bonuses: { cpu: '10', tokens: '1000' },
  },
  {
    planId: 'pro',
    priceId: 'price_pro',
    name: 'Pro',
    monthlyPrice: 2900,
    discount: 500,
    bonuses: { cpu: '100', network: '1000000', tokens: '100000' },
  },
  { planId: 'euro', priceId: 'price_euro', name: 'Euro', currency: 'eur', monthlyPrice: 2500 },
];

let stack: TestStack;
let stripe: StripeStandIn;
/** Every log line the app writes (LOG_LEVEL info): the coordinator's token must be in none. */
const logLines: string[] = [];
let site: Awaited<ReturnType<typeof startTestSite>>;

beforeAll(async () => {
  stripe = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  // A page that takes its time: an analysis opening it is still running when its funds run out.
  site = await startTestSite({
    '/slow': (_req, res) => {
      setTimeout(() => res.end('<!doctype html><h1>late</h1>'), 20_000);
    },
  });
  stack = await startTestStack(
    {
      STRIPE_SECRET_KEY: 'sk_test_standin',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: stripe.url,
      COORDINATOR_TOKEN,
      BILLING_PLANS: JSON.stringify(plans),
      LOG_LEVEL: 'info',
    },
    { browserHost: true, logDestination: { write: (line: string) => void logLines.push(line) } },
  );
  stripe.sendWebhooksTo(`${stack.url}/api/stripe/webhook`);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await stripe?.close();
  await site?.close();
});

type User = Awaited<ReturnType<typeof registerUser>>;

async function account(userId: string) {
  return stack.orm.em.fork().findOneOrFail(BillingAccount, { user: userId });
}

/** The ledger adds up to the balance: available and pending alike. */
async function expectLedgerMatches(userId: string) {
  const em = stack.orm.em.fork();
  const row = await em.findOneOrFail(BillingAccount, { user: userId });
  const entries = await em.find(LedgerEntry, { account: row });
  expect(entries.reduce((sum, entry) => sum + entry.amount, 0n)).toBe(row.available);
  expect(entries.reduce((sum, entry) => sum + entry.pendingChange, 0n)).toBe(row.pending);
  expect(row.available >= 0n).toBe(true);
  return row;
}

async function topUp(user: User, amount: string) {
  const checkout = await stack.http.post('/api/billing/top-up', { amount, currency: 'usd' }, { token: user.token });
  expect(checkout.status, checkout.text).toBe(200);
  const { delivery } = await stripe.complete(stripe.sessionOfUrl(checkout.body.url));
  expect(delivery).toEqual({ status: 200, body: { received: true } });
}

async function subscribe(user: User, priceId: string) {
  const checkout = await stack.http.post('/api/billing/subscription', { priceId }, { token: user.token });
  expect(checkout.status, checkout.text).toBe(200);
  const { event, delivery } = await stripe.complete(stripe.sessionOfUrl(checkout.body.url));
  expect(delivery.status).toBe(200);
  return event;
}

/** A project of `user` with a resource row to report usage against (no browser behind it). */
async function meteredResource(user: User) {
  const project = await createProject(stack, user.token);
  const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'metered' }, { token: user.token });
  expect(session.status, session.text).toBe(200);
  const em = stack.orm.em.fork();
  const resource = em.create(SessionResource, {
    session: em.getReference(BrowserSession, session.body.id),
    project: em.getReference(Project, project.id),
    status: 'stopped',
  });
  await em.flush();
  return { project, resourceId: resource.id };
}

function report(body: Record<string, unknown>, token = COORDINATOR_TOKEN) {
  return stack.http.post(`/api/coordinator/${token}/usage`, body);
}

describe('plans, checkout and portal', () => {
  it('lists the plans to anyone, signed in or not', async () => {
    const anonymous = await stack.http.get('/api/billing/plans');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.map((plan: { planId: string }) => plan.planId)).toEqual(['starter', 'pro', 'euro']);
    expect(anonymous.body[1]).toMatchObject({ priceId: 'price_pro', currency: 'usd', monthlyPrice: '2900', discount: '500' });
    expect(anonymous.body[0].bonuses).toEqual({ cpu: '10', network: '0', tokens: '1000' });
  });

  it('billing needs a verified e-mail (400) and a signed-in caller (401)', async () => {
    const unverified = await registerUser(stack, { verify: false });
    for (const [method, path, body] of [
      ['GET', '/api/billing/overview', undefined],
      ['POST', '/api/billing/subscription', { priceId: 'price_pro' }],
      ['POST', '/api/billing/top-up', { amount: '5', currency: 'usd' }],
      ['POST', '/api/billing/portal', undefined],
    ] as const) {
      const refused = await stack.http.request(method, path, { body, as: { token: unverified.token } });
      expect(refused.status, `${path}: ${refused.text}`).toBe(400);
      expect(refused.body.code).toBe('email_not_verified');
      expect((await stack.http.request(method, path, { body })).status).toBe(401);
    }
  });

  it('a key narrowed to projects or grants, an MCP Link key among them, is refused on every billing route; a full key and a session are not', async () => {
    const user = await registerUser(stack);
    const project = await createProject(stack, user.token);
    const server = await stack.http.put(
      `/${project.slug}/api/mcp-servers`,
      { name: 'Tools', slug: 'tools', description: '' },
      { token: user.token },
    );
    expect(server.status, server.text).toBe(200);
    // As the console's "Link a key" makes one: a custom key for the server's tools, linked by a client config.
    const linkKey = await createApiKey(stack, user.token, {
      name: 'MCP tools',
      accessType: 'custom',
      permissions: [`${project.slug}.functions.read`, `${project.slug}.functions.execute`],
    });
    const link = await stack.http.put(
      `/${project.slug}/api/mcp-client-configs`,
      { name: 'Claude', description: '', mcpServerId: server.body.id, apiKeyId: linkKey.id },
      { token: user.token },
    );
    expect(link.status, link.text).toBe(200);
    const narrow = {
      'projects key': await createApiKey(stack, user.token, { accessType: 'projects', projectIds: [project.id] }),
      'one-grant key': await createApiKey(stack, user.token, { accessType: 'custom', permissions: [`${project.slug}.pipelines.read`] }),
      'MCP Link key': linkKey,
      'key granted everything': await createApiKey(stack, user.token, { accessType: 'custom', permissions: ['*.*'] }),
    };
    const routes = [
      ['GET', '/api/billing/overview', undefined],
      ['GET', '/api/billing/usage', undefined],
      ['POST', '/api/billing/subscription', { priceId: 'price_starter' }],
      ['POST', '/api/billing/top-up', { amount: '5', currency: 'usd' }],
      ['POST', '/api/billing/portal', undefined],
    ] as const;
    const stripeCalls = stripe.requests.length;
    for (const [name, key] of Object.entries(narrow)) {
      for (const [method, path, body] of routes) {
        const refused = await stack.http.request(method, path, { body, as: { apiKey: key.secret } });
        expect(refused.status, `${name} ${method} ${path}: ${refused.text}`).toBe(403);
        expect(refused.body).toMatchObject({ status: 'error', code: 'forbidden' });
      }
    }
    // Refused before anything reached Stripe.
    expect(stripe.requests.length).toBe(stripeCalls);
    const full = await createApiKey(stack, user.token, { accessType: 'full' });
    for (const as of [{ apiKey: full.secret }, { token: user.token }]) {
      for (const [method, path, body] of routes) {
        const answered = await stack.http.request(method, path, { body, as });
        expect(answered.status, `${JSON.stringify(Object.keys(as))} ${method} ${path}: ${answered.text}`).toBe(200);
      }
    }
  });

  it('a subscription answers a Checkout URL; the Stripe customer is made once per user', async () => {
    const user = await registerUser(stack);
    const before = stripe.requests.length;
    const first = await stack.http.post('/api/billing/subscription', { priceId: 'price_starter' }, { token: user.token });
    expect(first.status, first.text).toBe(200);
    expect(first.body.url).toMatch(new RegExp(`^${stripe.url}/pay/cs_`));
    const portal = await stack.http.post('/api/billing/portal', undefined, { token: user.token });
    expect(portal.status, portal.text).toBe(200);
    expect(portal.body.url).toContain('/portal/cus_');
    const calls = stripe.requests.slice(before);
    expect(calls.filter((call) => call.path === '/v1/customers')).toHaveLength(1);
    const checkout = calls.find((call) => call.path === '/v1/checkout/sessions');
    expect(checkout?.body).toMatchObject({ mode: 'subscription', line_items: [{ price: 'price_starter', quantity: '1' }] });
    expect(checkout?.idempotencyKey).toMatch(/^plan-/);
    expect((await account(user.id)).stripeCustomerId).toBe(portal.body.url.split('/portal/')[1]);
  });

  it('refuses an unknown price, a downgrade and another currency (400); a Stripe failure is a 500 with the error body', async () => {
    const user = await registerUser(stack);
    const as = { token: user.token };
    const unknown = await stack.http.post('/api/billing/subscription', { priceId: 'price_nope' }, as);
    expect([unknown.status, unknown.body.code]).toEqual([400, 'unknown_price']);
    const euro = await stack.http.post('/api/billing/subscription', { priceId: 'price_euro' }, as);
    expect([euro.status, euro.body.code]).toEqual([400, 'currency_switch']);
    await subscribe(user, 'price_pro');
    const downgrade = await stack.http.post('/api/billing/subscription', { priceId: 'price_starter' }, as);
    expect([downgrade.status, downgrade.body.code]).toEqual([400, 'downgrade']);
    const same = await stack.http.post('/api/billing/subscription', { priceId: 'price_pro' }, as);
    expect([same.status, same.body.code]).toEqual([400, 'already_subscribed']);

    const other = await registerUser(stack);
    stripe.failNext.add('POST /v1/checkout/sessions');
    const failed = await stack.http.post('/api/billing/subscription', { priceId: 'price_pro' }, { token: other.token });
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ status: 'error', code: 'payment_provider_error' });
    expect(failed.body.message).toMatch(/payment provider could not create the checkout session/);
    expect(failed.text).not.toContain('sk_test_standin');
  });

  it('top-up amounts: decimal strings with at most the currency’s minor digits, in the default currency only', async () => {
    const user = await registerUser(stack);
    const as = { token: user.token };
    const accepted = await stack.http.post('/api/billing/top-up', { amount: '10.5', currency: 'usd' }, as);
    expect(accepted.status, accepted.text).toBe(200);
    const session = stripe.sessions.get(stripe.sessionOfUrl(accepted.body.url));
    expect(session).toMatchObject({ mode: 'payment', amount_total: 1050, currency: 'usd' });
    for (const amount of ['1e3', '10.555', '-5', '0', '', ' 5', '5.', '1,5', '0x10', '1000000']) {
      const refused = await stack.http.post('/api/billing/top-up', { amount, currency: 'usd' }, as);
      expect(refused.status, `${JSON.stringify(amount)}: ${refused.text}`).toBe(400);
      expect(refused.body.code).toBe('invalid_amount');
    }
    const asNumber = await stack.http.post('/api/billing/top-up', { amount: 10.5, currency: 'usd' }, as);
    expect(asNumber.status).toBe(400);
    const euro = await stack.http.post('/api/billing/top-up', { amount: '10', currency: 'eur' }, as);
    expect([euro.status, euro.body.code]).toEqual([400, 'currency_not_accepted']);
  });
});

describe('the webhook', () => {
  it('credits a paid top-up once, however often it is delivered; an unpaid one waits for its payment', async () => {
    const user = await registerUser(stack);
    const checkout = await stack.http.post('/api/billing/top-up', { amount: '12.34', currency: 'usd' }, { token: user.token });
    const sessionId = stripe.sessionOfUrl(checkout.body.url);
    const { event: unpaid } = await stripe.complete(sessionId, { paid: false });
    expect((await account(user.id)).available).toBe(0n);
    const paid = stripe.event('checkout.session.async_payment_succeeded', { ...(unpaid.data.object as object), payment_status: 'paid' });
    const completedAgain = stripe.event('checkout.session.completed', { ...(unpaid.data.object as object), payment_status: 'paid' });
    for (const event of [paid, paid, completedAgain, paid]) {
      expect(await stripe.deliver(event)).toEqual({ status: 200, body: { received: true } });
    }
    const row = await expectLedgerMatches(user.id);
    expect(row.available).toBe(1234n);
    const overview = await stack.http.get('/api/billing/overview', { token: user.token });
    expect(overview.body.balances).toEqual([{ currency: 'usd', available: '1234', pending: '0' }]);
    expect(overview.body.transactions).toEqual([expect.objectContaining({ type: 'top_up', amount: '1234', currency: 'usd' })]);
  });

  it('refuses a tampered body, a wrong secret, an old timestamp and a re-serialised body (400), writing nothing', async () => {
    const user = await registerUser(stack);
    await meteredResource(user);
    const event = stripe.event('checkout.session.completed', {
      id: `cs_forged_${Date.now()}`,
      object: 'checkout.session',
      mode: 'payment',
      payment_status: 'paid',
      amount_total: 100_000,
      currency: 'usd',
      client_reference_id: user.id,
      metadata: { userId: user.id },
    });
    const payload = JSON.stringify(event);
    const now = Math.floor(Date.now() / 1000);
    const sign = (body: string, secret = WEBHOOK_SECRET, timestamp = now) =>
      Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp });
    const attempts = [
      { body: payload.replace('100000', '900000'), header: sign(payload) },
      { body: payload, header: sign(payload, 'whsec_someone_else') },
      { body: payload, header: sign(payload, WEBHOOK_SECRET, now - 3600) },
      { body: JSON.stringify(event, null, 2), header: sign(payload) },
      { body: payload, header: 'garbage' },
    ];
    for (const attempt of attempts) {
      const answer = await stripe.post(attempt.body, attempt.header);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ status: 'error', code: 'invalid_signature' });
    }
    const em = stack.orm.em.fork();
    expect(await em.count(StripeEvent, { id: event.id })).toBe(0);
    expect((await em.findOne(BillingAccount, { user: user.id }))?.available ?? 0n).toBe(0n);
    // The same bytes, signed right, go through.
    expect((await stripe.post(payload)).status).toBe(200);
    expect((await account(user.id)).available).toBe(100_000n);
  });

  it('refuses a timestamp more than five minutes ahead (400), and takes one a minute ahead (clocks drift)', async () => {
    const user = await registerUser(stack);
    const now = Math.floor(Date.now() / 1000);
    const event = (id: string) =>
      stripe.event('checkout.session.completed', {
        id: `cs_${id}`,
        mode: 'payment',
        payment_status: 'unpaid',
        metadata: { userId: user.id },
      });
    const ahead = event(`ahead_${now}`);
    const signedAhead = Stripe.webhooks.generateTestHeaderString({
      payload: JSON.stringify(ahead),
      secret: WEBHOOK_SECRET,
      timestamp: now + 3600,
    });
    const refused = await stripe.post(JSON.stringify(ahead), signedAhead);
    expect(refused).toMatchObject({ status: 400, body: { status: 'error', code: 'invalid_signature' } });
    expect(await stack.orm.em.fork().count(StripeEvent, { id: ahead.id })).toBe(0);
    const drifted = event(`drifted_${now}`);
    const signedDrifted = Stripe.webhooks.generateTestHeaderString({
      payload: JSON.stringify(drifted),
      secret: WEBHOOK_SECRET,
      timestamp: now + 60,
    });
    expect(await stripe.post(JSON.stringify(drifted), signedDrifted)).toEqual({ status: 200, body: { received: true } });
  });

  it('answers 400 with the API’s error body to a signed body it cannot use, writing nothing', async () => {
    const before = await stack.orm.em.fork().count(StripeEvent, {});
    const event = stripe.event('checkout.session.completed', { id: 'cs_unusable', mode: 'payment' });
    const { data: _data, ...withoutData } = event;
    const unusable: [string, string][] = [
      ['"x"', 'invalid_input'],
      ['x', 'invalid_json'],
      ['', 'invalid_json'],
      ['null', 'invalid_input'],
      ['[]', 'invalid_input'],
      ['{}', 'invalid_input'],
      [JSON.stringify(withoutData), 'invalid_input'],
      [JSON.stringify({ ...event, data: {} }), 'invalid_input'],
      [JSON.stringify({ ...event, data: { object: 'cs_1' } }), 'invalid_input'],
      [JSON.stringify({ ...event, data: { object: [] } }), 'invalid_input'],
      [JSON.stringify({ ...event, id: 42 }), 'invalid_input'],
      [JSON.stringify({ ...event, id: 'e'.repeat(256) }), 'invalid_input'],
      [JSON.stringify({ ...event, created: 'yesterday' }), 'invalid_input'],
      [JSON.stringify({ object: 'v2.core.event', id: 'evt_thin' }), 'invalid_input'],
    ];
    for (const [body, code] of unusable) {
      const answer = await stripe.post(body);
      expect(answer.status, body).toBe(400);
      expect(answer.body, body).toMatchObject({ status: 'error', code, message: expect.any(String) });
      if (code === 'invalid_input') expect((answer.body as { issues: unknown[] }).issues.length, body).toBeGreaterThan(0);
    }
    expect(await stack.orm.em.fork().count(StripeEvent, {})).toBe(before);
  });

  it('applies every event exactly once: three deliveries each in 20 random orders, and 5 concurrent copies, end as one in-order delivery', async () => {
    /** The corpus for one account: a plan checkout, a top-up, three updates and a delete. */
    async function corpus(run: string) {
      const user = await registerUser(stack);
      await meteredResource(user);
      const subscription = `sub_${run}`;
      const item = (price: string, start: number) => ({
        data: [{ price: { id: price }, current_period_start: start, current_period_end: start + 2_592_000 }],
      });
      const base = 1_800_000_000;
      const sub = (status: string, price: string, start: number) => ({
        id: subscription,
        object: 'subscription',
        status,
        customer: `cus_${run}`,
        metadata: { userId: user.id },
        items: item(price, start),
      });
      const events = [
        stripe.event(
          'checkout.session.completed',
          {
            id: `cs_plan_${run}`,
            mode: 'subscription',
            payment_status: 'paid',
            subscription,
            client_reference_id: user.id,
            metadata: { userId: user.id, priceId: 'price_starter' },
          },
          base,
          `evt_plan_${run}`,
        ),
        stripe.event(
          'checkout.session.completed',
          {
            id: `cs_topup_${run}`,
            mode: 'payment',
            payment_status: 'paid',
            amount_total: 2500,
            currency: 'usd',
            client_reference_id: user.id,
            metadata: { userId: user.id },
          },
          base + 1,
          `evt_topup_${run}`,
        ),
        stripe.event('customer.subscription.updated', sub('active', 'price_starter', base), base + 2, `evt_u1_${run}`),
        stripe.event('customer.subscription.updated', sub('past_due', 'price_pro', base + 100), base + 3, `evt_u2_${run}`),
        stripe.event('customer.subscription.updated', sub('active', 'price_pro', base + 100), base + 4, `evt_u3_${run}`),
        stripe.event('customer.subscription.deleted', sub('canceled', 'price_pro', base + 100), base + 5, `evt_del_${run}`),
        stripe.event(
          'invoice.paid',
          { id: `in_${run}`, customer: `cus_${run}`, metadata: { userId: user.id } },
          base + 6,
          `evt_inv_${run}`,
        ),
      ];
      return { user, events };
    }

    async function finalState(userId: string) {
      const em = stack.orm.em.fork();
      const row = await expectLedgerMatches(userId);
      const subscriptions = await em.find(Subscription, { account: row });
      const entries = await em.find(LedgerEntry, { account: row }, { orderBy: { kind: 'asc' } });
      return {
        available: row.available,
        pending: row.pending,
        ledger: entries.map((entry) => [entry.kind, entry.amount, entry.checkoutSessionId?.replace(/_[^_]+$/, '')]),
        subscriptions: subscriptions.map((s) => ({
          status: s.status,
          deleted: s.deleted,
          planId: s.planId,
          stateCreated: s.stateCreated,
          activated: s.activatedBy?.replace(/_[^_]+$/, ''),
          pools: [s.leftCpu, s.leftNetwork, s.leftTokens],
        })),
      };
    }

    const inOrder = await corpus('inorder');
    for (const event of inOrder.events) expect((await stripe.deliver(event)).status).toBe(200);
    const expected = await finalState(inOrder.user.id);
    expect(expected.available).toBe(2500n);
    expect(expected.subscriptions).toEqual([
      expect.objectContaining({ status: 'canceled', deleted: true, planId: 'pro', activated: 'cs_plan' }),
    ]);

    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.infiniteStream(fc.nat()), async (randomness) => {
        run += 1;
        const { user, events } = await corpus(`r${run}t${Date.now()}`);
        const deliveries = [...events, ...events, ...events];
        const order = [...deliveries.keys()];
        const draws = randomness.take(order.length)[Symbol.iterator]();
        for (let i = order.length - 1; i > 0; i--) {
          const j = (draws.next().value as number) % (i + 1);
          [order[i], order[j]] = [order[j] as number, order[i] as number];
        }
        for (const index of order) {
          const answer = await stripe.deliver(deliveries[index] as Record<string, unknown>);
          expect(answer.status).toBe(200);
        }
        expect(await finalState(user.id)).toEqual(expected);
      }),
      { numRuns: 20 },
    );

    const concurrent = await corpus(`concurrent${Date.now()}`);
    const topUpEvent = concurrent.events[1] as Record<string, unknown>;
    const answers = await Promise.all(Array.from({ length: 5 }, () => stripe.deliver(topUpEvent)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await expectLedgerMatches(concurrent.user.id)).available).toBe(2500n);
  }, 600_000);
});

describe('metering', () => {
  it('the coordinator route answers 404 to a wrong token, like no route at all', async () => {
    const wrong = await report({ resourceId: crypto.randomUUID(), amount: 1, unit: 'cpu' }, 'not-the-token-at-all');
    const none = await stack.http.post('/api/nothing-here/usage', {});
    expect(wrong.status).toBe(404);
    expect(wrong.body.code).toBe(none.body.code);
    expect(wrong.text).not.toContain(COORDINATOR_TOKEN);
    const bad = await report({ resourceId: crypto.randomUUID(), amount: 1, unit: 'furlongs' });
    expect(bad.status).toBe(400);
    const unknown = await report({ resourceId: crypto.randomUUID(), amount: 1, unit: 'cpu' });
    expect(unknown.status).toBe(404);
    // Without EXTERNAL_TOKEN (this stack) the external-session routes do not exist either.
    expect((await stack.http.put('/api/external-session', { project: 'x', cdpUrl: 'ws://127.0.0.1:1/' })).status).toBe(404);
    // The token, right or wrong, is in no log line; the route is.
    const logged = logLines.join('');
    expect(logged).toContain('/api/coordinator/[redacted]/usage');
    expect(logged).not.toContain(COORDINATOR_TOKEN);
    expect(logged).not.toContain('not-the-token-at-all');
  });

  it('a user’s usage is summed by day and by session, with what it billed, deleted projects’ included; others’ is not in it', async () => {
    const user = await registerUser(stack);
    const { project, resourceId } = await meteredResource(user);
    const second = await meteredResource(user);
    await topUp(user, '5');
    for (const [id, unit, amount] of [
      [resourceId, 'cpu', 4],
      [resourceId, 'cpu', '1.5'],
      [resourceId, 'network', 2048],
      [second.resourceId, 'tokens', 1000],
    ] as const) {
      const reported = await report({ resourceId: id, amount, unit });
      expect(reported.status, reported.text).toBe(200);
    }
    // A browser whose session was deleted since: its usage stays, under "deleted sessions".
    const gone = await meteredResource(user);
    expect((await report({ resourceId: gone.resourceId, amount: 2, unit: 'cpu' })).status).toBe(200);
    await stack.orm.em.getConnection().execute('delete from session_resources where id = ?', [gone.resourceId]);
    // A project deleted since: its usage stays with the account, under "deleted projects".
    const doomed = await meteredResource(user);
    expect((await report({ resourceId: doomed.resourceId, amount: 3, unit: 'cpu' })).status).toBe(200);
    expect((await stack.http.delete(`/${doomed.project.slug}/api`, { token: user.token })).status).toBe(200);
    const stranger = await registerUser(stack);
    const theirs = await meteredResource(stranger);
    expect((await report({ resourceId: theirs.resourceId, amount: 99, unit: 'cpu' })).status).toBe(200);

    const usage = await stack.http.get('/api/billing/usage?days=7', { token: user.token });
    expect(usage.status, usage.text).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.body.days).toEqual([{ day: today, cpu: '10.5', network: '2048', tokens: '1000', billed: expect.stringMatching(/^\d+$/) }]);
    expect(usage.body.sessions).toHaveLength(4);
    const sessions = usage.body.sessions.map(
      (entry: { project: string; session: { name: string } | null; of: string; cpu: string; tokens: string }) => ({
        project: entry.project,
        name: entry.session?.name,
        of: entry.of,
        cpu: entry.cpu,
        tokens: entry.tokens,
      }),
    );
    expect(sessions).toEqual(
      expect.arrayContaining([
        { project: project.slug, name: 'metered', of: 'session', cpu: '5.5', tokens: '0' },
        { project: second.project.slug, name: 'metered', of: 'session', cpu: '0', tokens: '1000' },
        { project: gone.project.slug, name: undefined, of: 'deleted sessions', cpu: '2', tokens: '0' },
        { project: null, name: undefined, of: 'deleted projects', cpu: '3', tokens: '0' },
      ]),
    );
    const billed = usage.body.days[0].billed;
    expect(usage.body.sessions.reduce((sum: bigint, entry: { billed: string }) => sum + BigInt(entry.billed), 0n)).toBe(BigInt(billed));
    expect((await stack.http.get('/api/billing/usage?days=0', { token: user.token })).status).toBe(400);
  });

  it('draws from the plan’s pool first; the balance only once the pool is spent', async () => {
    const user = await registerUser(stack);
    const { resourceId } = await meteredResource(user);
    await topUp(user, '1');
    await subscribe(user, 'price_starter');
    // 10 CPU seconds in the pool: 4 + 5.5 come from it, with nothing taken from the balance.
    for (const amount of [4, '5.5']) {
      expect((await report({ resourceId, amount, unit: 'cpu' })).body).toEqual({ action: 'continue' });
      expect((await account(user.id)).available).toBe(100n);
    }
    // 0.5 left in the pool: 3000.5 seconds more cost 3000 × 0.0014 = 4.2 cents, 4 of them billed.
    expect((await report({ resourceId, amount: '3000.5', unit: 'cpu' })).body).toEqual({ action: 'continue' });
    const row = await expectLedgerMatches(user.id);
    expect(row.available).toBe(96n);
    expect(row.carryMicros).toBe(200_000n);
    const overview = await stack.http.get('/api/billing/overview', { token: user.token });
    expect(overview.body.activeSubscription).toMatchObject({ plan: { planId: 'starter' }, remaining: { cpu: '0', tokens: '1000' } });
    expect(overview.body.transactions[0]).toMatchObject({
      type: 'usage',
      unit: 'cpu',
      quantity: '3000.5',
      cost: '4.2',
      billed: '4',
      discounts: '0.0007',
    });
    expect(overview.body.usagePricing).toEqual([
      { unit: 'cpu', currency: 'usd', pricePerUnit: '0.0014' },
      { unit: 'network', currency: 'usd', pricePerUnit: '0.00000001' },
      { unit: 'tokens', currency: 'usd', pricePerUnit: '0.0001' },
    ]);
  });

  it('a report sent again with its report id is recorded and debited once', async () => {
    const user = await registerUser(stack);
    const { resourceId } = await meteredResource(user);
    await topUp(user, '1');
    const body = { resourceId, amount: 10_000, unit: 'tokens', reportId: `r-${resourceId}` };
    const answers = await Promise.all([report(body), report(body), report(body)]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    await report(body);
    expect((await expectLedgerMatches(user.id)).available).toBe(99n);
    expect(await stack.orm.em.fork().count(UsageRecord, { resourceId })).toBe(1);
  });

  it('a project’s webhooks hear once when the funds run low and once when they run out', async () => {
    const user = await registerUser(stack);
    const { project, resourceId } = await meteredResource(user);
    const receiver = await startWebhookReceiver(PAGE_HOST);
    try {
      const hook = await stack.http.post(
        `/${project.slug}/api/webhooks`,
        { url: receiver.url('/funds'), events: ['funds.low', 'funds.exhausted'] },
        { token: user.token },
      );
      expect(hook.status, hook.text).toBe(200);
      await topUp(user, '6');
      // 10,000 tokens cost a cent; the threshold is 5.00 (FUNDS_LOW_THRESHOLD 500).
      for (const amount of [150_000, 1_000_000, 1_000_000, 100_000_000, 10_000]) {
        expect((await report({ resourceId, amount, unit: 'tokens' })).status).toBe(200);
      }
      await expect.poll(() => receiver.at('/funds').length, { timeout: 30_000 }).toBe(2);
      const events = receiver
        .at('/funds')
        .map(
          (hit) =>
            new Webhook(hook.body.secret).verify(hit.body, hit.headers) as { type: string; data: { account: { available: string } } },
        );
      const byType = Object.fromEntries(events.map((event) => [event.type, event.data.account]));
      expect(byType).toEqual({
        'funds.low': { available: '485', currency: 'usd' },
        'funds.exhausted': { available: '0', currency: 'usd' },
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(receiver.at('/funds')).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it('10,000 reports of a thousandth of a cent bill exactly ten cents', async () => {
    const user = await registerUser(stack);
    const { project, resourceId } = await meteredResource(user);
    await topUp(user, '0.25');
    const row = await stack.orm.em.fork().findOneOrFail(Project, { id: project.id });
    // 10 tokens at 0.0001 a token: 0.001 of a cent each.
    const queue = Array.from({ length: 10_000 }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (queue.pop() !== undefined) {
          await meter(stack.orm.em.fork(), stack.config.billing, row, { resourceId, unit: 'tokens', quantityMicro: 10_000_000n });
        }
      }),
    );
    const after = await expectLedgerMatches(user.id);
    expect(after.available).toBe(15n);
    expect(after.carryMicros).toBe(0n);
    const billed = (await stack.orm.em.fork().find(UsageRecord, { resourceId })).reduce((sum, record) => sum + record.billed, 0n);
    expect(billed).toBe(10n);
    // 10,000 serialised ledger transactions: about 2 minutes on a quiet 2-core machine, and more
    // than 3 when other test files load it (CI saw 180 s run out).
  }, 420_000);

  it('100 concurrent reports never overdraw by more than one report; the one that exhausts the funds and every later one answer shutdown', async () => {
    const user = await registerUser(stack);
    const { resourceId } = await meteredResource(user);
    await topUp(user, '0.1');
    // Each report: 10,000 tokens, one cent. Ten cents of funds.
    const answers = await Promise.all(Array.from({ length: 100 }, () => report({ resourceId, amount: 10_000, unit: 'tokens' })));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const row = await expectLedgerMatches(user.id);
    expect(row.available).toBe(0n);
    expect(row.pending <= 1n).toBe(true);
    expect(row.exhaustedAt).not.toBeNull();
    const records = await stack.orm.em.fork().find(UsageRecord, { resourceId }, { orderBy: { created: 'asc' } });
    expect(records.reduce((sum, record) => sum + record.billed, 0n)).toBe(10n);
    expect(answers.filter((answer) => answer.body.action === 'continue')).toHaveLength(9);
    expect((await report({ resourceId, amount: 1, unit: 'tokens' })).body).toEqual({ action: 'shutdown' });
  });

  it('an account that runs out gets shutdown: its running browser, pipeline run and analysis stop, and new starts answer 402', async () => {
    const user = await registerUser(stack);
    const as = { token: user.token };
    const project = await createProject(stack, user.token);
    await topUp(user, '0.05');
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'shop' }, as);
    expect(session.status, session.text).toBe(200);
    const pipelineId = await createPipeline(stack, project.slug, as, longWaitSource(50_000));
    // A run that records keeps a browser of its own (a plain run is a call: test/billing/call-metering.test.ts).
    const started = await stack.http.post(
      `/${project.slug}/api/pipelines/${pipelineId}/start`,
      { session: session.body.id, record: true },
      as,
    );
    expect(started.status, started.text).toBe(200);
    const runUrl = `/${project.slug}/api/pipelines/${pipelineId}/${started.body.id}`;
    await expect
      .poll(async () => (await stack.http.get(runUrl, as)).body.status.pipeline, { timeout: 30_000 })
      .toMatch(/running|succeeded|failed|cancelled/);
    const run = await stack.http.get(runUrl, as);
    expect(run.body.status.pipeline, run.text).toBe('running');
    const resourceId: string = run.body.resources[0]?.id;
    expect(resourceId, run.text).toBeTruthy();

    // A browser of its own beside the run's, and an analysis on it.
    const other = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'other' }, as);
    const browser = await stack.http.post(`/${project.slug}/api/sessions/${other.body.id}/start`, undefined, as);
    expect(browser.status, browser.text).toBe(200);
    const analysed = await createPipeline(stack, project.slug, as, { nodes: {} });
    const analysis = await stack.http.put(
      `/${project.slug}/api/pipelines/${analysed}/analysis`,
      { session: other.body.id, model: 'builtin', prompt: `Open ${site.url}/slow and extract the heading` },
      as,
    );
    expect(analysis.status, analysis.text).toBe(200);
    const analysisUrl = `/${project.slug}/api/analysis/${analysis.body.id}`;
    expect((await stack.http.get(analysisUrl, as)).body.agent).toBe('running');

    // 5,000 CPU seconds: 7 cents, more than the 5 there are.
    const answer = await report({ resourceId, amount: 5000, unit: 'cpu' });
    expect(answer.body).toEqual({ action: 'shutdown' });
    const resourceOf = (id: string) => stack.orm.em.fork().findOneOrFail(SessionResource, { id });
    await expect.poll(async () => (await resourceOf(browser.body.id)).status, { timeout: 30_000 }).toBe('stopped');
    expect((await resourceOf(browser.body.id)).stopReason).toBe(FUNDS_EXHAUSTED);
    // Cancelled, or failed when its browser stopped first: either way it ended.
    await expect.poll(async () => (await stack.http.get(runUrl, as)).body.status.pipeline, { timeout: 30_000 }).toMatch(/cancelled|failed/);
    await expect.poll(async () => (await resourceOf(resourceId)).status, { timeout: 30_000 }).toBe('stopped');
    await expect.poll(async () => (await stack.http.get(analysisUrl, as)).body.agent, { timeout: 30_000 }).toBe('stopped');
    expect((await stack.http.get(analysisUrl, as)).body.error).toMatchObject({ code: 'stopped' });

    const again = await stack.http.post(`/${project.slug}/api/sessions/${session.body.id}/start`, undefined, as);
    expect(again.status, again.text).toBe(402);
    expect(again.body).toMatchObject({ status: 'error', code: 'insufficient_funds' });
    const runAgain = await stack.http.post(`/${project.slug}/api/pipelines/${pipelineId}/start`, { session: session.body.id }, as);
    expect(runAgain.status).toBe(402);

    // A top-up settles what is pending and lets work start again.
    await topUp(user, '5');
    const row = await expectLedgerMatches(user.id);
    expect(row.pending).toBe(0n);
    expect(row.exhaustedAt).toBeNull();
    const restarted = await stack.http.post(`/${project.slug}/api/sessions/${session.body.id}/start`, undefined, as);
    expect(restarted.status, restarted.text).toBe(200);
    await stack.http.post(`/${project.slug}/api/sessions/${session.body.id}/${restarted.body.id}/stop`, undefined, as);
  }, 120_000);
});

describe('billing in the web console', () => {
  /** How long a page may take to show what a poll waits for, on a busy machine. */
  const soon = { timeout: 30_000 };

  it('in a real browser: /billing leads to it; balance, plans, usage by day and session; subscribe, top up and open the portal', async () => {
    const user = await registerUser(stack);
    await topUp(user, '7.5');
    const { resourceId } = await meteredResource(user);
    expect((await report({ resourceId, amount: 3, unit: 'cpu' })).status).toBe(200);
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${stack.url}/billing`);
      expect(page.url()).toBe(`${stack.url}/#/billing`);
      await page.getByLabel('E-mail').fill(user.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('heading', { name: 'Billing' }).isVisible(), soon).toBe(true);
      await expect.poll(() => page.getByRole('region', { name: 'balance in usd' }).textContent(), soon).toContain('7.50 USD');
      expect(await page.locator('article[aria-label^="plan "] h3').allTextContents()).toEqual(['Starter', 'Pro', 'Euro']);
      // Usage: a chart per kind by day, and the session that used it; no five-second rows.
      await expect.poll(() => page.getByRole('table', { name: 'usage by session' }).textContent(), soon).toContain('metered');
      await checkPage(page, 'billing');
      expect(await page.getByRole('table', { name: 'usage by session' }).textContent()).toContain('3.0 s');
      expect(await page.getByRole('img', { name: 'CPU seconds by day' }).locator('rect').count()).toBeGreaterThan(0);
      expect(await page.getByText('CPU seconds: 3.0 s').isVisible()).toBe(true);

      await Promise.all([page.waitForURL(`${stripe.url}/pay/**`), page.getByRole('button', { name: 'Subscribe to Pro' }).click()]);
      const planSession = stripe.sessions.get(stripe.sessionOfUrl(page.url()));
      expect(planSession).toMatchObject({ mode: 'subscription', client_reference_id: user.id });

      // Stripe sends the user back to /billing, which says how it went.
      await page.goto(`${stack.url}/billing?checkout=done`);
      await expect.poll(() => page.getByRole('status').textContent(), soon).toContain('Thank you');
      const topUpForm = page.getByRole('form', { name: 'top up' });
      await topUpForm.getByLabel(/Add funds/).fill('1e3');
      await topUpForm.getByRole('button', { name: 'Top up' }).click();
      await expect.poll(() => page.getByRole('alert').textContent(), soon).toMatch(/plain decimal/);
      await topUpForm.getByLabel(/Add funds/).fill('20');
      await Promise.all([page.waitForURL(`${stripe.url}/pay/**`), topUpForm.getByRole('button', { name: 'Top up' }).click()]);
      expect(stripe.sessions.get(stripe.sessionOfUrl(page.url()))).toMatchObject({ mode: 'payment', amount_total: 2000 });

      await page.goto(`${stack.url}/billing`);
      await Promise.all([
        page.waitForURL(`${stripe.url}/portal/**`),
        page.getByRole('button', { name: 'Invoices and payment methods' }).click(),
      ]);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
