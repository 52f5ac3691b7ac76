import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import Stripe from 'stripe';
import { z } from 'zod';
import { usageUnits } from '../../db/entities/index.ts';
import type { StripeEventInput } from '../../workflows/contracts/billing.ts';
import type { AppDeps } from '../appDeps.ts';
import { meter, projectOfResource } from '../billing/metering.ts';
import { parseQuantity } from '../billing/money.ts';
import { enforceFunds } from '../billing/shutdown.ts';
import { applyStripeEventOnce } from '../billing/stripeEvents.ts';
import { BadRequest, invalidInput, NotFound, ServiceUnavailable } from '../errors.ts';
import { refuseDeepJson } from './jsonDepth.ts';
import { jsonAnswer } from './rawAnswers.ts';
import { appDeps, rawRouteGroup, routesOf, sameSecret } from './rawRoute.ts';

/**
 * Billing's raw routes: the Stripe webhook (its body must reach the signature check byte for
 * byte, so it has its own body parser) and the coordinator's usage reports (a shared secret in the
 * path). The JSON routes of 4.9 are procedures (server/trpc/routers/billing.ts).
 */

/**
 * How old a signed webhook may be (Stripe's own default tolerance), and how far ahead of our clock
 * its timestamp may be. Stripe checks only the age: a timestamp in the future would open a long
 * window for replaying the same bytes.
 */
const SIGNATURE_TOLERANCE_SECONDS = 300;
const FUTURE_TOLERANCE_SECONDS = 300;

/**
 * What the service reads of a verified event, within its columns (stripe_events: id 255, type
 * 100). A signed body that is not such an event (`"x"`, no `data`) is refused with 400 before any
 * workflow starts: Stripe's signature says who sent it, not that it can be applied.
 */
const usableEvent = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(100),
  created: z.int().nonnegative(),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

/** The signed timestamp of a `stripe-signature` header (`t=…`; the last one, as Stripe reads it). */
function signedAt(header: string) {
  const stamps = header.split(',').filter((part) => part.startsWith('t='));
  const stamp = Number.parseInt(stamps[stamps.length - 1]?.slice(2) ?? '', 10);
  return Number.isSafeInteger(stamp) ? stamp : undefined;
}

const usageReport = z.strictObject({
  resourceId: z.uuid(),
  amount: z.union([z.number().nonnegative(), z.string().max(40)]),
  unit: z.enum(usageUnits),
  reportId: z.string().min(1).max(200).optional(),
});

const route = routesOf<AppDeps>();

export const billingRoutes = rawRouteGroup(appDeps, [
  route({
    method: 'POST',
    path: '/api/stripe/webhook',
    body: 'bytes',
    doc: {
      operationId: 'billing-stripe-webhook',
      summary: 'Stripe webhook: the raw body and the stripe-signature header, untouched; each event is applied once',
      tags: ['billing'],
      parameters: [{ name: 'stripe-signature', in: 'header', required: true, schema: { type: 'string' } }],
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        ...jsonAnswer('{received: true}', {
          type: 'object',
          properties: { received: { const: true } },
          required: ['received'],
        }),
        '400': {
          description:
            'The signature does not match the body, or is dated more than five minutes before or after now (`invalid_signature`); the signed body is not JSON (`invalid_json`) or not an event with `id`, `type`, `created` and `data.object` (`invalid_input`)',
        },
        '404': { description: 'Billing is off on this service (`billing_disabled`)' },
        '503': { description: 'The event could not be applied now; Stripe delivers it again' },
      },
    },
    serve: (deps) => async (req, reply) => {
      const { config } = deps;
      const stripe = config.billing.stripe;
      if (!stripe) throw new NotFound('Billing', 'billing_disabled');
      const signature = req.headers['stripe-signature'];
      const body = req.body;
      if (typeof signature !== 'string' || !Buffer.isBuffer(body)) {
        throw new BadRequest('invalid_signature', 'The webhook needs its raw body and a stripe-signature header');
      }
      const tooDeep = refuseDeepJson(body.toString('utf8'));
      if (tooDeep) throw tooDeep;
      // The signature first, then the body: only Stripe's bytes are read, and each refusal says which failed.
      try {
        const verifier = Stripe.webhooks.signature;
        if (!verifier) throw new Error('the Stripe library has no signature check');
        verifier.verifyHeader(body, signature, stripe.webhookSecret, SIGNATURE_TOLERANCE_SECONDS);
      } catch (error) {
        req.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'stripe webhook refused: bad signature');
        throw new BadRequest('invalid_signature', 'The webhook signature does not match its body, or is too old');
      }
      const timestamp = signedAt(signature);
      if (timestamp === undefined || timestamp - Math.floor(Date.now() / 1000) > FUTURE_TOLERANCE_SECONDS) {
        req.log.warn({ timestamp }, 'stripe webhook refused: signed in the future');
        throw new BadRequest('invalid_signature', 'The webhook signature is dated more than five minutes in the future');
      }
      let signed: unknown;
      try {
        signed = JSON.parse(body.toString('utf8'));
      } catch {
        throw new BadRequest('invalid_json', 'The signed webhook body is not JSON');
      }
      const parsed = usableEvent.safeParse(signed);
      if (!parsed.success) throw invalidInput(parsed.error);
      const event = parsed.data;
      const input: StripeEventInput = { id: event.id, type: event.type, created: event.created, object: event.data.object };
      try {
        await applyStripeEventOnce(deps.temporal, config.temporal.taskQueue, input);
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
          req.log.error({ err: error, eventId: event.id }, 'stripe webhook: the event could not be applied');
          throw new ServiceUnavailable('The event could not be applied now; Stripe retries it', error);
        }
      }
      return reply.send({ received: true });
    },
  }),
  route({
    method: 'POST',
    path: '/api/coordinator/{token}/usage',
    // Every coordinator path answers 404 to a wrong token, the same as to no route at all.
    servedAt: { path: '/api/coordinator/{token}/*', anyMethod: true },
    doc: {
      operationId: 'billing-coordinator-usage',
      summary: 'Report usage of a resource (a browser, an analysis or generation job); answers whether its work may go on',
      tags: ['system'],
      pathParameters: { token: { description: 'COORDINATOR_TOKEN' } },
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['resourceId', 'amount', 'unit'],
              additionalProperties: false,
              properties: {
                resourceId: { type: 'string', format: 'uuid' },
                amount: { oneOf: [{ type: 'number', minimum: 0 }, { type: 'string' }], description: 'At most 6 decimals' },
                unit: { type: 'string', enum: [...usageUnits], description: 'cpu: CPU seconds; network: bytes; tokens: model tokens' },
                reportId: { type: 'string', description: 'Sent again with the same id, the report is recorded once' },
              },
            },
          },
        },
      },
      responses: {
        ...jsonAnswer('Whether the host may go on', {
          type: 'object',
          properties: { action: { enum: ['continue', 'shutdown'] } },
          required: ['action'],
        }),
        '400': { description: 'The report is malformed' },
        '404': { description: 'A wrong token (indistinguishable from no route), or an unknown resource' },
      },
    },
    serve: (deps) => async (req, reply) => {
      const { config } = deps;
      const { token } = req.params;
      const path = (req.params as { '*'?: string })['*'];
      if (!config.coordinatorToken || !sameSecret(token, config.coordinatorToken) || path !== 'usage' || req.method !== 'POST') {
        return reply.callNotFound();
      }
      const parsed = usageReport.safeParse(req.body ?? {});
      if (!parsed.success) throw invalidInput(parsed.error);
      const report = parsed.data;
      const quantityMicro = parseQuantity(report.amount);
      if (quantityMicro === undefined) {
        throw new BadRequest('invalid_input', 'Invalid input: amount: a non-negative decimal with at most 6 decimals', {
          issues: [{ path: ['amount'], message: 'a non-negative decimal with at most 6 decimals' }],
        });
      }
      const em = deps.orm.em.fork();
      const project = await projectOfResource(em, report.resourceId);
      if (!project) throw new NotFound(`Resource ${report.resourceId}`);
      const metered = await meter(em, config.billing, project, {
        resourceId: report.resourceId,
        unit: report.unit,
        quantityMicro,
        reportId: report.reportId,
      });
      try {
        await enforceFunds(em, deps.temporal, config, metered);
      } catch (error) {
        // The answer still says shutdown; the next report starts the shutdown again.
        req.log.error({ err: error }, 'the funds shutdown could not be started');
      }
      return reply.send({ action: metered.action });
    },
  }),
]);
