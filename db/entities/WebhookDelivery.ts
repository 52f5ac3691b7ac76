import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { Project } from './Project.ts';
import { WebhookEndpoint } from './WebhookEndpoint.ts';

/** One try at an endpoint: when, what it answered (or why nothing came back), and how long it took. */
export type WebhookAttempt = { at: string; statusCode: number | null; error: string | null; durationMs: number };

/**
 * One event for one endpoint, delivered by its own workflow (workflows/webhooks.ts) with retries.
 * `messageId` is the `webhook-id` header: a resend is a delivery of its own with the same message
 * id, so a receiver that keeps ids applies it once. `eventKey` makes an event emitted twice (an
 * activity retried) one delivery per endpoint.
 */
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  uniques: [{ properties: ['endpoint', 'eventKey'] }],
  // Housekeeping's look for deliveries never started, and its deletion of old ones.
  indexes: [{ properties: ['status', 'created'] }, { properties: ['created'] }],
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    endpoint: () => p.manyToOne(WebhookEndpoint).deleteRule('cascade').index(),
    messageId: p.string().length(100),
    eventKey: p.string().length(200).nullable(),
    event: p.string().length(50),
    payload: p.json<Record<string, unknown>>(),
    status: p.enum(['pending', 'succeeded', 'failed'] as const).default('pending'),
    attempts: p.json<WebhookAttempt[]>().onCreate(() => []),
    nextAttemptAt: p.datetime().nullable(),
    /**
     * When it was given a place among its project's deliveries in flight and its workflow started
     * (server/webhooks/inFlight.ts); null while it is queued for one.
     */
    dispatchedAt: p.datetime().nullable(),
    /** Why it stopped without success: the tries ran out, or the endpoint refused for good. */
    failure: p.string().length(500).nullable(),
    resentFrom: p.uuid().nullable(),
    created: created(),
    updated: updated(),
  },
});

export type WebhookDelivery = InferEntity<typeof WebhookDelivery>;
