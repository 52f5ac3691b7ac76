import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { WebhookDelivery, WebhookEndpoint } from '../../../db/entities/index.ts';
import { BadRequest, Conflict } from '../../errors.ts';
import { webhookActions } from '../../permissions/permissions.ts';
import { findInProject, listReadable, loadChild } from '../../projects/projectRows.ts';
import { checkDestination, MAX_WEBHOOK_URL_LENGTH, webhookUrlProblem } from '../../webhooks/destination.ts';
import { dispatchDeliveries, startDeliveries, webhookEvents } from '../../webhooks/events.ts';
import { newWebhookSecret, sealWebhookSecret } from '../../webhooks/secrets.ts';
import { iso, pagination, statusOk } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, router } from '../base.ts';

/**
 * Webhooks (docs/webhooks.md): a project's endpoints, each with a URL, the events it wants and a
 * signing secret answered once; and each endpoint's deliveries with their tries. An endpoint's
 * URL must pass the egress policy when it is written, and again before every delivery.
 */

const projectParam = z.string().max(100);
const webhookIdParam = z.string().max(100);
const deliveryIdParam = z.string().max(100);

const urlSchema = z
  .string()
  .trim()
  .max(MAX_WEBHOOK_URL_LENGTH)
  .superRefine((url, ctx) => {
    const problem = webhookUrlProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: `the URL ${problem}` });
  });
const eventsSchema = z
  .array(z.enum(webhookEvents))
  .min(1, 'name at least one event')
  .transform((events) => [...new Set(events)]);
const descriptionSchema = z
  .string()
  .trim()
  .max(500)
  .nullable()
  .transform((text) => (text ? text : null));

const webhookView = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.enum(webhookEvents)),
  enabled: z.boolean(),
  created: z.string(),
  updated: z.string(),
});

const attemptView = z.object({
  at: z.string(),
  /** What the endpoint answered; null when no answer came (refused, unreachable, timed out). */
  statusCode: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
});

const deliveryView = z.object({
  id: z.string(),
  webhookId: z.string(),
  event: z.enum(webhookEvents),
  /** The `webhook-id` header: the same on a resend, so a receiver applies a message once. */
  messageId: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  /** Pending, waiting for a place among the project's deliveries in flight; its first try comes after. */
  queued: z.boolean(),
  attempts: z.array(attemptView),
  /** When the next try is due; null once it succeeded or failed for good. */
  nextAttemptAt: z.string().nullable(),
  failure: z.string().nullable(),
  /** The delivery this one resends. */
  resentFrom: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
  created: z.string(),
  updated: z.string(),
});

function presentWebhook(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description ?? null,
    events: endpoint.events as (typeof webhookEvents)[number][],
    enabled: endpoint.enabled,
    created: iso(endpoint.created),
    updated: iso(endpoint.updated),
  };
}

function presentDelivery(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    webhookId: delivery.endpoint.id,
    event: delivery.event as (typeof webhookEvents)[number],
    messageId: delivery.messageId,
    status: delivery.status,
    queued: delivery.status === 'pending' && !delivery.dispatchedAt,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.nextAttemptAt ? iso(delivery.nextAttemptAt) : null,
    failure: delivery.failure ?? null,
    resentFrom: delivery.resentFrom ?? null,
    payload: delivery.payload,
    created: iso(delivery.created),
    updated: iso(delivery.updated),
  };
}

/** 400 `bad_url` when the URL's host is one the service may not call (after DNS). */
async function requireAllowedDestination(ctx: ProjectContext, url: string) {
  const checked = await checkDestination(ctx.deps.config, new URL(url));
  if (!checked.ok) {
    throw new BadRequest('bad_url', `The webhook URL is refused: ${checked.reason}`, {
      issues: [{ path: ['url'], message: checked.reason }],
    });
  }
}

/**
 * 409 `webhook_endpoint_limit_reached` when the project has WEBHOOK_ENDPOINTS_PER_PROJECT endpoints,
 * counted under a lock of the project's held to the end of `tx` (the one that adds the endpoint).
 */
async function requireEndpointRoom(ctx: ProjectContext, tx: EntityManager) {
  const limit = ctx.deps.config.quotas.webhookEndpointsPerProject;
  const projectId = ctx.project.id;
  await tx
    .getConnection()
    .execute('select pg_advisory_xact_lock(hashtext(?))', [`webhook_endpoints_of:${projectId}`], 'run', tx.getTransactionContext());
  if ((await tx.count(WebhookEndpoint, { project: projectId })) >= limit) {
    throw new Conflict(
      'webhook_endpoint_limit_reached',
      `This project already has its maximum of ${limit} webhook endpoints; delete one first`,
    );
  }
}

function findWebhook(ctx: ProjectContext, webhookId: string, action: string) {
  return findInProject(ctx, WebhookEndpoint, webhookId, action, 'Webhook');
}

const emitter = (ctx: ProjectContext) => ({ config: ctx.deps.config, log: ctx.deps.log, temporal: ctx.deps.temporal });

const tags = ['webhooks'];

export const webhooksRouter = router({
  list: projectProcedure
    .meta({ openapi: { method: 'GET', path: '/{project}/api/webhooks', tags, summary: 'The project’s webhook endpoints' } })
    .input(z.strictObject({ project: projectParam, ...pagination }))
    .output(z.array(webhookView))
    .query(async ({ ctx, input }) => {
      const page = { limit: input.limit, offset: input.offset };
      return (await listReadable(ctx, WebhookEndpoint, webhookActions.read, { page })).map(presentWebhook);
    }),

  create: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/{project}/api/webhooks',
        tags,
        summary: 'Add an endpoint; the answer holds its signing secret, shown this once',
      },
      errorCodes: ['webhook_endpoint_limit_reached'],
    })
    .input(
      z.strictObject({
        project: projectParam,
        url: urlSchema,
        events: eventsSchema,
        description: descriptionSchema.optional(),
        enabled: z.boolean().optional(),
      }),
    )
    .output(webhookView.extend({ secret: z.string() }))
    .mutation(async ({ ctx, input }) => {
      ctx.authorize(webhookActions.write);
      await requireAllowedDestination(ctx, input.url);
      const secret = newWebhookSecret();
      const endpoint = await ctx.em.transactional(async (tx) => {
        await requireEndpointRoom(ctx, tx);
        return tx.create(WebhookEndpoint, {
          project: ctx.project.id,
          url: input.url,
          description: input.description ?? null,
          events: input.events,
          secret: sealWebhookSecret(ctx.deps.serviceSecret, secret),
          enabled: input.enabled ?? true,
        });
      });
      return { ...presentWebhook(endpoint), secret };
    }),

  get: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/webhooks/{webhookId}',
        tags,
        summary: 'One endpoint (its secret is never shown again)',
      },
    })
    .input(z.strictObject({ project: projectParam, webhookId: webhookIdParam }))
    .output(webhookView)
    .query(async ({ ctx, input }) => presentWebhook(await findWebhook(ctx, input.webhookId, webhookActions.read))),

  update: projectProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/{project}/api/webhooks/{webhookId}',
        tags,
        summary: 'Change an endpoint’s URL, events, description or whether it is enabled',
      },
    })
    .input(
      z.strictObject({
        project: projectParam,
        webhookId: webhookIdParam,
        url: urlSchema.optional(),
        events: eventsSchema.optional(),
        description: descriptionSchema.optional(),
        enabled: z.boolean().optional(),
      }),
    )
    .output(webhookView)
    .mutation(async ({ ctx, input }) => {
      const endpoint = await findWebhook(ctx, input.webhookId, webhookActions.write);
      if (input.url !== undefined && input.url !== endpoint.url) {
        await requireAllowedDestination(ctx, input.url);
        endpoint.url = input.url;
      }
      if (input.events !== undefined) endpoint.events = input.events;
      if (input.description !== undefined) endpoint.description = input.description;
      if (input.enabled !== undefined) endpoint.enabled = input.enabled;
      await ctx.em.flush();
      return presentWebhook(endpoint);
    }),

  delete: projectProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/{project}/api/webhooks/{webhookId}', tags, summary: 'Delete an endpoint and its delivery log' },
    })
    .input(z.strictObject({ project: projectParam, webhookId: webhookIdParam }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const endpoint = await findWebhook(ctx, input.webhookId, webhookActions.write);
      // Its deliveries go with it (ON DELETE CASCADE); a try still scheduled finds nothing to send.
      await ctx.em.nativeDelete(WebhookEndpoint, { id: endpoint.id });
      // The places its deliveries held in flight go to the project's queued ones.
      await dispatchDeliveries(ctx.em, emitter(ctx), [ctx.project.id]);
      return { status: 'ok' as const };
    }),

  rotateSecret: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/{project}/api/webhooks/{webhookId}/secret',
        tags,
        summary: 'Give the endpoint a new signing secret, shown this once; deliveries from now on are signed with it',
      },
    })
    .input(z.strictObject({ project: projectParam, webhookId: webhookIdParam }))
    .output(webhookView.extend({ secret: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const endpoint = await findWebhook(ctx, input.webhookId, webhookActions.write);
      const secret = newWebhookSecret();
      endpoint.secret = sealWebhookSecret(ctx.deps.serviceSecret, secret);
      await ctx.em.flush();
      return { ...presentWebhook(endpoint), secret };
    }),

  deliveries: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/webhooks/{webhookId}/deliveries',
        tags,
        summary: 'The endpoint’s deliveries, newest first: each try with its status code, and the next try',
      },
    })
    .input(z.strictObject({ project: projectParam, webhookId: webhookIdParam, ...pagination }))
    .output(z.array(deliveryView))
    .query(async ({ ctx, input }) => {
      const endpoint = await findWebhook(ctx, input.webhookId, webhookActions.read);
      const rows = await ctx.em.find(
        WebhookDelivery,
        { endpoint: endpoint.id },
        { orderBy: { created: 'desc', id: 'desc' }, limit: input.limit, offset: input.offset },
      );
      return rows.map(presentDelivery);
    }),

  delivery: projectProcedure
    .meta({
      openapi: { method: 'GET', path: '/{project}/api/webhooks/{webhookId}/deliveries/{deliveryId}', tags, summary: 'One delivery' },
    })
    .input(z.strictObject({ project: projectParam, webhookId: webhookIdParam, deliveryId: deliveryIdParam }))
    .output(deliveryView)
    .query(async ({ ctx, input }) => {
      const endpoint = await findWebhook(ctx, input.webhookId, webhookActions.read);
      return presentDelivery(await loadChild(ctx.em, WebhookDelivery, input.deliveryId, { endpoint: endpoint.id }, 'Delivery'));
    }),

  resend: projectProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/{project}/api/webhooks/{webhookId}/deliveries/{deliveryId}/resend',
        tags,
        summary: 'Send a delivery again, as a new delivery with the same message id; answers the new one',
      },
    })
    .input(z.strictObject({ project: projectParam, webhookId: webhookIdParam, deliveryId: deliveryIdParam }))
    .output(deliveryView)
    .mutation(async ({ ctx, input }) => {
      const endpoint = await findWebhook(ctx, input.webhookId, webhookActions.write);
      const original = await loadChild(ctx.em, WebhookDelivery, input.deliveryId, { endpoint: endpoint.id }, 'Delivery');
      if (!endpoint.enabled) throw new BadRequest('invalid_state', 'The endpoint is disabled: enable it before resending');
      const copy = ctx.em.create(WebhookDelivery, {
        project: ctx.project,
        endpoint,
        messageId: original.messageId,
        eventKey: null,
        event: original.event,
        payload: original.payload,
        resentFrom: original.id,
      });
      await ctx.em.flush();
      await startDeliveries(ctx.em, emitter(ctx), [copy.id]);
      // Given a place at once, or queued behind the project's deliveries in flight: the answer says which.
      await ctx.em.refresh(copy);
      return presentDelivery(copy);
    }),
});
