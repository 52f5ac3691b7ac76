import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A local stand-in for the few Stripe API endpoints the service calls (customers, Checkout
 * sessions, Billing Portal sessions, prices): Stripe itself cannot be reached from here. It
 * answers like Stripe (same shapes, the same answer for a repeated idempotency key), and
 * completing a checkout posts the webhook event Stripe would send, signed with the SDK's own
 * `webhooks.generateTestHeaderString`, to the service's real endpoint.
 */

type Json = Record<string, unknown>;
export type StandInRequest = { method: string; path: string; body: Json; idempotencyKey?: string };

/** `a[b][0][c]=1` form fields as nested objects and arrays, the way Stripe reads them. */
function parseForm(text: string): Json {
  const root: Json = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.replace(/\]/g, '').split('[');
    let node: Record<string, unknown> = root;
    parts.forEach((part, index) => {
      if (index === parts.length - 1) {
        node[part] = value;
        return;
      }
      const nextIsIndex = /^\d+$/.test(parts[index + 1] as string);
      node[part] ??= nextIsIndex ? [] : {};
      node = node[part] as Record<string, unknown>;
    });
  }
  return root;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(10).toString('hex')}`;

export async function startStripeStandIn(options: { webhookSecret: string }) {
  const requests: StandInRequest[] = [];
  const customers = new Map<string, Json>();
  const sessions = new Map<string, Json>();
  const byIdempotencyKey = new Map<string, { status: number; body: Json }>();
  let webhookUrl = '';
  /** The next call to this endpoint fails as Stripe fails a request it refuses. */
  const failNext = new Set<string>();

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] as string;
      const body = parseForm(raw);
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      requests.push({ method: req.method ?? 'GET', path, body, idempotencyKey });
      const send = (status: number, answer: Json) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
        res.end(JSON.stringify(answer));
      };
      if (req.headers.authorization !== 'Bearer sk_test_standin') {
        return send(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
      }
      if (idempotencyKey && byIdempotencyKey.has(`${path} ${idempotencyKey}`)) {
        const kept = byIdempotencyKey.get(`${path} ${idempotencyKey}`) as { status: number; body: Json };
        return send(kept.status, kept.body);
      }
      const answer = route(req.method ?? 'GET', path, body);
      if (idempotencyKey) byIdempotencyKey.set(`${path} ${idempotencyKey}`, answer);
      send(answer.status, answer.body);
    });
  });

  function route(method: string, path: string, body: Json): { status: number; body: Json } {
    const endpoint = `${method} ${path.replace(/\/(cus|cs|price|bps)_[^/]+$/, '/:id')}`;
    if (failNext.delete(endpoint)) {
      return { status: 400, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such price' } } };
    }
    if (endpoint === 'POST /v1/customers') {
      const customer = { id: newId('cus'), object: 'customer', email: body.email, name: body.name, metadata: body.metadata ?? {} };
      customers.set(customer.id, customer);
      return { status: 200, body: customer };
    }
    if (endpoint === 'POST /v1/checkout/sessions') {
      const id = newId('cs');
      const items = (body.line_items as Json[] | undefined) ?? [];
      const priceData = items[0]?.price_data as Json | undefined;
      const session = {
        id,
        object: 'checkout.session',
        mode: body.mode,
        customer: body.customer,
        client_reference_id: body.client_reference_id ?? null,
        metadata: body.metadata ?? {},
        line_items: items,
        currency: (priceData?.currency as string | undefined) ?? 'usd',
        amount_total: priceData ? Number(priceData.unit_amount) : null,
        payment_status: 'unpaid',
        status: 'open',
        subscription: null,
        success_url: body.success_url,
        url: `${url}/pay/${id}`,
      };
      sessions.set(id, session);
      return { status: 200, body: session };
    }
    if (endpoint === 'POST /v1/billing_portal/sessions') {
      if (!customers.has(body.customer as string)) {
        return { status: 400, body: { error: { type: 'invalid_request_error', message: 'No such customer' } } };
      }
      return {
        status: 200,
        body: { id: newId('bps'), object: 'billing_portal.session', customer: body.customer, url: `${url}/portal/${body.customer}` },
      };
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method} ${path})` } } };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** A signed delivery of `payload` (exactly these bytes) to the webhook. */
  async function post(payload: string, header?: string) {
    const signature =
      header ??
      Stripe.webhooks.generateTestHeaderString({ payload, secret: options.webhookSecret, timestamp: Math.floor(Date.now() / 1000) });
    const response = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      body: payload,
    });
    return { status: response.status, body: (await response.json().catch(() => undefined)) as Json | undefined };
  }

  return {
    url,
    requests,
    customers,
    sessions,
    failNext,
    /** Where completed checkouts send their events: the service's POST /api/stripe/webhook. */
    sendWebhooksTo(target: string) {
      webhookUrl = target;
    },
    event(type: string, object: Json, created = Math.floor(Date.now() / 1000), id = newId('evt')) {
      return { id, object: 'event', type, created, livemode: false, api_version: '2026-01-28', data: { object } };
    },
    post,
    deliver(event: Json) {
      return post(JSON.stringify(event));
    },
    /**
     * The customer pays on the Checkout page: the session is completed (with a subscription in
     * subscription mode) and `checkout.session.completed` is sent. `paid: false` is a delayed
     * payment method: the session completes unpaid.
     */
    async complete(sessionId: string, { paid = true } = {}) {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`no checkout session ${sessionId}`);
      session.status = 'complete';
      session.payment_status = paid ? 'paid' : 'unpaid';
      if (session.mode === 'subscription') session.subscription ??= newId('sub');
      const event = this.event('checkout.session.completed', { ...session });
      return { event, delivery: await post(JSON.stringify(event)) };
    },
    sessionOfUrl(checkoutUrl: string) {
      return checkoutUrl.split('/pay/')[1] as string;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type StripeStandIn = Awaited<ReturnType<typeof startStripeStandIn>>;
